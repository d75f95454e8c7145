"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: the continuous
Bernoulli distribution on ``[0, 1]`` (Loaiza-Ganem and Cunningham, 2019).

Examples
--------
>>> import gradstack_tensor as gt
>>> d = ContinuousBernoulli(gt.tensor([0.3]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.2])).tolist()]
[0.2245]
>>> [round(v, 4) for v in d.mean.tolist()]
[0.4302]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from .. import functional as F
from . import constraints
from .distribution import ParamShapeOfParam
from .exp_family import ExponentialFamily
from .utils import (
    _Number,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ParamShapeOfParam, ExponentialFamily):
    """The continuous Bernoulli distribution given by ``probs`` or ``logits``; between
    ``lims`` its normaliser and moments use Taylor expansions, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> ContinuousBernoulli(gt.tensor([0.3])).sample()  # torch's draw
    tensor([0.3936])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self, probs=None, logits=None, lims=(0.499, 0.501), validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _Number)
            (self.probs,) = broadcast_all(probs)
            # validate 'probs' here if necessary as it is later clamped for numerical
            # stability close to 0 and 1, later on; otherwise the clamped 'probs' would
            # always pass
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, _Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        return self._expand_parameters(ContinuousBernoulli, batch_shape, new, "probs", "logits")

    def _outside_unstable_region(self):
        return gt.max(gt.le(self.probs, self._lims[0]), gt.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return gt.where(
            self._outside_unstable_region(), self.probs, self._lims[0] * gt.ones_like(self.probs)
        )

    def _cont_bern_log_norm(self):
        """The log of the normalizing constant, as a function of ``probs``."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = gt.where(gt.le(cut_probs, 0.5), cut_probs, gt.zeros_like(cut_probs))
        cut_probs_above_half = gt.where(gt.ge(cut_probs, 0.5), cut_probs, gt.ones_like(cut_probs))
        log_norm = gt.log(gt.abs(gt.log1p(-cut_probs) - gt.log(cut_probs))) - gt.where(
            gt.le(cut_probs, 0.5),
            gt.log1p(-2.0 * cut_probs_below_half),
            gt.log(2.0 * cut_probs_above_half - 1.0),
        )
        x = gt.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return gt.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (gt.log1p(-cut_probs) - gt.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * gt.pow(x, 2)) * x
        return gt.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return gt.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        vars = cut_probs * (cut_probs - 1.0) / gt.pow(1.0 - 2.0 * cut_probs, 2) + 1.0 / gt.pow(
            gt.log1p(-cut_probs) - gt.log(cut_probs), 2
        )
        x = gt.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return gt.where(self._outside_unstable_region(), vars, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=Size()):  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = gt.rand(shape, dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = gt.rand(shape, dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -F.binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (
            gt.pow(cut_probs, value) * gt.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0
        ) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = gt.where(self._outside_unstable_region(), cdfs, value)
        return gt.where(
            gt.le(value, 0.0),
            gt.zeros_like(value),
            gt.where(gt.ge(value, 1.0), gt.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return gt.where(
            self._outside_unstable_region(),
            (gt.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - gt.log1p(-cut_probs))
            / (gt.log(cut_probs) - gt.log1p(-cut_probs)),
            value,
        )

    def entropy(self):
        log_probs0 = gt.log1p(-self.probs)
        log_probs1 = gt.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant as a function of the natural parameter."""
        out_unst_reg = gt.max(gt.le(x, self._lims[0] - 0.5), gt.gt(x, self._lims[1] - 0.5))
        cut_nat_params = gt.where(out_unst_reg, x, (self._lims[0] - 0.5) * gt.ones_like(x))
        log_norm = gt.log(gt.abs(gt.special.expm1(cut_nat_params))) - gt.log(gt.abs(cut_nat_params))
        taylor = 0.5 * x + gt.pow(x, 2) / 24.0 - gt.pow(x, 4) / 2880.0
        return gt.where(out_unst_reg, log_norm, taylor)
