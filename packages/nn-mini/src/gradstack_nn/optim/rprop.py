"""``Rprop``, step for step as ``torch.optim.Rprop`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0, -1.0]))
>>> opt = Rprop([w], lr=0.1)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> [round(v, 4) for v in w.tolist()]   # steps of 0.1, then 0.1 * 1.2
[0.78, -0.78]
"""

from __future__ import annotations

import gradstack_tensor as gt

from ._ops import addcmul_
from .optimizer import (
    Optimizer,
    check_flags,
    check_nonnegative,
    param_updates,
    real_views,
    scalar,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation, torch's algorithm::

        g = -grad if maximize else grad
        s = sign(g * prev):  step_size *= etaplus (s > 0), etaminus (s < 0), 1 (s = 0)
        step_size = clamp(step_size, step_size_min, step_size_max)
        g = 0 where s < 0;  param -= sign(g) * step_size;  prev = g

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
        The initial step size of every element.
    etas : (float, float), default (0.5, 1.2)
        ``(etaminus, etaplus)``, with ``0 < etaminus < 1 < etaplus``.
    step_sizes : (float, float), default (1e-6, 50)
        The bounds of the step sizes.
    maximize : bool, default False
    foreach, capturable, differentiable : optional
        As for :class:`~gradstack_nn.optim.Adam`.

    Notes
    -----
    Skips parameters whose ``.grad`` is None.  State: ``step``, ``prev``, ``step_size``.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ) -> None:
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_flags("Rprop", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]

        def init_state(p, state):
            state["step"] = gt.zeros((), dtype=gt.get_default_dtype())
            state["prev"] = gt.zeros_like(p)
            lr = scalar(group["lr"])
            # (a complex parameter's parts are two reals: both get the step size)
            state["step_size"] = gt.full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)

        for p, state, grad in param_updates(self, group, init_state):
            prev, step_size = state["prev"], state["step_size"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, prev, step_size = real_views(p, grad, prev, step_size)
            # Note [Rprop's sign masks]: torch maps sign(g * prev) to etaplus/etaminus/1
            # and then zeroes g where that factor equals etaminus; the masks are taken from
            # the product's sign directly (the same elements, without comparing floats).
            product = grad.mul(prev)
            positive, negative = product.gt(0), product.lt(0)
            factor = gt.ones_like(p)
            factor[positive] = etaplus
            factor[negative] = etaminus
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            grad = grad.clone()
            grad[negative] = 0
            addcmul_(p, grad.sign(), step_size, value=-1)
            prev.copy_(grad)
