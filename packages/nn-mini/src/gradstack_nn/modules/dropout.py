"""Dropout layers: ``Dropout``, ``Dropout1d``/``2d``/``3d`` (whole channels),
``AlphaDropout`` and ``FeatureAlphaDropout`` (SELU's), over the functions of
:mod:`gradstack_nn.functional.dropouts`; each is the identity in evaluation mode.

Examples
--------
>>> import gradstack_tensor as gt
>>> drop = Dropout(0.5)
>>> drop
Dropout(p=0.5, inplace=False)
>>> drop.eval()(gt.ones(3)).tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    """torch's base of the dropouts: ``p`` (checked) and ``inplace`` (``Dropout`` derives
    from it, as torch's, and the alpha dropouts do, so ``isinstance(AlphaDropout(),
    Dropout)`` is False, as in torch)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` in training mode (scaling the others by
    ``1/(1-p)``); the identity in evaluation mode."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(Dropout):
    """Zero whole channels of ``(N, C, L)``/``(C, L)`` inputs in training
    (:func:`F.dropout1d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zero whole channels of ``(N, C, H, W)`` inputs in training (:func:`F.dropout2d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of ``(N, C, D, H, W)`` inputs in training
    (:func:`F.dropout3d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


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
