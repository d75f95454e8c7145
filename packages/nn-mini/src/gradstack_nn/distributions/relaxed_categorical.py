"""``RelaxedOneHotCategorical(temperature, probs=None, logits=None)`` (and its log-space
base, ``ExpRelaxedCategorical``): the Concrete / Gumbel-softmax distribution.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = RelaxedOneHotCategorical(gt.tensor(0.5), probs=gt.tensor([0.2, 0.8]))
>>> round(d.log_prob(gt.tensor([0.3, 0.7])).item(), 4)
-0.742
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from ._relaxed import ParametersOfBase
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` draw (Maddison et al., 2017): Gumbel
    noise added to the logits, divided by ``temperature``, log-normalised.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> ExpRelaxedCategorical(gt.tensor(1.0), logits=gt.zeros(3)).rsample().shape
    gradstack.Size([3])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # The true support is actually a submanifold of this.
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(gt.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = gt.full_like(self.temperature, float(K)).lgamma() - self.temperature.log().mul(
            -(K - 1)
        )
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(ParametersOfBase, TransformedDistribution):
    """A reparameterisable relaxation of ``OneHotCategorical`` to the simplex with
    ``temperature``: ``ExpRelaxedCategorical`` through ``exp``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> RelaxedOneHotCategorical(gt.tensor([2.2]), gt.tensor([0.1, 0.2, 0.3, 0.4])).sample()
    tensor([0.1911, 0.4083, 0.1791, 0.2215])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
