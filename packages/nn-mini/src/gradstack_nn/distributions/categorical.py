"""``Categorical(probs=None, logits=None)``: a distribution over ``0 .. K-1``.

Examples
--------
>>> import gradstack_tensor as gt
>>> c = Categorical(probs=gt.tensor([0.25, 0.75]))
>>> round(c.entropy().item(), 4)
0.5623
>>> round(c.log_prob(gt.tensor(1)).item(), 4)
-0.2877
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

from . import constraints
from .distribution import Distribution, ParamShapeOfParam
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(ParamShapeOfParam, Distribution):
    """The categorical distribution given by ``probs`` (normalised over the last dim) or
    ``logits`` (unnormalised log-probabilities); the leading dims are batch dims.
    ``sample`` draws with ``multinomial(probs, n, replacement=True)``, as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Categorical(gt.tensor([0.25, 0.25, 0.25, 0.25])).sample((4,))  # torch's draws
    tensor([3, 2, 1, 3])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = batch_shape + Size((self._num_events,))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def mean(self) -> Tensor:
        return gt.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return gt.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):  # noqa: B008
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = gt.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = gt.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = gt.finfo(self.logits.dtype).min
        logits = gt.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = gt.arange(self._num_events, dtype=gt.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
