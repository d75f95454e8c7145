"""``ASGD`` (averaged SGD), step for step as ``torch.optim.ASGD`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = ASGD([w], lr=0.1, lambd=0.0)
>>> (w * w).sum().backward()
>>> opt.step()
>>> round(w.item(), 6), round(opt.state[w]["ax"].item(), 6)   # 1 - 0.1 * 2
(0.8, 0.8)
"""

from __future__ import annotations

import gradstack_tensor as gt

from .optimizer import (
    Optimizer,
    check_flags,
    check_nonnegative,
    param_updates,
    real_views,
    scalar,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak and Juditsky), torch's algorithm::

        g = -grad if maximize else grad;  g = g + weight_decay * param
        param = param * (1 - lambd * eta) - eta * g
        ax = param if mu == 1 else ax + mu * (param - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
    lambd : float, default 1e-4
        Decay term.
    alpha : float, default 0.75
        Power of the ``eta`` update.
    t0 : float, default 1e6
        The step from which parameters are averaged.
    weight_decay : float, default 0
    foreach, maximize, differentiable, capturable : optional
        As for :class:`~gradstack_nn.optim.Adam`.

    Notes
    -----
    The averaged parameters are ``state[p]["ax"]``.  State: ``step``, ``eta``, ``mu`` (0-d
    tensors of the default dtype, as torch: so ``eta`` is rounded to float32 before it
    scales the update, exactly as in torch) and ``ax``.  Skips parameters whose ``.grad``
    is None.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ) -> None:
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        check_flags("ASGD", capturable=capturable, differentiable=differentiable)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        dtype = gt.get_default_dtype()

        def init_state(p, state):
            state["step"] = gt.zeros((), dtype=dtype)
            state["eta"] = gt.tensor(lr, dtype=dtype)
            state["mu"] = gt.ones((), dtype=dtype)
            state["ax"] = gt.zeros_like(p)

        for p, state, grad in param_updates(self, group, init_state):
            ax, eta, mu, step_t = state["ax"], state["eta"], state["mu"], state["step"]
            # Note [Complex parameters are stepped as real pairs]
            p, grad, ax = real_views(p, grad, ax)
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            # Note [ASGD reads eta and mu back from their 0-d tensors]: torch keeps them as
            # default-dtype tensors and uses ``.item()``, so float32 rounding is part of
            # the update; reading them back here reproduces it.
            eta_value = eta.item()
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            mu_value = mu.item()
            if mu_value != 1:
                ax.add_(p.sub(ax).mul_(mu_value))
            else:
                ax.copy_(p)
            step = step_t.item()
            # (through a default-dtype tensor, as torch's ``as_tensor``: rounded to float32
            # even when a loaded state dict made eta and mu float64)
            eta.copy_(gt.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(gt.as_tensor(1 / max(1, step - t0)))
