"""``gradstack.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``,
``hvp`` from gradstack-functional-api (``gradstack_functional``)."""

try:
    import gradstack_functional as _impl
except ModuleNotFoundError as e:  # pragma: no cover - a partial install
    if e.name != "gradstack_functional":
        raise
    raise ModuleNotFoundError(
        "gradstack.autograd.functional needs the functional-api layer: "
        "pip install gradstack-functional-api",
        name=e.name,
    ) from None

from gradstack_functional import *  # noqa: F403,E402

__all__ = list(_impl.__all__)
