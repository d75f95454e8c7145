"""``Bernoulli(probs=None, logits=None)``: torch's formulas and draws."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

from .distribution import Distribution, as_tensor

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = as_tensor(probs)
            eps = float(np.finfo(self.probs.dtype.numpy).eps)
            ps = self.probs.clamp(min=eps, max=1 - eps)
            self.logits = ps.log() - (-ps).log1p()
            self._param = self.probs
        else:
            self.logits = as_tensor(logits)
            self.probs = self.logits.sigmoid()
            self._param = self.logits
        super().__init__(tuple(self._param.shape), (), validate_args)
        if probs is not None:
            p = self.probs.detach()
            self._check(
                bool(((p >= 0) & (p <= 1)).all()),
                "Expected parameter probs to satisfy the constraint Interval(lower_bound=0.0, "
                f"upper_bound=1.0), but found invalid values:\n{self.probs}",
            )

    def _params(self) -> dict:
        return {"probs" if self._param is self.probs else "logits": self._param}

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return gt.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """``bernoulli(probs)`` expanded to the sample's shape, without gradient."""
        from gradstack_autograd import no_grad

        shape = self._extended_shape(sample_shape)
        with no_grad():
            return gt.bernoulli(self.probs.expand(*shape))

    def log_prob(self, value) -> Tensor:
        from ..functional import binary_cross_entropy_with_logits

        logits, value = gt.broadcast_tensors(self.logits, as_tensor(value, self.logits))
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        from ..functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
