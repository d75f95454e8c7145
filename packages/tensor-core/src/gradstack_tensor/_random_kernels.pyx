# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, embedsignature.format=clinic
"""The C loops of torch's CPU random distributions, fed with raw MT19937 draws.

``gradstack_tensor.random`` draws the raw 32-bit outputs of torch's Mersenne Twister
(numpy's ``MT19937``, vectorised); ``_impl_random.py`` turns them into values with these
loops, which repeat torch 2.13's arithmetic operation for operation, so that the same seed
gives the same bits as torch on the CPU (Note [torch's random stream] in random.py).  Each
function checks the lengths it is given before it reads or writes memory.

Note [Which products torch fuses]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch compiles its CPU kernels once per capability (DEFAULT, AVX2, AVX512) and GCC
contracts ``a * b + c`` into one fma wherever the capability has FMA.  So on an AVX2
machine ``uniform_(a, b)`` computes ``fma(x, b - a, a)``, ``normal_`` ``fma(n, std, mean)``,
and the vectorised Box-Muller of float32 (``normal_fill_16_AVX2`` over avx_mathfun.h's
``log256_ps`` and ``sincos256_ps``) fuses its Horner steps, its Cody-Waite reduction, and
``y * z - z * 0.5`` (the multiply that comes first in the source fuses; its partner is
rounded).  The final ``(radius * cos) * std + mean`` of the block Box-Muller (float32 and
float64) is fused with the DEFAULT capability too: measured against torch 2.13 with
``ATEN_CPU_CAPABILITY=default``, while ``uniform_`` and the one-at-a-time normal are not.
The loops below take ``fused`` (the capability has FMA) where it matters and write each
fused step as an explicit fma; everything else is compiled with contraction off, so no
compiler fuses anything torch does not.  Checked bit for bit against torch 2.13 on an AVX2 CPU and
with ``ATEN_CPU_CAPABILITY=default`` (tests/test_random_torch.py).
"""
from libc.stdint cimport int64_t, uint32_t, uint64_t

