"""``Gamma(concentration, rate)``: the gamma distribution, with torch's sampler and its
reparameterised (implicit) gradient.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Gamma(gt.tensor([2.0]), gt.tensor([3.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.5])).tolist()]
[0.0041]
>>> [round(v, 4) for v in d.mean.tolist()]
[0.6667]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import Function, once_differentiable
from gradstack_tensor import Size, Tensor
from gradstack_tensor.extension import data_of, wrap

from . import constraints
from ._implicit_grads import standard_gamma_grad
from ._samplers import standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Gamma"]


class _StandardGamma(Function):
    """``torch._standard_gamma`` with its derivative, ``grad * _standard_gamma_grad``."""

    @staticmethod
    def forward(ctx, concentration):
        x = standard_gamma(concentration)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        return grad * wrap(standard_gamma_grad(data_of(concentration), data_of(x)))


def _standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws (torch's), differentiable in ``concentration``."""
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``;
    ``rsample`` is ``_standard_gamma(concentration) / rate``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Gamma(gt.tensor([1.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([2.8824])
    """

    concentration: Tensor
    rate: Tensor
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        batch_shape = self._set_parameters(concentration=concentration, rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Gamma, batch_shape, _instance, "concentration", "rate")

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=gt.finfo(value.dtype).tiny)  # do not record the clamp
        return value

    def log_prob(self, value):
        value = gt.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (
            gt.xlogy(self.concentration, self.rate)
            + gt.xlogy(self.concentration - 1, value)
            - self.rate * value
            - gt.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - gt.log(self.rate)
            + gt.lgamma(self.concentration)
            + (1.0 - self.concentration) * gt.digamma(self.concentration)
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return gt.lgamma(x + 1) + (x + 1) * gt.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gt.special.gammainc(self.concentration, self.rate * value)
