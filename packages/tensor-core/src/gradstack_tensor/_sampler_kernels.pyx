# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""torch's CPU samplers, each in one C pass over a gradstack
:class:`~gradstack_tensor.random.Generator`'s stream: the rejection and serial samplers
``poisson``, ``binomial``, ``_standard_gamma``, ``cauchy_``, ``log_normal_`` and
``geometric_`` (Note [Samplers in one C pass]), and the uniforms of ``uniform_``/``rand``
(and of ``normal_``'s Box-Muller), ``exponential_``, ``random_``/``randint`` and
``randperm`` (Note [Uniform and exponential draws in C]).

Each function takes the generator, checks its arrays (dtype, contiguity, lengths) before
it touches memory, draws under the bit generator's lock, and leaves the generator where
torch's would be: its MT19937 state advanced by exactly the draws made and the cached
second normal of a Box-Muller pair (``Generator._next_double``) updated.

Note [Samplers in one C pass]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's ``sample_poisson``, ``sample_gamma``, ``sample_binomial`` (ATen's
``Distributions.h``/``Distributions.cpp``) and the serial kernels of ``cauchy_``,
``log_normal_`` and ``geometric_`` (``cpu_serial_kernel`` over a distribution of doubles)
loop over the elements in order, each taking as many ``uniform_real_distribution<double>``
draws (one ``random64()``: two 32-bit draws, the first one high, 53 bits kept) or
``normal_distribution<double>`` draws (two uniforms per Box-Muller pair, the second value
cached in the generator) as its rejection step needs.  The Python loops of
``random_samplers.py`` replayed them through ``TorchStream`` at ~6 us an element (poisson
of 10^6 rates: 930 ms against torch's 40 ms); here each sampler is one C loop that takes
its 32-bit draws straight from numpy's MT19937 state (Note [MT19937 in blocks] in
``_dropout_kernels.pyx``: the same layout check; when it fails, the bit generator's own
``next_uint32``).  The arithmetic is torch's type for type: the float32 instantiation
(``scalar_t`` float, ``accscalar_t`` double) computes in ``float`` where torch does
(``alpha += 1.0f``, ``count * prob``, ``std::log1p`` of a float is ``log1pf``), and
double elsewhere; contraction is off, as in torch's build of these files; the
transcendental functions are the C library's, as torch's.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

import numpy as np

from ._dropout_kernels import _mt_blocks

__all__ = [
    "poisson", "standard_gamma", "binomial", "cauchy", "log_normal", "geometric", "uniform",
    "exponential",
    "random_mod",
    "randperm",
]

