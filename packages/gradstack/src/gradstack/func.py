"""``gradstack.func``: torch.func's composable transforms (``vmap``, ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``functional_call``, ``stack_module_state``) from gradstack-functional-api
(``gradstack_functional.func``)."""

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

__all__ = list(_impl.__all__)
