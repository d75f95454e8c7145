"""``LinearCrossEntropyLoss``: a linear layer to ``num_classes`` logits and the cross
entropy of those logits in one module (torch 2.13's ``nn.LinearCrossEntropyLoss``), through
:func:`~gradstack_nn.functional.linear_cross_entropy`.

Examples
--------
>>> import gradstack_tensor as gt
>>> _ = gt.manual_seed(0)
>>> loss = LinearCrossEntropyLoss(4, 10)
>>> out = loss(gt.randn(3, 4), gt.tensor([1, 0, 9]))
>>> out.shape, out.requires_grad
(gradstack.Size([]), True)
"""

from __future__ import annotations

import math

from gradstack_tensor import Tensor

from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """The cross entropy of ``target`` and the logits ``self.linear(input)``.

    The linear layer's weight is stored flat, ``(num_classes * prod(out_features),
    in_features)``, and reshaped to ``(num_classes, *out_features, in_features)`` in
    :meth:`forward` (a K-dimensional loss), as torch's.

    Parameters
    ----------
    in_features, num_classes : int
        The input's size and the number of classes ``C``.
    out_features : tuple of int
        ``(d_1, ..., d_K)`` for a K-dimensional loss.
    bias : bool
        Whether the linear layer adds a bias.
    device, dtype
        Of the linear layer's parameters.
    reduction, weight, ignore_index, label_smoothing, options
        As :func:`~gradstack_nn.functional.linear_cross_entropy`'s.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True).linear
    Linear(in_features=5, out_features=120, bias=True)
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options=None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(
            in_features, math.prod(out_features, start=num_classes), bias=bias,
            device=device, dtype=dtype,
        )  # fmt: skip
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features)
        )
        linear_bias = (
            self.linear.bias.reshape((self.num_classes, *self.out_features))
            if self.linear.bias is not None
            else None
        )
        return F.linear_cross_entropy(
            input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features},"
            f" num_classes={self.num_classes},"
            f" out_features={self.out_features},"
            f" bias={self.linear.bias is not None},"
            f" reduction={self.reduction},"
            f" ignore_index={self.ignore_index},"
            f" label_smoothing={self.label_smoothing},"
            f" options={self.options}"
        )
