"""``gradstack.autograd.function``: custom Functions and their ``ctx`` (FunctionCtx)."""

from gradstack_autograd.function import *  # noqa: F403
from gradstack_autograd.function import (  # noqa: F401
    BackwardCFunction,
    Function,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from gradstack_autograd.function import __all__ as _all

__all__ = sorted(set(_all) | {"InplaceFunction", "NestedIOFunction"})
