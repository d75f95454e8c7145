"""``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = HalfCauchy(gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.1447]
>>> [round(v, 4) for v in d.cdf(gt.tensor([1.0])).tolist()]
[0.5]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The half-Cauchy distribution with ``scale``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> HalfCauchy(gt.tensor([1.0])).sample()  # torch's draw
    tensor([10.5977])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return gt.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self) -> Tensor:
        return gt.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = gt.as_tensor(value, dtype=self.base_dist.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return gt.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