cdef extern from *:
    """
    #if defined(__clang__)
    #  pragma STDC FP_CONTRACT OFF
    #elif defined(__GNUC__)
    #  pragma GCC optimize ("fp-contract=off")
    #endif
    #include <math.h>
    #include <stdint.h>

    #define GSS_MT_N 624
    #define GSS_MT_M 397
    #define GSS_PI 3.14159265358979323846

    /* numpy's mt19937_state: the 624 words and the position (Note [MT19937 in blocks]) */
    typedef struct { uint32_t key[GSS_MT_N]; int pos; } gss_mt;

    typedef struct {
        gss_mt* mt;                       /* numpy's state itself, or NULL: */
        void* bstate;                     /* the bit generator's next_uint32 */
        uint32_t (*bnext)(void*);
        int has_cache;                    /* the generator's cached normal double */
        double cache;
        int64_t draws;                    /* 32-bit draws taken */
    } gss_src;

    static void gss_twist(gss_mt* st) {
        uint32_t* k = st->key;
        uint32_t y;
        int i;
        for (i = 0; i < GSS_MT_N - GSS_MT_M; i++) {
            y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
            k[i] = k[i + GSS_MT_M] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        for (; i < GSS_MT_N - 1; i++) {
            y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
            k[i] = k[i + (GSS_MT_M - GSS_MT_N)] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        y = (k[GSS_MT_N - 1] & 0x80000000u) | (k[0] & 0x7fffffffu);
        k[GSS_MT_N - 1] = k[GSS_MT_M - 1] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        st->pos = 0;
    }

    /* torch's random(): the next 32-bit draw */
    static inline uint32_t gss_next32(gss_src* s) {
        s->draws++;
        if (s->mt) {
            gss_mt* st = s->mt;
            if (st->pos >= GSS_MT_N)
                gss_twist(st);
            uint32_t y = st->key[st->pos++];
            y ^= (y >> 11);
            y ^= (y << 7) & 0x9d2c5680u;
            y ^= (y << 15) & 0xefc60000u;
            y ^= (y >> 18);
            return y;
        }
        return s->bnext(s->bstate);
    }

    /* uniform_real_distribution<double>(0, 1): random64(), its low 53 bits */
    static inline double gss_uniform(gss_src* s) {
        uint64_t hi = gss_next32(s);
        uint64_t lo = gss_next32(s);
        return (double)(((hi << 32) | lo) & ((UINT64_C(1) << 53) - 1))
               * (1.0 / 9007199254740992.0);
    }

    /* normal_distribution<double>(0, 1): the cached value first, else a Box-Muller pair */
    static inline double gss_normal(gss_src* s) {
        if (s->has_cache) {
            s->has_cache = 0;
            return s->cache;
        }
        double u1 = gss_uniform(s);
        double u2 = gss_uniform(s);
        double r = sqrt(-2.0 * log1p(-u2));
        double theta = 2.0 * GSS_PI * u1;
        s->cache = r * sin(theta);
        s->has_cache = 1;
        return r * cos(theta);
    }

    /* C's (int64_t) of a double as x86-64 computes it (cvttsd2si): INT64_MIN when out of
       range or NaN, where the C standard leaves it undefined */
    static inline int64_t gss_i64(double x) {
        if (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
            return (int64_t)x;
        return INT64_MIN;
    }

    /* ATen's sample_poisson of one rate (checked non-negative by the caller) */
    static int64_t gss_poisson_one(gss_src* s, double lambda) {
        if (lambda >= 10) {    /* transformed rejection (Hoermann, 1993) */
            double slam = sqrt(lambda);
            double loglam = log(lambda);
            double b = 0.931 + 2.53 * slam;
            double a = -0.059 + 0.02483 * b;
            double invalpha = 1.1239 + 1.1328 / (b - 3.4);
            double vr = 0.9277 - 3.6224 / (b - 2);
            for (;;) {
                double U = gss_uniform(s) - 0.5;
                double V = gss_uniform(s);
                double us = 0.5 - fabs(U);
                int64_t k = gss_i64(floor((2 * a / us + b) * U + lambda + 0.43));
                if ((us >= 0.07) && (V <= vr))
                    return k;
                if ((k < 0) || ((us < 0.013) && (V > us)))
                    continue;
                if ((log(V) + log(invalpha) - log(a / (us * us) + b)) <=
                    (-lambda + (double)k * loglam - lgamma((double)k + 1)))
                    return k;
            }
        }
        if (lambda == 0)
            return 0;
        double enlam = exp(-lambda), prod = 1.0;
        int64_t x = 0;
        for (;;) {
            prod *= gss_uniform(s);
            if (prod > enlam)
                x += 1;
            else
                return x;
        }
    }

    /* ATen's sample_gamma<scalar_t, double> (ST: scalar_t), Gamma(alpha, 1) as a double */
    #define GSS_GAMMA(NAME, ST)                                                         \\
    static double NAME(gss_src* s, ST alpha) {                                          \\
        double scale = 1.0f;                                                            \\
        if (alpha < 1.0f) {                                                             \\
            if (alpha == 0.f)                                                           \\
                return 0.f;                                                             \\
            scale *= pow(1 - gss_uniform(s), (double)(1.0f / alpha));                  \\
            alpha += 1.0f;                                                              \\
        }                                                                               \\
        const double d = alpha - 1.0f / 3.0f;                                           \\
        const double c = 1.0f / sqrt(9.0f * d);                                         \\
        for (;;) {                                                                      \\
            double x, y;                                                                \\
            do {                                                                        \\
                x = gss_normal(s);                                                      \\
                y = 1.0f + c * x;                                                       \\
            } while (y <= 0);                                                           \\
            const double v = y * y * y;                                                 \\
            const double u = 1 - gss_uniform(s);                                        \\
            const double xx = x * x;                                                    \\
            if (u < 1.0f - 0.0331f * xx * xx)                                           \\
                return scale * d * v;                                                   \\
            if (log(u) < 0.5f * xx + d * (1.0f - v + log(v)))                           \\
                return scale * d * v;                                                   \\
        }                                                                               \\
    }
    GSS_GAMMA(gss_gamma_one_f32, float)
    GSS_GAMMA(gss_gamma_one_f64, double)

    static inline double gss_stirling_tail(double k) {
        static const double tail[] = {
            0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
            0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
            0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
            0.00833056343336287};
        if (k <= 9 && k >= 0)    /* (a negative k never comes) */
            return tail[(size_t)k];
        double kp1sq = (k + 1) * (k + 1);
        return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
    }

    /* ATen's binomial_inversion, btrs and sample_binomial<scalar_t, double>; LOG1P is
       std::log1p of a scalar_t (log1pf for float), FLOOR std::floor of one */
    #define GSS_BINOMIAL(SUF, ST, LOG1P, FLOOR, SQRT)                                   \\
    static ST gss_binv_##SUF(gss_src* s, ST count, ST prob) {                           \\
        double geom_sum = 0;                                                            \\
        ST num_geom = 0;                                                                \\
        double logprob = LOG1P(-prob);                                                  \\
        for (;;) {                                                                      \\
            double U = gss_uniform(s);                                                  \\
            double geom = ceil(log(U) / logprob);                                       \\
            geom_sum += geom;                                                           \\
            if (geom_sum > count)                                                       \\
                break;                                                                  \\
            num_geom = num_geom + 1;                                                    \\
        }                                                                               \\
        return num_geom;                                                                \\
    }                                                                                   \\
    static ST gss_btrs_##SUF(gss_src* s, ST count, ST prob) {                           \\
        ST k;                                                                           \\
        double U, V, us;                                                                \\
        const double stddev = SQRT(count * prob * (1 - prob));                          \\
        const double b = 1.15 + 2.53 * stddev;                                          \\
        const double a = -0.0873 + 0.0248 * b + 0.01 * prob;                            \\
        const double c = count * prob + 0.5;                                            \\
        const double v_r = 0.92 - 4.2 / b;                                              \\
        const double r = prob / (1 - prob);                                             \\
        const double alpha = (2.83 + 5.1 / b) * stddev;                                 \\
        const double m = FLOOR((count + 1) * prob);                                     \\
        for (;;) {                                                                      \\
            U = gss_uniform(s) - 0.5;                                                   \\
            V = gss_uniform(s);                                                         \\
            us = 0.5 - fabs(U);                                                         \\
            k = (ST)floor((2 * a / us + b) * U + c);                                    \\
            if (k < 0 || k > count)                                                     \\
                continue;                                                               \\
            if (us >= 0.07 && V <= v_r)                                                 \\
                return k;                                                               \\
            V = log(V * alpha / (a / (us * us) + b));                                   \\
            double upperbound =                                                         \\
                ((m + 0.5) * log((m + 1) / (r * (count - m + 1))) +                     \\
                 (count + 1) * log((count - m + 1) / (count - k + 1)) +                 \\
                 (k + 0.5) * log(r * (count - k + 1) / (k + 1)) +                       \\
                 gss_stirling_tail(m) + gss_stirling_tail(count - m) -                  \\
                 gss_stirling_tail(k) - gss_stirling_tail(count - k));                  \\
            if (V <= upperbound)                                                        \\
                return k;                                                               \\
        }                                                                               \\
    }                                                                                   \\
    static ST gss_binomial_one_##SUF(gss_src* s, ST count, ST prob) {                   \\
        if (count <= 0.0 || prob <= 0.0)                                                \\
            return 0;                                                                   \\
        else if (prob >= 1.0)                                                           \\
            return count;                                                               \\
        else if (prob <= 0.5) {                                                         \\
            if (count * prob >= 10.0)                                                   \\
                return gss_btrs_##SUF(s, count, prob);                                  \\
            return gss_binv_##SUF(s, count, prob);                                      \\
        } else if (prob > 0.5) {                                                        \\
            ST qprob = 1.0 - prob;                                                      \\
            if (count * qprob >= 10.0)                                                  \\
                return count - gss_btrs_##SUF(s, count, qprob);                         \\
            return count - gss_binv_##SUF(s, count, qprob);                             \\
        }                                                                               \\
        return (ST)NAN;                                                                 \\
    }                                                                                   \\
    static void gss_binomial_##SUF(gss_src* s, const ST* count, const ST* prob,         \\
                                   ST* out, Py_ssize_t n) {                             \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++)                                                         \\
            out[i] = gss_binomial_one_##SUF(s, count[i], prob[i]);                      \\
    }
    GSS_BINOMIAL(f32, float, log1pf, floorf, sqrtf)
    GSS_BINOMIAL(f64, double, log1p, floor, sqrt)

    /* the loops over the elements; those that check a parameter return the index of the
       first bad one (its draws not made), else -1 */
    #define GSS_LOOPS(SUF, ST)                                                          \\
    static Py_ssize_t gss_poisson_##SUF(gss_src* s, const ST* lam, ST* out,             \\
                                        Py_ssize_t n) {                                 \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++) {                                                       \\
            double l = (double)lam[i];                                                  \\
            if (!(l >= 0))                                                              \\
                return i;                                                               \\
            out[i] = (ST)gss_poisson_one(s, l);                                         \\
        }                                                                               \\
        return -1;                                                                      \\
    }                                                                                   \\
    static void gss_gamma_##SUF(gss_src* s, const ST* alpha, double* out,               \\
                                Py_ssize_t n, int single) {                             \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++)                                                         \\
            out[i] = single ? gss_gamma_one_f32(s, (float)alpha[i])                     \\
                            : gss_gamma_one_f64(s, (double)alpha[i]);                   \\
    }                                                                                   \\
    static void gss_cauchy_##SUF(gss_src* s, ST* out, Py_ssize_t n, double median,      \\
                                 double sigma) {                                        \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++)                                                         \\
            out[i] = (ST)(median + sigma * tan(GSS_PI * (gss_uniform(s) - 0.5)));       \\
    }                                                                                   \\
    static void gss_log_normal_##SUF(gss_src* s, ST* out, Py_ssize_t n, double mean,    \\
                                     double std, int fused) {                           \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++) {                                                       \\
            double v = gss_normal(s);                                                   \\
            out[i] = (ST)exp(fused ? fma(v, std, mean) : v * std + mean);               \\
        }                                                                               \\
    }                                                                                   \\
    static void gss_geometric_##SUF(gss_src* s, ST* out, Py_ssize_t n, double p) {      \\
        double q = log1p(-p);                                                           \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++)                                                         \\
            out[i] = (ST)ceil(log(gss_uniform(s)) / q);                                 \\
    }
    GSS_LOOPS(f32, float)
    GSS_LOOPS(f64, double)

    /* uniform_ (Note [Uniform and exponential draws in C]): torch's float from random(),
       its double from random64(); fused: the capability's fma */
    static void gss_uniform_f32(gss_src* s, float* out, Py_ssize_t n, float low,
                                float high, int fused) {
        float range = high - low;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            float x = (float)(gss_next32(s) & 0xffffffu) * (1.0f / 16777216.0f);
            out[i] = fused ? fmaf(x, range, low) : x * range + low;
        }
    }
    static void gss_uniform_f64(gss_src* s, double* out, Py_ssize_t n, double low,
                                double high, int fused) {
        double range = high - low;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            double x = gss_uniform(s);
            out[i] = fused ? fma(x, range, low) : x * range + low;
        }
    }
    /* exponential_distribution<double>: -1 / lambda * log1p(-u), cast to the dtype */
    #define GSS_EXPONENTIAL(SUF, ST)                                                    \\
    static void gss_exponential_##SUF(gss_src* s, ST* out, Py_ssize_t n, double lambd) {\\
        double scale = -1.0 / lambd;                                                    \\
        Py_ssize_t i;                                                                   \\
        for (i = 0; i < n; i++)                                                         \\
            out[i] = (ST)(scale * log1p(-gss_uniform(s)));                              \\
    }
    GSS_EXPONENTIAL(f32, float)
    GSS_EXPONENTIAL(f64, double)

    /* a % d by a multiply (gsr_fastmod_u32 in _random_kernels.pyx, Lemire et al. 2019) */
    static inline uint32_t gss_fastmod_u32(uint32_t a, uint64_t m, uint32_t d) {
        uint64_t low = m * a;
        return (uint32_t)(((__uint128_t)low * d) >> 64);
    }
    """
    ctypedef struct gss_mt:
        int pos
    ctypedef struct gss_src:
        gss_mt* mt
        void* bstate
        uint32_t (*bnext)(void*) noexcept nogil
        int has_cache
        double cache
        int64_t draws
    Py_ssize_t gss_poisson_f32(gss_src* s, const float* lam, float* out,
                               Py_ssize_t n) noexcept nogil
    Py_ssize_t gss_poisson_f64(gss_src* s, const double* lam, double* out,
                               Py_ssize_t n) noexcept nogil
    void gss_gamma_f32(gss_src* s, const float* alpha, double* out, Py_ssize_t n,
                       int single) noexcept nogil
    void gss_gamma_f64(gss_src* s, const double* alpha, double* out, Py_ssize_t n,
                       int single) noexcept nogil
    void gss_binomial_f32(gss_src* s, const float* count, const float* prob, float* out,
                          Py_ssize_t n) noexcept nogil
    void gss_binomial_f64(gss_src* s, const double* count, const double* prob, double* out,
                          Py_ssize_t n) noexcept nogil
    void gss_cauchy_f32(gss_src* s, float* out, Py_ssize_t n, double median,
                        double sigma) noexcept nogil
    void gss_cauchy_f64(gss_src* s, double* out, Py_ssize_t n, double median,
                        double sigma) noexcept nogil
    void gss_log_normal_f32(gss_src* s, float* out, Py_ssize_t n, double mean, double std,
                            int fused) noexcept nogil
    void gss_log_normal_f64(gss_src* s, double* out, Py_ssize_t n, double mean, double std,
                            int fused) noexcept nogil
    void gss_geometric_f32(gss_src* s, float* out, Py_ssize_t n, double p) noexcept nogil
    void gss_geometric_f64(gss_src* s, double* out, Py_ssize_t n, double p) noexcept nogil
    uint32_t gss_next32(gss_src* s) noexcept nogil
    uint32_t gss_fastmod_u32(uint32_t a, uint64_t m, uint32_t d) noexcept nogil
    void gss_uniform_f32(gss_src* s, float* out, Py_ssize_t n, float low, float high,
                         int fused) noexcept nogil
    void gss_uniform_f64(gss_src* s, double* out, Py_ssize_t n, double low, double high,
                         int fused) noexcept nogil
    void gss_exponential_f32(gss_src* s, float* out, Py_ssize_t n, double lambd) noexcept nogil
    void gss_exponential_f64(gss_src* s, double* out, Py_ssize_t n,
                             double lambd) noexcept nogil


