"""Special functions torch has as ops: ``erf``, ``erfinv``, ``lgamma``, ``digamma`` and
``polygamma``.

``erf`` reuses nn's ``erf_array`` (the C loop of ``_activation_kernels`` for float32 and
float64, Note [erf without a C kernel] in ``_impl_nn.py``).  ``erfinv`` is torch's own
algorithm (``calc_erfinv`` in ATen's Math.h): a rational approximation, then two Newton
steps on ``erf(x) = y``, in C for float32/float64 (``_activation_kernels.erfinv``).
Integer and bool inputs become the default float dtype, as for torch's unary float ops.

Examples
--------
>>> import gradstack_tensor as gt
>>> [round(v, 6) for v in gt.erf(gt.tensor([0.0, 0.5, -1.0])).tolist()]
[0.0, 0.5205, -0.842701]
>>> round(gt.erfinv(gt.tensor(0.5205)).item(), 4)
0.5
"""

from __future__ import annotations

import math

import numpy as np

from . import _activation_kernels, _erfc_kernels, _special_kernels, return_types
from . import dtypes as _dt
from ._impl_nn import erf_array, set_kernels, unary_kernel
from ._tensor import Tensor, _data, _wrap

__all__: list[str] = []

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_D = (3.543889200, 1.637067800)


def _float_input(input, name: str) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = _data(input)
    if x.dtype.kind != "f":
        x = x.astype(_dt.get_default_dtype().numpy)
    return x


def erf(input):
    """The error function, elementwise."""
    x = _float_input(input, "erf")
    with np.errstate(all="ignore"):
        return _wrap(np.asarray(erf_array(x)))


def erfc(input):
    """The complementary error function ``1 - erf(x)``, elementwise, computed directly
    (Note [erfc is its own function] in ``_activation_kernels.pyx``): float16 through
    float32, as torch's."""
    x = _float_input(input, "erfc")
    if x.dtype == np.float16:
        return _wrap(_activation_kernels.erfc(x.astype(np.float32)).astype(np.float16))
    if x.dtype == np.float32:  # one vectorised pass (Note [float32 erfc by erfcx])
        r = unary_kernel(_erfc_kernels.erfc_float32, x)
        if r is not None:
            return _wrap(r)
    r = unary_kernel(_activation_kernels.erfc, x)
    if r is None:  # another byte order
        r = _activation_kernels.erfc(x.astype(x.dtype.newbyteorder("="), order="C"))
    return _wrap(r)


def _erfinv_array(y: np.ndarray) -> np.ndarray:
    """torch's calc_erfinv, vectorised, in ``y``'s dtype (float16 through float32)."""
    work = y.astype(np.float32) if y.dtype == np.float16 else y
    t = work.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(work)
        z = work * work
        num = ((t(_A[3]) * z + t(_A[2])) * z + t(_A[1])) * z + t(_A[0])
        dem = (((t(_B[3]) * z + t(_B[2])) * z + t(_B[1])) * z + t(_B[0])) * z + t(1)
        central = work * num / dem
        zt = np.sqrt(-np.log((t(1) - a) / t(2)))
        num = ((t(_C[3]) * zt + t(_C[2])) * zt + t(_C[1])) * zt + t(_C[0])
        dem = (t(_D[1]) * zt + t(_D[0])) * zt + t(1)
        tail = np.copysign(num, work) / dem
        x = np.where(a <= t(0.7), central, tail)
        k = t(_TWO_OVER_SQRT_PI)
        for _ in range(2):  # two Newton steps on erf(x) - y
            x = x - (erf_array(x) - work) / (k * np.exp(-x * x))
        x = np.where(a == t(1), np.copysign(t(np.inf), work), x)
        x = np.where(a > t(1), t(np.nan), x)
    return np.asarray(x, dtype=y.dtype)


def erfinv(input):
    """The inverse error function, elementwise: ``erf(erfinv(y)) = y`` on ``(-1, 1)``,
    ``+-inf`` at ``+-1``, NaN outside."""
    x = _float_input(input, "erfinv")
    r = unary_kernel(_activation_kernels.erfinv, x)
    return _wrap(_erfinv_array(x) if r is None else r)


