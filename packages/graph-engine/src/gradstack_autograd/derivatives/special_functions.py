"""torch.special's functions with kernels of their own (tensor-core's ``_bessel_kernels``):
their derivatives as torch's derivatives.yaml writes them.

- ``i0``, ``special_i0e``, ``special_i1``, ``special_i1e``, ``special_erfcx``: the
  derivative in terms of the next function of the family (``i0' = i1``);
- ``igamma``/``igammac`` and ``special_zeta``: differentiable in their second argument
  only; the first argument's gradient raises torch's NotImplementedError when backward
  needs it (Note [Derivatives torch does not implement]);
- ``nextafter``: ``grad`` for ``self``, zeros for ``other``; ``frexp``: the mantissa's
  gradient divided by ``2 ** exponent``;
- the Bessel functions and the orthogonal polynomials: no derivative in torch, their
  results never require grad.

Note [Derivatives torch does not implement]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch records ``IgammaBackward0`` when either argument requires grad, and its formula for
``self`` is ``not_implemented("igamma: input")``: backward raises only when that gradient
is wanted, with "the derivative for 'igamma: input' is not implemented." (``zeta``:
"... for 'zeta' ...").  The formulas below raise the same error from the same place.
torch has no forward formula for these three ops either (forward AD raises "Trying to use
forward AD with igamma that does not support it"), so they are in ``NO_JVP``.
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import special
from gradstack_tensor.extension import data_of, wrap

from ._elementwise import elementwise
from ._table import NO_JVP, _not_differentiable, jvp, register
from .batching import per_sample, pointwise, unary

__all__: list[str] = []


@elementwise("i0(self)", "I0Backward0")
def _i0(grad, self):
    return grad * special.i1(self)


@elementwise("special_i0e(self)", "SpecialI0EBackward0")
def _i0e(grad, self, result):
    return grad * (special.i1e(self) - self.sgn() * result)


def _safe(self):
    """torch's i1_backward: where ``|x| <= eps`` the derivative is 0.5, computed at eps."""
    eps = gt.finfo(self.dtype).eps
    not_tiny = self.abs() > eps
    return not_tiny, gt.where(not_tiny, self, eps)


@elementwise("special_i1(self)", "SpecialI1Backward0")
def _i1(grad, self, result):
    not_tiny, safe = _safe(self)
    gradx = safe.i0() - result * safe.reciprocal()
    return grad * gt.where(not_tiny, gradx, 0.5)


@elementwise("special_i1e(self)", "SpecialI1EBackward0")
def _i1e(grad, self, result):
    not_tiny, safe = _safe(self)
    gradx = special.i0e(safe) - result * (safe.sgn() + safe.reciprocal())
    return grad * gt.where(not_tiny, gradx, 0.5)


@elementwise("special_erfcx(self)", "SpecialErfcxBackward0")
def _erfcx(grad, self, result):
    return (2.0 * self * result - 2.0 / math.sqrt(math.pi)) * grad


def _not_implemented(what):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")

    return formula


def _igamma_other(grad, self, other):
    return grad * ((self - 1) * other.log() - other - self.lgamma()).exp()


def _igammac_other(grad, self, other):
    return -grad * ((self - 1) * other.log() - other - self.lgamma()).exp()


elementwise(
    "igamma(self, other)",
    "IgammaBackward0",
    self=_not_implemented("igamma: input"),
    other=_igamma_other,
)
elementwise(
    "igammac(self, other)",
    "IgammacBackward0",
    self=_not_implemented("igammac: input"),
    other=_igammac_other,
)
elementwise(
    "special_zeta(self, other)",
    "SpecialZetaBackward0",
    self=_not_implemented("zeta"),
    other=lambda grad, self, other: grad * -self * special.zeta(self + 1.0, other),
)
for _name in ("igamma", "igammac", "igamma_", "igammac_", "special_zeta"):
    NO_JVP[_name] = "torch has no forward formula for it (Note [Derivatives torch does not "
    "implement] in derivatives.special_functions)"
del _name

elementwise(
    "nextafter(self, other)",
    "NextafterBackward0",
    self=lambda grad: grad,
    other=lambda grad, other: gt.zeros_like(grad),
)

_not_differentiable(
    "special_airy_ai", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0",
    "special_bessel_y1", "special_modified_bessel_i0", "special_modified_bessel_i1",
    "special_modified_bessel_k0", "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0", batch=unary,
)  # fmt: skip
_not_differentiable(
    "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w",
    "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
    "special_shifted_chebyshev_polynomial_t", "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v", "special_shifted_chebyshev_polynomial_w",
    batch=pointwise,
)  # fmt: skip


def _exponent(args, out):
    """frexp's exponent (a copy, kept by the node): the gradient divides by ``2 ** e``."""
    return data_of(out[1]).copy() if isinstance(out, tuple) else None


@register(
    "frexp(self)",
    "FrexpBackward0",
    extra=_exponent,
    batch=per_sample("frexp returns two tensors; rare in vmap"),
)
def _frexp(ctx, grad, grad_exponent=None):
    if grad is None:
        return (None,)
    return (grad / wrap(ctx.extra).exp2(),)  # torch's grad / exponent.exp2()


@jvp("frexp")
def _frexp_jvp(args, out, tangents, lead):
    (t,) = tangents
    return (t / out[1].exp2(), None)  # torch's self_t / exponent.exp2()
