"""``Normal(loc, scale)``: the Gaussian distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Normal(gt.tensor([0.0]), gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.0])).tolist()]
[-0.9189]
>>> round(d.cdf(gt.tensor([1.0])).item(), 4)
0.8413
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from . import constraints
from ._location import MeanAndModeAtLoc
from .exp_family import ExponentialFamily
from .utils import _Number, _standard_normal

__all__ = ["Normal"]


class Normal(MeanAndModeAtLoc, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``
    (broadcast together); ``rsample`` is ``loc + eps * scale``.

    Parameters
    ----------
    loc : float or Tensor
        The mean.
    scale : float or Tensor
        The standard deviation (positive).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Normal(gt.tensor([0.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([1.5410])
    """

    loc: Tensor
    scale: Tensor
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Normal, batch_shape, _instance, "loc", "scale")

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return gt.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, _Number) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + gt.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * gt.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + gt.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * gt.log(-math.pi / y)
