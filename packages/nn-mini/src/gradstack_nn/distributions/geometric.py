"""``Geometric(probs=None, logits=None)``: the number of failures before the first
success of Bernoulli trials.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Geometric(gt.tensor([0.25]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([2.0])).tolist()]
[-1.9617]
>>> d.mean.tolist()
[3.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from .. import functional as F
from . import constraints
from ._binary_parameter import BinaryProbsLogits
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    """The geometric distribution on ``{0, 1, ...}`` with success probability
    ``probs`` (positive) or ``sigmoid(logits)``; draws invert the CDF at
    ``uniform_(tiny, 1)`` draws, as torch.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Geometric(gt.tensor([0.3])).sample((3,)).flatten()  # torch's draws
    tensor([1., 0., 6.])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Add an extra check beyond unit_interval
            value = self.probs
            valid = value > 0
            if not valid.all():
                invalid_value = value.data[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Geometric, batch_shape, _instance, "probs", "logits")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return gt.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        tiny = gt.finfo(self.probs.dtype).tiny
        with no_grad():
            u = gt.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return (
            F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )
