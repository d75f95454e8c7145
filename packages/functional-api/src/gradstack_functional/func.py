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

from .batched_tensor import is_batched
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
from .rearrange import rearrange
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
    "debug_unwrap",
    "rearrange",
]


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper, for debugging: inside ``vmap`` a batched
    tensor's physical tensor (batch dims included; with ``recurse=False`` one level of
    nested ``vmap`` only); any other tensor as it is.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_functional.func import vmap
    >>> vmap(lambda r: debug_unwrap(r).sum())(gt.ones(3, 2)).tolist()   # sums all 6
    [6.0, 6.0, 6.0]
    """
    if not is_batched(tensor):
        return tensor
    inner = tensor._gs_value
    return debug_unwrap(inner) if recurse else inner
