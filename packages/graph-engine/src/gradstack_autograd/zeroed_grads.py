"""A ``.grad`` of zeros that counts as no gradient (torch 2.x's ``None``).

nn-mini's default ``zero_grad()`` leaves zeros that the autograd tutorial can print, where
torch 2.x sets ``.grad`` to None.  It does not write them: :func:`defer_grad_zeros` sets
``.grad`` to None, and reading ``.grad`` from Python makes the zeros then (Note
[zero_grad() leaves zeros to be made on first read], in ``_node.pyx``);
:func:`grad_zeros_deferred` says whether zeros are waiting.  Those zeros, and zeros written
in place by other code, are marked with :func:`mark_grad_zeroed`: until the tensor is
written again, optimisers skip the parameter as torch skips a ``None`` gradient (Note
[Zeroed gradients count as None], in nn-mini), and the next backward gives the parameter
its gradient as torch gives it to a ``None`` ``.grad``, without adding it into the zeros
(Note [A zeroed .grad receives the gradient as None would], in ``_node.pyx``).

Examples
--------
>>> import gradstack_tensor as gt
>>> w = gt.ones(2, requires_grad=True)
>>> (w * 3).sum().backward()
>>> g = w.grad
>>> _ = g.zero_()
>>> mark_grad_zeroed(g)
>>> grad_is_zeroed(w.grad)
True
>>> (w * -0.0).sum().backward()  # the gradient itself, as into None: -0.0 stays -0.0
>>> w.grad.tolist(), grad_is_zeroed(w.grad)
([-0.0, -0.0], False)
"""

from ._node import (
    ZEROED_AT,
    defer_grad_zeros,
    grad_is_zeroed,
    grad_zeros_deferred,
    mark_grad_zeroed,
)

__all__ = [
    "ZEROED_AT",
    "defer_grad_zeros",
    "grad_is_zeroed",
    "grad_zeros_deferred",
    "mark_grad_zeroed",
]
