"""``RelaxedBernoulli(temperature, probs=None, logits=None)`` (and its logit-space base,
``LogitRelaxedBernoulli``): the binary Concrete / Gumbel-softmax relaxation.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = RelaxedBernoulli(gt.tensor(0.5), probs=gt.tensor([0.3]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.2])).tolist()]
[-0.2528]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from ._binary_parameter import BinaryProbsLogits
from ._relaxed import ParametersOfBase
from .distribution import Distribution, ParamShapeOfParam
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    broadcast_all,
    clamp_probs,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(ParamShapeOfParam, BinaryProbsLogits, Distribution):
    """The logit of a ``RelaxedBernoulli`` draw (Maddison et al., 2017): reparameterised
    through ``log(u) - log1p(-u)`` of a uniform ``u``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> LogitRelaxedBernoulli(gt.tensor(1.0), logits=gt.zeros(3)).rsample().shape
    gradstack.Size([3])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        self.temperature = temperature
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        return self._expand_parameters(LogitRelaxedBernoulli, batch_shape, new, "probs", "logits")

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(gt.rand(shape, dtype=probs.dtype))
        return (
            uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()
        ) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(ParametersOfBase, TransformedDistribution):
    """A reparameterisable relaxation of ``Bernoulli`` to ``(0, 1)`` with
    ``temperature``: ``LogitRelaxedBernoulli`` through a sigmoid.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> RelaxedBernoulli(gt.tensor([2.2]), gt.tensor([0.1])).sample()  # torch's draw
    tensor([0.2679])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
