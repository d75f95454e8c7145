"""``gradstack_tensor.special`` (``gradstack.special``): the functions of
``torch.special`` that are existing ops under other names, or compositions of them
(``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``entr``, ``ndtr``, ``ndtri``,
``log_ndtr``, ``erf``, ``erfc``, ``erfinv``, ``exp2``, ``expm1``, ``log1p``, ``sinc``,
``round``, ``logsumexp``, ``softmax``, ``log_softmax``, ``gammaln``, ``digamma``/``psi``,
``polygamma``, ``multigammaln``).  The incomplete gamma and Bessel families (``gammainc``,
``i0`` ...) and ``zeta`` are not implemented: they raise NotImplementedError naming the
function.

Examples
--------
>>> import gradstack_tensor as gt
>>> ndtr(gt.tensor(0.0)).item()  # (this module's round is torch.special.round)
0.5
>>> entr(gt.tensor([0.0, 0.5])).tolist()
[0.0, 0.3465735912322998]
"""

from __future__ import annotations

import math

from ._tensor import Tensor

__all__ = [
    "expit", "logit", "xlogy", "xlog1py", "entr", "ndtr", "ndtri", "log_ndtr", "erf",
    "erfc", "erfinv", "exp2", "expm1", "log1p", "sinc", "round", "logsumexp", "softmax",
    "log_softmax", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
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


def expit(input):
    """The logistic sigmoid, ``1 / (1 + exp(-x))``."""
    return _t(input, "expit").sigmoid()


def logit(input, eps=None):
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` with ``eps``)."""
    return _gt().logit(_t(input, "logit"), eps)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0."""
    return _gt().xlogy(input, other)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN)."""
    gt = _gt()
    x = _t(input, "xlog1py") if isinstance(input, Tensor) else gt.tensor(input)
    y = other if isinstance(other, Tensor) else gt.tensor(other)
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


def erf(input):
    """The error function."""
    return _t(input, "erf").erf()


def erfc(input):
    """``1 - erf(x)``."""
    return _t(input, "erfc").erfc()


def erfinv(input):
    """The inverse error function."""
    return _t(input, "erfinv").erfinv()


def exp2(input):
    """``2 ** x``."""
    return _t(input, "exp2").exp2()


def expm1(input):
    """``exp(x) - 1``."""
    return _t(input, "expm1").expm1()


def log1p(input):
    """``log(1 + x)``."""
    return _t(input, "log1p").log1p()


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    return _gt().sinc(_t(input, "sinc"))


def round(input, *, decimals: int = 0):  # noqa: A001 - torch's name
    """Rounded half to even (to ``decimals`` places)."""
    x = _t(input, "round")
    if decimals == 0:
        return x.round()
    scale = 10.0**decimals
    return (x * scale).round() / scale


def logsumexp(input, dim, keepdim: bool = False):
    """``log(sum(exp(x)))`` over ``dim``."""
    return _t(input, "logsumexp").logsumexp(dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """``softmax`` over ``dim``."""
    return _t(input, "softmax").softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log_softmax`` over ``dim``."""
    return _t(input, "log_softmax").log_softmax(dim, dtype=dtype)


def _not_implemented(name):
    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"torch.special.{name} is not implemented in gradstack (no incomplete gamma, "
            "zeta or Bessel functions yet)"
        )

    missing.__name__ = name
    return missing


def gammaln(input):
    """``lgamma(input)``."""
    return _t(input, "gammaln").lgamma()


def digamma(input):
    """The digamma function (``psi``)."""
    return _t(input, "digamma").digamma()


psi = digamma


def polygamma(n, input):
    """The ``n``-th derivative of digamma."""
    return _t(input, "polygamma").polygamma(n)


def multigammaln(input, p):
    """The multivariate log-gamma function of dimension ``p``."""
    return _t(input, "multigammaln").mvlgamma(p)


for _name in ("gammainc", "gammaincc", "i0", "i0e", "i1", "i1e", "bessel_j0", "bessel_j1",
              "zeta", "erfcx", "spherical_bessel_j0"):  # fmt: skip
    globals()[_name] = _not_implemented(_name)
del _name
