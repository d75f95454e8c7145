"""``gradstack_tensor.special`` (``gradstack.special``): torch's ``torch.special``.

The functions that are existing ops under other names, or compositions of them
(``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``entr``, ``ndtr``, ``ndtri``,
``log_ndtr``, ``erf``, ``erfc``, ``erfinv``, ``exp2``, ``expm1``, ``log1p``, ``sinc``,
``round``, ``logsumexp``, ``softmax``, ``log_softmax``, ``gammaln``, ``digamma``/``psi``,
``polygamma``, ``multigammaln``, ``i0``, ``gammainc``/``gammaincc`` (``igamma``,
``igammac``)), and the ops of their own, with C kernels of torch's algorithms
(``_bessel_kernels.pyx``): the Bessel functions (``bessel_j0`` ... ``airy_ai``,
``modified_bessel_*``, ``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0``,
``i0e``, ``i1``, ``i1e``), ``erfcx``, the Hurwitz ``zeta`` and the orthogonal
polynomials (``chebyshev_polynomial_t`` ... ``legendre_polynomial_p``, of a tensor or
number ``input`` and degree ``n``).  Derivatives are torch's: ``i0``, ``i0e``, ``i1``,
``i1e``, ``erfcx``, ``zeta`` and ``gammainc``/``gammaincc`` in their second argument; the
Bessel functions and the polynomials carry no gradient (their results never require
grad, as torch's).

Examples
--------
>>> import gradstack_tensor as gt
>>> ndtr(gt.tensor(0.0)).item()  # (this module's round is torch.special.round)
0.5
>>> entr(gt.tensor([0.0, 0.5])).tolist()
[0.0, 0.3465735912322998]
>>> [round(v, 6) for v in bessel_j0(gt.tensor([0.0, 1.0], dtype=gt.float64)).tolist()]
[1.0, 0.765198]
>>> chebyshev_polynomial_t(gt.tensor([0.5]), 2).tolist()
[-0.5]
"""

from __future__ import annotations

import math

from ._composite_args import method_form
from ._dispatch import OPS, dispatch
from ._out import write_out
from ._tensor import Tensor
from .elementwise_composites import _in_result_dtype

__all__ = [
    "expit", "logit", "xlogy", "xlog1py", "entr", "ndtr", "ndtri", "log_ndtr", "erf",
    "erfc", "erfinv", "exp2", "expm1", "log1p", "sinc", "round", "logsumexp", "softmax",
    "log_softmax", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0",
    "gammainc", "gammaincc", "zeta", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "i0e", "i1", "i1e", "erfcx", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]  # fmt: skip


def _gt():
    import gradstack_tensor as gt

    return gt


def _t(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"special.{name}(): argument 'input' must be Tensor, not {type(x).__name__}"
        )
    return x


expit = method_form(
    __name__, "expit", "sigmoid", "The logistic sigmoid, ``1 / (1 + exp(-x))``.", _t
)


