"""``NAdam``: Adam with Nesterov momentum, step for step as ``torch.optim.NAdam`` computes
it (torch's single-tensor algorithm), with torch's defaults, state (``step`` and
``mu_product`` float32 0-d tensors) and checks.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = NAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 4)
0.8944
"""

from __future__ import annotations

from ._ops import addcdiv_, addcmul_, lerp_
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), torch's algorithm with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))`` and the running product
    ``mu_product`` kept as a float32 0-d tensor, as torch keeps it.

    State: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:  # fmt: skip
        check_lr_eps_wd(lr, eps, weight_decay)
        check_betas(betas)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        check_flags("NAdam", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr, beta1, beta2, eps = lr_betas_eps(group)
        momentum_decay = group["momentum_decay"]
        names = ("mu_product", "exp_avg", "exp_avg_sq")
        for p, state, grad in param_updates(self, group, names):
            exp_avg, exp_avg_sq, mu_product = (
                state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
            )  # fmt: skip
            # Note [Complex parameters are stepped as real pairs]
            p, grad, exp_avg, exp_avg_sq = real_views(p, grad, exp_avg, exp_avg_sq)
            step = state["step"].item()
            bias_correction2 = 1 - beta2**step
            grad = with_weight_decay(p, grad, group, lr)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product.mul_(mu)
            lerp_(exp_avg, grad, 1 - beta1)
            addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            product = mu_product.item()
            product_next = product * mu_next
            denom.add_(eps)
            addcdiv_(p, grad, denom, value=(-lr * (1.0 - mu) / (1.0 - product)))
            addcdiv_(p, exp_avg, denom, value=(-lr * mu_next) / (1.0 - product_next))