cdef extern from *:
    """
    #if defined(__clang__)
    #  pragma STDC FP_CONTRACT OFF
    #elif defined(__GNUC__)
    #  pragma GCC optimize ("fp-contract=off")
    #endif
    #include <math.h>
    #include <stdint.h>

    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #  define GSR_X86 1
    #  include <immintrin.h>
    #else
    #  define GSR_X86 0
    #endif

    #define GSR_PI 3.14159265358979323846

    static int gsr_avx2_fma_supported(void) {
    #if GSR_X86
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    #else
        return 0;
    #endif
    }

    static inline float gsr_u24(uint64_t raw) {            /* torch's float from random() */
        return (float)(uint32_t)(raw & 0xffffffu) * (1.0f / 16777216.0f);
    }

    static inline double gsr_u53(uint64_t raw64) {         /* torch's double from random64() */
        return (double)(raw64 & ((UINT64_C(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
    }

    static void gsr_uniform_f32(const uint64_t* raw, float* out, Py_ssize_t n,
                                float low, float high, int fused) {
        float range = high - low;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            float x = gsr_u24(raw[i]);
            out[i] = fused ? fmaf(x, range, low) : x * range + low;
        }
    }

    static void gsr_uniform_f64(const uint64_t* raw64, double* out, Py_ssize_t n,
                                double low, double high, int fused) {
        double range = high - low;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            double x = gsr_u53(raw64[i]);
            out[i] = fused ? fma(x, range, low) : x * range + low;
        }
    }

    /* torch's normal_fill_16<float> (the DEFAULT capability): libm's float functions; the
       final multiply-add is fused (Note [Which products torch fuses]). */
    static void gsr_normal_blocks_f32(float* data, Py_ssize_t n, float mean, float std) {
        Py_ssize_t b;
        int j;
        for (b = 0; b + 16 <= n; b += 16) {
            float* d = data + b;
            for (j = 0; j < 8; j++) {
                float u1 = 1 - d[j];
                float u2 = d[j + 8];
                float radius = sqrtf(-2 * logf(u1));
                float theta = (float)(2.0f * GSR_PI * u2);
                d[j] = fmaf(radius * cosf(theta), std, mean);   /* fused: measured */
                d[j + 8] = fmaf(radius * sinf(theta), std, mean);
            }
        }
    }

    /* torch's normal_fill_16<double>; the final multiply-add is fused (measured on both
       capabilities: Note [Which products torch fuses]). */
    static void gsr_normal_blocks_f64(double* data, Py_ssize_t n, double mean, double std) {
        Py_ssize_t b;
        int j;
        for (b = 0; b + 16 <= n; b += 16) {
            double* d = data + b;
            for (j = 0; j < 8; j++) {
                double u1 = 1 - d[j];
                double u2 = d[j + 8];
                double radius = sqrt(-2 * log(u1));
                double theta = 2.0f * GSR_PI * u2;
                double c = radius * cos(theta), s = radius * sin(theta);
                d[j] = fma(c, std, mean);   /* fused: measured */
                d[j + 8] = fma(s, std, mean);
            }
        }
    }

    /* torch's normal_distribution<double>, one value at a time, with the generator's cached
       second value (has_cache/cache in and out); reads two raw64 per Box-Muller pair. */
    static Py_ssize_t gsr_normal_scalar(const uint64_t* raw64, Py_ssize_t n_raw, double* out,
                                        Py_ssize_t n, double mean, double std, int fused,
                                        int* has_cache, double* cache) {
        Py_ssize_t i, k = 0;
        for (i = 0; i < n; i++) {
            double v;
            if (*has_cache) {
                v = *cache;
                *has_cache = 0;
            } else {
                if (k + 2 > n_raw)
                    return -1;
                double u1 = gsr_u53(raw64[k]);
                double u2 = gsr_u53(raw64[k + 1]);
                k += 2;
                double r = sqrt(-2.0 * log1p(-u2));
                double theta = 2.0 * GSR_PI * u1;
                *cache = r * sin(theta);
                *has_cache = 1;
                v = r * cos(theta);
            }
            out[i] = fused ? fma(v, std, mean) : v * std + mean;
        }
        return k;
    }

    /* torch's exponential_distribution<double> on the CPU: -1 / lambda * log1p(-u). */
    static void gsr_exponential(const uint64_t* raw64, double* out, Py_ssize_t n,
                                double lambd) {
        double scale = -1.0 / lambd;
        Py_ssize_t i;
        for (i = 0; i < n; i++)
            out[i] = scale * log1p(-gsr_u53(raw64[i]));
    }

    /* torch's randperm_cpu for n < UINT32_MAX / 20: swap i with i + random() % (n - i). */
    static void gsr_randperm_small(const uint64_t* raw, int64_t* out, Py_ssize_t n) {
        Py_ssize_t i;
        for (i = 0; i < n; i++)
            out[i] = i;
        for (i = 0; i + 1 < n; i++) {
            int64_t z = (int64_t)(raw[i] % (uint64_t)(n - i));
            int64_t sav = out[i];
            out[i] = out[z + i];
            out[z + i] = sav;
        }
    }

    /* torch's randperm_cpu for larger n: the inside-out Fisher-Yates over random64(). */
    static void gsr_randperm_large(const uint64_t* raw64, int64_t* out, Py_ssize_t n) {
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            int64_t z = (int64_t)(raw64[i] % (uint64_t)(i + 1));
            out[i] = out[z];
            out[z] = i;
        }
    }

    #if GSR_X86
    /* avx_mathfun.h's log256_ps as torch's AVX2 build computes it (Note [Which products
       torch fuses]). */
    __attribute__((target("avx2,fma")))
    static inline __m256 gsr_log256_ps(__m256 x) {
        const __m256 one = _mm256_set1_ps(1.0f);
        __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
        x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));
        __m256i imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
        x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000)));
        x = _mm256_or_ps(x, _mm256_set1_ps(0.5f));
        imm0 = _mm256_sub_epi32(imm0, _mm256_set1_epi32(0x7f));
        __m256 e = _mm256_cvtepi32_ps(imm0);
        e = _mm256_add_ps(e, one);
        __m256 mask = _mm256_cmp_ps(x, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OS);
        __m256 tmp = _mm256_and_ps(x, mask);
        x = _mm256_sub_ps(x, one);
        e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
        x = _mm256_add_ps(x, tmp);
        __m256 z = _mm256_mul_ps(x, x);
        __m256 y = _mm256_set1_ps(7.0376836292E-2f);
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(-1.1514610310E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.1676998740E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(-1.2420140846E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.4249322787E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(-1.6668057665E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(2.0000714765E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(-2.4999993993E-1f));
        y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(3.3333331174E-1f));
        y = _mm256_mul_ps(y, x);
        y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps(-2.12194440e-4f)));
        y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
        x = _mm256_add_ps(x, y);
        x = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), x);
        return _mm256_or_ps(x, invalid);
    }

    /* avx_mathfun.h's sincos256_ps as torch's AVX2 build computes it. */
    __attribute__((target("avx2,fma")))
    static inline void gsr_sincos256_ps(__m256 x, __m256* s, __m256* c) {
        const __m256i i1 = _mm256_set1_epi32(1), i2 = _mm256_set1_epi32(2);
        const __m256i i4 = _mm256_set1_epi32(4);
        const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000));
        __m256 sign_bit_sin = _mm256_and_ps(x, sign_mask);
        x = _mm256_andnot_ps(sign_mask, x);
        __m256 y = _mm256_mul_ps(x, _mm256_set1_ps(1.27323954473516f));
        __m256i imm2 = _mm256_cvttps_epi32(y);
        imm2 = _mm256_add_epi32(imm2, i1);
        imm2 = _mm256_and_si256(imm2, _mm256_set1_epi32(~1));
        y = _mm256_cvtepi32_ps(imm2);
        __m256i imm4 = imm2;
        __m256i imm0 = _mm256_slli_epi32(_mm256_and_si256(imm2, i4), 29);
        imm2 = _mm256_cmpeq_epi32(_mm256_and_si256(imm2, i2), _mm256_setzero_si256());
        __m256 swap_sign_bit_sin = _mm256_castsi256_ps(imm0);
        __m256 poly_mask = _mm256_castsi256_ps(imm2);
        x = _mm256_fmadd_ps(y, _mm256_set1_ps(-0.78515625f), x);
        x = _mm256_fmadd_ps(y, _mm256_set1_ps(-2.4187564849853515625e-4f), x);
        x = _mm256_fmadd_ps(y, _mm256_set1_ps(-3.77489497744594108e-8f), x);
        imm4 = _mm256_sub_epi32(imm4, i2);
        imm4 = _mm256_slli_epi32(_mm256_andnot_si256(imm4, i4), 29);
        __m256 sign_bit_cos = _mm256_castsi256_ps(imm4);
        sign_bit_sin = _mm256_xor_ps(sign_bit_sin, swap_sign_bit_sin);
        __m256 z = _mm256_mul_ps(x, x);
        y = _mm256_set1_ps(2.443315711809948E-005f);
        y = _mm256_fmadd_ps(y, z, _mm256_set1_ps(-1.388731625493765E-003f));
        y = _mm256_fmadd_ps(y, z, _mm256_set1_ps(4.166664568298827E-002f));
        y = _mm256_mul_ps(y, z);
        y = _mm256_fmsub_ps(y, z, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
        y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
        __m256 y2 = _mm256_set1_ps(-1.9515295891E-4f);
        y2 = _mm256_fmadd_ps(y2, z, _mm256_set1_ps(8.3321608736E-3f));
        y2 = _mm256_fmadd_ps(y2, z, _mm256_set1_ps(-1.6666654611E-1f));
        y2 = _mm256_mul_ps(y2, z);
        y2 = _mm256_fmadd_ps(y2, x, x);
        __m256 ysin2 = _mm256_and_ps(poly_mask, y2);
        __m256 ysin1 = _mm256_andnot_ps(poly_mask, y);
        y2 = _mm256_sub_ps(y2, ysin2);
        y = _mm256_sub_ps(y, ysin1);
        *s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_bit_sin);
        *c = _mm256_xor_ps(_mm256_add_ps(y, y2), sign_bit_cos);
    }

    /* torch's normal_fill_16_AVX2 over every whole block of 16. */
    __attribute__((target("avx2,fma")))
    static void gsr_normal_blocks_f32_avx2(float* data, Py_ssize_t n, float mean, float std) {
        const __m256 two_pi = _mm256_set1_ps((float)(2.0f * GSR_PI));
        const __m256 one = _mm256_set1_ps(1.0f), minus_two = _mm256_set1_ps(-2.0f);
        const __m256 mean_v = _mm256_set1_ps(mean), std_v = _mm256_set1_ps(std);
        Py_ssize_t b;
        for (b = 0; b + 16 <= n; b += 16) {
            float* d = data + b;
            __m256 u1 = _mm256_sub_ps(one, _mm256_loadu_ps(d));
            __m256 u2 = _mm256_loadu_ps(d + 8);
            __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(minus_two, gsr_log256_ps(u1)));
            __m256 theta = _mm256_mul_ps(two_pi, u2);
            __m256 st, ct;
            gsr_sincos256_ps(theta, &st, &ct);
            _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, ct), std_v, mean_v));
            _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, st), std_v, mean_v));
        }
    }
    #else
    static void gsr_normal_blocks_f32_avx2(float* data, Py_ssize_t n, float mean, float std) {
    }
    #endif
    """
    int gsr_avx2_fma_supported() noexcept nogil
    void gsr_uniform_f32(const uint64_t* raw, float* out, Py_ssize_t n, float low, float high,
                         int fused) noexcept nogil
    void gsr_uniform_f64(const uint64_t* raw64, double* out, Py_ssize_t n, double low,
                         double high, int fused) noexcept nogil
    void gsr_normal_blocks_f32(float* data, Py_ssize_t n, float mean, float std) noexcept nogil
    void gsr_normal_blocks_f32_avx2(float* data, Py_ssize_t n, float mean,
                                    float std) noexcept nogil
    void gsr_normal_blocks_f64(double* data, Py_ssize_t n, double mean,
                               double std) noexcept nogil
    Py_ssize_t gsr_normal_scalar(const uint64_t* raw64, Py_ssize_t n_raw, double* out,
                                 Py_ssize_t n, double mean, double std, int fused,
                                 int* has_cache, double* cache) noexcept nogil
    void gsr_exponential(const uint64_t* raw64, double* out, Py_ssize_t n,
                         double lambd) noexcept nogil
    void gsr_randperm_small(const uint64_t* raw, int64_t* out, Py_ssize_t n) noexcept nogil
    void gsr_randperm_large(const uint64_t* raw64, int64_t* out, Py_ssize_t n) noexcept nogil


