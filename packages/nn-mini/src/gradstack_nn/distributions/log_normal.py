"""``LogNormal(loc, scale)``: ``exp(X)`` for ``X ~ Normal(loc, scale)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = LogNormal(gt.tensor([0.0]), gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-0.9189]
>>> [round(v, 4) for v in d.mean.tolist()]
[1.6487]
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """The log-normal distribution: ``Normal(loc, scale)`` through ``ExpTransform``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> LogNormal(gt.tensor([0.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([4.6692])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
