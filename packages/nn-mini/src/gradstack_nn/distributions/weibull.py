"""``Weibull(scale, concentration)``: the two-parameter Weibull distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Weibull(gt.tensor([1.0]), gt.tensor([2.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-0.3069]
>>> [round(v, 4) for v in d.mean.tolist()]
[0.8862]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution: ``scale * E ** (1 / concentration)`` for
    ``E ~ Exponential(1)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Weibull(gt.tensor([1.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([3.5083])
    """

    arg_constraints = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(gt.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * gt.exp(gt.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return (
            self.scale
            * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()
        )

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (
            gt.exp(gt.lgamma(1 + 2 * self.concentration_reciprocal))
            - gt.exp(2 * gt.lgamma(1 + self.concentration_reciprocal))
        )

    def entropy(self):
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + gt.log(self.scale * self.concentration_reciprocal)
            + 1
        )