# ---------------------------------------------------------------------------------------
# Note [The gamma family follows torch's formulas]
# ``lgamma`` is the C library's (math.lgamma, which torch's std::lgamma also is), +inf at
# the poles (0 and the negative integers).  ``digamma`` is torch's ``calc_digamma``
# (Cephes): the reflection ``psi(1 - x) - pi / tan(pi * frac(x))`` for negative x, the
# recurrence ``psi(x) = psi(x + 1) - 1 / x`` up to 10, then the asymptotic series;
# ``-+inf`` at ``+-0``, NaN at the negative integers.  ``polygamma(1, x)`` is torch's
# ``trigamma`` (six recurrence steps and a series), and ``polygamma(n, x)`` for ``n >= 2``
# is ``(-1)**(n + 1) * n! * zeta(n + 1, x)`` with Cephes' Hurwitz zeta.  float32 and
# float64 take the C loops of ``_special_kernels`` (Note [Special kernels follow torch's
# formulas] there: torch's arithmetic in the array's dtype, so float32 values are torch's
# float32 values); the numpy functions below are the other dtypes' path (float16),
# computed in float64 and rounded once to the input's dtype.

_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
          -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
          8.33333333333333333333e-2)  # fmt: skip
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18)  # fmt: skip
_MACHEP = 1.11022302462515654042e-16


