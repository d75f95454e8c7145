# The exp cores of the kernel modules that evaluate exp inside their loops (_exp_kernels,
# _erfc_kernels, _activation_kernels, _log_sigmoid_kernels): C functions always inlined
# into those loops (GS_BODY: Note [AVX2 clones] in _kernels.pyx), so that each module's
# loops compile, and vectorise, as when every module had its own copy.
from libc.stdint cimport int32_t

from gradstack_tensor._kernels cimport kernel_avx2  # GS_BODY is defined first

cdef extern from *:
    """
    #ifndef GS_EXP_C
    #define GS_EXP_C
    #include <stdint.h>
    #include <string.h>

    /* exp's Taylor coefficients 1/n! from n = 12 (7) down to 0, for Horner's rule, in
       double (float) */
    static const double gs_exp_taylor12[13] = {
        1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
        1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5,
        1.0, 1.0};
    static const float gs_expf_taylor7[8] = {
        1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f,
        1.0f};

    /* exp(v) in double, v clamped by the caller (or nan): k = round(v / ln 2) by the
       1.5 * 2**52 rounder, r = v - k ln 2 (fdlibm's ln 2 in two parts), exp(r) by its
       Taylor series to r**12, times 2**k made from k's bits (k in the range that its
       caller documents) */
    GS_BODY double gs_exp_f64(double v) {
        double kr = v * 1.44269504088896338700e+00 + 6755399441055744.0;
        double k = kr - 6755399441055744.0;
        double r = (v - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
        double p = gs_exp_taylor12[0];
        for (int i = 1; i < 13; i++)          /* (unrolled: -O3 peels constant trips) */
            p = p * r + gs_exp_taylor12[i];
        int64_t kb;
        memcpy(&kb, &kr, sizeof kb);          /* k in the low bits */
        kb = (kb + 1023) << 52;
        double scale;
        memcpy(&scale, &kb, sizeof scale);
        return p * scale;
    }

    /* exp(w) = p * 2**k in float, for |w| <= 104 or nan, within ~1 ulp once scaled: k =
       round(w / ln 2) (in *k), r = w - k ln 2 (ln 2 in two parts), p = exp(r) by its
       Taylor series to r**7 */
    GS_BODY float gs_expf_reduced(float w, int32_t* k) {
        float kr = w * 1.44269504088896341f + 12582912.0f;
        float kf = kr - 12582912.0f;
        float r = (w - kf * 0.693145751953125f) - kf * 1.428606765330187e-06f;
        float p = gs_expf_taylor7[0];
        for (int i = 1; i < 8; i++)
            p = p * r + gs_expf_taylor7[i];
        uint32_t kbits;
        memcpy(&kbits, &kr, sizeof kbits);
        *k = (int32_t)(kbits - 0x4b400000u);
        return p;
    }

    /* p * 2**k as (p * 2**k1) * 2**(k - k1), both normal powers of two for k in
       [-151, 150] and k1 about k / 2, so that the product rounds once into the subnormals
       (as Sleef's expf) */
    GS_BODY float gs_expf_scale(float p, int32_t k, int32_t k1) {
        uint32_t s1bits = (uint32_t)(k1 + 127) << 23, s2bits = (uint32_t)(k - k1 + 127) << 23;
        float s1, s2;
        memcpy(&s1, &s1bits, sizeof s1);
        memcpy(&s2, &s2bits, sizeof s2);
        return (p * s1) * s2;
    }

    /* exp(-|x|) of a float in float arithmetic, within ~1 ulp as Sleef's expf: |x|
       clamped to 104 by integer selects on its bits (nan stays nan), k in [-151, 0] */
    GS_BODY float gs_expf_neg(float x) {
        uint32_t bits, mag;
        memcpy(&bits, &x, sizeof bits);
        mag = bits & 0x7fffffffu;
        mag = mag > 0x7f800000u ? mag : (mag < 0x42d00000u ? mag : 0x42d00000u);
        mag |= 0x80000000u;                           /* -|x| */
        float w;
        memcpy(&w, &mag, sizeof w);
        int32_t k;
        float p = gs_expf_reduced(w, &k);
        return gs_expf_scale(p, k, k / 2);
    }
    #endif
    """
    double gs_exp_f64(double v) noexcept nogil
    float gs_expf_reduced(float w, int32_t* k) noexcept nogil
    float gs_expf_scale(float p, int32_t k, int32_t k1) noexcept nogil
    float gs_expf_neg(float x) noexcept nogil
