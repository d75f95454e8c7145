"""``Exponential(rate)``: the exponential distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Exponential(gt.tensor([2.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.3069]
>>> [round(v, 4) for v in d.icdf(gt.tensor([0.5])).tolist()]
[0.3466]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate``; ``rsample`` is
    ``empty(shape).exponential_() / rate``, as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Exponential(gt.tensor([1.0])).sample()  # torch's draw
    tensor([3.5083])
    """

    rate: Tensor
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return gt.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Exponential, batch_shape, _instance, "rate")

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        return gt.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - gt.exp(-self.rate * value)

    def icdf(self, value):
        return -gt.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - gt.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -gt.log(-x)