def logit(input, eps=None):
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` with ``eps``)."""
    return _gt().logit(_t(input, "logit"), eps)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0."""
    return _gt().xlogy(input, other)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN)."""
    gt = _gt()
    if isinstance(input, Tensor):
        _t(input, "xlog1py")
    x, y = _in_result_dtype(input, other)  # Note [xlogy computes in its result dtype]
    zero = x == 0
    safe = gt.where(zero, 0.0, y)
    out = gt.where(zero, 0.0, x * safe.log1p())
    return gt.where(y.isnan(), float("nan"), out)


def entr(input):
    """The elementwise entropy ``-x * log(x)``: 0 at 0, ``-inf`` below 0."""
    gt = _gt()
    x = _t(input, "entr")
    positive = x > 0
    safe = gt.where(positive, x, 1.0)
    out = gt.where(positive, -safe * safe.log(), 0.0)
    out = gt.where(x < 0, float("-inf"), out)
    return gt.where(x.isnan(), float("nan"), out)


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``."""
    x = _t(input, "ndtr")
    return (1 + (x * (1 / math.sqrt(2))).erf()) * 0.5


def ndtri(input):
    """The inverse of :func:`ndtr`: ``sqrt(2) * erfinv(2 p - 1)``."""
    p = _t(input, "ndtri")
    return (2 * p - 1).erfinv() * math.sqrt(2)


def log_ndtr(input):
    """``log(ndtr(x))``."""
    return ndtr(_t(input, "log_ndtr")).log()


erf = method_form(__name__, "erf", "erf", "The error function.", _t)
erfc = method_form(__name__, "erfc", "erfc", "``1 - erf(x)``.", _t)
erfinv = method_form(__name__, "erfinv", "erfinv", "The inverse error function.", _t)
exp2 = method_form(__name__, "exp2", "exp2", "``2 ** x``.", _t)
expm1 = method_form(__name__, "expm1", "expm1", "``exp(x) - 1``.", _t)
log1p = method_form(__name__, "log1p", "log1p", "``log(1 + x)``.", _t)


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    return _gt().sinc(_t(input, "sinc"))


def round(input, *, decimals: int = 0):  # noqa: A001 - torch's name
    """Rounded half to even (to ``decimals`` places): torch's ``round.decimals`` whatever
    ``decimals`` (RoundBackward1; integer tensors refused, as torch's)."""
    return _t(input, "round").round(decimals=decimals)


def logsumexp(input, dim, keepdim: bool = False):
    """``log(sum(exp(x)))`` over ``dim``."""
    return _t(input, "logsumexp").logsumexp(dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """``softmax`` over ``dim``."""
    return _t(input, "softmax").softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log_softmax`` over ``dim``."""
    return _t(input, "log_softmax").log_softmax(dim, dtype=dtype)


gammaln = method_form(__name__, "gammaln", "lgamma", "``lgamma(input)``.", _t)
digamma = method_form(__name__, "digamma", "digamma", "The digamma function (``psi``).", _t)


psi = digamma


def polygamma(n, input):
    """The ``n``-th derivative of digamma."""
    return _t(input, "polygamma").polygamma(n)


def multigammaln(input, p):
    """The multivariate log-gamma function of dimension ``p``."""
    return _t(input, "multigammaln").mvlgamma(p)


def _result(name: str, result: Tensor, out, inputs) -> Tensor:
    return result if out is None else write_out(name, result, out, inputs=inputs)


def i0(input, *, out=None):
    """The modified Bessel function of the first kind of order 0 (``torch.i0``)."""
    return _result("i0", dispatch(OPS["i0"], (_t(input, "i0"),)), out, (input,))


def _incomplete_gamma(name: str, op: str, doc: str):
    """``special.<name>(input, other)``: the op `op` of two tensors."""

    def special(input, other, *, out=None):
        _t(input, name)
        if not isinstance(other, Tensor):
            raise TypeError(
                f"special.{name}(): argument 'other' must be Tensor, not {type(other).__name__}"
            )
        return _result(name, dispatch(OPS[op], (input, other)), out, (input, other))

    special.__name__ = special.__qualname__ = name
    special.__doc__ = doc
    return special


gammainc = _incomplete_gamma(
    "gammainc", "igamma", "The regularized lower incomplete gamma function (``torch.igamma``)."
)
gammaincc = _incomplete_gamma(
    "gammaincc", "igammac", "The regularized upper incomplete gamma function (``torch.igammac``)."
)


# the functions of one tensor over the ops ``special_<name>`` (``_bessel_kernels.pyx``)
_UNARY_DOCS = {
    "airy_ai": "Airy's function Ai.",
    "bessel_j0": "The Bessel function of the first kind of order 0.",
    "bessel_j1": "The Bessel function of the first kind of order 1.",
    "bessel_y0": "The Bessel function of the second kind of order 0 (NaN below 0).",
    "bessel_y1": "The Bessel function of the second kind of order 1 (NaN below 0).",
    "modified_bessel_i0": "The modified Bessel function of the first kind of order 0.",
    "modified_bessel_i1": "The modified Bessel function of the first kind of order 1.",
    "modified_bessel_k0": "The modified Bessel function of the second kind of order 0.",
    "modified_bessel_k1": "The modified Bessel function of the second kind of order 1.",
    "scaled_modified_bessel_k0": "``exp(x) * modified_bessel_k0(x)``.",
    "scaled_modified_bessel_k1": "``exp(x) * modified_bessel_k1(x)``.",
    "spherical_bessel_j0": "The spherical Bessel function of the first kind of order 0.",
    "i0e": "``exp(-|x|) * i0(x)``.",
    "i1": "The modified Bessel function of the first kind of order 1.",
    "i1e": "``exp(-|x|) * i1(x)``.",
    "erfcx": "The scaled complementary error function ``exp(x**2) * erfc(x)``.",
}

# the functions of an input and a degree ``n`` (``zeta``: of ``input`` and ``other``)
_BINARY_DOCS = {
    "chebyshev_polynomial_t": "The Chebyshev polynomial of the first kind of degree ``n``.",
    "chebyshev_polynomial_u": "The Chebyshev polynomial of the second kind of degree ``n``.",
    "chebyshev_polynomial_v": "The Chebyshev polynomial of the third kind of degree ``n``.",
    "chebyshev_polynomial_w": "The Chebyshev polynomial of the fourth kind of degree ``n``.",
    "hermite_polynomial_h": "The physicists' Hermite polynomial of degree ``n``.",
    "hermite_polynomial_he": "The probabilists' Hermite polynomial of degree ``n``.",
    "laguerre_polynomial_l": "The Laguerre polynomial of degree ``n``.",
    "legendre_polynomial_p": "The Legendre polynomial of degree ``n``.",
    "shifted_chebyshev_polynomial_t": "``chebyshev_polynomial_t(2 x - 1, n)``.",
    "shifted_chebyshev_polynomial_u": "``chebyshev_polynomial_u(2 x - 1, n)``.",
    "shifted_chebyshev_polynomial_v": "``chebyshev_polynomial_v(2 x - 1, n)``.",
    "shifted_chebyshev_polynomial_w": "``chebyshev_polynomial_w(2 x - 1, n)``.",
    "zeta": "The Hurwitz zeta function ``sum_k (k + other) ** -input``.",
}


def _make_unary(name: str):
    op = OPS[f"special_{name}"]

    def special(input, *, out=None):
        return _result(name, dispatch(op, (_t(input, name),)), out, (input,))

    special.__name__ = special.__qualname__ = name
    special.__doc__ = _UNARY_DOCS[name]
    return special


def _make_binary(name: str):
    op = OPS[f"special_{name}"]
    second = "other" if name == "zeta" else "n"

    def special(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(
                f"special.{name}(): at least one of 'input' and '{second}' must be a Tensor, "
                f"got {type(input).__name__} and {type(n).__name__}"
            )
        inputs = tuple(a for a in (input, n) if isinstance(a, Tensor))
        if not isinstance(input, Tensor):  # (a number: a 0-d tensor, promoted as torch's)
            input = _gt().tensor(input)
        return _result(name, dispatch(op, (input, n)), out, inputs)

    special.__name__ = special.__qualname__ = name
    special.__doc__ = _BINARY_DOCS[name]
    return special


airy_ai = _make_unary("airy_ai")
bessel_j0 = _make_unary("bessel_j0")
bessel_j1 = _make_unary("bessel_j1")
bessel_y0 = _make_unary("bessel_y0")
bessel_y1 = _make_unary("bessel_y1")
modified_bessel_i0 = _make_unary("modified_bessel_i0")
modified_bessel_i1 = _make_unary("modified_bessel_i1")
modified_bessel_k0 = _make_unary("modified_bessel_k0")
modified_bessel_k1 = _make_unary("modified_bessel_k1")
scaled_modified_bessel_k0 = _make_unary("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _make_unary("scaled_modified_bessel_k1")
spherical_bessel_j0 = _make_unary("spherical_bessel_j0")
i0e = _make_unary("i0e")
i1 = _make_unary("i1")
i1e = _make_unary("i1e")
erfcx = _make_unary("erfcx")
chebyshev_polynomial_t = _make_binary("chebyshev_polynomial_t")
chebyshev_polynomial_u = _make_binary("chebyshev_polynomial_u")
chebyshev_polynomial_v = _make_binary("chebyshev_polynomial_v")
chebyshev_polynomial_w = _make_binary("chebyshev_polynomial_w")
hermite_polynomial_h = _make_binary("hermite_polynomial_h")
hermite_polynomial_he = _make_binary("hermite_polynomial_he")
laguerre_polynomial_l = _make_binary("laguerre_polynomial_l")
legendre_polynomial_p = _make_binary("legendre_polynomial_p")
shifted_chebyshev_polynomial_t = _make_binary("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _make_binary("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _make_binary("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _make_binary("shifted_chebyshev_polynomial_w")
zeta = _make_binary("zeta")
