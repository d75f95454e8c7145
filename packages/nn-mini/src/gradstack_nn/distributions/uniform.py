"""``Uniform(low, high)``: torch's formulas and draws."""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .distribution import Distribution, as_tensor

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``; ``rsample`` is ``low + u * (high -
    low)`` with ``u`` from ``rand``, as torch."""

    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        low = as_tensor(low, high if isinstance(high, Tensor) else None)
        self.low, self.high = gt.broadcast_tensors(low, as_tensor(high, low))
        super().__init__(tuple(self.low.shape), (), validate_args)
        self._check(
            bool((self.low.detach() < self.high.detach()).all()),
            f"Expected parameter low of distribution {self!r} to satisfy the constraint "
            "LessThan(upper_bound=high), but found invalid values",
        )

    def _params(self) -> dict:
        return {"low": self.low, "high": self.high}

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = gt.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        value = as_tensor(value, self.low)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        value = as_tensor(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
