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

from ._ops import addcdiv_, addcmul_
from .optimizer import (
    Optimizer,
    check_flags,
    check_nonnegative,
    param_updates,
    real_views,
    scalar,
)

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
        check_nonnegative(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
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
                _init_param_state(p, state, group)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        lr_decay, weight_decay, eps = group["lr_decay"], group["weight_decay"], group["eps"]

        def init_state(p, state):
            _init_param_state(p, state, group)

        for p, state, grad in param_updates(self, group, init_state):
            step = state["step"].item()
            # Note [Complex parameters are stepped as real pairs]
            p, grad, state_sum = real_views(p, grad, state["sum"])
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            addcmul_(state_sum, grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            addcdiv_(p, grad, std, value=-clr)


def _init_param_state(p, state, group) -> None:
    state["step"] = gt.tensor(0.0)
    init = group["initial_accumulator_value"]
    if p.is_complex():  # each part starts at it, as torch's
        init = complex(init, init)
    state["sum"] = gt.full_like(p, init)