ctypedef fused real:
    float
    double


ctypedef fused _random_out:
    float
    double
    int64_t


cdef class _Stream:
    """A generator's stream opened for one C pass: its bit generator's state (or draw
    function), its cached normal, and, on close, both written back."""

    cdef gss_src src
    cdef object gen
    cdef object bits

    def __cinit__(self, gen):
        self.gen = gen
        bits = getattr(gen, "_bits", None)
        capsule = getattr(bits, "capsule", None)
        if capsule is None or not PyCapsule_IsValid(capsule, "BitGenerator"):
            raise TypeError(
                "the samplers draw from a gradstack Generator (numpy MT19937 inside), got "
                f"{type(gen).__name__}"
            )
        self.bits = bits
        cdef bitgen_t* rng = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")
        # Note [MT19937 in blocks] (_dropout_kernels.pyx): numpy's state itself once its
        # layout is checked, else the bit generator's own draws
        self.src.mt = <gss_mt*>rng.state if (
            type(bits) is np.random.MT19937 and _mt_blocks()) else NULL
        self.src.bstate = rng.state
        self.src.bnext = rng.next_uint32
        cache = gen._next_double
        self.src.has_cache = cache is not None
        self.src.cache = cache if cache is not None else 0.0
        self.src.draws = 0

    cdef close(self):
        if self.src.draws:
            self.gen._fresh = False  # torch's next_ leaves 0 with the first draw
        self.gen._next_double = self.src.cache if self.src.has_cache else None


