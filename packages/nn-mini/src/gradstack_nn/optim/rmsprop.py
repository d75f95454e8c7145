"""``RMSprop``, step for step as ``torch.optim.RMSprop`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = RMSprop([w], lr=0.01)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 4)   # 1 - 0.01 * 2 / sqrt(0.01 * 4)
0.9
"""

from __future__ import annotations

from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    check_flags,
    check_nonnegative,
    param_updates,
    real_views,
    scalar,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton), torch's algorithm::

        g = -grad if maximize else grad;  g = g + weight_decay * param
        v = alpha * v + (1 - alpha) * g * g
        centered: m = lerp(m, g, 1 - alpha);  avg = sqrt(v - m * m) + eps,
        else avg = sqrt(v) + eps
        momentum > 0: buf = momentum * buf + g / avg;  param -= lr * buf
        else: param -= lr * g / avg

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
    alpha : float, default 0.99
        Smoothing constant of the squared-gradient average.
    eps : float, default 1e-8
    weight_decay, momentum : float, default 0
    centered : bool, default False
        Normalise by the estimated variance of the gradient.
    maximize : bool, default False
    foreach, capturable, differentiable : optional
        As for :class:`~gradstack_nn.optim.Adam`.

    Notes
    -----
    Skips parameters whose ``.grad`` is None.  State: ``step``, ``square_avg``, and
    ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ) -> None:
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        check_flags("RMSprop", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        alpha, eps = group["alpha"], group["eps"]
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        centered = group["centered"]
        names = ("square_avg",) + (("momentum_buffer",) if momentum > 0 else ())
        names += ("grad_avg",) if centered else ()
        for p, state, grad in param_updates(self, group, names):
            square_avg = state["square_avg"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, square_avg = real_views(p, grad, square_avg)
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            addcmul_(square_avg.mul_(alpha), grad, grad, value=1 - alpha)
            if centered:
                grad_avg = lerp_(real_views(state["grad_avg"])[0], grad, 1 - alpha)
                avg = (square_avg - grad_avg * grad_avg).sqrt()
            else:
                avg = square_avg.sqrt()
            avg = avg.add_(eps)
            if momentum > 0:
                buf = real_views(state["momentum_buffer"])[0]
                addcdiv_(buf.mul_(momentum), grad, avg)
                p.add_(buf, alpha=-lr)
            else:
                addcdiv_(p, grad, avg, value=-lr)
