"""``Normal(loc, scale)``: torch's formulas and draws."""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .distribution import Distribution, as_tensor

__all__ = ["Normal"]


class Normal(Distribution):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``
    (broadcast); ``rsample`` is ``loc + eps * scale`` with ``eps`` drawn as torch's."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        loc, scale = as_tensor(loc, scale if isinstance(scale, Tensor) else None), as_tensor(scale)
        self.loc, self.scale = gt.broadcast_tensors(loc, as_tensor(scale, loc))
        super().__init__(tuple(self.loc.shape), (), validate_args)
        self._check(
            bool((self.scale.detach() > 0).all()),
            f"Expected parameter scale ({type(self.scale).__name__} of shape "
            f"{tuple(self.scale.shape)}) of distribution {self!r} to satisfy the constraint "
            f"GreaterThan(lower_bound=0.0), but found invalid values:\n{self.scale}",
        )

    def _params(self) -> dict:
        return {"loc": self.loc, "scale": self.scale}

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def sample(self, sample_shape=()):
        """``normal(loc, scale)`` expanded to the sample's shape, without gradient."""
        from gradstack_autograd import no_grad

        shape = self._extended_shape(sample_shape)
        with no_grad():
            return gt.normal(self.loc.expand(*shape), self.scale.expand(*shape))

    def rsample(self, sample_shape=()):
        """``loc + eps * scale``, ``eps`` standard normal (reparametrised)."""
        shape = self._extended_shape(sample_shape)
        eps = gt.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = as_tensor(value, self.loc)
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value) -> Tensor:
        value = as_tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value) -> Tensor:
        value = as_tensor(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