_AVX2_FMA = bool(gsr_avx2_fma_supported())


def avx2_fma_supported() -> bool:
    """Whether this CPU (and its OS) runs AVX2 and FMA instructions."""
    return _AVX2_FMA


cdef int _same_length(Py_ssize_t a, Py_ssize_t b, str what) except -1:
    if a != b:
        raise ValueError(f"{what}: {a} raw draws for {b} values")
    return 0


def uniform_f32(const uint64_t[::1] raw, float[::1] out, float low, float high, bint fused):
    """out[i] = low + (high - low) * u24(raw[i]), as torch's uniform_ of float32."""
    _same_length(raw.shape[0], out.shape[0], "uniform_f32")
    if out.shape[0]:
        gsr_uniform_f32(&raw[0], &out[0], out.shape[0], low, high, fused)


def uniform_f64(const uint64_t[::1] raw64, double[::1] out, double low, double high,
                bint fused):
    """out[i] = low + (high - low) * u53(raw64[i]), as torch's uniform_ of float64."""
    _same_length(raw64.shape[0], out.shape[0], "uniform_f64")
    if out.shape[0]:
        gsr_uniform_f64(&raw64[0], &out[0], out.shape[0], low, high, fused)


cdef int _whole_blocks(Py_ssize_t n, str what) except -1:
    if n % 16:
        raise ValueError(f"{what}: {n} values are not whole blocks of 16")
    return 0


