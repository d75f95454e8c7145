"""``Laplace(loc, scale)``: the Laplace (double exponential) distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Laplace(gt.tensor([0.0]), gt.tensor([1.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.6931]
>>> [round(v, 4) for v in d.cdf(gt.tensor([1.0])).tolist()]
[0.8161]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from ._location import MeanAndModeAtLoc
from .distribution import Distribution

__all__ = ["Laplace"]


class Laplace(MeanAndModeAtLoc, Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``;
    ``rsample`` inverts the CDF at ``uniform_(eps - 1, 1)`` draws, as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Laplace(gt.tensor([0.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([-0.0075])
    """

    loc: Tensor
    scale: Tensor
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Laplace, batch_shape, _instance, "loc", "scale")

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        finfo = gt.finfo(self.loc.dtype)
        u = gt.empty(shape, dtype=self.loc.dtype).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * u.sign() * gt.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -gt.log(2 * self.scale) - gt.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * gt.expm1(
            -(value - self.loc).abs() / self.scale
        )

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * gt.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + gt.log(2 * self.scale)
