"""``NegativeBinomial(total_count, probs=None, logits=None)``: the number of successes
before ``total_count`` failures.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = NegativeBinomial(gt.tensor([3.0]), probs=gt.tensor([0.4]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([2.0])).tolist()]
[-1.5733]
>>> d.mean.tolist()
[2.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from .. import functional as F
from . import constraints
from ._binary_parameter import BinaryProbsLogits
from ._samplers import poisson
from .distribution import Distribution, ParamShapeOfParam
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(ParamShapeOfParam, BinaryProbsLogits, Distribution):
    """The negative binomial distribution: successes (probability ``probs``) of
    Bernoulli trials before ``total_count`` failures; drawn as a Poisson of a gamma,
    as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> NegativeBinomial(gt.tensor([5.0]), gt.tensor([0.5])).sample()  # torch's draw
    tensor([9.])
    """

    total_count: Tensor
    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, total_count, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits, total_count=total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(
            NegativeBinomial, batch_shape, _instance, "total_count", "probs", "logits"
        )

    @property
    def mean(self) -> Tensor:
        return self.total_count * gt.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / gt.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        # Note we avoid validating because self.total_count can be zero.
        return Gamma(concentration=self.total_count, rate=gt.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=Size()):  # noqa: B008
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)

        log_unnormalized_prob = self.total_count * F.logsigmoid(
            -self.logits
        ) + value * F.logsigmoid(self.logits)

        log_normalization = (
            -gt.lgamma(self.total_count + value)
            + gt.lgamma(1.0 + value)
            + gt.lgamma(self.total_count)
        )
        # The case self.total_count == 0 and value == 0 has probability 1 but
        # lgamma(0) is infinite. Handle this case separately using a function
        # that does not modify tensors in place to allow Jit compilation.
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)

        return log_unnormalized_prob - log_normalization
