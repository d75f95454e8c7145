"""A ``.grad`` zeroed in place that counts as no gradient (torch 2.x's ``None``).

nn-mini's default ``zero_grad()`` zeroes each ``.grad`` in place, so that the autograd
tutorial prints zeros, and marks it with :func:`mark_grad_zeroed`: until the tensor is
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

from ._node import ZEROED_AT, grad_is_zeroed, mark_grad_zeroed

__all__ = ["ZEROED_AT", "grad_is_zeroed", "mark_grad_zeroed"]
