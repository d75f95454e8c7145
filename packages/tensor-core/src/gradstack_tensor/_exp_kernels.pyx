# cython: language_level=3
"""``exp_float32``, ``log1p_float32``, ``sigmoid_float32``, ``expm1_float32``,
``cosh_float32``, ``sinh_float32``: exp, log1p, sigmoid, expm1, cosh and sinh of a float32
array, one vectorised pass each (Note [float32 exp and sigmoid in one pass], Note [float32
log1p in double], Note [float32 expm1, cosh and sinh in double]).

The ops ``exp``, ``log1p``, ``expm1``, ``cosh`` and ``sinh`` take their kernel for C-contiguous
float32 arrays past the small-array loops (``_ufuncs._rounded_unary``), ``sigmoid``
takes ``sigmoid_float32`` (``_ufuncs._sigmoid_ufunc``), all in place for their in-place
forms.  Arguments are checked before
any memory is touched, threads set by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._dispatch cimport enter_op, exit_op
from ._exp_c cimport gs_exp_f64  # no-cython-lint (brings the shared C: exp)
from ._kernels cimport (
    _check_input, kernel_avx2, kernel_avx512, kernel_block_size, kernel_threads,
)

cnp.import_array()

__all__ = [
    "EXP_THRESHOLD", "cosh_float32", "exp_float32", "expm1_float32", "log1p_float32",
    "sigmoid_float32", "sinh_float32",
]

# Note [float32 exp and sigmoid in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# - exp: float32 exp is computed in double and rounded once (Note [float32 transcendental
#   functions are computed in double] in _ufuncs.pyx: the small-array C loops do so, and a
#   result must not depend on the array's size); numpy's float64 loop with buffered casts
#   took 1.7x torch's time at 10**6 elements.  This loop clamps x to [-104, 89] by integer
#   selects on its bits (nan stays nan; exp beyond rounds to 0 or inf in float32 all the
#   same), and computes exp in double by Cody-Waite and its Taylor series to r**12
#   (relative error ~1e-16, as the other double exps of this package): rounded once, the
#   correctly rounded float32 except within ~1e-16 of a rounding boundary.
# - sigmoid: numpy's path took five passes (negate, exp, add, divide, a scan for zeros:
#   2x torch's time forward).  The loop computes torch's stable form in float lanes:
#   e = exp(-|x|) (float, within ~1 ulp as Sleef's expf, into the subnormals: sigmoid(-100)
#   is 3.78e-44 as before), then (x >= 0 ? 1 : e) / (1 + e), the choice by an integer select
#   on the sign bit: within 2 ulp of the true value on every 4099th float32 (torch's
#   1 / (1 + exp(-x)) too; the two within 3 ulp of each other, numpy's float path 3).
# - log1p (Note [float32 log1p in double], in the C below): as exp, computed in double and
#   rounded once, numpy's float64 loop with buffered casts took 2.1x torch's time.
# All are branch-free, so GCC vectorises them (AVX2 and AVX-512 copies, Note [AVX2 clones]
# in _kernels.pyx); blocks of a multiple of 64 elements across threads: the same bits on
# any number of threads.


cdef extern from *:
    """
    /* Note [float32 exp and sigmoid in one pass]; GS_BODY, GS_DISPATCH: _kernels.pxd */
    #include <stdint.h>
    #include <string.h>

    GS_BODY float gs_ex_exp(float x) {
        uint32_t bits, mag, sign;
        memcpy(&bits, &x, sizeof bits);
        mag = bits & 0x7fffffffu;
        sign = bits & 0x80000000u;
        /* |x| clamped to 104 below zero, to 89 above (nan stays nan) */
        uint32_t limit = sign ? 0x42d00000u : 0x42b20000u;
        mag = mag > 0x7f800000u ? mag : (mag < limit ? mag : limit);
        bits = sign | mag;
        float c;
        memcpy(&c, &bits, sizeof c);
        return (float)gs_exp_f64(c);          /* -151 <= k <= 129 */
    }

    GS_BODY void gs_ex_body(int sigmoid, const float* x, float* out, Py_ssize_t start,
                            Py_ssize_t stop) {
        if (!sigmoid) {
            for (Py_ssize_t i = start; i < stop; i++)
                out[i] = gs_ex_exp(x[i]);
            return;
        }
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t bits, nb, eb;
            memcpy(&bits, x + i, sizeof bits);
            float e = gs_expf_neg(x[i]);
            /* numerator: e for x < 0 (sign bit set), else 1 */
            uint32_t neg = 0u - (bits >> 31);
            memcpy(&eb, &e, sizeof eb);
            nb = (eb & neg) | (0x3f800000u & ~neg);
            float num;
            memcpy(&num, &nb, sizeof num);
            out[i] = num / (1.0f + e);
        }
    }

    /* Note [float32 log1p in double]: log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x
       rounded (the correction carries what the rounding lost), log(u) by u = 2**e m,
       m in [sqrt(1/2), sqrt(2)), 2 atanh((m - 1) / (m + 1)) to s**21 (as
       _activation_kernels' gs_act_log; one division, 1 / ((m + 1) m), gives s and 1 / m, and
       2**-e is built from u's bits); x <= -1, inf, nan and -0.0 are computed as 0 and their
       results (-inf, nan, x) chosen by integer selects: the loop may write over x */
    GS_BODY void gs_ex_log1p_body(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t bits, cb;
            memcpy(&bits, x + i, sizeof bits);
            /* x <= -1 (sign set and |x| >= 1), inf, nan or -0.0 */
            uint32_t bad = ((bits >= 0xbf800000u) | ((bits & 0x7fffffffu) >= 0x7f800000u)
                            | (bits == 0x80000000u));
            /* their results: -inf at -1, nan below (-inf included), x itself for nan,
               +inf and -0.0 */
            uint32_t minus_one = 0u - (uint32_t)(bits == 0xbf800000u);
            uint32_t below = 0u - (uint32_t)((bits > 0xbf800000u) & (bits <= 0xff800000u));
            uint32_t sp = (bits & ~minus_one & ~below) | (0xff800000u & minus_one)
                          | (0x7fc00000u & below);
            uint32_t keep = bad - 1u;                  /* all ones where x is ordinary */
            uint32_t xb = bits & keep;
            float xf;
            memcpy(&xf, &xb, sizeof xf);
            double xd = xf;
            double u = 1.0 + xd;
            double c = xd - (u - 1.0);
            uint64_t ub, ebits, rbits;
            memcpy(&ub, &u, sizeof ub);
            rbits = (0x7feULL - (ub >> 52)) << 52;     /* 2**-E for u = 2**E M, M in [1, 2) */
            double inv_scale;
            memcpy(&inv_scale, &rbits, sizeof inv_scale);
            ebits = (ub >> 52) | 0x4330000000000000ULL;
            double e;
            memcpy(&e, &ebits, sizeof e);
            e = e - (6755399441055744.0 / 1.5 + 1023.0);
            ub = (ub & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
            double big = (int64_t)ub > (int64_t)0x3ff6a09e667f3bcdLL;   /* m > sqrt(2) */
            double m;
            memcpy(&m, &ub, sizeof m);
            m = m * (1.0 - 0.5 * big);
            e = e + big;
            double q = 1.0 / ((m + 1.0) * m);          /* one division for s and 1 / m */
            double s = (m - 1.0) * m * q;
            double s2 = s * s;
            double p = 1.0 / 21.0;
            p = p * s2 + 1.0 / 19.0;
            p = p * s2 + 1.0 / 17.0;
            p = p * s2 + 1.0 / 15.0;
            p = p * s2 + 1.0 / 13.0;
            p = p * s2 + 1.0 / 11.0;
            p = p * s2 + 1.0 / 9.0;
            p = p * s2 + 1.0 / 7.0;
            p = p * s2 + 1.0 / 5.0;
            p = p * s2 + 1.0 / 3.0;
            p = p * s2 + 1.0;
            double l = e * 6.93147180369123816490e-01
                       + (e * 1.90821492927058770002e-10 + 2.0 * s * p);
            /* c / u = c 2**-e / m, 2**-e = 2**-E (1 - big / 2), 1 / m = (m + 1) q */
            float r = (float)(l + c * ((m + 1.0) * q) * (inv_scale * (1.0 - 0.5 * big)));
            memcpy(&cb, &r, sizeof cb);
            cb = (cb & keep) | (sp & ~keep);
            memcpy(out + i, &cb, sizeof cb);
        }
    }

    /* Note [float32 expm1, cosh and sinh in double]: with x = k ln2 + r (Cody-Waite, as
       gs_ex_exp), expm1(r) = r (1 + r/2 + ... + r**11/12!) and
       expm1(x) = 2**k expm1(r) + (2**k - 1): no cancellation for k = 0 (|x| < ln2/2),
       none worth a float32 bit for k != 0.  |x| is clamped by its bits (nan stays nan) to
       104 (expm1: -1 in float32 from -17 on) or 89 (inf in float32 beyond), to 90 for
       cosh/sinh (inf beyond).  cosh(x) = (e + 1/e) / 2 with e = exp(|x|); sinh(|x|) =
       (m + m / (m + 1)) / 2 with m = expm1(|x|) (exact near 0); expm1 and sinh take x's
       sign bit (expm1(-0.0) is -0.0) */
    GS_BODY double gs_ex_em1(float c, double* scale) {
        double v = c;
        double kr = v * 1.44269504088896338700e+00 + 6755399441055744.0;
        double k = kr - 6755399441055744.0;
        double r = (v - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
        double p = 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        int64_t kb;
        memcpy(&kb, &kr, sizeof kb);
        kb = (kb + 1023) << 52;
        memcpy(scale, &kb, sizeof kb);
        return p * r;
    }

    /* x with |x| clamped to the float whose bits are `below` (x < 0) or `above` */
    GS_BODY float gs_ex_clamp(float x, uint32_t below, uint32_t above, int drop_sign) {
        uint32_t bits, mag, sign;
        memcpy(&bits, &x, sizeof bits);
        mag = bits & 0x7fffffffu;
        sign = drop_sign ? 0u : bits & 0x80000000u;
        uint32_t limit = sign ? below : above;
        mag = mag > 0x7f800000u ? mag : (mag < limit ? mag : limit);
        bits = sign | mag;
        float c;
        memcpy(&c, &bits, sizeof c);
        return c;
    }

    /* kind 3: expm1, 4: cosh, 5: sinh */
    GS_BODY void gs_ex_hyp_body(int kind, const float* x, float* out, Py_ssize_t start,
                                Py_ssize_t stop) {
        double scale, m;
        if (kind == 3) {
            for (Py_ssize_t i = start; i < stop; i++) {
                uint32_t bits, rb;
                memcpy(&bits, x + i, sizeof bits);
                m = gs_ex_em1(gs_ex_clamp(x[i], 0x42d00000u, 0x42b20000u, 0), &scale);
                float r = (float)(scale * m + (scale - 1.0));
                memcpy(&rb, &r, sizeof rb);
                rb |= bits & 0x80000000u;         /* (x's sign: expm1(-0.0) is -0.0) */
                memcpy(out + i, &rb, sizeof rb);
            }
        } else if (kind == 4) {
            for (Py_ssize_t i = start; i < stop; i++) {
                m = gs_ex_em1(gs_ex_clamp(x[i], 0x42b40000u, 0x42b40000u, 1), &scale);
                double e = scale * (m + 1.0);
                out[i] = (float)(0.5 * e + 0.5 / e);
            }
        } else {
            for (Py_ssize_t i = start; i < stop; i++) {
                uint32_t bits, rb;
                memcpy(&bits, x + i, sizeof bits);
                m = gs_ex_em1(gs_ex_clamp(x[i], 0x42b40000u, 0x42b40000u, 1), &scale);
                m = scale * m + (scale - 1.0);
                float r = (float)(0.5 * (m + m / (m + 1.0)));
                memcpy(&rb, &r, sizeof rb);
                rb |= bits & 0x80000000u;
                memcpy(out + i, &rb, sizeof rb);
            }
        }
    }

    #define GS_EX_CLONE(suffix, attr)                                                  \\
        attr static void gs_ex_##suffix(int sigmoid, const float* x, float* out,       \\
                                        Py_ssize_t start, Py_ssize_t stop) {           \\
            gs_ex_body(sigmoid, x, out, start, stop);                                  \\
        }                                                                              \\
        attr static void gs_ex_log1p_##suffix(const float* x, float* out,              \\
                                              Py_ssize_t start, Py_ssize_t stop) {     \\
            gs_ex_log1p_body(x, out, start, stop);                                     \\
        }                                                                              \\
        attr static void gs_ex_hyp_##suffix(int kind, const float* x, float* out,      \\
                                            Py_ssize_t start, Py_ssize_t stop) {       \\
            gs_ex_hyp_body(kind, x, out, start, stop);                                 \\
        }
    GS_EX_CLONE(default, )
    #if GS_AVX2_CLONES
    GS_EX_CLONE(avx2, __attribute__((target("avx2,fma"))))
    /* Note [AVX-512 copies of the transcendental loops] in _float32_transcendentals.pyx */
    GS_EX_CLONE(avx512, __attribute__((target(
        "avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512"))))
    #  define GS_EX_DISPATCH(name, args) \\
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_EX_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    /* kind 0: exp, 1: sigmoid, 2: log1p, 3: expm1, 4: cosh, 5: sinh */
    static void gs_ex_range(int gs_avx2, int gs_avx512, int kind, const float* x,
                            float* out, Py_ssize_t start, Py_ssize_t stop) {
        if (kind < 2)
            GS_EX_DISPATCH(gs_ex, (kind, x, out, start, stop));
        else if (kind == 2)
            GS_EX_DISPATCH(gs_ex_log1p, (x, out, start, stop));
        else
            GS_EX_DISPATCH(gs_ex_hyp, (kind, x, out, start, stop));
    }
    """
    void gs_ex_range(int avx2, int avx512, int kind, const float* x, float* out,
                     Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# Note [exp threshold]
# ~0.5-1 ns an element (AVX-512): a second thread pays from ~16k elements, as the float32
# exp2 loop's (_pointwise_kernels.pyx; not measured on an idle host).
cdef Py_ssize_t _threshold = 1 << 14
EXP_THRESHOLD = _threshold


cdef object _apply(str func, int kind, object x, object out):
    cdef int typenum = _check_input(func, "x", x)
    if typenum != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: x must be float32, got {x.dtype}")
    cdef cnp.ndarray xa = <cnp.ndarray>x
    if out is None:
        enter_op()
        try:
            out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa), typenum, 0)
        finally:
            exit_op()
    elif out is not x:
        raise TypeError(f"{func}: out must be None or x itself (the in-place form)")
    elif not cnp.PyArray_ISWRITEABLE(xa):
        raise ValueError(f"{func}: out is x, which is read-only")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _threshold)
    cdef int avx2 = kernel_avx2(), avx512 = kernel_avx512()
    cdef const float* xp = <const float*>cnp.PyArray_DATA(xa)
    cdef float* op_ = <float*>cnp.PyArray_DATA(<cnp.ndarray>out)
    if nthreads <= 1:
        with nogil:
            gs_ex_range(avx2, avx512, kind, xp, op_, 0, n)
        return out
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            gs_ex_range(avx2, avx512, kind, xp, op_, min(start, n), min(start + step, n))
    return out


def exp_float32(x, out=None):
    """``exp(x)`` of a float32 C-contiguous array, computed in double and rounded once
    (Note [float32 exp and sigmoid in one pass]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import exp_float32
    >>> exp_float32(np.array([0.0, 1.0, -200.0, 100.0], np.float32))
    array([1.       , 2.7182817, 0.       ,       inf], dtype=float32)
    """
    return _apply("exp_float32", 0, x, out)


def sigmoid_float32(x, out=None):
    """``1 / (1 + exp(-x))`` of a float32 C-contiguous array, in torch's stable form
    (Note [float32 exp and sigmoid in one pass]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sigmoid_float32
    >>> sigmoid_float32(np.array([0.0, 2.0, -100.0], np.float32))
    array([5.00000e-01, 8.80797e-01, 3.78351e-44], dtype=float32)
    """
    return _apply("sigmoid_float32", 1, x, out)


def log1p_float32(x, out=None):
    """``log(1 + x)`` of a float32 C-contiguous array, computed in double and rounded once
    (Note [float32 log1p in double]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import log1p_float32
    >>> log1p_float32(np.array([0.0, 1e-10, 1.0, -1.0, -2.0], np.float32))
    array([0.000000e+00, 1.000000e-10, 6.931472e-01,         -inf,
                    nan], dtype=float32)
    """
    return _apply("log1p_float32", 2, x, out)


def expm1_float32(x, out=None):
    """``exp(x) - 1`` of a float32 C-contiguous array, computed in double and rounded once
    (Note [float32 expm1, cosh and sinh in double]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import expm1_float32
    >>> expm1_float32(np.array([0.0, 1e-10, 1.0, -200.0, 100.0], np.float32))
    array([ 0.0000000e+00,  1.0000000e-10,  1.7182819e+00, -1.0000000e+00,
                      inf], dtype=float32)
    """
    return _apply("expm1_float32", 3, x, out)


def cosh_float32(x, out=None):
    """``cosh(x)`` of a float32 C-contiguous array, computed in double and rounded once
    (Note [float32 expm1, cosh and sinh in double]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import cosh_float32
    >>> cosh_float32(np.array([0.0, 1.0, -2.0, 100.0], np.float32))
    array([1.       , 1.5430807, 3.7621956,       inf], dtype=float32)
    """
    return _apply("cosh_float32", 4, x, out)


def sinh_float32(x, out=None):
    """``sinh(x)`` of a float32 C-contiguous array, computed in double and rounded once
    (Note [float32 expm1, cosh and sinh in double]); into ``x`` itself with ``out=x``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sinh_float32
    >>> sinh_float32(np.array([0.0, 1e-10, 1.0, -2.0, -100.0], np.float32))
    array([ 0.0000000e+00,  1.0000000e-10,  1.1752012e+00, -3.6268604e+00,
                     -inf], dtype=float32)
    """
    return _apply("sinh_float32", 5, x, out)
