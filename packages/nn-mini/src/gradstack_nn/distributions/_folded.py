"""What ``HalfNormal`` and ``HalfCauchy`` share: ``|X|`` for ``X`` of a location-scale
family centred at 0, as a ``TransformedDistribution`` through ``AbsTransform``.

Note [Folded distributions]
torch writes ``HalfNormal`` and ``HalfCauchy`` out in full, alike but for the base
family, the mean and the variance; the shared part (the constructor, the density folded
onto ``[0, inf)``, the cdf, icdf, entropy and mode) is written once here.  Each class
keeps its own ``expand`` (``_get_checked_instance`` needs the class itself, so that a
subclass without its own ``expand`` is refused, as torch's).
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """``|X|`` for ``X ~ base_family(0, scale)`` (``base_family`` a class attribute of the
    subclass).

    Examples
    --------
    >>> from gradstack_nn.distributions import HalfNormal
    >>> HalfNormal(1.0).cdf(gt.tensor(0.0)).item()
    0.0
    """

    base_family: type
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = self.base_family(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return gt.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(value)

    def _folded_log_prob(self, value):
        """The base density doubled on ``[0, inf)``, ``-inf`` below 0."""
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return gt.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
