"""torch's less common layers: ``Bilinear``, ``AlphaDropout``, ``FeatureAlphaDropout``,
``RReLU``, ``LPPool1d``, ``LPPool2d``, ``Softmax2d``, ``ChannelShuffle`` and
``LocalResponseNorm``, each the module of a function of ``_extra_layers.py`` (or of
``softmax``), with torch's arguments, defaults, reprs and initial draws.

Examples
--------
>>> import gradstack_tensor as gt
>>> layer = Bilinear(3, 4, 2)
>>> layer(gt.ones(5, 3), gt.ones(5, 4)).shape
gradstack.Size([5, 2])
>>> RReLU(0.1, 0.3)
RReLU(lower=0.1, upper=0.3)
>>> LPPool2d(2, 3, stride=2)
LPPool2d(norm_type=2, kernel_size=3, stride=2, ceil_mode=False)
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Bilinear",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "RReLU",
    "LPPool1d",
    "LPPool2d",
    "Softmax2d",
    "ChannelShuffle",
    "LocalResponseNorm",
]


class Bilinear(Module):
    """``y = x1^T A x2 + b`` (:func:`F.bilinear`).

    Parameters
    ----------
    in1_features, in2_features, out_features : int
        The sizes of each sample of the two inputs and of the output.
    bias : bool, default True
        Whether to learn an additive bias.

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in1_features, in2_features)``, uniform in
        ``[-1/sqrt(in1_features), 1/sqrt(in1_features)]`` (torch's draws after the same
        seed).
    bias : Parameter or None
        Shape ``(out_features,)``, uniform in the same interval.
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(gt.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(gt.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight, then the bias, from ``U(-1/sqrt(in1), 1/sqrt(in1))``."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class _DropoutNd(Module):
    """torch's base of the dropouts (not ``Dropout``: ``isinstance(AlphaDropout(),
    Dropout)`` is False, as in torch)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(_DropoutNd):
    """Alpha dropout in training (:func:`F.alpha_dropout`: keeps zero mean and unit
    variance, for SELU networks), the identity in evaluation; ``inplace`` is stored and
    shown but not used, as torch's."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training (:func:`F.feature_alpha_dropout`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)


class RReLU(Module):
    """Randomized leaky ReLU (:func:`F.rrelu`): random slopes from ``U(lower, upper)``
    in training, the slope ``(lower + upper) / 2`` in evaluation."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over the last dim (:func:`F.lp_pool1d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool2d(_LPPoolNd):
    """Power-average pooling over the last two dims (:func:`F.lp_pool2d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


class ChannelShuffle(Module):
    """Interleave ``groups`` groups of channels (:func:`F.channel_shuffle`)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class LocalResponseNorm(Module):
    """Normalisation by the squares of ``size`` neighbouring channels
    (:func:`F.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
