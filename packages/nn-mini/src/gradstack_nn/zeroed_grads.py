"""``zero_grad()``'s zeros that count as no gradient: the tutorial's zeros, torch 2.x's numbers.

Note [Zeroed gradients count as None]
The autograd tutorial prints a parameter's ``.grad`` after ``optimizer.zero_grad()`` and
shows zeros.  torch 2.x sets it to None instead, and its optimisers skip a parameter whose
gradient is None: with momentum or weight decay, a parameter that the next step's graph
does not reach does not move.  To give both, the default ``zero_grad()`` sets ``.grad`` to
None with zeros deferred: reading ``.grad`` then makes zeros (graph-engine's Note
[zero_grad() leaves zeros to be made on first read]), marked with the gradient's version;
until that tensor is written again (backward's accumulation, any in-place op,
``increment_version``) or replaced, :func:`has_grad` is False and optimisers and gradient
clipping skip the parameter exactly as torch skips None.  ``zero_grad(set_to_none=False)``
is the plain in-place zero (momentum applies, as in torch); ``set_to_none=True`` sets None.
The mark is graph-engine's (``gradstack_autograd.zeroed_grads``): the next backward also
gives a marked ``.grad`` its gradient as torch gives it to None, without adding it into the
zeros (Note [A zeroed .grad receives the gradient as None would]).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.ones(2))
>>> (w * 3).sum().backward()
>>> zero_grads([w], set_to_none=None)
>>> w.grad.tolist(), has_grad(w)
([0.0, 0.0], False)
>>> (w * 3).sum().backward()
>>> w.grad.tolist(), has_grad(w)
([3.0, 3.0], True)
"""

from __future__ import annotations

from gradstack_autograd.zeroed_grads import ZEROED_AT, defer_grad_zeros, grad_is_zeroed

__all__ = ["zero_grads", "has_grad"]


def zero_grads(params, set_to_none: bool | None) -> None:
    """The body of ``Module.zero_grad`` and ``Optimizer.zero_grad`` (see the Note).

    ``set_to_none``: None (the default of both) sets ``.grad`` to None with zeros deferred,
    which count as "no gradient"; False zeroes in place; True sets ``.grad`` to None.
    """
    for p in params:
        g = p._grad  # the field: reading .grad would make deferred zeros
        if g is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if set_to_none is None:
            defer_grad_zeros(p)
            continue
        if g.grad_fn is not None:  # a gradient built with create_graph=True
            g.detach_()
        elif g.requires_grad:
            g.requires_grad_(False)
        g.zero_()
        if hasattr(g, ZEROED_AT):
            delattr(g, ZEROED_AT)


def has_grad(p) -> bool:
    """Whether ``p`` has a gradient for the optimiser: ``.grad`` is set and was written
    since the last default ``zero_grad()`` (Note [Zeroed gradients count as None])."""
    g = p._grad  # not .grad, which would make deferred zeros
    return g is not None and not grad_is_zeroed(g)
