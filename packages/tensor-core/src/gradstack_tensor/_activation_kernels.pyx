# cython: language_level=3
"""Activation kernels: GELU (exact and tanh), SiLU, erf and erfinv, forward and backward,
each one pass in C over a float32 or float64 array.

The ops ``gelu``, ``gelu_backward``, ``silu``, ``erf`` and ``erfinv`` take these loops for
C-contiguous float32/float64 tensors (``_impl_nn.py``, ``_impl_special.py``), and
graph-engine's first-order formulas of erf, erfinv and silu take the ``*_backward``
kernels (Note [Activation kernels follow torch's formulas]).  Their arguments are checked,
and their threads set, by ``_kernels.pyx``'s shared code (see its docstring for the arrays
every kernel takes); public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport erfc as libm_erfc

from ._exp_c cimport gs_exp_f64  # no-cython-lint (brings the shared C: exp)
from ._kernels cimport (
    _check_input, _check_same, kernel_avx2, kernel_avx512, kernel_block_size, kernel_threads,
)

cnp.import_array()

__all__ = [
    "ACTIVATION_THRESHOLD", "erf", "erf_backward", "erfc", "erfinv", "erfinv_backward", "gelu",
    "gelu_backward", "leaky_relu", "leaky_relu_backward", "silu", "silu_backward",
    "softplus_backward",
]


# Note [Activation kernels follow torch's formulas]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Each loop does torch's arithmetic (ATen's GeluKernelImpl, GeluBackwardKernelImpl,
# silu_kernel, silu_backward_kernel, and autograd's ErfBackward0/ErfinvBackward0) in the
# array's dtype, with the same roundings in the same order; for instance the exact GELU of
# a float32 x is x * (1 + erf(x * (float)M_SQRT1_2)) * 0.5f, whose 1 + erf(...) cancels
# for x below about -3 exactly as torch's does (torch returns 0 from about -5.7 on, and
# so do these loops).  Only the transcendental functions differ from torch's (Sleef's
# vectorised erf/exp/tanh, within about 1 ulp):
#   - float64 takes libm's erf, exp and tanh (~1 ulp), one element at a time;
#   - float32 evaluates erf, exp and tanh in double without a branch (Note [float32 erf,
#     exp and tanh in double]; the exact GELU takes torch's own float erf, Note [float32
#     exact GELU in torch's erf]) and rounds the value once to float32, so that the compiler
#     vectorises the loops (with AVX2 and FMA, 4 doubles at a time, Note [AVX2 clones] in
#     _kernels.pyx; with AVX-512, 8, in a third copy as in Note [AVX-512 copies of the
#     transcendental loops]).  glibc's erff is scalar and branches on |x|: ~15 ns an
#     element on random data, where these loops take ~1-3 ns.  (GCC 12 does not vectorise
#     the default SSE2 copy, whose integer selects become branches: CPUs without AVX2 run
#     these loops at ~20-40 ns an element.)
# Two torch artefacts are kept: its vectorised float32 GELU (exact form) of +inf is nan,
# and it overflows to inf from x = 1.7e38 (it computes x (1 + erf) before halving); its
# float64 one, and both tanh forms, give inf and x.
# erfinv of float64 is torch's calc_erfinv (a rational first guess, then two Newton steps
# with erf/exp) with libm's functions, one element at a time; of float32, one polynomial
# in double (Note [float32 erfinv by one polynomial]).
#
# Note [float32 erf, exp and tanh in double]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#   - erf(x) = x P(x*x) on |x| <= 4, with P(u) = erf(sqrt u) / sqrt u a degree-22
#     polynomial in t = u/8 - 1 (the Chebyshev interpolant of P on [0, 16], converted to
#     powers of t: their absolute values sum to 1.13, so Horner's rule loses nothing);
#     its relative error is below 4e-13 (checked against mpmath at 3001 points).  Beyond 4,
#     erf rounds to +-1 in float32 (1 - erf(4) = 1.5e-8 is half an ulp below 1 at most), so
#     |x| is clamped to 4 (by integer selects on its bits, which keep nan and take +-inf;
#     GCC 12 vectorises neither a select on doubles, whose compare may trap, nor fmin);
#     the sign is copied back.
#   - exp(v) for v clamped to [-700, 700] (exp of a float32 argument beyond rounds to 0 or
#     inf in float32 in any case): k = round(v / ln 2), r = v - k ln 2 (Cody-Waite, ln 2 in
#     two parts as in fdlibm, |r| <= 0.35), exp(r) by its Taylor series to r**12
#     (truncation < 1e-14) and 2**k built from k's bits.  nan stays nan.
#   - tanh(u) = sign(u) (1 - e) / (1 + e) with e = exp(-2|u|): its absolute error is
#     ~1e-16, which the GELU's 1 + tanh(u) and 1 - tanh(u)**2 do not see.
# The double values are within ~1e-12 relatively of the true ones, so rounding them to
# float32 gives the correctly rounded erf and exp except within 1e-12 of a rounding
# boundary (the tests compare with torch's Sleef functions at a few ulp).
#
# Note [float32 exact GELU in torch's erf]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's vectorised float32 GELU (exact form) and its backward do not call Sleef's erf:
# they call Vectorized<float>::erf (ATen's vec256/vec512_float.h), Abramowitz and Stegun
# 7.1.26, erf(y) = sign(y) (1 - t r(t) exp(-y*y)) with t = 1 / (1 + 0.3275911 |y|) and r
# of degree 4, in float arithmetic with Sleef's expf (absolute error below 1.5e-7).  The
# float32 GELU loops compute that same formula in float (8 or 16 lanes, where the double
# erf of degree 22 above took 4 or 8 and was 3-4x slower than torch), with an exp in
# float for non-positive arguments (Cody-Waite, Taylor to r**7, ~1 ulp like Sleef's
# u10; 0 below -87 where Sleef's is subnormal).  Where 1 + erf cancels (x below about -3)
# both libraries carry erf's absolute error of ~1e-7 into GELU, so an ulp of difference
# in the exp can show as a relative difference there; elsewhere they agree within an ulp
# or two (max absolute difference 1.4e-6 at |x| <= 15, as before this change).  The
# ``erf`` op keeps the double erf above (correctly rounded).
#
# Note [float32 SiLU with a float exp]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's float32 silu and silu_backward compute exp(-x) with Sleef's expf (within an ulp)
# in 16 float lanes; with the double exp above (8 lanes, correctly rounded) the loops took
# twice torch's time (~0.8 ms at 1M elements, one thread, AVX-512).  They take
# gs_act_expf, the float exp of the GELU loops extended to every float (to inf above
# 88.72, into the subnormals below -87 as Sleef's): 0.40 ms (torch 0.41 ms), backward
# 0.47 ms (torch 0.49 ms); with AVX2 0.67 and 0.77 ms.  On every 397th float32 the
# forward is within 4 ulps of torch's, 99.8% of them equal; the backward, whose
# 1 + x (1 - s) cancels near x = -1.28, as before this change (the same ulp profile).

# Note [float32 erfinv by one polynomial]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's float32 erfinv is not calc_erfinv in float: it is vectorised (~2.5 ns an
# element; MKL's vsErfInv in the builds with MKL) and nearly correctly rounded (on every
# 53rd float32 in [0, 1), 20.1M values, it differs from the correctly rounded value in
# 1,125, by 1 ulp).  calc_erfinv in double (a first guess, two Newton steps with erf and
# exp) took ~20-30 ns an element even vectorised with AVX-512.  The float32 loop computes
#     erfinv(y) = y P(w),  w = -log((1 - |y|)(1 + |y|)) = -log(1 - y*y)
# in double, without a branch: (1 - |y|)(1 + |y|) is exact for a float32 y; the log is the
# atanh series above; P is one polynomial of degree 30 in u = w/8 - 1 over w in [0, 16]
# (every float32 |y| < 1 has w <= 15.95), by Horner's rule (its coefficients' absolute
# values sum to 4.8: no cancellation).  erfinv(y)/y is analytic in w, but has
# singularities at Im w = +-pi (where 1 - y*y = e**-w is negative), which is why the
# degree is this high; a split at w = 6.25 would need degree 18 for the first piece and a
# select or a branch for the second.  P is the Chebyshev interpolant of erfinv(y)/y at 300
# points of [0, 16] (mpmath, 40 digits), truncated to degree 30 and converted to powers of
# u: its relative error is 6.1e-14 at 4001 points.  The double value is then rounded once:
# on the 20.1M values above it differs from the correctly rounded one in 17, by 1 ulp,
# and from torch's by at most 1 ulp.  Tiny y give w = 0 and y P(0) = y sqrt(pi)/2, the
# right value down to the subnormals; -0.0 stays -0.0.  |y| >= 1 and nan (+-inf at +-1,
# nan beyond) are redone by calc_erfinv in a scalar pass, taken only when the loop saw
# one.  The backward loop is ErfinvBackward0 in torch's float order,
# ((float)(sqrt(pi)/2) * exp(x*x)) * grad with x the float32 erfinv and the exp in double
# rounded.  At 1M elements, one thread: ~2.7 ms with AVX-512 (torch: 2.5 ms), ~4.5 ms
# with AVX2 (the log's m > sqrt(2) is an integer compare of the bits, without which GCC
# 12 does not vectorise the AVX2 copy); the SSE2 copy is not vectorised (~40-80 ms).

cdef extern from *:
    """
    /* Note [float32 erf, exp and tanh in double], Note [Activation kernels follow torch's
       formulas] in _activation_kernels.pyx; GS_BODY and GS_DISPATCH: _kernels.pxd. */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    #define GS_ACT_LN2_HI 6.93147180369123816490e-01   /* fdlibm's ln2_hi */
    #define GS_ACT_LN2_LO 1.90821492927058770002e-10   /* ln 2 - GS_ACT_LN2_HI */
    #define GS_ACT_SQRT1_2 0.70710678118654752440
    #define GS_ACT_2_SQRTPI 1.12837916709551257390     /* 2 / sqrt(pi) */
    #define GS_ACT_KAPPA 0.044715

    /* x with |x| clamped to the float whose bits are `limit` (nan stays nan), by integer
       selects on the bits: GCC 12 vectorises these, not selects on floating-point values
       (whose compare may trap), nor the multiply-by-a-compare that is exact for huge x */
    GS_BODY float gs_act_clamp(float x, uint32_t limit) {
        uint32_t bits, mag;
        memcpy(&bits, &x, sizeof bits);
        mag = bits & 0x7fffffffu;
        mag = mag > 0x7f800000u ? mag : (mag < limit ? mag : limit);
        bits = (bits & 0x80000000u) | mag;
        memcpy(&x, &bits, sizeof x);
        return x;
    }

    /* erf(a) for a in [0, 4] or nan (Note [float32 erf, exp and tanh in double]) */
    GS_BODY double gs_act_erf_core(double a) {
        double t = a * a * 0.125 - 1.0;
        /* erf(sqrt(u)) / sqrt(u) for u = a * a in [0, 16], in powers of t = u/8 - 1 */
        double p = 1.4899077512157848e-06;
        p = p * t + -4.586389625536167e-06;
        p = p * t + 5.061026332340621e-06;
        p = p * t + -1.2635562437318653e-05;
        p = p * t + 5.053640712896558e-05;
        p = p * t + -0.00012649354827398734;
        p = p * t + 0.00027306067951901825;
        p = p * t + -0.0006048640227566884;
        p = p * t + 0.0012940914217067978;
        p = p * t + -0.002583028358545902;
        p = p * t + 0.0048529754420027285;
        p = p * t + -0.008604360206197415;
        p = p * t + 0.01434974251052603;
        p = p * t + -0.022474029356752523;
        p = p * t + 0.03306061080942833;
        p = p * t + -0.04576504085515629;
        p = p * t + 0.059886906838691786;
        p = p * t + -0.07472787156713769;
        p = p * t + 0.09020899403846405;
        p = p * t + -0.10771044230397442;
        p = p * t + 0.13167511689561098;
        p = p * t + -0.17657623330393213;
        p = p * t + 0.3535309956434044;
        return a * p;
    }

    #define GS_ACT_BITS_4 0x40800000u      /* 4.0f */
    #define GS_ACT_BITS_700 0x442f0000u    /* 700.0f */

    GS_BODY double gs_act_erf(float x) {
        return copysign(gs_act_erf_core(gs_act_clamp(fabsf(x), GS_ACT_BITS_4)), (double)x);
    }

    /* log(v) for v > 0 normal: v = 2**e m with m in [sqrt(1/2), sqrt(2)), log m =
       2 atanh(s) with s = (m - 1)/(m + 1), |s| <= 0.172, by its series to s**21 (absolute
       error ~1e-16); m > sqrt(2) is an integer compare of the bits, which GCC 12
       vectorises for AVX2 where it does not a compare of doubles */
    GS_BODY double gs_act_log(double v) {
        uint64_t bits, ebits;                          /* (AVX2 has no signed >> of 64 bits) */
        memcpy(&bits, &v, sizeof bits);
        ebits = (bits >> 52) | 0x4330000000000000ULL;  /* 2**52 + biased exponent */
        double e;
        memcpy(&e, &ebits, sizeof e);
        e = e - (6755399441055744.0 / 1.5 + 1023.0);
        bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
        double big = (int64_t)bits > (int64_t)0x3ff6a09e667f3bcdLL;   /* m > sqrt(2) */
        double m;
        memcpy(&m, &bits, sizeof m);                   /* [1, 2) */
        m = m * (1.0 - 0.5 * big);
        e = e + big;
        double s = (m - 1.0) / (m + 1.0);
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
        return e * GS_ACT_LN2_HI + (e * GS_ACT_LN2_LO + 2.0 * s * p);
    }

    /* exp(v) of a float (exp beyond +-700 rounds to 0 or inf in float32 all the same) */
    GS_BODY double gs_act_exp(float v) {
        return gs_exp_f64(gs_act_clamp(v, GS_ACT_BITS_700));  /* -1010 < k < 1010 */
    }

    /* Note [float32 exact GELU in torch's erf]: exp(v) in float for v <= 0 or nan, within
       ~1 ulp (Sleef's expf_u10 is too): k = round(v / ln 2), r = v - k ln 2 (ln 2 in two
       parts, the first with 16 bits so that k * hi is exact), exp(r) by its Taylor
       series to r**7 (|r| <= 0.347: truncation < 1e-8 relatively) times 2**k from k's
       bits; v below -87 (exp(v) below FLT_MIN, where Sleef gives subnormals) and -inf
       give 0, by integer selects on the bits (which GCC 12 vectorises). */
    #define GS_ACT_EXPF_LIMIT 0xc2ae0000u   /* -87.0f */
    GS_BODY float gs_act_expf_nonpos(float v) {
        uint32_t bits, keep;
        memcpy(&bits, &v, sizeof bits);
        keep = 0u - (uint32_t)((bits <= GS_ACT_EXPF_LIMIT)
                               | ((bits & 0x7fffffffu) > 0x7f800000u));
        float w = gs_act_clamp(v, 0x42ae0000u);  /* |v| <= 87 (nan stays nan) */
        float kr = w * 1.44269504088896341f + 12582912.0f;
        float k = kr - 12582912.0f;
        float r = (w - k * 0.693145751953125f) - k * 1.428606765330187e-06f;
        float p = 1.0f / 5040.0f;
        p = p * r + 1.0f / 720.0f;
        p = p * r + 1.0f / 120.0f;
        p = p * r + 1.0f / 24.0f;
        p = p * r + 1.0f / 6.0f;
        p = p * r + 0.5f;
        p = p * r + 1.0f;
        p = p * r + 1.0f;
        uint32_t kbits;
        memcpy(&kbits, &kr, sizeof kbits);
        kbits = (kbits - 0x4b400000u + 127u) << 23;   /* 2**k, k in [-126, 0] */
        float scale;
        memcpy(&scale, &kbits, sizeof scale);
        float e = p * scale;
        uint32_t ebits;
        memcpy(&ebits, &e, sizeof ebits);
        ebits &= keep;
        memcpy(&e, &ebits, sizeof e);
        return e;
    }

    /* Note [float32 SiLU with a float exp]: exp(v) in float for every float v, within ~1
       ulp (as gs_act_expf_nonpos: Cody-Waite, Taylor to r**7) for |v| <= 104 (beyond,
       exp rounds to 0 or is inf); 2**k is applied as two powers of two, 2**(k >> 1) and
       2**(k - (k >> 1)) (each normal for k in [-150, 128]), so that the second product
       rounds once into the subnormals as Sleef's does; v above ln(FLT_MAX) = 88.7228 and
       +inf give inf (an integer select on the bits), nan stays nan */
    GS_BODY float gs_act_expf(float v) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        uint32_t big = 0u - (uint32_t)((bits > 0x42b17217u) & (bits <= 0x7f800000u));
        float w = gs_act_clamp(v, 0x42d00000u);  /* |v| <= 104 (nan stays nan) */
        int32_t k;                                /* in [-150, 150] */
        float p = gs_expf_reduced(w, &k);
        float e = gs_expf_scale(p, k, k >> 1);
        uint32_t ebits;
        memcpy(&ebits, &e, sizeof ebits);
        ebits = (ebits & ~big) | (0x7f800000u & big);
        memcpy(&e, &ebits, sizeof e);
        return e;
    }

    /* torch's vectorised float erf (Vectorized<float>::erf, ATen's vec256/vec512):
       Abramowitz and Stegun 7.1.26, erf(y) = sign(y) (1 - r(t) t exp(-y*y)) with
       t = 1 / (1 + p |y|), absolute error below 1.5e-7 (Note [float32 exact GELU in
       torch's erf]); the sign by the bits. */
    GS_BODY float gs_act_erf_torch(float y) {
        uint32_t bits, sign;
        memcpy(&bits, &y, sizeof bits);
        sign = bits & 0x80000000u;
        bits ^= sign;
        float a;
        memcpy(&a, &bits, sizeof a);
        float t = 1.0f / (0.3275911f * a + 1.0f);
        float r = 1.061405429f * t + -1.453152027f;
        r = r * t + 1.421413741f;
        r = r * t + -0.284496736f;
        r = r * t + 0.254829592f;
        float e = gs_act_expf_nonpos(-(y * y));
        float v = (-e * t) * r + 1.0f;
        memcpy(&bits, &v, sizeof bits);
        bits ^= sign;
        memcpy(&v, &bits, sizeof v);
        return v;
    }

    GS_BODY double gs_act_tanh(float u) {
        double e = gs_act_exp(-2.0f * fabsf(u));     /* exact, or -inf (clamped) */
        return copysign((1.0 - e) / (1.0 + e), (double)u);
    }

    /* ---- float32: vectorised loops (torch's float arithmetic, transcendentals in
       double rounded once) ---- */

    GS_BODY void gs_gelu_f32_body(int tanh_form, const float* x, float* out,
                                  Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        const float alpha = (float)GS_ACT_SQRT1_2;
        const float beta = (float)(M_SQRT2 * GS_ACT_2_SQRTPI * 0.5);
        const float kappa = (float)GS_ACT_KAPPA;
        if (tanh_form) {
            for (i = start; i < stop; i++) {
                float v = x[i];
                float inner = beta * (v + kappa * (v * v * v));
                out[i] = 0.5f * v * (1.0f + (float)gs_act_tanh(inner));
            }
        } else {
            for (i = start; i < stop; i++) {
                float v = x[i];
                /* torch's order (x (1 + erf) overflows from 1.7e38), and times nan
                   for +-inf: torch's float32 GELU of +inf is nan */
                out[i] = v * (1.0f + gs_act_erf_torch(v * alpha)) * 0.5f * ((v - v) + 1.0f);
            }
        }
    }

    GS_BODY void gs_gelu_backward_f32_body(int tanh_form, const float* g, const float* x,
                                           float* out, Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        if (tanh_form) {
            const float beta = (float)(M_SQRT2 * GS_ACT_2_SQRTPI * 0.5);
            const float kappa = (float)GS_ACT_KAPPA;
            for (i = start; i < stop; i++) {
                float v = x[i];
                float v_sq = v * v;
                float inner = beta * (v + kappa * (v_sq * v));
                float t = (float)gs_act_tanh(inner);
                float left = 0.5f * v;
                float right = 1.0f + t;
                float left_derivative = 0.5f * right;
                float tanh_derivative = 1.0f - t * t;
                float inner_derivative = beta * (1.0f + 3.0f * kappa * v_sq);
                float right_derivative = left * tanh_derivative * inner_derivative;
                out[i] = g[i] * (left_derivative + right_derivative);
            }
        } else {
            const float alpha = (float)GS_ACT_SQRT1_2;
            const float beta = (float)(GS_ACT_2_SQRTPI * GS_ACT_SQRT1_2 * 0.5);
            for (i = start; i < stop; i++) {
                float v = x[i];
                float cdf = 0.5f * (1.0f + gs_act_erf_torch(v * alpha));
                float pdf = beta * gs_act_expf_nonpos(v * v * -0.5f);
                out[i] = g[i] * (cdf + v * pdf);
            }
        }
    }

    GS_BODY void gs_erf_f32_body(const float* x, float* out, Py_ssize_t start,
                                 Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++)
            out[i] = (float)gs_act_erf(x[i]);
    }

    /* autograd's ErfBackward0: 2/sqrt(pi) * exp(-x**2) * grad */
    GS_BODY void gs_erf_backward_f32_body(const float* g, const float* x, float* out,
                                          Py_ssize_t start, Py_ssize_t stop) {
        const float k = (float)GS_ACT_2_SQRTPI;
        for (Py_ssize_t i = start; i < stop; i++)
            out[i] = (k * (float)gs_act_exp(-(x[i] * x[i]))) * g[i];
    }

    /* silu: x / (1 + exp(-x)); backward: grad * sigmoid * (1 + x (1 - sigmoid)) */
    GS_BODY void gs_silu_f32_body(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++)
            out[i] = x[i] / (1.0f + gs_act_expf(-x[i]));
    }

    GS_BODY void gs_silu_backward_f32_body(const float* g, const float* x, float* out,
                                           Py_ssize_t start, Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            float s = 1.0f / (1.0f + gs_act_expf(-x[i]));
            out[i] = g[i] * s * (1.0f + x[i] * (1.0f - s));
        }
    }

    /* erfinv of a float32 y with |y| < 1, in double (Note [float32 erfinv by one
       polynomial]): y P(w) with w = -log((1 - |y|)(1 + |y|)) in [0, 15.95] and P of
       degree 30 in u = w/8 - 1 (coefficients from the highest power down).  Lanes with
       |y| >= 1 or nan give garbage, which gs_erfinv_f32's scalar pass replaces. */
    GS_BODY double gs_erfinv_poly(float yf) {
        double a = fabsf(yf);
        double w = -gs_act_log((1.0 - a) * (1.0 + a));    /* 1 - a*a, exact */
        double u = w * 0.125 - 1.0;
        double p = 6.782998123882583e-05;
        p = p * u + -0.00014556553777501975;
        p = p * u + -0.0003651202036817607;
        p = p * u + 0.0010448847361321496;
        p = p * u + 0.0004902654324965032;
        p = p * u + -0.00295041217676063;
        p = p * u + 0.0007841479439842657;
        p = p * u + 0.0037663363346116096;
        p = p * u + -0.0025328090629324796;
        p = p * u + -0.0017260483733054274;
        p = p * u + 0.001091223555709593;
        p = p * u + 0.0012168042805734353;
        p = p * u + 0.0007023537009139276;
        p = p * u + -0.0038760956154357666;
        p = p * u + 0.00399292238310524;
        p = p * u + -0.0014260155501053312;
        p = p * u + -0.002760867412833599;
        p = p * u + 0.008066070102873163;
        p = p * u + -0.012231358742263016;
        p = p * u + 0.011444508319215282;
        p = p * u + -0.002710620837660105;
        p = p * u + -0.013740790280757432;
        p = p * u + 0.032916734290885694;
        p = p * u + -0.04568106400712176;
        p = p * u + 0.042149529963458665;
        p = p * u + -0.015798974623559288;
        p = p * u + -0.03647959817943259;
        p = p * u + 0.12572654993784005;
        p = p * u + -0.32354791296194113;
        p = p * u + 1.4108582484329473;
        p = p * u + 2.661438641581136;
        return (double)yf * p;
    }

    /* out = erfinv(y), or (backward) autograd's ErfinvBackward0 in torch's float order:
       ((float)(sqrt(pi)/2) * expf(x * x)) * g with x the float32 erfinv and expf the
       double exp rounded.  Returns whether some |y| >= 1 or nan (tested on the bits: an
       integer compare), whose elements the caller redoes. */
    GS_BODY int gs_erfinv_f32_body(int backward, const float* g, const float* y, float* out,
                                   Py_ssize_t start, Py_ssize_t stop) {
        const float k = (float)(0.5 * 1.77245385090551602730);
        uint32_t outside = 0, bits;
        Py_ssize_t i;
        if (backward) {
            /* erfinv into out, then the exp on it, a block in L1 at a time: one loop doing
               both ran 1.4-2.5x slower with AVX-512 (register spills); blocks of a multiple
               of 64 elements keep the vector loops' remainders where they were */
            for (Py_ssize_t block = start; block < stop; block += 1024) {
                Py_ssize_t end = stop - block > 1024 ? block + 1024 : stop;
                for (i = block; i < end; i++) {
                    memcpy(&bits, y + i, sizeof bits);
                    outside |= (bits & 0x7fffffffu) >= 0x3f800000u;
                    out[i] = (float)gs_erfinv_poly(y[i]);
                }
                for (i = block; i < end; i++) {
                    float x = out[i];
                    out[i] = (k * (float)gs_act_exp(x * x)) * g[i];
                }
            }
        } else {
            for (i = start; i < stop; i++) {
                memcpy(&bits, y + i, sizeof bits);
                outside |= (bits & 0x7fffffffu) >= 0x3f800000u;
                out[i] = (float)gs_erfinv_poly(y[i]);
            }
        }
        return (int)outside;
    }

    /* leaky_relu: x > 0 ? x : x * slope; backward: x > 0 ? g : g * slope (torch's), as a
       multiply by 1 or slope (exact; the caller takes numpy for a non-finite slope) */
    GS_BODY void gs_leaky_f32_body(float slope, const float* g, const float* x, float* out,
                                   Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        if (g == NULL) {
            for (i = start; i < stop; i++) {
                float c = x[i] > 0.0f;
                out[i] = x[i] * (c + (1.0f - c) * slope);
            }
        } else {
            for (i = start; i < stop; i++) {
                float c = x[i] > 0.0f;
                out[i] = g[i] * (c + (1.0f - c) * slope);
            }
        }
    }

    /* Note [softplus_backward in one pass]: torch's softplus_backward in float,
       x * beta > threshold ? g : g * z / (z + 1) with z = exp(x * beta), the exp in float
       (gs_act_expf), the choice by a select on the bits (the other side may be nan) */
    GS_BODY void gs_softplus_backward_f32_body(float beta, float threshold, const float* g,
                                               const float* x, float* out,
                                               Py_ssize_t start, Py_ssize_t stop) {
        uint32_t keep, gb, rb;
        for (Py_ssize_t i = start; i < stop; i++) {
            float v = x[i] * beta;
            float z = gs_act_expf(v);
            float r = g[i] * z / (z + 1.0f);
            keep = 0u - (uint32_t)(v > threshold);
            memcpy(&gb, g + i, sizeof gb);
            memcpy(&rb, &r, sizeof rb);
            rb = (gb & keep) | (rb & ~keep);
            memcpy(out + i, &rb, sizeof rb);
        }
    }

    #define GS_ACT_CLONES(suffix, attr)                                                \\
        attr static void gs_gelu_f32_##suffix(int tanh_form, const float* x, float* out,   \\
                                              Py_ssize_t start, Py_ssize_t stop) {         \\
            gs_gelu_f32_body(tanh_form, x, out, start, stop);                              \\
        }                                                                                  \\
        attr static void gs_gelu_backward_f32_##suffix(int tanh_form, const float* g,      \\
                const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) {           \\
            gs_gelu_backward_f32_body(tanh_form, g, x, out, start, stop);                  \\
        }                                                                                  \\
        attr static void gs_erf_f32_##suffix(const float* x, float* out, Py_ssize_t start, \\
                                             Py_ssize_t stop) {                            \\
            gs_erf_f32_body(x, out, start, stop);                                          \\
        }                                                                                  \\
        attr static void gs_erf_backward_f32_##suffix(const float* g, const float* x,      \\
                float* out, Py_ssize_t start, Py_ssize_t stop) {                           \\
            gs_erf_backward_f32_body(g, x, out, start, stop);                              \\
        }                                                                                  \\
        attr static void gs_silu_f32_##suffix(const float* x, float* out,                  \\
                                              Py_ssize_t start, Py_ssize_t stop) {         \\
            gs_silu_f32_body(x, out, start, stop);                                         \\
        }                                                                                  \\
        attr static void gs_silu_backward_f32_##suffix(const float* g, const float* x,     \\
                float* out, Py_ssize_t start, Py_ssize_t stop) {                           \\
            gs_silu_backward_f32_body(g, x, out, start, stop);                             \\
        }                                                                                  \\
        attr static void gs_leaky_f32_##suffix(float slope, const float* g,                \\
                const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) {           \\
            gs_leaky_f32_body(slope, g, x, out, start, stop);                              \\
        }                                                                                  \\
        attr static int gs_erfinv_f32_##suffix(int backward, const float* g,               \\
                const float* y, float* out, Py_ssize_t start, Py_ssize_t stop) {           \\
            return gs_erfinv_f32_body(backward, g, y, out, start, stop);                   \\
        }                                                                                  \\
        attr static void gs_softplus_backward_f32_##suffix(float beta, float threshold,    \\
                const float* g, const float* x, float* out, Py_ssize_t start,              \\
                Py_ssize_t stop) {                                                         \\
            gs_softplus_backward_f32_body(beta, threshold, g, x, out, start, stop);        \\
        }

    GS_ACT_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_ACT_CLONES(avx2, __attribute__((target("avx2,fma"))))
    /* Note [AVX-512 copies of the transcendental loops] in _float32_transcendentals.pyx */
    #  define GS_ACT_AVX512 __attribute__((target( \\
            "avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")))
    GS_ACT_CLONES(avx512, GS_ACT_AVX512)
    #  define GS_ACT_DISPATCH(name, args) \
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_ACT_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    /* one entry for every float32 loop: kind 0 gelu, 1 gelu_backward, 2 erf,
       3 erf_backward, 4 silu, 5 silu_backward; g is NULL for the forward loops */
    static void gs_act_f32(int gs_avx2, int gs_avx512, int kind, int tanh_form, double slope,
                           const float* g,
                           const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) {
        switch (kind) {
        case 0: GS_ACT_DISPATCH(gs_gelu_f32, (tanh_form, x, out, start, stop)); break;
        case 1: GS_ACT_DISPATCH(gs_gelu_backward_f32, (tanh_form, g, x, out, start, stop)); break;
        case 2: GS_ACT_DISPATCH(gs_erf_f32, (x, out, start, stop)); break;
        case 3: GS_ACT_DISPATCH(gs_erf_backward_f32, (g, x, out, start, stop)); break;
        case 4: GS_ACT_DISPATCH(gs_silu_f32, (x, out, start, stop)); break;
        case 5: GS_ACT_DISPATCH(gs_silu_backward_f32, (g, x, out, start, stop)); break;
        default: GS_ACT_DISPATCH(gs_leaky_f32, ((float)slope, g, x, out, start, stop)); break;
        }
    }

    /* ---- float64: libm, one element at a time ---- */

    static void gs_act_f64(int kind, int tanh_form, double slope, const double* g,
                           const double* x, double* out, Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        const double alpha = GS_ACT_SQRT1_2;
        const double kappa = GS_ACT_KAPPA;
        const double beta_tanh = M_SQRT2 * GS_ACT_2_SQRTPI * 0.5;
        const double beta_erf = GS_ACT_2_SQRTPI * GS_ACT_SQRT1_2 * 0.5;
        for (i = start; i < stop; i++) {
            double v = x[i];
            switch (kind) {
            case 0:
                if (tanh_form)
                    out[i] = 0.5 * v * (1.0 + tanh(beta_tanh * (v + kappa * (v * v * v))));
                else
                    out[i] = v * 0.5 * (1.0 + erf(v * alpha));
                break;
            case 1:
                if (tanh_form) {
                    double v_sq = v * v;
                    double t = tanh(beta_tanh * (v + kappa * (v_sq * v)));
                    double left = 0.5 * v;
                    double right = 1.0 + t;
                    double right_derivative = left * (1.0 - t * t)
                                              * (beta_tanh * (1.0 + 3.0 * kappa * v_sq));
                    out[i] = g[i] * (0.5 * right + right_derivative);
                } else {
                    double cdf = 0.5 * (1.0 + erf(v * alpha));
                    double pdf = beta_erf * exp(v * v * -0.5);
                    out[i] = g[i] * (cdf + v * pdf);
                }
                break;
            case 2: out[i] = erf(v); break;
            case 3: out[i] = (GS_ACT_2_SQRTPI * exp(-(v * v))) * g[i]; break;
            case 4: out[i] = v / (1.0 + exp(-v)); break;
            case 6: {
                double c = v > 0.0;
                out[i] = (g == NULL ? v : g[i]) * (c + (1.0 - c) * slope);
                break;
            }
            default: {
                double s = 1.0 / (1.0 + exp(-v));
                out[i] = g[i] * s * (1.0 + v * (1.0 - s));
            }
            }
        }
    }

    /* ---- erfinv: torch's calc_erfinv, in the array's dtype (scalar, as torch's) ---- */

    #define GS_ERFINV_BODY(T, ERF, EXP, LOG, SQRT, FABS, COPYSIGN)                       \\
        T a[4] = {(T)0.886226899, (T)-1.645349621, (T)0.914624893, (T)-0.140543331};     \\
        T b[4] = {(T)-2.118377725, (T)1.442710462, (T)-0.329097515, (T)0.012229801};     \\
        T c[4] = {(T)-1.970840454, (T)-1.624906493, (T)3.429567803, (T)1.641345311};     \\
        T d[2] = {(T)3.543889200, (T)1.637067800};                                       \\
        T k = (T)2.0 / (T)sqrt(3.14159265358979323846);                                   \\
        T y_abs = FABS(y), z, num, dem, x;                                               \\
        if (y_abs > (T)1.0) return (T)NAN;                                               \\
        if (y_abs == (T)1.0) return COPYSIGN((T)INFINITY, y);                            \\
        if (y_abs <= (T)0.7) {                                                           \\
            z = y * y;                                                                   \\
            num = (((a[3] * z + a[2]) * z + a[1]) * z + a[0]);                           \\
            dem = ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + (T)1.0);            \\
            x = y * num / dem;                                                           \\
        } else {                                                                         \\
            z = SQRT(-LOG(((T)1.0 - y_abs) / (T)2.0));                                   \\
            num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];                             \\
            dem = (d[1] * z + d[0]) * z + (T)1.0;                                        \\
            x = COPYSIGN(num, y) / dem;                                                  \\
        }                                                                                \\
        x = x - (ERF(x) - y) / (k * EXP(-x * x));                                        \\
        x = x - (ERF(x) - y) / (k * EXP(-x * x));                                        \\
        return x;

    static float gs_erfinv_one_f32(float y) {
        GS_ERFINV_BODY(float, erff, expf, logf, sqrtf, fabsf, copysignf)
    }

    static double gs_erfinv_one_f64(double y) {
        GS_ERFINV_BODY(double, erf, exp, log, sqrt, fabs, copysign)
    }

    /* erfinv (backward 0) or autograd's ErfinvBackward0 (backward 1):
       0.5 * sqrt(pi) * exp(erfinv(y)**2) * grad */
    static void gs_erfinv_f32(int gs_avx2, int gs_avx512, int backward, const float* g,
                              const float* y, float* out, Py_ssize_t start, Py_ssize_t stop) {
        const float k = (float)(0.5 * 1.77245385090551602730);
        if (!GS_ACT_DISPATCH(gs_erfinv_f32, (backward, g, y, out, start, stop)))
            return;
        /* |y| >= 1 and nan: calc_erfinv's +-inf at +-1, nan elsewhere */
        for (Py_ssize_t i = start; i < stop; i++) {
            if (fabsf(y[i]) < 1.0f)
                continue;
            float x = gs_erfinv_one_f32(y[i]);
            out[i] = backward ? k * expf(x * x) * g[i] : x;
        }
    }

    static void gs_softplus_backward_f32(int gs_avx2, int gs_avx512, float beta,
                                         float threshold, const float* g, const float* x,
                                         float* out, Py_ssize_t start, Py_ssize_t stop) {
        GS_ACT_DISPATCH(gs_softplus_backward_f32, (beta, threshold, g, x, out, start, stop));
    }

    /* float64: torch's formula with libm's exp, one element at a time */
    static void gs_softplus_backward_f64(double beta, double threshold, const double* g,
                                         const double* x, double* out, Py_ssize_t start,
                                         Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            double v = x[i] * beta;
            double z = exp(v);
            out[i] = v > threshold ? g[i] : g[i] * z / (z + 1.0);
        }
    }

    static void gs_erfinv_f64(int backward, const double* g, const double* y, double* out,
                              Py_ssize_t start, Py_ssize_t stop) {
        const double k = 0.5 * 1.77245385090551602730;
        for (Py_ssize_t i = start; i < stop; i++) {
            double x = gs_erfinv_one_f64(y[i]);
            out[i] = backward ? k * exp(x * x) * g[i] : x;
        }
    }
    """
    void gs_act_f32(int avx2, int avx512, int kind, int tanh_form, double slope,
                    const float* g, const float* x, float* out, Py_ssize_t start,
                    Py_ssize_t stop) noexcept nogil
    void gs_act_f64(int kind, int tanh_form, double slope, const double* g, const double* x,
                    double* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_erfinv_f32(int avx2, int avx512, int backward, const float* g, const float* y,
                       float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_erfinv_f64(int backward, const double* g, const double* y, double* out,
                       Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_softplus_backward_f32(int avx2, int avx512, float beta, float threshold,
                                  const float* g, const float* x, float* out,
                                  Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_softplus_backward_f64(double beta, double threshold, const double* g,
                                  const double* x, double* out, Py_ssize_t start,
                                  Py_ssize_t stop) noexcept nogil


# the loops' kinds (gs_act_f32's switch); erfinv has its own loops
cdef enum:
    GELU = 0
    GELU_BACKWARD = 1
    ERF = 2
    ERF_BACKWARD = 3
    SILU = 4
    SILU_BACKWARD = 5
    LEAKY_RELU = 6      # forward and backward (g NULL or not)
    ERFINV = 7
    ERFINV_BACKWARD = 8

# Note [Activation threshold]
# The float32 loops cost ~1-3 ns per element, the float64 ones (libm) ~10-20 ns: at least
# the float32 sin/cos/tanh loops' cost, so their threshold is taken (Note [Choosing
# PARALLEL_THRESHOLD] in _kernels.pyx: a second thread pays from ~2k elements).  Not
# measured for these loops: the host was loaded (load average ~9 on 2 cores) when they
# were written.  The threads take blocks of a multiple of 64 elements: the compiler's
# vector loop and its scalar remainder may round a float32 result differently (an FMA
# contracted in one and not the other: 1 ulp, rarely), so every block but the last must
# be whole vectors for the results not to depend on the number of threads.
cdef Py_ssize_t _activation_threshold = 1 << 11
ACTIVATION_THRESHOLD = _activation_threshold


cdef void _range(int kind, bint tanh_form, double slope, bint single, const void* g,
                 const void* x, void* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    if kind >= ERFINV:
        if single:
            gs_erfinv_f32(kernel_avx2(), kernel_avx512(), kind == ERFINV_BACKWARD,
                          <const float*>g, <const float*>x,
                          <float*>out, start, stop)
        else:
            gs_erfinv_f64(kind == ERFINV_BACKWARD, <const double*>g, <const double*>x,
                          <double*>out, start, stop)
    elif single:
        gs_act_f32(kernel_avx2(), kernel_avx512(), kind, tanh_form, slope, <const float*>g,
                   <const float*>x, <float*>out, start, stop)
    else:
        gs_act_f64(kind, tanh_form, slope, <const double*>g, <const double*>x, <double*>out,
                   start, stop)


cdef void _run(int kind, bint tanh_form, double slope, bint single, const char* g,
               const char* x, char* out, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _range(kind, tanh_form, slope, single, g, x, out, 0, n)
        return
    # blocks of a multiple of 64 elements (Note [Activation threshold])
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _range(kind, tanh_form, slope, single, g, x, out, min(start, n), min(start + step, n))


cdef cnp.ndarray _apply(str func, int kind, bint tanh_form, object grad, object x,
                        double slope=0.0):
    """Check the arrays, then run the loop `kind` into a new array of x's shape and dtype."""
    cdef int typenum = _check_input(func, "x", x)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef const char* gp = NULL
    if grad is not None:
        _check_input(func, "grad", grad)
        _check_same(func, "grad", grad, "x", x)
        gp = <const char*>cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa)
    cdef int nthreads = kernel_threads(n, _activation_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if n >= _activation_threshold:
        with nogil:
            _run(kind, tanh_form, slope, single, gp, xp, op_, n, nthreads)
    else:
        _run(kind, tanh_form, slope, single, gp, xp, op_, n, nthreads)
    return out


cdef bint _tanh_form(str func, object approximate) except -1:
    if approximate == "tanh":
        return True
    if approximate == "none":
        return False
    raise ValueError(f"{func}: approximate must be 'none' or 'tanh', not {approximate!r}")


def gelu(x, approximate="none"):
    """GELU of an array: ``x * Phi(x)`` (``approximate="none"``) or
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))`` (``"tanh"``), as torch's
    ``F.gelu`` computes them (Note [Activation kernels follow torch's formulas]).

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous.
    approximate : {"none", "tanh"}

    Returns
    -------
    ndarray
        A new array of x's shape and dtype.

    Raises
    ------
    TypeError
        If x is not a float32/float64 ndarray.
    ValueError
        If x is not C-contiguous, or approximate is neither "none" nor "tanh".

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gelu
    >>> gelu(np.array([-1.0, 0.0, 1.0]))
    array([-0.15865525,  0.        ,  0.84134475])
    >>> gelu(np.array([1.0], np.float32), "tanh")
    array([0.841192], dtype=float32)
    """
    return _apply("gelu", GELU, _tanh_form("gelu", approximate), None, x)


def gelu_backward(grad, x, approximate="none"):
    """``grad * d gelu(x) / dx`` (torch's ``gelu_backward``): ``grad * (cdf + x * pdf)``
    for ``"none"``, torch's tanh-form derivative for ``"tanh"``.

    Parameters
    ----------
    grad, x : ndarray
        float32 or float64, C-contiguous, of one shape and dtype.
    approximate : {"none", "tanh"}

    Returns
    -------
    ndarray
        A new array of x's shape and dtype.

    Raises
    ------
    TypeError
        If an array is not a float32/float64 ndarray, or the dtypes differ.
    ValueError
        If the shapes differ, an array is not C-contiguous, or approximate is neither
        "none" nor "tanh".

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gelu_backward
    >>> gelu_backward(np.ones(2), np.array([0.0, 1.0]))
    array([0.5       , 1.08331547])
    """
    return _apply("gelu_backward", GELU_BACKWARD, _tanh_form("gelu_backward", approximate),
                  grad, x)


def erf(x):
    """The error function of a float32/float64 C-contiguous array, as a new array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erf
    >>> erf(np.array([0.0, 0.5, -1.0]))
    array([ 0.        ,  0.52049988, -0.84270079])
    """
    return _apply("erf", ERF, False, None, x)


def erf_backward(grad, x):
    """``2/sqrt(pi) * exp(-x**2) * grad`` (torch's ErfBackward0), arrays as for
    :func:`gelu_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erf_backward
    >>> erf_backward(np.ones(2), np.array([0.0, 1.0]))
    array([1.12837917, 0.4151075 ])
    """
    return _apply("erf_backward", ERF_BACKWARD, False, grad, x)


# Note [erfc is its own function]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# erfc(x) = 1 - erf(x) loses every digit where erf(x) rounds to 1: in float32 from x ~ 3.9
# (erfc(5) = 1.5e-12 came out 0, erfc(-3) 1.2e-7 off), so erfc is computed by libm's erfc
# (double, within an ulp), a float32 result rounded once from it; torch's is Sleef's erfcf
# (1.5 ulp), so the two agree to a couple of float32 ulps.  Scalar (~10-20 ns an element):
# erfc is not on a model's hot path.


cdef void _erfc_range(bint single, const char* x, char* out, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t i
    if single:
        for i in range(start, stop):
            (<float*>out)[i] = <float>libm_erfc((<const float*>x)[i])
    else:
        for i in range(start, stop):
            (<double*>out)[i] = libm_erfc((<const double*>x)[i])


def erfc(x):
    """The complementary error function ``1 - erf(x)`` of a float32/float64 C-contiguous
    array, as a new array, computed directly (Note [erfc is its own function]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erfc
    >>> erfc(np.array([0.0, 1.0, 5.0]))
    array([1.00000000e+00, 1.57299207e-01, 1.53745979e-12])
    """
    cdef int typenum = _check_input("erfc", "x", x)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _activation_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        _erfc_range(single, xp, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _erfc_range(single, xp, op_, min(start, n), min(start + step, n))
    return out


def erfinv(x):
    """The inverse error function (torch's calc_erfinv) of a float32/float64 C-contiguous
    array: ``+-inf`` at ``+-1``, nan beyond.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erfinv
    >>> erfinv(np.array([0.0, 0.5, 1.0, 2.0]))
    array([0.        , 0.47693628,        inf,        nan])
    """
    return _apply("erfinv", ERFINV, False, None, x)


def erfinv_backward(grad, x):
    """``0.5 * sqrt(pi) * exp(erfinv(x)**2) * grad`` (torch's ErfinvBackward0), arrays as
    for :func:`gelu_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erfinv_backward
    >>> erfinv_backward(np.ones(2), np.array([0.0, 0.5]))
    array([0.88622693, 1.11258482])
    """
    return _apply("erfinv_backward", ERFINV_BACKWARD, False, grad, x)


def silu(x):
    """``x / (1 + exp(-x))`` of a float32/float64 C-contiguous array, as a new array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import silu
    >>> silu(np.array([-1.0, 0.0, 2.0]))
    array([-0.26894142,  0.        ,  1.76159416])
    """
    return _apply("silu", SILU, False, None, x)


def silu_backward(grad, x):
    """``grad * s * (1 + x * (1 - s))`` with ``s = sigmoid(x)`` (torch's
    silu_backward), arrays as for :func:`gelu_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import silu_backward
    >>> silu_backward(np.ones(2), np.array([0.0, 1.0]))
    array([0.5       , 0.92767051])
    """
    return _apply("silu_backward", SILU_BACKWARD, False, grad, x)


cdef double _slope(str func, object negative_slope) except? -1:
    cdef double slope
    try:
        slope = float(negative_slope)
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: negative_slope must be a real number, got {type(negative_slope).__name__}"
        ) from None
    if slope != slope or slope in (float("inf"), float("-inf")):
        raise ValueError(f"{func}: negative_slope must be finite, got {slope}")
    return slope


def leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x > 0``, ``x * negative_slope`` elsewhere (torch's leaky_relu; the
    slope is rounded to x's dtype first), of a float32/float64 C-contiguous array.

    Raises
    ------
    TypeError
        If x is not a float32/float64 ndarray, or negative_slope is not a real number.
    ValueError
        If x is not C-contiguous, or negative_slope is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import leaky_relu
    >>> leaky_relu(np.array([-2.0, 0.0, 3.0]), 0.1)
    array([-0.2,  0. ,  3. ])
    """
    return _apply("leaky_relu", LEAKY_RELU, False, None, x, _slope("leaky_relu", negative_slope))


def leaky_relu_backward(grad, x, negative_slope=0.01):
    """``grad`` where ``x > 0``, ``grad * negative_slope`` elsewhere (torch's
    leaky_relu_backward), arrays as for :func:`gelu_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import leaky_relu_backward
    >>> leaky_relu_backward(np.ones(2), np.array([-1.0, 1.0]), 0.1)
    array([0.1, 1. ])
    """
    return _apply("leaky_relu_backward", LEAKY_RELU, False, grad, x,
                  _slope("leaky_relu_backward", negative_slope))


cdef void _softplus_range(bint single, double beta, double threshold, const void* g,
                          const void* x, void* out, Py_ssize_t start,
                          Py_ssize_t stop) noexcept nogil:
    if single:
        gs_softplus_backward_f32(kernel_avx2(), kernel_avx512(), <float>beta,
                                 <float>threshold, <const float*>g, <const float*>x,
                                 <float*>out, start, stop)
    else:
        gs_softplus_backward_f64(beta, threshold, <const double*>g, <const double*>x,
                                 <double*>out, start, stop)


cdef cnp.ndarray _softplus_backward(str func, object grad, object x, object beta,
                                    object threshold):
    cdef int typenum = _check_input(func, "x", x)
    cdef double b = float(beta), t = float(threshold)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    _check_input(func, "grad", grad)
    _check_same(func, "grad", grad, "x", x)
    cdef const void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _activation_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const void* xp = cnp.PyArray_DATA(xa)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            _softplus_range(single, b, t, gp, xp, op_, 0, n)
        return out
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _softplus_range(single, b, t, gp, xp, op_, min(start, n), min(start + step, n))
    return out


def softplus_backward(grad, x, beta=1.0, threshold=20.0):
    """torch's softplus_backward: ``grad`` where ``x * beta > threshold``, else
    ``grad * z / (z + 1)`` with ``z = exp(x * beta)`` (Note [softplus_backward in one
    pass]; the exp in float for float32, libm's for float64); arrays as for
    :func:`gelu_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softplus_backward
    >>> softplus_backward(np.ones(3), np.array([-1.0, 0.0, 30.0]))
    array([0.26894142, 0.5       , 1.        ])
    """
    return _softplus_backward("softplus_backward", grad, x, beta, threshold)
