"""``AdamW``: Adam with decoupled weight decay, step for step as ``torch.optim.AdamW``
computes it (``Adam``'s algorithm with ``decoupled_weight_decay=True``).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0, -2.0]))
>>> opt = AdamW([w], lr=0.1, weight_decay=0.5)
>>> (w * w).sum().backward()
>>> opt.step()
>>> [round(v, 4) for v in w.detach().tolist()]  # decayed by 1 - 0.1 * 0.5, then Adam's step
[0.85, -1.8]
"""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (``param *= 1 - lr * weight_decay`` before the
    update, Loshchilov and Hutter), default ``weight_decay=1e-2``, as ``torch.optim.AdamW``.

    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> AdamW([Parameter(gt.zeros(2))]).defaults["weight_decay"]
    0.01
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
