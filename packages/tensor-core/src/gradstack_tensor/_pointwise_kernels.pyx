# cython: language_level=3
"""Pointwise math kernels: ``sign`` (torch's, of float32/float64) and the float32 ``exp2``,
one vectorised pass in C each.

The ops ``sign``/``sgn`` (and their in-place forms) take ``sign_dense`` through
``_ufuncs._sign_ufunc``, and ``exp2`` of a float32 tensor takes ``exp2_dense`` through
``_ufuncs._rounded_unary``; public as ``gradstack_tensor.kernels.sign`` and ``exp2_f32``.
Threads are set by ``_kernels.pyx``'s shared code, the AVX2/AVX-512 copies chosen by its
switches (Note [AVX2 clones] there).
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport (
    _check_float_array, kernel_avx2, kernel_avx512, kernel_block_size,
    kernel_parallel_threshold, kernel_threads,
)

cnp.import_array()

__all__ = [
    "EXP2_THRESHOLD",
    "exp2_f32",
    "sign",
]


# Note [sign by the bits]
# ~~~~~~~~~~~~~~~~~~~~~~~
# torch's sign is (0 < x) - (x < 0): 0 for nan, +0.0 for -0.0, +-1 elsewhere.  numpy took
# three passes for it (two compares into int8 and a conversion: ~250 us at 1M float32
# elements, torch ~100 us).  The loop works on the bits: with m = |x|'s bits, the result
# is (sign bit | the bits of 1.0) where 0 < m <= the bits of inf, else 0 -- integer
# operations only, which GCC vectorises in every copy (a select on a float compare it
# does not, since the compare may trap).
#
# Note [float32 exp2 in double]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The float32 exp2 was numpy's float64 loop with buffered casts, rounded once (Note [float32
# transcendental functions are computed in double] in _ufuncs.pyx): correctly rounded,
# ~1 ms at 1M elements, where torch's (Sleef's exp2f, within an ulp) takes ~0.3 ms.  This
# loop computes the same double value without a branch: x clamped to [-200, 200] (by
# integer selects on the bits: nan stays nan, +-inf give 2**+-200, which round to inf and
# 0), k = round(x) (adding and subtracting 1.5 * 2**52), r = x - k exact in [-1/2, 1/2],
# 2**r by a polynomial of degree 9 (the Chebyshev interpolant on [-1/2, 1/2], relative
# error 1.9e-14; Taylor's series needed degree 12), times 2**k made from k's bits,
# rounded once to float32 (subnormal results included).  So the float32 result is the
# correctly rounded one but within ~2e-14 of a rounding boundary: on every 211th float32
# in [-160, 140] (10.7M values) it equals numpy's float64 exp2 rounded but in one (by an
# ulp), and is within an ulp of torch's.  ~0.6 ms at 1M elements, one thread, AVX-512
# (torch: 0.28 ms, Sleef's exp2f in float; numpy's float64 loop: 1.0 ms).

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    /* Note [sign by the bits] */
    GS_BODY void gs_sign_f32_body(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t b, m;
            memcpy(&b, x + i, sizeof b);
            m = b & 0x7fffffffu;
            b = ((b & 0x80000000u) | 0x3f800000u) & (0u - (uint32_t)((m - 1u) < 0x7f800000u));
            memcpy(out + i, &b, sizeof b);
        }
    }

    GS_BODY void gs_sign_f64_body(const double* x, double* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint64_t b, m;
            memcpy(&b, x + i, sizeof b);
            m = b & 0x7fffffffffffffffULL;
            b = ((b & 0x8000000000000000ULL) | 0x3ff0000000000000ULL)
                & (0ULL - (uint64_t)((m - 1ULL) < 0x7ff0000000000000ULL));
            memcpy(out + i, &b, sizeof b);
        }
    }

    /* Note [float32 exp2 in double] */
    GS_BODY void gs_exp2_f32_body(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t bits, mag;
            float v = x[i];
            memcpy(&bits, &v, sizeof bits);
            mag = bits & 0x7fffffffu;
            mag = mag > 0x7f800000u ? mag : (mag < 0x43480000u ? mag : 0x43480000u); /* 200 */
            bits = (bits & 0x80000000u) | mag;
            memcpy(&v, &bits, sizeof v);
            double xd = v;
            double kr = xd + 6755399441055744.0;
            double k = kr - 6755399441055744.0;
            double r = xd - k;
            /* 2**r on [-1/2, 1/2]: the Chebyshev interpolant of degree 9 (mpmath, 40
               digits), in powers of r; relative error 1.9e-14 */
            double p = 1.0208689323903336e-07;
            p = p * r + 1.3259646066513444e-06;
            p = p * r + 1.5252657287451635e-05;
            p = p * r + 0.00015403433745411193;
            p = p * r + 0.001333355823007465;
            p = p * r + 0.009618129193947665;
            p = p * r + 0.055504108664448285;
            p = p * r + 0.24022650695640232;
            p = p * r + 0.6931471805599501;
            p = p * r + 1.0000000000000135;
            int64_t kb;
            memcpy(&kb, &kr, sizeof kb);                 /* k in the low bits */
            kb = (kb + 1023) << 52;                      /* 2**k: |k| <= 200 */
            double scale;
            memcpy(&scale, &kb, sizeof scale);
            out[i] = (float)(p * scale);
        }
    }

    #define GS_PW_CLONES(suffix, attr)                                                  \\
        attr static void gs_sign_f32_##suffix(const float* x, float* out,                \\
                                              Py_ssize_t start, Py_ssize_t stop) {       \\
            gs_sign_f32_body(x, out, start, stop);                                       \\
        }                                                                                \\
        attr static void gs_sign_f64_##suffix(const double* x, double* out,              \\
                                              Py_ssize_t start, Py_ssize_t stop) {       \\
            gs_sign_f64_body(x, out, start, stop);                                       \\
        }                                                                                \\
        attr static void gs_exp2_f32_##suffix(const float* x, float* out,                \\
                                              Py_ssize_t start, Py_ssize_t stop) {       \\
            gs_exp2_f32_body(x, out, start, stop);                                       \\
        }

    GS_PW_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_PW_CLONES(avx2, __attribute__((target("avx2,fma"))))
    GS_PW_CLONES(avx512, __attribute__((target(                                         \\
        "avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512"))))
    #  define GS_PW_DISPATCH(name, args) \\
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_PW_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    /* kind 0: sign of float32, 1: sign of float64, 2: exp2 of float32 */
    static void gs_pointwise(int gs_avx2, int gs_avx512, int kind, const void* x, void* out,
                             Py_ssize_t start, Py_ssize_t stop) {
        switch (kind) {
        case 0:
            GS_PW_DISPATCH(gs_sign_f32, ((const float*)x, (float*)out, start, stop));
            break;
        case 1:
            GS_PW_DISPATCH(gs_sign_f64, ((const double*)x, (double*)out, start, stop));
            break;
        default:
            GS_PW_DISPATCH(gs_exp2_f32, ((const float*)x, (float*)out, start, stop));
        }
    }
    """
    void gs_pointwise(int avx2, int avx512, int kind, const void* x, void* out,
                      Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# exp2 costs ~0.3-0.5 ns an element: a second thread pays from ~16k elements (waking the
# team costs ~5-10 us; not measured on an idle host); sign is memory-bound and takes
# PARALLEL_THRESHOLD (_kernels.pyx)
cdef Py_ssize_t _exp2_threshold = 1 << 14
EXP2_THRESHOLD = _exp2_threshold


cdef object _run(int kind, cnp.ndarray x, Py_ssize_t threshold, cnp.ndarray out=None):
    """The loop `kind` of a dense x (C- or F-contiguous, aligned, native order) into a new
    array of its shape and layout, or into ``out`` (x itself: an in-place op)."""
    if out is None:
        out = cnp.PyArray_EMPTY(
            cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(x),
            not cnp.PyArray_ISCARRAY_RO(x))   # (F order for an F-contiguous x, else C order)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(x), block, start, step
    cdef int nthreads = kernel_threads(n, threshold)
    cdef int avx2 = kernel_avx2(), avx512 = kernel_avx512()
    cdef const void* xp = cnp.PyArray_DATA(x)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            gs_pointwise(avx2, avx512, kind, xp, op_, 0, n)
        return out
    # blocks of a multiple of 64 elements: the same bits on any number of threads
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            gs_pointwise(avx2, avx512, kind, xp, op_, min(start, n), min(start + step, n))
    return out


cdef inline bint _dense(cnp.ndarray x) noexcept:
    return cnp.PyArray_ISNOTSWAPPED(x) and (
        cnp.PyArray_ISCARRAY_RO(x) or cnp.PyArray_ISFARRAY_RO(x))


cdef object sign_dense(cnp.ndarray x):
    """torch's sign of a dense float32/float64 array (Note [sign by the bits]), or None."""
    cdef int num = cnp.PyArray_TYPE(x)
    if (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or not _dense(x):
        return None
    return _run(0 if num == cnp.NPY_FLOAT else 1, x, kernel_parallel_threshold())


cdef object sign_dense_inplace(cnp.ndarray x):
    """torch's sign of a dense, writeable float32/float64 array written over it (Note [An
    in-place unary op writes into its tensor] in _elementwise.pyx), or None when ``x`` is
    not one (the caller computes a new array and copies it)."""
    cdef int num = cnp.PyArray_TYPE(x)
    if ((num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or not _dense(x)
            or not cnp.PyArray_ISWRITEABLE(x)):
        return None
    return _run(0 if num == cnp.NPY_FLOAT else 1, x, kernel_parallel_threshold(), x)


cdef object exp2_dense(cnp.ndarray x):
    """2**x of a dense float32 array (Note [float32 exp2 in double]), or None."""
    if cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not _dense(x):
        return None
    return _run(2, x, _exp2_threshold)


cdef cnp.ndarray _checked(str func, object x, bint float32_only):
    _check_float_array(func, "x", x)
    cdef cnp.ndarray a = <cnp.ndarray>x
    if float32_only and cnp.PyArray_TYPE(a) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: x must be a float32 array, got {a.dtype}")
    if not _dense(a):
        raise ValueError(f"{func}: x must be C- or F-contiguous; pass np.ascontiguousarray(x)")
    return a


def sign(x):
    """torch's sign of a float32/float64 array that is one dense block, as a new array of
    its layout: -1, 0 or 1, 0 for nan and +0.0 for -0.0 (Note [sign by the bits]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sign
    >>> sign(np.array([-2.5, -0.0, 0.0, 3.0, np.nan, -np.inf]))
    array([-1.,  0.,  0.,  1.,  0., -1.])
    """
    return sign_dense(_checked("sign", x, False))


def exp2_f32(x):
    """``2 ** x`` of a float32 array that is one dense block, computed in double and rounded
    once (Note [float32 exp2 in double]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import exp2_f32
    >>> exp2_f32(np.array([0.0, 0.5, -1.0, 10.0, 200.0, -np.inf], np.float32))
    array([1.0000000e+00, 1.4142135e+00, 5.0000000e-01, 1.0240000e+03,
                     inf, 0.0000000e+00], dtype=float32)
    """
    return exp2_dense(_checked("exp2_f32", x, True))
