"""Loss modules: ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``, ``NLLLoss``,
``CrossEntropyLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``KLDivLoss``; the margin and
embedding losses of ``functional/margin_losses.py`` and the likelihood losses of
``functional/losses.py`` (``MarginRankingLoss`` ... ``GaussianNLLLoss``).

Each stores its options (``reduction`` ...) and calls the function of the same name in
:mod:`gradstack_nn.functional`; class weights are buffers, so they follow ``.to()`` and
appear in ``state_dict`` as torch's do.  As in torch, an invalid ``reduction`` is reported
by the first call, not by the constructor.
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from ..functional.losses import _legacy_reduction
from .module import Module

__all__ = [
    "CTCLoss",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "MultiLabelMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)


class _WeightedLoss(_Loss):
    def __init__(
        self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


def _margin_init(default_margin: float):
    """The ``__init__`` of a loss whose one option is ``margin`` (torch's signature, with
    the loss's default margin)."""

    def __init__(
        self, margin: float = default_margin, size_average=None, reduce=None,
        reduction: str = "mean",
    ) -> None:  # fmt: skip
        _Loss.__init__(self, size_average, reduce, reduction)
        self.margin = margin

    return __init__


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


# -------------------------------------------------------------------------------------
# the margin, embedding (functional/margin_losses.py) and likelihood losses


class MarginRankingLoss(_Loss):
    """``max(0, -target * (input1 - input2) + margin)`` (:func:`F.margin_ranking_loss`).

    >>> import gradstack_tensor as gt
    >>> loss = MarginRankingLoss(margin=0.5)
    >>> loss(gt.tensor([1.0, 2.0]), gt.tensor([2.0, 2.0]), gt.tensor([1.0, -1.0])).item()
    1.0
    """

    __init__ = _margin_init(0.0)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_Loss):
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1
    (:func:`F.hinge_embedding_loss`)."""

    __init__ = _margin_init(1.0)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos`` for similar pairs (target 1), ``max(0, cos - margin)`` for dissimilar
    ones (target -1) (:func:`F.cosine_embedding_loss`)."""

    __init__ = _margin_init(0.0)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class SoftMarginLoss(_Loss):
    """The two-class logistic loss ``log(1 + exp(-target * input))``
    (:func:`F.soft_margin_loss`)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The one-versus-all logistic loss of multi-label targets, with class ``weight`` (a
    buffer) (:func:`F.multilabel_soft_margin_loss`)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss (``p`` 1 or 2, ``margin``, class ``weight``)
    (:func:`F.multi_margin_loss`).

    >>> import gradstack_tensor as gt
    >>> round(MultiMarginLoss(p=2)(gt.tensor([[0.1, 0.2, 0.4, 0.8]]), gt.tensor([3])).item(), 4)
    0.1525
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                "MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{weight.dim()}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight,
            reduction=self.reduction,
        )  # fmt: skip


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss of class-index targets ended by -1
    (:func:`F.multilabel_margin_loss`)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the ``p``-norm
    distance (:func:`F.triplet_margin_loss`)."""

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
            swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """:class:`TripletMarginLoss` with any ``distance_function`` (default: a
    ``PairwiseDistance()`` sub-module, as torch) (:func:`F.triplet_margin_with_distance_loss`).

    >>> TripletMarginWithDistanceLoss()
    TripletMarginWithDistanceLoss(
      (distance_function): PairwiseDistance()
    )
    """

    def __init__(
        self,
        *,
        distance_function=None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        from .distance import PairwiseDistance

        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else PairwiseDistance()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class PoissonNLLLoss(_Loss):
    """The Poisson negative log-likelihood (``log_input``, ``full``, ``eps``)
    (:func:`F.poisson_nll_loss`)."""

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
            reduction=self.reduction,
        )  # fmt: skip


class GaussianNLLLoss(_Loss):
    """The Gaussian negative log-likelihood of a target given a mean and a variance
    (``full``, ``eps``) (:func:`F.gaussian_nll_loss`).

    >>> import gradstack_tensor as gt
    >>> GaussianNLLLoss()(gt.tensor([1.0, 2.0]), gt.tensor([2.0, 2.0]), 1.0).item()
    0.25
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (:func:`F.ctc_loss`): ``forward(
    log_probs, targets, input_lengths, target_lengths)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
            self.zero_infinity,
        )  # fmt: skip
