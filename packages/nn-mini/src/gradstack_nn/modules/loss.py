"""Loss modules: ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``, ``NLLLoss``,
``CrossEntropyLoss``, ``BCELoss``, ``BCEWithLogitsLoss``.

Each stores its options (``reduction`` ...) and calls the function of the same name in
:mod:`gradstack_nn.functional`; class weights are buffers, so they follow ``.to()`` and
appear in ``state_dict`` as torch's do.  As in torch, an invalid ``reduction`` is reported
by the first call, not by the constructor.
"""

from __future__ import annotations

import warnings

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = [
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
]


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        stacklevel=4,
    )
    return reduction


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(
        self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error between input and target (``reduction``: mean, sum or none).

    >>> import gradstack_tensor as gt
    >>> MSELoss()(gt.tensor([0., 2.]), gt.tensor([1., 1.])).item()
    1.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error between input and target.

    >>> import gradstack_tensor as gt
    >>> L1Loss(reduction="sum")(gt.tensor([0., 2.]), gt.tensor([1., 1.])).item()
    2.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above (:func:`F.smooth_l1_loss`).

    >>> import gradstack_tensor as gt
    >>> SmoothL1Loss()(gt.tensor([0.5, 3.0]), gt.tensor([0.0, 0.0])).item()
    1.3125
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta`` times the absolute error above.

    >>> import gradstack_tensor as gt
    >>> HuberLoss(delta=2.0)(gt.tensor([0.5, 3.0]), gt.tensor([0.0, 0.0])).item()
    2.0625
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class-index targets under log-probabilities."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits and class indices (or class probabilities).

    >>> import gradstack_tensor as gt
    >>> loss = CrossEntropyLoss()(gt.tensor([[0., 0.]]), gt.tensor([1]))
    >>> round(loss.item(), 4)
    0.6931
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy between probabilities and targets in [0, 1].

    >>> import gradstack_tensor as gt
    >>> round(BCELoss()(gt.tensor([0.8, 0.4]), gt.tensor([1.0, 0.0])).item(), 4)
    0.367
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits (a sigmoid and BCELoss in one stable step), with
    per-element ``weight`` and per-class ``pos_weight`` for the positive targets.

    >>> import gradstack_tensor as gt
    >>> round(BCEWithLogitsLoss()(gt.tensor([2.0, -1.0]), gt.tensor([1.0, 0.0])).item(), 4)
    0.2201
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input,
            target,
            self.weight,
            pos_weight=self.pos_weight,
            reduction=self.reduction,
        )


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``
    (:func:`F.kl_div`; ``reduction="batchmean"`` is the divergence's definition)."""

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
