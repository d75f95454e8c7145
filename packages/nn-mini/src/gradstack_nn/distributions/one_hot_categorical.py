"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``: a categorical draw as
a one-hot vector.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = OneHotCategorical(gt.tensor([0.25, 0.75]))
>>> round(d.log_prob(gt.tensor([0.0, 1.0])).item(), 4)
-0.2877
>>> d.enumerate_support().tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from .. import functional as F
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A ``Categorical`` whose samples are one-hot vectors of length ``K``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> OneHotCategorical(gt.tensor([0.25, 0.25, 0.25, 0.25])).sample()  # torch's draw
    tensor([0., 0., 1., 0.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return F.one_hot(mode, num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):  # noqa: B008
        sample_shape = Size(sample_shape)
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, num_events).to(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = gt.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` whose ``rsample`` passes gradients straight through:
    the one-hot sample plus ``probs - probs.detach()`` (Bengio et al., 2013).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> p = gt.tensor([0.2, 0.8], requires_grad=True)
    >>> OneHotCategoricalStraightThrough(p).rsample().requires_grad
    True
    """

    has_rsample = True

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # cached via @lazy_property
        return samples + (probs - probs.detach())
