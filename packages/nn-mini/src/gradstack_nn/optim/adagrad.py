"""``Adagrad``, step for step as ``torch.optim.Adagrad`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = Adagrad([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 6)   # 1 - 0.1 * 2 / sqrt(4)
0.9
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ._ops import addcdiv_, addcmul_
from .optimizer import Optimizer, check_flags, has_grad, real_views, scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), torch's algorithm::

        g = -grad if maximize else grad;  g = g + weight_decay * param
        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g * g;  param -= clr * g / (sqrt(sum) + eps)

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
    lr_decay, weight_decay : float, default 0
    initial_accumulator_value : float, default 0
        The starting value of every ``sum``.
    eps : float, default 1e-10
    maximize : bool, default False
    foreach, fused, differentiable : optional
        As for :class:`~gradstack_nn.optim.Adam`.

    Notes
    -----
    As torch, the state (``step`` and ``sum``) of every parameter is created with the
    optimiser, so it appears in ``state_dict`` before the first step; parameters whose
    ``.grad`` is None are skipped by ``step``.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_flags("Adagrad", differentiable=differentiable)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._init_state(group)

    def _init_state(self, group) -> None:
        for p in group["params"]:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = gt.tensor(0.0)
                init = group["initial_accumulator_value"]
                if p.is_complex():  # each part starts at it, as torch's
                    init = complex(init, init)
                state["sum"] = gt.full_like(p, init)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        lr_decay, weight_decay, eps = group["lr_decay"], group["weight_decay"], group["eps"]
        for p in group["params"]:
            if not has_grad(p):
                continue
            state = self.state[p]
            if len(state) == 0:
                self._init_state({"params": [p], **group})
            state["step"].add_(1)
            step = state["step"].item()
            grad = -p.grad if group["maximize"] else p.grad
            state_sum = state["sum"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, state_sum = real_views(p, grad, state_sum)
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            addcmul_(state_sum, grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            addcdiv_(p, grad, std, value=-clr)
