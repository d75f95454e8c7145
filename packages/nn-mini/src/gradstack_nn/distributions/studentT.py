"""``StudentT(df, loc=0.0, scale=1.0)``: Student's t-distribution (the module keeps
torch's name, ``torch.distributions.studentT``).

Examples
--------
>>> import gradstack_tensor as gt
>>> d = StudentT(gt.tensor([3.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.5763]
>>> d.variance.tolist()
[3.0]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and
    scale ``scale``; ``rsample`` is ``loc + scale * X / sqrt(Z / df)`` with ``X`` standard
    normal and ``Z`` chi-squared, drawn in that order as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> StudentT(gt.tensor([2.0])).sample()  # torch's draw
    tensor([2.2854])
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.df.clone()
        m[self.df > 2] = (
            self.scale[self.df > 2].pow(2) * self.df[self.df > 2] / (self.df[self.df > 2] - 2)
        )
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(
            StudentT, batch_shape, _instance, "df", "loc", "scale", "_chi2"
        )

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        # NOTE: This does not agree with scipy implementation as much as other distributions.
        # (see https://github.com/fritzo/notebooks/blob/master/debug-student-t.ipynb). Using
        # DoubleTensor parameters seems to help.
        #   X ~ Normal(0, 1)
        #   Z ~ Chi2(df)
        #   Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        Y = X * gt.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + gt.lgamma(0.5 * self.df)
            - gt.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * gt.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = gt.lgamma(0.5 * self.df) + math.lgamma(0.5) - gt.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5 * (self.df + 1) * (gt.digamma(0.5 * (self.df + 1)) - gt.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