cdef int _same(Py_ssize_t a, Py_ssize_t b, str func) except -1:
    if a != b:
        raise ValueError(f"{func}: {a} parameters for {b} values")
    return 0


def poisson(gen, const real[::1] rate, real[::1] out):
    """torch's ``poisson`` of each rate into ``out`` (same dtype), drawing from ``gen``.

    Returns -1, or the index of the first rate that is not >= 0 (NaN included): the draws
    of the elements before it are made, as torch's loop makes them.
    """
    _same(rate.shape[0], out.shape[0], "poisson")
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0], bad = -1
    if n == 0:
        return -1
    with s.bits.lock:
        with nogil:
            if real is float:
                bad = gss_poisson_f32(&s.src, &rate[0], &out[0], n)
            else:
                bad = gss_poisson_f64(&s.src, &rate[0], &out[0], n)
    s.close()
    return bad


def standard_gamma(gen, const real[::1] alpha, double[::1] out, bint single):
    """torch's ``sample_gamma<scalar_t, double>`` of each ``alpha`` into ``out`` (float64),
    ``scalar_t`` float when ``single`` (then ``alpha`` must be float32 values)."""
    _same(alpha.shape[0], out.shape[0], "standard_gamma")
    if single and real is double:
        raise TypeError("standard_gamma: a float32 gamma takes float32 alpha")
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_gamma_f32(&s.src, &alpha[0], &out[0], n, single)
            else:
                gss_gamma_f64(&s.src, &alpha[0], &out[0], n, single)
    s.close()


