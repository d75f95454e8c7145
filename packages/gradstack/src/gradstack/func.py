"""``gradstack.func``: torch.func's composable transforms (``vmap``, ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``functional_call``, ``stack_module_state``, ``debug_unwrap``, ``rearrange``) from
gradstack-functional-api (``gradstack_functional.func``), and
``replace_all_batch_norm_modules_`` from nn-mini."""

try:
    import gradstack_functional.func as _impl
except ModuleNotFoundError as e:  # pragma: no cover - a partial install
    if e.name not in ("gradstack_functional", "gradstack_functional.func"):
        raise
    raise ModuleNotFoundError(
        "gradstack.func needs the functional-api layer: pip install gradstack-functional-api",
        name=e.name,
    ) from None

from gradstack_functional.func import *  # noqa: F403,E402
from gradstack_nn.utils.batch_norm_replacement import (  # noqa: E402
    replace_all_batch_norm_modules_,
)

__all__ = [*_impl.__all__, "replace_all_batch_norm_modules_"]