def normal_blocks_f32(float[::1] data, float mean, float std, bint vectorised):
    """Box-Muller over each block of 16 uniforms of ``data`` in place: torch's
    ``normal_fill_16_AVX2`` (``vectorised``, on a CPU with AVX2 and FMA) or
    ``normal_fill_16<float>``."""
    _whole_blocks(data.shape[0], "normal_blocks_f32")
    if not data.shape[0]:
        return
    if vectorised:
        if not _AVX2_FMA:
            raise RuntimeError("normal_blocks_f32: this CPU has no AVX2 and FMA")
        gsr_normal_blocks_f32_avx2(&data[0], data.shape[0], mean, std)
    else:
        gsr_normal_blocks_f32(&data[0], data.shape[0], mean, std)


def normal_blocks_f64(double[::1] data, double mean, double std):
    """Box-Muller over each block of 16 uniforms of ``data`` in place (torch's
    ``normal_fill_16<double>``)."""
    _whole_blocks(data.shape[0], "normal_blocks_f64")
    if data.shape[0]:
        gsr_normal_blocks_f64(&data[0], data.shape[0], mean, std)


def normal_scalar(const uint64_t[::1] raw64, double[::1] out, double mean, double std,
                  bint fused, cache):
    """torch's one-at-a-time normal (``normal_distribution<double>``) into ``out``.

    ``cache`` is the generator's cached second value of a Box-Muller pair (or None);
    ``raw64`` must hold exactly the draws the call needs (:func:`normal_scalar_draws`).
    Returns the new cache.
    """
    cdef int has_cache = cache is not None
    cdef double c = cache if cache is not None else 0.0
    cdef Py_ssize_t need = normal_scalar_draws(out.shape[0], has_cache)
    _same_length(raw64.shape[0], need, "normal_scalar")
    if out.shape[0]:
        gsr_normal_scalar(&raw64[0] if need else NULL, need, &out[0], out.shape[0], mean, std,
                          fused, &has_cache, &c)
    return c if has_cache else None