def binomial(gen, const real[::1] count, const real[::1] prob, real[::1] out):
    """torch's ``sample_binomial<scalar_t, double>`` of each (count, prob) into ``out``."""
    _same(count.shape[0], out.shape[0], "binomial")
    _same(prob.shape[0], out.shape[0], "binomial")
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_binomial_f32(&s.src, &count[0], &prob[0], &out[0], n)
            else:
                gss_binomial_f64(&s.src, &count[0], &prob[0], &out[0], n)
    s.close()


def cauchy(gen, real[::1] out, double median, double sigma):
    """torch's ``cauchy_distribution<double>``: ``median + sigma * tan(pi * (u - 0.5))``
    per element, cast to ``out``'s dtype."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_cauchy_f32(&s.src, &out[0], n, median, sigma)
            else:
                gss_cauchy_f64(&s.src, &out[0], n, median, sigma)
    s.close()


def log_normal(gen, real[::1] out, double mean, double std, bint fused):
    """torch's ``lognormal_distribution<double>``: ``exp`` of the one-at-a-time normal
    (``fused``: its ``n * std + mean`` is one fma, Note [Which products torch fuses])."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_log_normal_f32(&s.src, &out[0], n, mean, std, fused)
            else:
                gss_log_normal_f64(&s.src, &out[0], n, mean, std, fused)
    s.close()