def _lgamma_one(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0 or a negative integer
        return math.inf


_lgamma_array = np.frompyfunc(_lgamma_one, 1, 1)


def _rounded_call(fn, v: np.ndarray) -> np.ndarray:
    """``fn(v)`` in float64 rounded once to ``v``'s dtype: the C library's correctly
    rounded float32 functions that torch's float kernels call (numpy's own float32 loops
    are approximations on SIMD machines: Note [float32 transcendental functions are
    computed in double] in _ufuncs.pyx)."""
    return fn(v.astype(np.float64)).astype(v.dtype) if v.dtype == np.float32 else fn(v)


def _digamma_array(x: np.ndarray) -> np.ndarray:
    """torch's calc_digamma, vectorised: in float32 for float32 input (torch has a float
    version of it, which loses precision near the poles as torch's does), else float64."""
    x = np.asarray(x, dtype=np.float32 if x.dtype == np.float32 else np.float64)
    t = x.dtype.type
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        negative = x < 0
        if negative.any():
            xn = x[negative]
            frac = xn - np.trunc(xn)
            # (torch's float version too takes pi / tan(pi * r) in double, then rounds)
            reflection = (math.pi / np.tan(math.pi * frac.astype(np.float64))).astype(t)
            out[negative] = _digamma_array(t(1) - xn) - reflection
            out[negative] = np.where(xn == np.trunc(xn), t(np.nan), out[negative])
        rest = ~negative
        v = x[rest].copy()
        result = np.zeros_like(v)
        small = v < 10
        while small.any():  # the recurrence up to 10 (at most 10 rounds for v in [0, 10))
            result = np.where(small, result - t(1) / np.where(small, v, t(1)), result)
            v = np.where(small, v + t(1), v)
            small = v < 10
        z = t(1) / (v * v)
        poly = np.zeros_like(v)
        for a in _PSI_A:
            poly = poly * z + t(a)
        y = np.where(v < t(1.0e17), z * poly, t(0))
        series = result + _rounded_call(np.log, v) - t(0.5) / v - y
        value = np.where(v == 10, result + t(_PSI_10), series)
        value = np.where(x[rest] == 0, np.copysign(t(np.inf), -x[rest]), value)
        out[rest] = value
    return out


def _trigamma_array(x: np.ndarray) -> np.ndarray:
    """torch's trigamma, vectorised, in float32 for float32 input (torch has a float
    version of it) and float64 otherwise."""
    x = np.asarray(x, dtype=np.float32 if x.dtype == np.float32 else np.float64).copy()
    with np.errstate(all="ignore"):
        t = x.dtype.type
        pi = t(math.pi)
        sign = np.where(x < 0.5, t(-1), t(1))
        sin_pi_x = _rounded_call(np.sin, pi * x)
        result = np.where(x < 0.5, -(pi * pi) / (sin_pi_x * sin_pi_x), t(0))
        x = np.where(x < 0.5, t(1) - x, x)
        for _ in range(6):
            result = result + t(1) / (x * x)
            x = x + t(1)
        ixx = t(1) / (x * x)
        tail = ixx * (t(1.0 / 6) - ixx * (t(1.0 / 30) - ixx * t(1.0 / 42)))
        result = result + (t(1) + t(1) / (t(2) * x) + tail) / x
    return sign * result


def _zeta_one(s: float, q: float) -> float:
    """Cephes' Hurwitz zeta ``sum_k (k + q) ** -s``, as torch's ``zeta``."""
    if s == 1:
        return math.inf
    if s < 1 or math.isnan(q):
        return math.nan
    if q == math.inf:
        return math.nan  # (torch's Euler-Maclaurin tail is 0 * inf there)
    if q == -math.inf:
        return math.inf  # (torch's loop finds -inf a pole)
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    total = q**-s
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9:
        i += 1
        a += 1.0
        b = a**-s
        total += b
        if total != 0 and abs(b / total) < _MACHEP:  # (0: torch's ratio is inf, go on)
            return total
    w = a
    total += b * w / (s - 1)
    total -= 0.5 * b
    a, k = 1.0, 0.0
    for coefficient in _ZETA_A:
        a *= s + k
        b /= w
        t = a * b / coefficient
        total += t
        if total != 0 and abs(t / total) < _MACHEP:
            return total
        k += 1.0
        a *= s + k
        b /= w
        k += 1.0
    return total


_zeta_array = np.frompyfunc(_zeta_one, 2, 1)


def _rounded(values, like: np.ndarray) -> Tensor:
    with np.errstate(over="ignore"):  # (a float32 result beyond its range is inf, as torch's)
        return _wrap(np.asarray(np.asarray(values, dtype=np.float64), dtype=like.dtype))


def lgamma(input):
    """``log(|gamma(x)|)``, elementwise (+inf at the poles)."""
    x = _float_input(input, "lgamma")
    r = unary_kernel(_special_kernels.lgamma, x)
    return _rounded(_lgamma_array(x.astype(np.float64)), x) if r is None else _wrap(r)


def digamma(input):
    """The logarithmic derivative of the gamma function, elementwise."""
    x = _float_input(input, "digamma")
    r = unary_kernel(_special_kernels.digamma, x)
    return _rounded(_digamma_array(x), x) if r is None else _wrap(r)


def polygamma(input, n):
    """The ``n``-th derivative of ``digamma``, elementwise (``n = 0`` is ``digamma``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float_input(input, "polygamma")
    if n == 0:
        return digamma(input)
    if n == 1:
        r = unary_kernel(_special_kernels.trigamma, x)
        return _rounded(_trigamma_array(x), x) if r is None else _wrap(r)
    if n < 2**31:
        r = unary_kernel(_special_kernels.polygamma, x, int(n))
        if r is not None:
            return _wrap(r)
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    with np.errstate(all="ignore"):
        zeta = np.asarray(_zeta_array(float(n + 1), x.astype(np.float64)), dtype=np.float64)
        values = factor * zeta  # (frompyfunc gives a 0-d input's value as a Python float)
    return _rounded(values, x)


def frexp(input):
    """torch's frexp: C's frexp of each element (numpy's), the exponent as int32."""
    if not isinstance(input, Tensor):
        raise TypeError(f"frexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = _data(input)
    if x.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(x)
    return return_types.frexp(
        _wrap(np.asarray(mantissa, dtype=x.dtype)), _wrap(np.asarray(exponent, dtype=np.int32))
    )


set_kernels(frexp, erf, erfinv, erfc, lgamma, digamma, polygamma)
