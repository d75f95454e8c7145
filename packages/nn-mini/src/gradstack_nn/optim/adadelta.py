"""``Adadelta``, step for step as ``torch.optim.Adadelta`` computes it (torch's
single-tensor algorithm), with torch's defaults, state (``step``, ``square_avg``,
``acc_delta``) and checks.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = Adadelta([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 4)
0.9968
"""

from __future__ import annotations

from ._ops import addcmul_
from .optimizer import (
    Optimizer,
    check_flags,
    check_lr_eps_wd,
    param_updates,
    real_views,
    scalar,
    with_weight_decay,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler), torch's algorithm::

        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho * u + (1 - rho) * delta ** 2
        param -= lr * delta

    State: ``step``, ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:  # fmt: skip
        check_lr_eps_wd(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_flags("Adadelta", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        rho, eps = group["rho"], group["eps"]
        for p, state, grad in param_updates(self, group, ("square_avg", "acc_delta")):
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, square_avg, acc_delta = real_views(p, grad, square_avg, acc_delta)
            grad = with_weight_decay(p, grad, group, lr)
            addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            delta.div_(std).mul_(grad)
            addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)
