"""``VonMises(loc, concentration)``: the circular normal distribution on ``[-pi, pi)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = VonMises(gt.tensor([0.0]), gt.tensor([2.0]))
>>> [round(v, 4) for v in d.log_prob(gt.tensor([0.5])).tolist()]
[-0.9067]
>>> [round(v, 4) for v in d.variance.tolist()]
[0.3022]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from . import constraints
from ._location import MeanAndModeAtLoc
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


# Abramowitz and Stegun's polynomial approximations of the modified Bessel functions
# I0 and I1 (9.8.1 to 9.8.4), as torch's.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [
    0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281,
    -0.02057706, 0.02635537, -0.01647633, 0.00392377,
]  # fmt: skip
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [
    0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555,
    0.02282967, -0.02895312, 0.01787654, -0.00420059,
]  # fmt: skip

_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """``log(I_order(x))`` for ``x >= 0`` and order 0 or 1."""
    if order != 0 and order != 1:
        raise AssertionError(f"order must be 0 or 1, got {order}")

    # compute small solution
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()

    # compute large solution
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, _COEF_LARGE[order]).log()

    return gt.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    # Best and Fisher's (1979) rejection sampler, over all elements at once: each round
    # draws three uniforms per element and keeps the first acceptance of each.
    done = gt.zeros(x.shape, dtype=gt.bool)
    while not done.all():
        u = gt.rand((3,) + tuple(x.shape), dtype=loc.dtype)
        u1, u2, u3 = u.unbind()
        z = gt.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = gt.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(MeanAndModeAtLoc, Distribution):
    """The von Mises distribution with mean direction ``loc`` and ``concentration``;
    ``sample`` uses Best and Fisher's rejection sampler in float64, as torch.  Its
    ``mean`` (the circular mean) and ``mode`` are ``loc``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> VonMises(gt.tensor([1.0]), gt.tensor([1.0])).sample()  # torch's draw
    tensor([1.2782])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        event_shape = Size()
        super().__init__(batch_shape, event_shape, validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * gt.cos(value - self.loc)
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(gt.double)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(gt.double)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho**2) / (2 * rho)
        # second order Taylor expansion around 0 for small kappa
        _proposal_r_taylor = 1 / kappa + kappa
        return gt.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)

    def sample(self, sample_shape=Size()):  # noqa: B008
        """Draws in float64 (Best and Fisher, 1979), cast to the parameters' dtype."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = gt.empty(shape, dtype=self._loc.dtype)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(
                self.loc.dtype
            )

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance, ``1 - I1(kappa) / I0(kappa)``."""
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, order=1)
                - _log_modified_bessel_fn(self.concentration, order=0)
            ).exp()
        )
