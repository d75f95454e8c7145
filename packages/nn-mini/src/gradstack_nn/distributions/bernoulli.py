"""``Bernoulli(probs=None, logits=None)``: 1 with probability ``probs``, else 0.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Bernoulli(probs=gt.tensor([0.25]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([1.0])).tolist()]
[-1.3863]
>>> d.enumerate_support().tolist()
[[0.0], [1.0]]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from .. import functional as F
from . import constraints
from ._binary_parameter import BinaryProbsLogits
from .distribution import ParamShapeOfParam
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(ParamShapeOfParam, BinaryProbsLogits, ExponentialFamily):
    """The Bernoulli distribution, given by ``probs`` or by ``logits`` (log-odds), not
    both; samples are 0.0 or 1.0, drawn with ``bernoulli`` as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Bernoulli(gt.tensor([0.3, 0.9])).sample((2,))  # torch's draws
    tensor([[0., 1.],
            [1., 1.]])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Bernoulli, batch_shape, _instance, "probs", "logits")

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return gt.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = gt.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (gt.logit(self.probs),)

    def _log_normalizer(self, x):
        return gt.log1p(gt.exp(x))