cpdef Py_ssize_t normal_scalar_draws(Py_ssize_t n, bint has_cache):
    """The raw64 draws ``normal_scalar`` reads for ``n`` values: two per new pair."""
    cdef Py_ssize_t fresh = n - 1 if has_cache and n > 0 else n
    return 2 * ((fresh + 1) // 2) if fresh > 0 else 0


def exponential(const uint64_t[::1] raw64, double[::1] out, double lambd):
    """out[i] = -1 / lambd * log1p(-u53(raw64[i])), torch's exponential_ on the CPU."""
    _same_length(raw64.shape[0], out.shape[0], "exponential")
    if out.shape[0]:
        gsr_exponential(&raw64[0], &out[0], out.shape[0], lambd)


def randperm_small(const uint64_t[::1] raw, int64_t[::1] out):
    """torch's randperm of ``len(out)`` < 2**32 / 20 from ``len(out) - 1`` raw draws."""
    cdef Py_ssize_t n = out.shape[0]
    _same_length(raw.shape[0], n - 1 if n > 0 else 0, "randperm_small")
    if n:
        gsr_randperm_small(&raw[0] if n > 1 else NULL, &out[0], n)


def randperm_large(const uint64_t[::1] raw64, int64_t[::1] out):
    """torch's randperm of larger ``len(out)``, from one raw64 draw per element."""
    _same_length(raw64.shape[0], out.shape[0], "randperm_large")
    if out.shape[0]:
        gsr_randperm_large(&raw64[0], &out[0], out.shape[0])


# Note [random_ in one C pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's random_(from, to) of a float tensor is static_cast<scalar_t>((int64)(raw % span
# + from)), modulo 2**64.  numpy took four passes over uint64 arrays for it (%, +, a view,
# astype: ~12 ms at 1M elements against torch's 2.7 ms for draws and all); one C loop
# writes the value straight into the float array, with the remainder of a 32-bit draw by
# a multiply (gsr_fastmod_u32: ~0.5 ms at 1M, where a division took 1.8 ms); 64-bit draws
# take the 64-bit modulo.  The
# int64 -> float conversion rounds to nearest, as torch's and numpy's.

cdef extern from *:
    """
    #include <stdint.h>
    /* a % d for a 32-bit a and 0 < d < 2**32, by a multiply with m = 2**64 / d rounded
       up (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019): exact
       for every such a and d, where a division takes ~5 cycles */
    static inline uint32_t gsr_fastmod_u32(uint32_t a, uint64_t m, uint32_t d) {
        uint64_t low = m * a;
        return (uint32_t)(((__uint128_t)low * d) >> 64);
    }
    """
    uint32_t gsr_fastmod_u32(uint32_t a, uint64_t m, uint32_t d) noexcept nogil


ctypedef fused _float_out:
    float
    double


def random_mod(const uint64_t[::1] raw, _float_out[::1] out, uint64_t span, int64_t low):
    """out[i] = (int64)((raw[i] % span + low) mod 2**64) as out's dtype (torch's random_ of
    a float tensor; Note [random_ in one C pass]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._random_kernels import random_mod
    >>> out = np.empty(3, np.float32)
    >>> random_mod(np.array([7, 12, 100], np.uint64), out, 10, -5); out
    array([ 2., -3., -5.], dtype=float32)
    """
    cdef Py_ssize_t i, n = out.shape[0]
    cdef uint64_t ulow = <uint64_t>low, r
    cdef uint32_t span32 = <uint32_t>span
    cdef uint64_t magic = 0
    cdef bint narrow = span < (<uint64_t>1 << 32)
    _same_length(raw.shape[0], n, "random_mod")
    if span == 0:
        raise ValueError("random_mod: span must be positive")
    if narrow:
        magic = (<uint64_t>0xFFFFFFFFFFFFFFFF) // span + 1   # 2**64 / span rounded up (mod 2**64)
    with nogil:
        for i in range(n):
            r = raw[i]
            if narrow and not (r >> 32):
                r = gsr_fastmod_u32(<uint32_t>r, magic, span32)
            else:
                r = r % span
            out[i] = <_float_out>(<int64_t>(r + ulow))


# Note [random_ draws in the same pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's MT19937.random_raw alone took ~2.6 ms for 1M draws (a call through a function
# pointer per draw, then a uint64 array), about torch's time for the whole random_.  For
# the 32-bit draws of random_ (span below 2**28), mt_random_mod runs the Mersenne Twister
# itself on the generator's 624-word state (taken from numpy's bit generator and written
# back, with its position), as the reference genrand_int32 does (refill the 624 words,
# then temper one per draw), and turns each draw into its value in the same loop.  The
# stream is numpy's (hence torch's) bit for bit: tests/test_random_mod.py checks values
# and the state after them against torch.

cdef extern from *:
    """
    #include <stdint.h>
    #define GSR_MT_N 624
    #define GSR_MT_M 397

    /* the reference MT19937 refill of the 624 words */
    static void gsr_mt_refill(uint32_t* mt) {
        int kk;
        uint32_t y;
        for (kk = 0; kk < GSR_MT_N - GSR_MT_M; kk++) {
            y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7fffffffu);
            mt[kk] = mt[kk + GSR_MT_M] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        for (; kk < GSR_MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7fffffffu);
            mt[kk] = mt[kk + (GSR_MT_M - GSR_MT_N)] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        y = (mt[GSR_MT_N - 1] & 0x80000000u) | (mt[0] & 0x7fffffffu);
        mt[GSR_MT_N - 1] = mt[GSR_MT_M - 1] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
    }

    static inline uint32_t gsr_mt_temper(uint32_t y) {
        y ^= (y >> 11);
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= (y >> 18);
        return y;
    }
    """
    void gsr_mt_refill(uint32_t* mt) noexcept nogil
    uint32_t gsr_mt_temper(uint32_t y) noexcept nogil


def mt_random_mod(uint32_t[::1] key, Py_ssize_t pos, _float_out[::1] out, uint64_t span,
                  int64_t low):
    """Draw ``len(out)`` 32-bit values from the MT19937 state ``(key, pos)`` (numpy's
    layout: 624 words, updated in place) and write ``(int64)(draw % span + low)`` (mod
    2**64) as out's dtype into ``out`` (Note [random_ draws in the same pass]); returns the
    new position.  ``span`` must be below 2**32.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._random_kernels import mt_random_mod
    >>> bits = np.random.MT19937(0)
    >>> s = bits.state["state"]
    >>> key, out = s["key"].copy(), np.empty(3)
    >>> pos = mt_random_mod(key, int(s["pos"]), out, 2**32 - 1, 0)
    >>> out.astype(np.uint64).tolist() == (bits.random_raw(3) % (2**32 - 1)).tolist()
    True
    """
    cdef Py_ssize_t i, n = out.shape[0]
    cdef uint64_t ulow = <uint64_t>low, magic
    cdef uint32_t span32 = <uint32_t>span, y
    if key.shape[0] != 624:
        raise ValueError(f"mt_random_mod: the state has 624 words, not {key.shape[0]}")
    if not 0 <= pos <= 624:
        raise ValueError(f"mt_random_mod: the position must be in [0, 624], not {pos}")
    if span == 0 or span >= (<uint64_t>1 << 32):
        raise ValueError(f"mt_random_mod: span must be in [1, 2**32), not {span}")
    magic = (<uint64_t>0xFFFFFFFFFFFFFFFF) // span + 1
    with nogil:
        for i in range(n):
            if pos >= 624:
                gsr_mt_refill(&key[0])
                pos = 0
            y = gsr_mt_temper(key[pos])
            pos += 1
            out[i] = <_float_out>(<int64_t>(
                <uint64_t>gsr_fastmod_u32(y, magic, span32) + ulow))
    return pos
