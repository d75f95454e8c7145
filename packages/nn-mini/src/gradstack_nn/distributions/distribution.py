"""``Distribution``: the shapes, validation and sampling interface of torch's."""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Size, Tensor

__all__ = ["Distribution"]


def as_tensor(value, like: Tensor | None = None) -> Tensor:
    """A number as a tensor of ``like``'s dtype (or the default dtype)."""
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None else gt.get_default_dtype()
    return gt.tensor(float(value), dtype=dtype)


class Distribution:
    """Base class: ``batch_shape``, ``event_shape``, ``sample``/``rsample``,
    ``sample_n``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``stddev``."""

    has_rsample = False
    _validate_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        self._validate_args = self._validate_default if validate_args is None else validate_args

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Validate arguments by default (True, as torch) or not."""
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple:
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def sample(self, sample_shape=()):
        """A sample without gradient (``rsample`` under no_grad where it exists)."""
        from gradstack_autograd import no_grad

        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparametrised sampler")

    def sample_n(self, n: int):
        return self.sample((n,))

    def log_prob(self, value) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _check(self, ok: bool, message: str) -> None:
        if self._validate_args and not ok:
            raise ValueError(message)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}: {self._param_repr(v)}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    @staticmethod
    def _param_repr(value) -> str:
        return repr(value) if value.numel() == 1 else f"size: {value.size()}"

    def _params(self) -> dict:
        return {}
