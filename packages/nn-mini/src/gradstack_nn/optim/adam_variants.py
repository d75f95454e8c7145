"""``Adamax``, ``NAdam``, ``RAdam`` and ``Adadelta``, step for step as torch computes them
(torch's single-tensor algorithms, the ones it runs for CPU tensors), with torch's
defaults, state (``step`` and NAdam's ``mu_product`` as float32 0-d tensors) and checks.

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
from gradstack_tensor import Tensor

from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer, check_flags, has_grad, scalar

__all__ = ["Adamax", "NAdam", "RAdam", "Adadelta"]


def _check_lr_eps_wd(lr, eps, weight_decay) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_betas(betas) -> None:
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _updates(optimizer, group, state_names):
    """``(param, state, grad)`` for each parameter of ``group`` that has a gradient: its
    state created (``step`` a float32 0-d tensor, the others zeros of its shape) the first
    time, ``step`` counted, the gradient negated under ``maximize``."""
    for p in group["params"]:
        if not has_grad(p):
            continue
        state = optimizer.state[p]
        if len(state) == 0:
            state["step"] = gt.tensor(0.0)
            for name in state_names:
                state[name] = gt.tensor(1.0) if name == "mu_product" else gt.zeros_like(p)
        grad = -p.grad if group["maximize"] else p.grad
        state["step"].add_(1)
        yield p, state, grad


def _with_weight_decay(p, grad, group, lr):
    """``grad + weight_decay * p``, or with ``decoupled_weight_decay`` ``p`` decayed in
    place (``p *= 1 - lr * weight_decay``) and ``grad`` unchanged, as torch's."""
    weight_decay = group["weight_decay"]
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        p.mul_(1 - lr * weight_decay)
        return grad
    return grad.add(p, alpha=weight_decay)


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
        _check_lr_eps_wd(lr, eps, weight_decay)
        _check_betas(betas)
        check_flags("Adamax", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = group["eps"]
        for p, state, grad in _updates(self, group, ("exp_avg", "exp_inf")):
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            grad = _with_weight_decay(p, grad, group, lr)
            lerp_(exp_avg, grad, 1 - beta1)
            exp_inf.copy_(gt.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            clr = lr / (1 - beta1 ** state["step"].item())
            addcdiv_(p, exp_avg, exp_inf, value=-clr)


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), torch's algorithm with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))`` and the running product
    ``mu_product`` kept as a float32 0-d tensor, as torch keeps it.

    State: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:  # fmt: skip
        _check_lr_eps_wd(lr, eps, weight_decay)
        _check_betas(betas)
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
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = group["eps"]
        momentum_decay = group["momentum_decay"]
        names = ("mu_product", "exp_avg", "exp_avg_sq")
        for p, state, grad in _updates(self, group, names):
            exp_avg, exp_avg_sq, mu_product = (
                state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
            )  # fmt: skip
            step = state["step"].item()
            bias_correction2 = 1 - beta2**step
            grad = _with_weight_decay(p, grad, group, lr)
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


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.), torch's algorithm: the adaptive step once the
    approximated simple moving average is longer than 5 (``rho_t > 5``), plain momentum
    SGD before.

    State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:  # fmt: skip
        _check_lr_eps_wd(lr, eps, weight_decay)
        _check_betas(betas)
        check_flags("RAdam", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = group["eps"]
        for p, state, grad in _updates(self, group, ("exp_avg", "exp_avg_sq")):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            step = state["step"].item()
            grad = _with_weight_decay(p, grad, group, lr)
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


class Adadelta(Optimizer):
    """Adadelta (Zeiler), torch's algorithm::

        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho * u + (1 - rho) * delta ** 2
        param -= lr * delta

    State: ``step``, ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:  # fmt: skip
        _check_lr_eps_wd(lr, eps, weight_decay)
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
        for p, state, grad in _updates(self, group, ("square_avg", "acc_delta")):
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            grad = _with_weight_decay(p, grad, group, lr)
            addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            delta.div_(std).mul_(grad)
            addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)
