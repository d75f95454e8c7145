"""``Adamax``: Adam with the infinity norm, step for step as ``torch.optim.Adamax``
computes it (torch's single-tensor algorithm, the one it runs for CPU tensors), with
torch's defaults, state (``step`` a float32 0-d tensor) and checks.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = Adamax([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 4)  # 1 - 0.1 * (0.1 * 2) / (1 - 0.9) / 2
0.9
"""

from __future__ import annotations

import gradstack_tensor as gt

from ._ops import addcdiv_, lerp_
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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adam with the infinity norm (Kingma and Ba), torch's algorithm::

        g = -grad if maximize else grad;  g = g + weight_decay * param
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        param -= lr / (1 - beta1 ** step) * m / u

    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:  # fmt: skip
        check_lr_eps_wd(lr, eps, weight_decay)
        check_betas(betas)
        check_flags("Adamax", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr, beta1, beta2, eps = lr_betas_eps(group)
        for p, state, grad in param_updates(self, group, ("exp_avg", "exp_inf")):
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, exp_avg, exp_inf = real_views(p, grad, exp_avg, exp_inf)
            grad = with_weight_decay(p, grad, group, lr)
            lerp_(exp_avg, grad, 1 - beta1)
            exp_inf.copy_(gt.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            clr = lr / (1 - beta1 ** state["step"].item())
            addcdiv_(p, exp_avg, exp_inf, value=-clr)
