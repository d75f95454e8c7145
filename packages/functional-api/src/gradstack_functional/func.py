"""``torch.func``: composable function transforms (``gradstack.func`` in the facade).

``vmap`` (``vmap``), the differentiation transforms (``eager_transforms``) and
``functional_call``/``stack_module_state`` (``functional_call``), under torch's names.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_functional.func import grad, vmap
>>> x = gt.tensor([[0.0, 1.0], [2.0, 3.0]])
>>> vmap(grad(lambda r: (r * r).sum()))(x).tolist()      # per-row gradients
[[0.0, 2.0], [4.0, 6.0]]
"""

from .eager_transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from .functional_call import functional_call, stack_module_state
from .vmap import vmap

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "functional_call",
    "stack_module_state",
]
