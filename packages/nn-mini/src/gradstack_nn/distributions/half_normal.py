"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = HalfNormal(gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-0.7258]
>>> [round(v, 4) for v in d.mean.tolist()]
[0.7979]
"""

from __future__ import annotations

import math

from gradstack_tensor import Tensor

from ._folded import FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """The half-normal distribution with ``scale``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> HalfNormal(gt.tensor([1.0])).sample()  # torch's draw
    tensor([1.5410])
    """

    base_family = Normal

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
