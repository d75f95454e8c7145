"""``Uniform(low, high)``: the uniform distribution on ``[low, high)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Uniform(gt.tensor([0.0]), gt.tensor([4.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.3863]
>>> d.cdf(gt.tensor([1.0])).tolist()
[0.25]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from .distribution import Distribution

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform draws on ``[low, high)``: ``low + rand * (high - low)``, reparameterised.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Uniform(gt.tensor([0.0]), gt.tensor([5.0])).sample()  # torch's draw
    tensor([2.4813])
    """

    has_rsample = True

    low: Tensor
    high: Tensor

    @property
    def arg_constraints(self):
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(low=low, high=high)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Uniform, batch_shape, _instance, "low", "high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        rand = gt.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return gt.log(lb.mul(ub)) - gt.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return gt.log(self.high - self.low)
