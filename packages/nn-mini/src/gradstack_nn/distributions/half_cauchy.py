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

from ._folded import FoldedAtZero
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """The half-Cauchy distribution with ``scale``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> HalfCauchy(gt.tensor([1.0])).sample()  # torch's draw
    tensor([10.5977])
    """

    base_family = Cauchy

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return gt.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = gt.as_tensor(value, dtype=self.base_dist.scale.dtype)
        return self._folded_log_prob(value)