def geometric(gen, real[::1] out, double p):
    """torch's ``geometric_distribution<double>``: ``ceil(log(u) / log1p(-p))`` per
    element, cast to ``out``'s dtype."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_geometric_f32(&s.src, &out[0], n, p)
            else:
                gss_geometric_f64(&s.src, &out[0], n, p)
    s.close()


# Note [Uniform and exponential draws in C]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# rand, uniform_, normal_ (whose Box-Muller starts from uniforms), bernoulli_ with a tensor
# p, multinomial, exponential_, random_/randint and randperm drew numpy's random_raw into a
# uint64 array and turned it into values in a second pass (_random_kernels.pyx): at 10^6
# elements the array of draws alone cost about torch's time for the whole op (random_'s
# own pass over the state, mt_random_mod, copied the 624 words in and out, so it paid only
# from 2**15 elements).  Here the values come straight from the generator's state in
# place, one draw (float32, 32-bit random_) or two (float64, random64) per element, with
# the arithmetic of _random_kernels' gsr_uniform_f32/f64, gsr_exponential, random_mod and
# gsr_randperm_small/large.


def uniform(gen, real[::1] out, double low, double high, bint fused):
    """torch's ``uniform_(low, high)`` of ``out``'s dtype: ``x * (high - low) + low`` of a
    24-bit (float32, ``low``/``high`` rounded to float) or 53-bit uniform ``x``
    (``fused``: one fma, Note [Which products torch fuses] in _random_kernels.pyx)."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_uniform_f32(&s.src, &out[0], n, <float>low, <float>high, fused)
            else:
                gss_uniform_f64(&s.src, &out[0], n, low, high, fused)
    s.close()


