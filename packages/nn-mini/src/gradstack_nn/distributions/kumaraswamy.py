"""``Kumaraswamy(concentration1, concentration0)``: a Beta-like distribution on
``[0, 1]`` with a closed-form CDF.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Kumaraswamy(gt.tensor([2.0]), gt.tensor([3.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.5])).tolist()]
[0.5232]
>>> [round(v, 4) for v in d.mean.tolist()]
[0.4571]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The ``n``-th moment of Kumaraswamy(a, b), ``b * Beta(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = gt.lgamma(arg1) + gt.lgamma(b) - gt.lgamma(arg1 + b)
    return b * gt.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution: ``(1 - U ** (1 / concentration0)) ** (1 /
    concentration1)`` for a uniform ``U``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Kumaraswamy(gt.tensor([1.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([0.5037])
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            gt.full_like(self.concentration0, 0),
            gt.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        # Evaluate in log-space for numerical stability.
        log_mode = (
            self.concentration0.reciprocal() * (-self.concentration0).log1p()
            - (-self.concentration0 * self.concentration1).log1p()
        )
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - gt.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = gt.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - gt.log(self.concentration1) - gt.log(self.concentration0)
