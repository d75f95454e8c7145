# cython: language_level=3
"""float32 sin, cos and tanh, correctly rounded and vectorised: the loops of the forward
ops (``sin``, ``cos``, ``tanh`` of a float32 tensor, bound in ``_elementwise.pyx``) and of
graph-engine's ``sin_backward``/``cos_backward`` (``trig_f32_range``, through
``gradstack_tensor.extension``).

They take their AVX2 and AVX-512 copies by ``_kernels.pyx``'s switches (``_avx2``,
``_avx512``), its thread settings, and are declared for the other modules in
``_float32_transcendentals.pxd``.  ``_transcendental_f32`` and ``_sincos_f32`` run them on
arrays, for tests and benchmarks.
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport cosf, fabsf, sinf, tanhf

from ._kernels cimport kernel_avx2, kernel_avx512, kernel_block_size, kernel_threads

import numpy as np

cnp.import_array()

__all__ = ["TRANSCENDENTAL_THRESHOLD"]


# Note [float32 sin and cos]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# glibc's sinf/cosf are scalar and branch on the quadrant of x, so on random data they
# cost ~8 ns per element (mispredicted branches), and numpy's float32 SIMD loop ~2.5 ns.
# For float32 these loops evaluate cos(x) themselves, in float64 and without a branch or
# an integer conversion, so that the compiler vectorises them (gs_trig_body in the C block
# below: ~5 ns per element with SSE2, ~1.9 ns with AVX2 and FMA, Note [AVX2 clones]):
#   - q = x * 2/pi rounded to an integer (adding and subtracting 1.5 * 2**52 rounds; this
#     needs the default strict floating point: -ffast-math would fold it away);
#   - r = x - q * pi/2, with pi/2 split in two parts (Cody-Waite, as in fdlibm): exact
#     for |x| <= GS_TRIG_LIMIT, since q * GS_PIO2_HI then fits in 53 bits;
#   - cos(r) and sin(r) by their Taylor series on |r| <= pi/4 (truncation < 1e-14);
#   - with m = q mod 4 taken in {-2, ..., 2} and u = m * m, the factors
#     cos(m pi/2) = (u - 1)(u - 6)/6 and sin(m pi/2) = m (4 - u)/3 are exact small
#     integers, and cos(x) = cos(m pi/2) cos(r) - sin(m pi/2) sin(r).  sin(x) is
#     cos(x - pi/2): the same with q + 3 for q.
# The float64 result is rounded once to float32.  On 2e7 random inputs it was the
# correctly rounded value every time (glibc's cosf misses ~1 in 70 by an ulp, numpy's
# and torch's SIMD loops are within an ulp or so).  |x| > GS_TRIG_LIMIT and non-finite x
# (where the float64 path produces garbage or nan) are rare: a second pass, taken only
# when the first saw one, redoes those elements with libm; so does a zero for sin, whose
# sign the formula may lose (sin(-0.0) is -0.0), and which a select in the loop would
# keep the compiler from vectorising.  float64 keeps libm's sin/cos, which numpy
# uses too.  The same loop computes the forward ops (sin, cos: ``trig_f32``) and
# graph-engine's sin_backward/cos_backward (``grad * cos(x)``, ``-grad * sin(x)``).
#
# Note [sin and cos from one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The gradient of sin is grad * cos(x), of cos -grad * sin(x): a backward pass would
# evaluate the other function again, a second transcendental pass over x.  Both come from
# the same reduction (r, sin r, cos r, and the quadrant's exact factors), so one pass can
# write both for about the cost of one (gs_sincos_body: two stores instead of one), and
# with the same operations, hence the same bits, as the loops that compute one.  The
# forward sin and cos of a float32 tensor that requires grad take that pass and leave the
# other function as the op's by-product (Note [A kernel's by-product] in _elementwise.pyx),
# which autograd keeps for the backward formula.
#
# Note [float32 tanh]
# ~~~~~~~~~~~~~~~~~~~
# numpy's float32 tanh costs ~3 ns per element, the most expensive pass of an MLP-style
# ``tanh(...)``.  gs_tanh_one_f32 computes it in float64 without a branch, so that it
# vectorises like the trig loop:
#   - a = min(|x|, 9.5): from |x| = 9.01 on, tanh rounds to 1 in float32 (written as
#     arithmetic, since GCC does not vectorise a loop with that select, and exact for
#     |x| <= 1e15; larger |x| and nan go to libm's tanhf in a second pass, taken only when
#     the first saw one);
#   - e = expm1(2a) = 2**k (1 + expm1(r)) - 1 with k = round(2a / ln 2) (0 to 28) and
#     r = 2a - k ln 2 (Cody-Waite, |r| <= 0.35, ln 2 split as in fdlibm); expm1(r) by its
#     Taylor series to r**12 (truncation < 1e-14), and 2**k built from k's bits (the
#     rounding constant leaves k in the low bits of 2a / ln 2 + 1.5 * 2**52);
#     2**k expm1(r) + (2**k - 1) is one rounding, with no cancellation (k = 0 gives
#     expm1(r) itself, which keeps full relative precision for small a);
#   - tanh(a) = e / (e + 2), and the sign of x is copied back (tanh(-0.0) is -0.0).
# The float64 value is within ~5e-16 relatively of tanh(a), so rounding it to float32
# gives the correctly rounded result except within 5e-16 of a rounding boundary: on
# 2**28 inputs spread over all float32 values it differed from the correctly rounded
# value nowhere (tests/test_transcendental_f32.py samples every binade).  nan stays nan
# and +-inf gives +-1.

# Note [AVX-512 copies of the transcendental loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# On a CPU with AVX-512 (F, DQ, VL), numpy's float32 sin, cos and tanh are 16-lane SIMD
# approximations (~0.5 ms and ~0.4 ms at 1M elements on an AMD EPYC with AVX-512),
# while the float32 loops of Note [float32 sin and cos] and Note [float32 tanh] compute
# in double: in the AVX2 copy, 4 lanes.  Those loops get a third copy, built from the
# same bodies for AVX-512 with 512-bit vectors preferred, taken when the CPU has it and
# the AVX2 copies are on (``_avx512`` switches it, for tests and benchmarks).  Its
# multiply-adds are the same explicit fmas as the AVX2 copy's, so it gives the same bits:
# checked for all 2**32 float32 inputs (sin, cos, tanh and the sin/cos pair), 0 differ.
# Medians on one thread, 1M float32 elements (AMD EPYC, AVX-512):
#
#              default    AVX2      AVX-512    numpy (AVX-512)
#     sin      4.0 ms     1.46 ms   1.17 ms    0.54 ms
#     cos      4.0 ms     1.45 ms   1.16 ms
#     tanh     5.2 ms     1.71 ms   1.09 ms    0.38 ms
#
# The double arithmetic that makes the results correctly rounded keeps them ~2-3x
# slower than numpy's float32 loops on such CPUs (on AVX2 CPUs they were faster than
# numpy's); on 500k random inputs numpy's sin differs from torch's on ~13% of them here,
# the correctly rounded one on ~5%.

cdef extern from *:
    """
    /* Note [float32 sin and cos], Note [float32 tanh] above, Note [AVX2 clones] in
       _kernels.pyx (GS_BODY, GS_DISPATCH: _kernels.pxd); the dispatchers at the end take
       the switches, gs_avx2 and gs_avx512, as arguments (_kernels.pyx's) */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    #define GS_TWO_OVER_PI 6.36619772367581382433e-01
    #define GS_PIO2_HI 1.57079632673412561417e+00  /* the first 33 bits of pi/2 */
    #define GS_PIO2_LO 6.07710050650619224932e-11  /* pi/2 - GS_PIO2_HI */
    #define GS_ROUNDER 6755399441055744.0          /* 1.5 * 2**52 */
    #define GS_TRIG_LIMIT 262144.0f                /* 2**18 */
    #define GS_INV_LN2 1.44269504088896338700e+00
    #define GS_LN2_HI 6.93147180369123816490e-01   /* fdlibm's ln2_hi: 32 bits of ln 2 */
    #define GS_LN2_LO 1.90821492927058770002e-10   /* ln 2 - GS_LN2_HI */
    #define GS_TANH_ONE 9.5                        /* tanh rounds to 1 in float32 beyond */
    #define GS_TANH_LIMIT 1e15f                    /* a - GS_TANH_ONE is exact below */

    /* a * b + c, as one fma in the AVX2 copy (fused is a constant after inlining). */
    GS_BODY double gs_madd(double a, double b, double c, int fused) {
    #if GS_AVX2_CLONES
        if (fused)
            return __builtin_fma(a, b, c);
    #endif
        return a * b + c;
    }

    /* x rounded to an integer, for |x| < 2**51, with arithmetic only (vectorisable). */
    GS_BODY double gs_round_half_even(double x) {
        return (x + GS_ROUNDER) - GS_ROUNDER;
    }

    /* x = q pi/2 + r with q an integer and |r| <= pi/4: q, sin(r) and cos(r), for
       |x| <= GS_TRIG_LIMIT (Note [float32 sin and cos]). */
    GS_BODY void gs_trig_reduce(float x, double* q, double* sin_r, double* cos_r, int fused) {
        double xd = x;
        double k = gs_madd(xd, GS_TWO_OVER_PI, GS_ROUNDER, fused) - GS_ROUNDER;
        double r = gs_madd(-k, GS_PIO2_LO, gs_madd(-k, GS_PIO2_HI, xd, fused), fused);
        double r2 = r * r;
        double s = gs_madd(r2, 1.0 / 6227020800.0, -1.0 / 39916800.0, fused);
        s = gs_madd(r2, s, 1.0 / 362880.0, fused);
        s = gs_madd(r2, s, -1.0 / 5040.0, fused);
        s = gs_madd(r2, s, 1.0 / 120.0, fused);
        s = gs_madd(r2, s, -1.0 / 6.0, fused);
        double c = gs_madd(r2, -1.0 / 87178291200.0, 1.0 / 479001600.0, fused);
        c = gs_madd(r2, c, -1.0 / 3628800.0, fused);
        c = gs_madd(r2, c, 1.0 / 40320.0, fused);
        c = gs_madd(r2, c, -1.0 / 720.0, fused);
        c = gs_madd(r2, c, 1.0 / 24.0, fused);
        c = gs_madd(r2, c, -0.5, fused);
        *q = k;
        *sin_r = gs_madd(r * r2, s, r, fused);
        *cos_r = gs_madd(r2, c, 1.0, fused);
    }

    /* cos(m pi/2) and sin(m pi/2) for the quarter turns `quadrant`: with m = quadrant mod 4
       in {-2, ..., 2} and u = m * m, (u - 1)(u - 6)/6 and m (4 - u)/3, exact small
       integers. */
    GS_BODY void gs_quarter_turns(double quadrant, double* cos_m, double* sin_m) {
        double m = quadrant - 4.0 * gs_round_half_even(quadrant * 0.25);
        double u = m * m;
        *cos_m = (u - 1.0) * (u - 6.0) * (1.0 / 6.0);
        *sin_m = m * (4.0 - u) * (1.0 / 3.0);
    }

    /* cos(x - shift * pi/2) for |x| <= GS_TRIG_LIMIT: cos(x) with shift 0, sin(x) with 3
       (but sin(-0.0) may come out +0.0: gs_trig_body sends zeros to libm). */
    GS_BODY float gs_cos_shifted_f32(float x, double shift, int fused) {
        double q, sin_r, cos_r, cos_m, sin_m;
        gs_trig_reduce(x, &q, &sin_r, &cos_r, fused);
        gs_quarter_turns(q + shift, &cos_m, &sin_m);
        return (float)(cos_m * cos_r - sin_m * sin_r);
    }

    /* out[i] = k_i * cos(x[i] - shift * pi/2), where k_i is sign * g[i] (g_step 1),
       sign * g[0] (g_step 0: a broadcast gradient) or 1 (g NULL), for |x| <=
       GS_TRIG_LIMIT; returns whether some x in [start, stop) was outside that range (or
       not finite), or a zero when computing sin (whose sign libm keeps).  One loop per
       case, so that each vectorises (a select on x == 0 in the loop would not). */
    GS_BODY int gs_trig_body(double shift, float sign, const float* g, Py_ssize_t g_step,
                             const float* x, float* out, Py_ssize_t start,
                             Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        /* the limit, or (for sin) just below the smallest nonzero: zeros count as outside */
        float low = shift != 0.0 ? 1e-45f : 0.0f;
        if (g == NULL) {
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = gs_cos_shifted_f32(x[i], shift, fused);
            }
        } else if (g_step == 0) {
            float k = sign * g[0];
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = k * gs_cos_shifted_f32(x[i], shift, fused);
            }
        } else {
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = (sign * g[i]) * gs_cos_shifted_f32(x[i], shift, fused);
            }
        }
        return outside;
    }

    /* sin(x) and cos(x) from one reduction, for |x| <= GS_TRIG_LIMIT: the same
       operations as gs_cos_shifted_f32 with shift 3 and 0 (cos((q + 3) pi/2) is
       sin(q pi/2) and sin((q + 3) pi/2) is -cos(q pi/2), exact small integers), so the
       same bits (Note [sin and cos from one pass]). */
    GS_BODY void gs_sincos_one_f32(float x, float* s, float* c, int fused) {
        double q, sin_r, cos_r, cos_m, sin_m;
        gs_trig_reduce(x, &q, &sin_r, &cos_r, fused);
        gs_quarter_turns(q, &cos_m, &sin_m);
        *c = (float)(cos_m * cos_r - sin_m * sin_r);
        *s = (float)(sin_m * cos_r + cos_m * sin_r);
    }

    /* s = sin(x), c = cos(x) on [start, stop); returns whether some x was zero, beyond
       GS_TRIG_LIMIT or not finite (the caller redoes those with libm, as for sin). */
    GS_BODY int gs_sincos_body(const float* x, float* s, float* c, Py_ssize_t start,
                               Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        for (i = start; i < stop; i++) {
            outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= 1e-45f);
            gs_sincos_one_f32(x[i], s + i, c + i, fused);
        }
        return outside;
    }

    /* tanh(x) in float64, rounded once to float32 (Note [float32 tanh]). */
    GS_BODY float gs_tanh_one_f32(float xf, int fused) {
        double x = xf;
        double a = fabs(x);
        /* min(a, GS_TANH_ONE), as arithmetic (GCC 12 vectorises neither a select here nor
           fmin); exact for a < GS_TANH_LIMIT, beyond which gs_tanh_body's caller redoes x */
        a = a - (a > GS_TANH_ONE) * (a - GS_TANH_ONE);
        double t = a + a;
        double kr = gs_madd(t, GS_INV_LN2, GS_ROUNDER, fused);
        double k = kr - GS_ROUNDER;
        double r = gs_madd(-k, GS_LN2_LO, gs_madd(-k, GS_LN2_HI, t, fused), fused);
        double p = gs_madd(r, 1.0 / 479001600.0, 1.0 / 39916800.0, fused);
        p = gs_madd(r, p, 1.0 / 3628800.0, fused);
        p = gs_madd(r, p, 1.0 / 362880.0, fused);
        p = gs_madd(r, p, 1.0 / 40320.0, fused);
        p = gs_madd(r, p, 1.0 / 5040.0, fused);
        p = gs_madd(r, p, 1.0 / 720.0, fused);
        p = gs_madd(r, p, 1.0 / 120.0, fused);
        p = gs_madd(r, p, 1.0 / 24.0, fused);
        p = gs_madd(r, p, 1.0 / 6.0, fused);
        p = gs_madd(r, p, 0.5, fused);
        double em1_r = gs_madd(r * r, p, r, fused);    /* expm1(r) */
        int64_t bits;
        memcpy(&bits, &kr, sizeof bits);               /* ... + k in the low bits */
        bits = (bits + 1023) << 52;                    /* 2**k: k + 1023 < 2048 */
        double scale;
        memcpy(&scale, &bits, sizeof scale);
        double e = gs_madd(scale, em1_r, scale - 1.0, fused);   /* expm1(2a) */
        return (float)copysign(e / (e + 2.0), x);
    }

    /* out = tanh(x) on [start, stop) for |x| <= GS_TANH_LIMIT; returns whether some x was
       beyond or nan (whose elements the caller redoes with libm). */
    GS_BODY int gs_tanh_body(const float* x, float* out, Py_ssize_t start,
                             Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        for (i = start; i < stop; i++) {
            outside |= !(fabsf(x[i]) <= GS_TANH_LIMIT);
            out[i] = gs_tanh_one_f32(x[i], fused);
        }
        return outside;
    }

    static int gs_trig_f32_default(double shift, float sign, const float* g,
                                   Py_ssize_t g_step, const float* x, float* out,
                                   Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 0);
    }

    static int gs_sincos_f32_default(const float* x, float* s, float* c, Py_ssize_t start,
                                     Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 0);
    }

    static int gs_tanh_f32_default(const float* x, float* out, Py_ssize_t start,
                                   Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 0);
    }

    #if GS_AVX2_CLONES
    __attribute__((target("avx2,fma")))
    static int gs_trig_f32_avx2(double shift, float sign, const float* g,
                                Py_ssize_t g_step, const float* x, float* out,
                                Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 1);
    }

    __attribute__((target("avx2,fma")))
    static int gs_sincos_f32_avx2(const float* x, float* s, float* c, Py_ssize_t start,
                                  Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 1);
    }

    __attribute__((target("avx2,fma")))
    static int gs_tanh_f32_avx2(const float* x, float* out, Py_ssize_t start,
                                Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 1);
    }

    /* Note [AVX-512 copies of the transcendental loops] */
    #  define GS_AVX512 \
        __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")))
    GS_AVX512
    static int gs_trig_f32_avx512(double shift, float sign, const float* g,
                                  Py_ssize_t g_step, const float* x, float* out,
                                  Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 1);
    }

    GS_AVX512
    static int gs_sincos_f32_avx512(const float* x, float* s, float* c, Py_ssize_t start,
                                    Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 1);
    }

    GS_AVX512
    static int gs_tanh_f32_avx512(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 1);
    }
    #  define GS_DISPATCH_512(name, args) \
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_DISPATCH_512(name, args) GS_DISPATCH(name, args)
    #endif

    static int gs_trig_f32(int gs_avx2, int gs_avx512, double shift, float sign,
                           const float* g, Py_ssize_t g_step, const float* x, float* out,
                           Py_ssize_t start, Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_trig_f32, (shift, sign, g, g_step, x, out, start, stop));
    }

    static int gs_sincos_f32(int gs_avx2, int gs_avx512, const float* x, float* s,
                             float* c, Py_ssize_t start, Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_sincos_f32, (x, s, c, start, stop));
    }

    static int gs_tanh_f32(int gs_avx2, int gs_avx512, const float* x, float* out,
                           Py_ssize_t start, Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_tanh_f32, (x, out, start, stop));
    }
    """
    float GS_TRIG_LIMIT
    float GS_TANH_LIMIT
    int gs_trig_f32(int avx2, int avx512, double shift, float sign, const float* g,
                    Py_ssize_t g_step, const float* x, float* out, Py_ssize_t start,
                    Py_ssize_t stop) noexcept nogil
    int gs_tanh_f32(int avx2, int avx512, const float* x, float* out, Py_ssize_t start,
                    Py_ssize_t stop) noexcept nogil
    int gs_sincos_f32(int avx2, int avx512, const float* x, float* s, float* c,
                      Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# sin, cos and tanh cost ~1-2 ns per element with AVX2 (more without): two threads win
# from 2k elements (Note [Choosing PARALLEL_THRESHOLD], measured for sin/cos_backward)
cdef Py_ssize_t _transcendental_threshold = 1 << 11
TRANSCENDENTAL_THRESHOLD = _transcendental_threshold


cdef void trig_f32_range(bint want_sin, float sign, const float* g, Py_ssize_t g_step,
                         const float* x, float* out, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil:
    """out = k * cos(x), or k * sin(x) if want_sin, on [start, stop), where k is sign * g[i]
    (g_step 1), sign * g[0] (g_step 0) or 1 (g NULL) (Note [float32 sin and cos])."""
    cdef Py_ssize_t i
    cdef float k = 1
    if not gs_trig_f32(kernel_avx2(), kernel_avx512(), 3.0 if want_sin else 0.0, sign, g,
                       g_step, x, out, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TRIG_LIMIT) or (want_sin and x[i] == 0):
            if g != NULL:
                k = sign * g[i * g_step]
            out[i] = k * (sinf(x[i]) if want_sin else cosf(x[i]))


cdef void _trig_forward(bint want_sin, const float* x, float* out, Py_ssize_t n,
                        int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        trig_f32_range(want_sin, 1, NULL, 0, x, out, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        trig_f32_range(want_sin, 1, NULL, 0, x, out, start, min(start + step, n))


cdef void _sincos_range(const float* x, float* s, float* c, Py_ssize_t start,
                        Py_ssize_t stop) noexcept nogil:
    """s = sin(x), c = cos(x) on [start, stop) (Note [sin and cos from one pass])."""
    cdef Py_ssize_t i
    if not gs_sincos_f32(kernel_avx2(), kernel_avx512(), x, s, c, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TRIG_LIMIT) or x[i] == 0:
            s[i] = sinf(x[i])
            c[i] = cosf(x[i])


cdef void _sincos_forward(const float* x, float* s, float* c, Py_ssize_t n,
                          int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _sincos_range(x, s, c, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _sincos_range(x, s, c, start, min(start + step, n))


cdef tuple sincos_f32(cnp.ndarray x):
    """(sin(x), cos(x)) of a C-contiguous, aligned, native-order float32 array from one pass
    (Note [sin and cos from one pass]), the bits of transcendental_f32's; None for any
    other array."""
    cdef cnp.ndarray s, c
    cdef Py_ssize_t n
    cdef int nthreads
    cdef const float* xp
    cdef float* sp
    cdef float* cp
    if (cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not cnp.PyArray_ISCARRAY_RO(x)
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        return None
    s = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    c = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    n = cnp.PyArray_SIZE(x)
    nthreads = kernel_threads(n, _transcendental_threshold)
    xp = <const float*>cnp.PyArray_DATA(x)
    sp = <float*>cnp.PyArray_DATA(s)
    cp = <float*>cnp.PyArray_DATA(c)
    with nogil:
        _sincos_forward(xp, sp, cp, n, nthreads)
    return (s, c)


def _sincos_f32(x):
    """(sin(x), cos(x)) of a C-contiguous float32 array from one pass; for tests.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._float32_transcendentals import _sincos_f32
    >>> _sincos_f32(np.array([0.0, -0.0, 1.0], np.float32))
    (array([ 0.       , -0.       ,  0.84147096], dtype=float32),
     array([1.       , 1.       , 0.5403023], dtype=float32))
    """
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or not x.flags.c_contiguous:
        raise TypeError("_sincos_f32: x must be a C-contiguous float32 numpy array")
    return sincos_f32(x)


cdef void _tanh_range(const float* x, float* out, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil:
    """out = tanh(x) on [start, stop) (Note [float32 tanh]); |x| > 1e15 and nan by libm."""
    cdef Py_ssize_t i
    if not gs_tanh_f32(kernel_avx2(), kernel_avx512(), x, out, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TANH_LIMIT):
            out[i] = tanhf(x[i])


cdef void _tanh_forward(const float* x, float* out, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _tanh_range(x, out, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _tanh_range(x, out, start, min(start + step, n))


cdef object transcendental_f32(int which, cnp.ndarray x):
    """sin (0), cos (1) or tanh (2) of a C-contiguous, aligned, native-order float32 array
    by the loops above, as a new array of its shape; None for any other array (the caller
    takes numpy's loop)."""
    cdef cnp.ndarray out
    cdef Py_ssize_t n
    cdef int nthreads
    cdef const float* xp
    cdef float* op_
    if (cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not cnp.PyArray_ISCARRAY_RO(x)
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        return None
    out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    n = cnp.PyArray_SIZE(x)
    nthreads = kernel_threads(n, _transcendental_threshold)
    xp = <const float*>cnp.PyArray_DATA(x)
    op_ = <float*>cnp.PyArray_DATA(out)
    with nogil:
        if which == 2:
            _tanh_forward(xp, op_, n, nthreads)
        else:
            _trig_forward(which == 0, xp, op_, n, nthreads)
    return out


def _transcendental_f32(str name, x):
    """``name`` ('sin', 'cos' or 'tanh') of a C-contiguous float32 array by the float32
    loops of Note [float32 sin and cos] and Note [float32 tanh]; for tests and benchmarks
    (the ops take these loops themselves).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._float32_transcendentals import _transcendental_f32
    >>> _transcendental_f32("tanh", np.array([0.0, 1.0, -20.0], np.float32))
    array([ 0.       ,  0.7615942, -1.       ], dtype=float32)
    """
    which = {"sin": 0, "cos": 1, "tanh": 2}.get(name)
    if which is None:
        raise ValueError(f"_transcendental_f32: name must be 'sin', 'cos' or 'tanh', not {name!r}")
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or not x.flags.c_contiguous:
        raise TypeError("_transcendental_f32: x must be a C-contiguous float32 numpy array")
    return transcendental_f32(which, x)