def exponential(gen, real[::1] out, double lambd):
    """torch's ``exponential_distribution<double>``: ``-1 / lambd * log1p(-u)`` per
    element, cast to ``out``'s dtype."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if real is float:
                gss_exponential_f32(&s.src, &out[0], n, lambd)
            else:
                gss_exponential_f64(&s.src, &out[0], n, lambd)
    s.close()


def random_mod(gen, _random_out[::1] out, uint64_t span, int64_t low, bint wide):
    """torch's ``random_`` values ``(int64)(draw % span + low)`` (mod 2**64) of ``out``'s
    dtype, from 32-bit draws, or ``random64()`` ones when ``wide`` (Note [random_ in one C
    pass] in _random_kernels.pyx), drawn in the same pass."""
    if span == 0:
        raise ValueError("random_mod: span must be positive")
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t i, n = out.shape[0]
    cdef uint64_t ulow = <uint64_t>low, r, hi
    cdef uint32_t span32 = <uint32_t>span
    cdef bint narrow = span < (<uint64_t>1 << 32) and not wide
    cdef uint64_t magic = (<uint64_t>0xFFFFFFFFFFFFFFFF) // span + 1 if narrow else 0
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            for i in range(n):
                if wide:
                    hi = gss_next32(&s.src)
                    r = ((hi << 32) | gss_next32(&s.src)) % span
                elif narrow:
                    r = gss_fastmod_u32(gss_next32(&s.src), magic, span32)
                else:
                    r = gss_next32(&s.src) % span
                out[i] = <_random_out>(<int64_t>(r + ulow))
    s.close()


def randperm(gen, int64_t[::1] out):
    """torch's ``randperm_cpu`` into ``out``: for ``n < (2**32 - 1) // 20`` swap ``i`` with
    ``i + random() % (n - i)``, else the inside-out Fisher-Yates over ``random64() % (i +
    1)`` (_random_kernels' gsr_randperm_small/large, with the draws taken in the pass)."""
    cdef _Stream s = _Stream(gen)
    cdef Py_ssize_t i, n = out.shape[0]
    cdef int64_t z, sav
    cdef uint64_t hi
    if n == 0:
        return
    with s.bits.lock:
        with nogil:
            if n < (<Py_ssize_t>0xFFFFFFFF) // 20:
                for i in range(n):
                    out[i] = i
                for i in range(n - 1):
                    z = <int64_t>(<uint64_t>gss_next32(&s.src) % <uint64_t>(n - i))
                    sav = out[i]
                    out[i] = out[z + i]
                    out[z + i] = sav
            else:
                for i in range(n):
                    hi = gss_next32(&s.src)
                    z = <int64_t>(((hi << 32) | gss_next32(&s.src)) % <uint64_t>(i + 1))
                    out[i] = out[z]
                    out[z] = i
    s.close()
