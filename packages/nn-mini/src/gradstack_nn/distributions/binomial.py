"""``Binomial(total_count=1, probs=None, logits=None)``: the binomial distribution, with
torch's sampler.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Binomial(10, probs=gt.tensor([0.5]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([5.0])).tolist()]
[-1.402]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from . import constraints
from ._binary_parameter import BinaryProbsLogits
from ._samplers import binomial
from .distribution import Distribution, ParamShapeOfParam

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # clamp(min=0) with a gradient of 0.5 at 0, as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ParamShapeOfParam, BinaryProbsLogits, Distribution):
    """The number of successes of ``total_count`` trials with success probability
    ``probs`` (or ``sigmoid(logits)``); samples are drawn as ``torch.binomial``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Binomial(100, gt.tensor([0.1, 0.5])).sample()  # torch's draws
    tensor([11., 45.])
    """

    total_count: Tensor
    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self, total_count=1, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits, total_count=total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(
            Binomial, batch_shape, _instance, "total_count", "probs", "logits"
        )

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = gt.lgamma(self.total_count + 1)
        log_factorial_k = gt.lgamma(value + 1)
        log_factorial_nmk = gt.lgamma(self.total_count - value + 1)
        # k * log(p) + (n - k) * log(1 - p) = k * (log(p) - log(1 - p)) + n * log(1 - p)
        #     (case logit < 0)              = k * logit - n * log1p(e^logit)
        #     (case logit > 0)              = k * logit - n * (log(p) - log(1 - p)) + n * log(p)
        #                                   = k * logit - n * logit - n * log1p(e^-logit)
        #     (merge two cases)             = k * logit - n * max(logit, 0) - n * log1p(e^-|logit|)
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * gt.log1p(gt.exp(-gt.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(gt.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = gt.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
