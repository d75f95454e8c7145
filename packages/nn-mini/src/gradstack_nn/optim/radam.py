"""``RAdam``: rectified Adam, step for step as ``torch.optim.RAdam`` computes it (torch's
single-tensor algorithm), with torch's defaults, state and checks.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = RAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 4)  # the first steps are momentum SGD: 1 - 0.1 * 2
0.8
"""

from __future__ import annotations

from ._ops import addcmul_, lerp_
from .optimizer import (
    Optimizer,
    check_betas,
    check_flags,
    check_lr_eps_wd,
    lr_betas_eps,
    param_updates,
    real_views,
    with_weight_decay,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.), torch's algorithm: the adaptive step once the
    approximated simple moving average is longer than 5 (``rho_t > 5``), plain momentum
    SGD before.

    State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:  # fmt: skip
        check_lr_eps_wd(lr, eps, weight_decay)
        check_betas(betas)
        check_flags("RAdam", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr, beta1, beta2, eps = lr_betas_eps(group)
        for p, state, grad in param_updates(self, group, ("exp_avg", "exp_avg_sq")):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, exp_avg, exp_avg_sq = real_views(p, grad, exp_avg, exp_avg_sq)
            step = state["step"].item()
            grad = with_weight_decay(p, grad, group, lr)
            lerp_(exp_avg, grad, 1 - beta1)
            addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
                adaptive = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)
