# cython: language_level=3
"""Special-function kernels: ``lgamma``, ``digamma``, ``trigamma``, ``polygamma`` and the
Hurwitz ``zeta``, each one pass in C over float32 or float64 arrays, with torch's
formulas.

The ops ``lgamma``, ``digamma`` and ``polygamma`` take these loops for float32/float64
tensors (``_impl_special.py``); their derivatives are those ops again (``digamma``,
``polygamma(1)``, ``polygamma(n + 1)``), so the backward passes take them too.  Arguments
are checked, and threads set, by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport _check_input, kernel_block_size, kernel_threads

cnp.import_array()

__all__ = [
    "SPECIAL_THRESHOLD", "digamma", "lgamma", "polygamma", "trigamma", "zeta",
]


# Note [Special kernels follow torch's formulas]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Each loop is ATen's scalar function (aten/src/ATen/native/Math.h) in the array's dtype,
# with the same roundings in the same order, so that a float32 result is torch's float32
# result, not the float64 value rounded once:
#   - lgamma is the C library's lgamma in double, rounded once to float32 for float32: +inf
#     at 0 and the negative integers.  torch's vectorised CPU kernel takes Sleef's lgamma
#     (within 1 ulp); glibc's lgammaf is less accurate (on 210,000 sampled float32 values
#     it differed from torch's in 61,476, the double value rounded in 14,957; both differ
#     most, in ulps, near lgamma's zeros at 1 and 2, where the absolute error is ~1e-8).
#     The reentrant lgamma_r of glibc is taken where it exists, since plain lgamma writes
#     the global signgam (a data race under threads).
#   - digamma is calc_digamma (Cephes): -+inf at +-0, nan at the negative integers, the
#     reflection psi(1 - x) - pi / tan(pi * frac(x)) below 0 (in double, rounded, for
#     float32 as torch's float version does), the recurrence up to 10, then the
#     asymptotic series.
#   - trigamma is torch's trigamma (six recurrence steps and a series; sinf for float32).
#   - polygamma(n, x) for n >= 2 is calc_polygamma: (-1)**(n + 1) exp(lgamma(n + 1)) *
#     zeta(n + 1, x), in the dtype (for float32 exp(lgamma(n + 1)) overflows to inf from
#     n = 35 on, as torch's does), with Cephes' Hurwitz zeta accumulated in double (the
#     accumulate type of float on CPU) whose first term q**-s is powf for float32.
#
# Note [Special kernels' threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# These functions cost 20 ns (lgamma) to ~1 us (zeta's pow calls) an element, so a loop
# pays for a second thread from a few thousand elements (SPECIAL_THRESHOLD = 2048, as the
# activation kernels': the cheapest of them, lgamma, takes ~40 us at 2048 elements, well
# above the ~5-10 us of waking an OpenMP team).

cdef extern from *:
    """
    #include <math.h>

    #if defined(__GLIBC__)
    static inline float gs_sp_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
    static inline double gs_sp_lgamma(double x) { int s; return lgamma_r(x, &s); }
    #else
    static inline float gs_sp_lgammaf(float x) { return lgammaf(x); }
    static inline double gs_sp_lgamma(double x) { return lgamma(x); }
    #endif

    #define GS_SP_PI 3.14159265358979323846

    static double gs_sp_digamma(double x) {
        static const double A[] = {
            8.33333333333333333333E-2, -2.10927960927960927961E-2,
            7.57575757575757575758E-3, -4.16666666666666666667E-3,
            3.96825396825396825397E-3, -8.33333333333333333333E-3,
            8.33333333333333333333E-2};
        double result = 0, y = 0, z, q, r;
        int i;
        if (x == 0) return copysign(INFINITY, -x);
        if (x < 0) {
            if (x == trunc(x)) return NAN;
            r = modf(x, &q);
            return gs_sp_digamma(1 - x) - GS_SP_PI / tan(GS_SP_PI * r);
        }
        while (x < 10) {
            result -= 1 / x;
            x += 1;
        }
        if (x == 10) return result + 2.25175258906672110764;
        if (x < 1.0e17) {
            z = 1.0 / (x * x);
            y = 0;
            for (i = 0; i <= 6; i++) y = y * z + A[i];
            y = z * y;
        }
        return result + log(x) - (0.5 / x) - y;
    }

    static float gs_sp_digammaf(float x) {
        static const float A[] = {
            8.33333333333333333333E-2f, -2.10927960927960927961E-2f,
            7.57575757575757575758E-3f, -4.16666666666666666667E-3f,
            3.96825396825396825397E-3f, -8.33333333333333333333E-3f,
            8.33333333333333333333E-2f};
        float result = 0, y = 0, z;
        double q, r;
        int i;
        if (x == 0) return copysignf(INFINITY, -x);
        if (x < 0) {
            if (x == truncf(x)) return NAN;
            r = modf((double)x, &q);
            float pi_over_tan = (float)(GS_SP_PI / tan(GS_SP_PI * r));
            return gs_sp_digammaf(1 - x) - pi_over_tan;
        }
        while (x < 10) {
            result -= 1 / x;
            x += 1;
        }
        if (x == 10) return result + 2.25175258906672110764f;
        if (x < 1.0e17f) {
            z = 1 / (x * x);
            y = 0;
            for (i = 0; i <= 6; i++) y = y * z + A[i];
            y = z * y;
        }
        return result + logf(x) - (0.5f / x) - y;
    }

    static double gs_sp_trigamma(double x) {
        double sign = +1, result = 0, ixx, s;
        int i;
        if (x < 0.5) {
            sign = -1;
            s = sin(GS_SP_PI * x);
            result -= (GS_SP_PI * GS_SP_PI) / (s * s);
            x = 1 - x;
        }
        for (i = 0; i < 6; ++i) {
            result += 1 / (x * x);
            x += 1;
        }
        ixx = 1 / (x * x);
        result += (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x;
        return sign * result;
    }

    static float gs_sp_trigammaf(float x) {
        const float pi = (float)GS_SP_PI;
        float sign = +1, result = 0, ixx, s;
        int i;
        if (x < 0.5f) {
            sign = -1;
            s = sinf(pi * x);
            result -= (pi * pi) / (s * s);
            x = 1 - x;
        }
        for (i = 0; i < 6; ++i) {
            result += 1 / (x * x);
            x += 1;
        }
        ixx = 1 / (x * x);
        result += (1 + 1 / (2 * x) + ixx * (1.f / 6 - ixx * (1.f / 30 - ixx * (1.f / 42))))
                  / x;
        return sign * result;
    }

    /* Cephes' Hurwitz zeta as torch's zeta<scalar_t>: accumulated in double; `first` is
       q ** -x, computed by the caller in the dtype (powf for float32) */
    static double gs_sp_zeta_tail(double x, double q, double first) {
        static const double A[] = {
            12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
            7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
            -4.5979787224074726105e15, 1.8152105401943546773e17,
            -7.1661652561756670113e18};
        const double MACHEP = 1.11022302462515654042E-16;
        double a, b, k, s, t, w;
        int i = 0;
        s = first;
        a = q;
        b = 0;
        while ((i < 9) || (a <= 9.0)) {
            i += 1;
            a += 1;
            b = pow(a, -x);
            s += b;
            if ((-MACHEP * s < b) && (b < MACHEP * s)) return s;
        }
        w = a;
        s += b * w / (x - 1);
        s -= 0.5 * b;
        a = 1;
        k = 0;
        for (i = 0; i < 12; i++) {
            a *= x + k;
            b /= w;
            t = a * b / A[i];
            s = s + t;
            t = fabs(t / s);
            if (t < MACHEP) return s;
            k += 1;
            a *= x + k;
            b /= w;
            k += 1;
        }
        return s;
    }

    static double gs_sp_zeta(double x, double q) {
        if (x == 1) return INFINITY;
        if (x < 1) return NAN;
        if (q <= 0) {
            if (q == floor(q)) return INFINITY;
            if (x != floor(x)) return NAN;
        }
        return gs_sp_zeta_tail(x, q, pow(q, -x));
    }

    static float gs_sp_zetaf(float x, float q) {
        if (x == 1) return INFINITY;
        if (x < 1) return NAN;
        if (q <= 0) {
            if (q == floorf(q)) return INFINITY;
            if (x != floorf(x)) return NAN;
        }
        return (float)gs_sp_zeta_tail((double)x, (double)q, (double)powf(q, -x));
    }
    """
    float gs_sp_lgammaf(float x) noexcept nogil
    double gs_sp_lgamma(double x) noexcept nogil
    float gs_sp_digammaf(float x) noexcept nogil
    double gs_sp_digamma(double x) noexcept nogil
    float gs_sp_trigammaf(float x) noexcept nogil
    double gs_sp_trigamma(double x) noexcept nogil
    float gs_sp_zetaf(float x, float q) noexcept nogil
    double gs_sp_zeta(double x, double q) noexcept nogil
    float expf(float x) noexcept nogil
    double exp(double x) noexcept nogil


cdef Py_ssize_t _special_threshold = 1 << 11
SPECIAL_THRESHOLD = _special_threshold

# the functions a loop applies
cdef enum _Function:
    LGAMMA = 0
    DIGAMMA = 1
    TRIGAMMA = 2
    POLYGAMMA = 3


cdef void _range(int function, int n_order, bint single, const char* x, char* out,
                 Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t i
    cdef const float* xf = <const float*>x
    cdef const double* xd = <const double*>x
    cdef float* of = <float*>out
    cdef double* od = <double*>out
    cdef float factor_f, order_f
    cdef double factor_d, order_d
    if function == LGAMMA:
        if single:
            for i in range(start, stop):
                of[i] = <float>gs_sp_lgamma(<double>xf[i])
        else:
            for i in range(start, stop):
                od[i] = gs_sp_lgamma(xd[i])
    elif function == DIGAMMA:
        if single:
            for i in range(start, stop):
                of[i] = gs_sp_digammaf(xf[i])
        else:
            for i in range(start, stop):
                od[i] = gs_sp_digamma(xd[i])
    elif function == TRIGAMMA:
        if single:
            for i in range(start, stop):
                of[i] = gs_sp_trigammaf(xf[i])
        else:
            for i in range(start, stop):
                od[i] = gs_sp_trigamma(xd[i])
    else:
        # calc_polygamma: ((n % 2) ? 1 : -1) * exp(lgamma(n + 1)) * zeta(n + 1, x)
        if single:
            order_f = <float>n_order
            # (torch's scalar loop here: std::lgamma of a float, the C library's lgammaf)
            factor_f = (<float>1 if n_order % 2 else <float>-1) * expf(
                gs_sp_lgammaf(order_f + <float>1))
            for i in range(start, stop):
                of[i] = factor_f * gs_sp_zetaf(order_f + <float>1, xf[i])
        else:
            order_d = <double>n_order
            factor_d = (1.0 if n_order % 2 else -1.0) * exp(gs_sp_lgamma(order_d + 1.0))
            for i in range(start, stop):
                od[i] = factor_d * gs_sp_zeta(order_d + 1.0, xd[i])


cdef object _run(str func, int function, int n_order, object x):
    cdef int typenum = _check_input(func, "x", x)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _special_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            _range(function, n_order, single, xp, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _range(function, n_order, single, xp, op_, min(start, n), min(start + step, n))
    return out


def lgamma(x):
    """``log|gamma(x)|`` of a float32/float64 C-contiguous array, as a new array: the C
    library's lgamma (rounded from double for float32), +inf at the poles (Note [Special
    kernels follow torch's formulas]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import lgamma
    >>> lgamma(np.array([0.5, 1.0, 0.0, -2.0]))
    array([0.57236494, 0.        ,        inf,        inf])
    """
    return _run("lgamma", LGAMMA, 0, x)


def digamma(x):
    """torch's digamma (Cephes' psi) of a float32/float64 C-contiguous array, as a new
    array: ``-+inf`` at ``+-0``, nan at the negative integers.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import digamma
    >>> digamma(np.array([1.0, 0.5, -0.0, -1.0]))
    array([-0.57721566, -1.96351003,         inf,         nan])
    """
    return _run("digamma", DIGAMMA, 0, x)


def trigamma(x):
    """torch's trigamma (``polygamma(1, x)``) of a float32/float64 C-contiguous array, as a
    new array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import trigamma
    >>> trigamma(np.array([1.0, 0.5]))
    array([1.64493407, 4.9348022 ])
    """
    return _run("trigamma", TRIGAMMA, 0, x)


def polygamma(x, int n):
    """torch's ``polygamma(n, x)`` for ``n >= 2`` of a float32/float64 C-contiguous array
    ``x``, as a new array: ``(-1)**(n + 1) n! zeta(n + 1, x)`` in the array's dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import polygamma
    >>> polygamma(np.array([1.0, 2.0]), 2)
    array([-2.40411381, -0.40411381])
    """
    if n < 2:
        raise ValueError(f"polygamma: n must be at least 2 (got {n}); take digamma for 0 "
                         "and trigamma for 1")
    return _run("polygamma", POLYGAMMA, n, x)


cdef void _zeta_range(bint single, const char* x, Py_ssize_t sx, const char* q,
                      Py_ssize_t sq, char* out, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t i
    if single:
        for i in range(start, stop):
            (<float*>out)[i] = gs_sp_zetaf((<const float*>x)[i * sx], (<const float*>q)[i * sq])
    else:
        for i in range(start, stop):
            (<double*>out)[i] = gs_sp_zeta((<const double*>x)[i * sx],
                                           (<const double*>q)[i * sq])


def zeta(x, q):
    """torch's Hurwitz zeta ``sum_k (k + q) ** -x`` (``torch.special.zeta``) of two
    float32/float64 C-contiguous arrays of one dtype, as a new array of the shape of the
    larger: one shape, or one of them of one element (repeated).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import zeta
    >>> zeta(np.array([2.0, 1.0]), np.array([1.0]))
    array([1.64493407,        inf])
    """
    cdef int typenum = _check_input("zeta", "x", x)
    if _check_input("zeta", "q", q) != typenum:
        raise TypeError(f"zeta: x and q must have one dtype, got {x.dtype} and {q.dtype}; "
                        "cast one of them")
    cdef cnp.ndarray xa = <cnp.ndarray>x, qa = <cnp.ndarray>q, big
    cdef Py_ssize_t sx = 1, sq = 1
    if cnp.PyArray_SAMESHAPE(xa, qa):
        big = xa
    elif cnp.PyArray_SIZE(qa) == 1:
        big, sq = xa, 0
    elif cnp.PyArray_SIZE(xa) == 1:
        big, sx = qa, 0
    else:
        raise ValueError(f"zeta: x and q must have one shape, or one of them one element; "
                         f"got {x.shape} and {q.shape} (broadcast them first)")
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(big), cnp.PyArray_DIMS(big),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(big), block, start, step
    cdef int nthreads = kernel_threads(n, _special_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef const char* qp = <const char*>cnp.PyArray_DATA(qa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            _zeta_range(single, xp, sx, qp, sq, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _zeta_range(single, xp, sx, qp, sq, op_, min(start, n), min(start + step, n))
    return out
