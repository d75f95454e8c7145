"""``Categorical(probs=None, logits=None)``: torch's formulas and draws."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

from .distribution import Distribution

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A distribution over ``0 .. K-1`` given by ``probs`` (normalised) or ``logits``
    (normalised as log-probabilities) over the last dim; ``sample`` draws with
    ``multinomial``, as torch."""

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        super().__init__((), (), validate_args)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self._check(
                bool((probs.detach() >= 0).all()),
                "Expected parameter probs to satisfy the constraint Simplex(), but found "
                f"invalid values:\n{probs}",
            )
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self._probs_to_logits(self.probs)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        self._batch_shape = gt.Size(tuple(self._param.shape[:-1]))

    @staticmethod
    def _probs_to_logits(probs: Tensor) -> Tensor:
        eps = float(np.finfo(probs.dtype.numpy).eps)
        return probs.clamp(min=eps, max=1 - eps).log()

    def _params(self) -> dict:
        return {"probs" if self._param is self.probs else "logits": self._param}

    @property
    def mean(self) -> Tensor:
        return gt.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return gt.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=()):
        """Draws of ``multinomial(probs, n, replacement=True)``, as torch."""
        sample_shape = tuple(sample_shape)
        n = int(np.prod(sample_shape, dtype=np.int64)) if sample_shape else 1
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = gt.multinomial(probs_2d, n, True).t()
        return samples_2d.reshape(*self._extended_shape(sample_shape))

    def log_prob(self, value) -> Tensor:
        value = value.long().unsqueeze(-1)
        value, log_pmf = gt.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype.numpy).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = gt.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values
