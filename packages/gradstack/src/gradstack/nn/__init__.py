"""``gradstack.nn``: modules, parameters, losses, ``functional``, ``init`` and ``utils``
from gradstack-nn-mini (``gradstack_nn``)."""

# Only explicit names from gradstack_nn: its ``functional``, ``init`` and ``utils`` must not
# take the place of this package's own submodules of those names (the ones that
# ``import gradstack.nn.functional`` finds).
from gradstack_nn import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from gradstack_nn.modules import *  # noqa: F403
from gradstack_nn.modules import __all__ as _layers

from . import attention, functional, init, modules, parallel, parameter, utils

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "attention",
    "functional",
    "init",
    "parallel",
    "parameter",
    "utils",
]
__all__ += _layers
