"""``Cauchy(loc, scale)``: the Cauchy (Lorentz) distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Cauchy(gt.tensor([0.0]), gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.8379]
>>> d.cdf(gt.tensor([1.0])).tolist()
[0.75]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from ._samplers import cauchy
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy distribution with median ``loc`` and half width ``scale``;
    ``rsample`` is ``loc + eps * scale`` with ``eps`` drawn as torch's ``cauchy_``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Cauchy(gt.tensor([0.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([10.5977])
    """

    loc: Tensor
    scale: Tensor
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self) -> Tensor:
        return gt.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return gt.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        eps = cauchy(shape, self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gt.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return gt.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
