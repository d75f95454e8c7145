"""``GeneralizedPareto(loc, scale, concentration)``: the generalized Pareto distribution
of peaks over a threshold.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = GeneralizedPareto(gt.tensor([0.0]), gt.tensor([1.0]), gt.tensor([0.5]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.2164]
>>> d.mean.tolist()
[2.0]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from .distribution import Distribution
from .utils import _Number

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location ``loc``, scale ``scale`` and
    shape ``concentration`` (the exponential distribution at 0); ``rsample`` inverts the
    CDF at a uniform draw.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> GeneralizedPareto(gt.tensor([0.1]), gt.tensor([2.0]), gt.tensor([0.4])).sample()
    tensor([1.6779])
    """

    loc: Tensor
    scale: Tensor
    concentration: Tensor
    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None):
        batch_shape = self._set_parameters(loc=loc, scale=scale, concentration=concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(
            GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration"
        )

    def rsample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = gt.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero = gt.isclose(self.concentration, gt.tensor(0.0))
        safe_conc = gt.where(eq_zero, gt.ones_like(self.concentration), self.concentration)
        y = 1 / safe_conc + gt.ones_like(z)
        where_nonzero = gt.where(y == 0, y, y * gt.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, _Number) else self.scale.log()
        return -log_scale - gt.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero = gt.isclose(self.concentration, gt.tensor(0.0))
        safe_conc = gt.where(eq_zero, gt.ones_like(self.concentration), self.concentration)
        where_nonzero = -gt.log1p(safe_conc * z) / safe_conc
        return gt.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return gt.log1p(-gt.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return gt.exp(self.log_cdf(value))

    def icdf(self, value):
        loc = self.loc
        scale = self.scale
        concentration = self.concentration
        eq_zero = gt.isclose(concentration, gt.zeros_like(concentration))
        safe_conc = gt.where(eq_zero, gt.ones_like(concentration), concentration)
        logu = gt.log1p(-value)
        where_nonzero = loc + scale / safe_conc * gt.expm1(-safe_conc * logu)
        where_zero = loc - scale * logu
        return gt.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        concentration = self.concentration
        valid = concentration < 1
        safe_conc = gt.where(valid, concentration, 0.5)
        result = self.loc + self.scale / (1 - safe_conc)
        return gt.where(valid, result, math.nan)

    @property
    def variance(self):
        concentration = self.concentration
        valid = concentration < 0.5
        safe_conc = gt.where(valid, concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return gt.where(valid, result, math.nan)

    def entropy(self):
        ans = gt.log(self.scale) + self.concentration + 1
        return gt.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = gt.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
