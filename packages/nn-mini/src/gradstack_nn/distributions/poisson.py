"""``Poisson(rate)``: the Poisson distribution, with torch's sampler.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Poisson(gt.tensor([4.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([2.0])).tolist()]
[-1.9206]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from . import constraints
from ._samplers import poisson
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with ``rate``; samples are drawn as ``torch.poisson``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Poisson(gt.tensor([4.0, 30.0])).sample()  # torch's draws
    tensor([ 7., 31.])
    """

    rate: Tensor
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Poisson, batch_shape, _instance, "rate")

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (gt.log(self.rate),)

    def _log_normalizer(self, x):
        return gt.exp(x)
