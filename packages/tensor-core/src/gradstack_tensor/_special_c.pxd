# The C shared by the special-function kernel modules (_bessel_kernels, _polynomial_kernels,
# _erfcx_igamma_kernels): torch's type-generic math calls, Horner's rule and Clenshaw's
# recurrence, the float/double copies of a module's functions and their FMA copies (Note
# [Bessel kernels contract as torch's] in _bessel_kernels.pyx), and the loops over a
# module's function tables.

cdef extern from *:
    """
    #ifndef GS_BK_SPECIAL_C
    #define GS_BK_SPECIAL_C
    #include <math.h>
    #include <float.h>
    #include <stdint.h>

    #if defined(__GLIBC__)
    static inline float gs_bk_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
    static inline double gs_bk_lgammad(double x) { int s; return lgamma_r(x, &s); }
    #else
    static inline float gs_bk_lgammaf(float x) { return lgammaf(x); }
    static inline double gs_bk_lgammad(double x) { return lgamma(x); }
    #endif

    /* the C++ overloads of <cmath>: float arguments call the float function */
    #define GS_BK_GENERIC(fn, x) _Generic((x), float: fn##f, default: fn)(x)
    #define gs_bk_fabs(x) GS_BK_GENERIC(fabs, x)
    #define gs_bk_sqrt(x) GS_BK_GENERIC(sqrt, x)
    #define gs_bk_exp(x) GS_BK_GENERIC(exp, x)
    #define gs_bk_expm1(x) GS_BK_GENERIC(expm1, x)
    #define gs_bk_log(x) GS_BK_GENERIC(log, x)
    #define gs_bk_log1p(x) GS_BK_GENERIC(log1p, x)
    #define gs_bk_sin(x) GS_BK_GENERIC(sin, x)
    #define gs_bk_cos(x) GS_BK_GENERIC(cos, x)
    #define gs_bk_acos(x) GS_BK_GENERIC(acos, x)
    #define gs_bk_erfc(x) GS_BK_GENERIC(erfc, x)
    #define gs_bk_lgamma(x) _Generic((x), float: gs_bk_lgammaf, default: gs_bk_lgammad)(x)
    #define gs_bk_pow(x, y) _Generic((x) + (y), float: powf, default: pow)(x, y)
    #define GS_BK_IS_FLOAT(T) (sizeof(T) == sizeof(float))
    #define GS_BK_FMA(a, b, c) _Generic((a) + (b) + (c), float: fmaf, default: fma)(a, b, c)
    #define GS_BK_EPS(T) (GS_BK_IS_FLOAT(T) ? (T)FLT_EPSILON : (T)DBL_EPSILON)
    #define GS_BK_LEN(a) (sizeof(a) / sizeof((a)[0]))

    /* a float degree as torch's static_cast<int64_t>: NaN, +-inf and out-of-range values
       give INT64_MIN, as cvttsd2si does */
    static inline int64_t gs_bk_degree(double n) {
        return (n >= -9223372036854775808.0 && n < 9223372036854775808.0)
            ? (int64_t)n : INT64_MIN;
    }

    /* sum_i c[i] z^(len-1-i) by Horner's rule from 0 (torch's loops) */
    #define GS_BK_HORNER(T, out, z, c) do { \
        T gs_h_ = 0; T gs_z_ = (z); size_t gs_i_; \
        for (gs_i_ = 0; gs_i_ < GS_BK_LEN(c); gs_i_++) gs_h_ = gs_h_ * gs_z_ + (c)[gs_i_]; \
        (out) = gs_h_; } while (0)

    /* Clenshaw's recurrence of a Chebyshev series (Cephes' chbevl) over c[0 .. len - 1];
       (last) - (before) is twice the sum */
    #define GS_BK_CLENSHAW(T, last, before, z, c, len) do { \
        T gs_p_ = 0, gs_q_ = 0, gs_a_ = (c)[0]; T gs_z_ = (z); size_t gs_i_; \
        for (gs_i_ = 1; gs_i_ < (size_t)(len); gs_i_++) { \
            gs_p_ = gs_q_; gs_q_ = gs_a_; gs_a_ = gs_z_ * gs_q_ - gs_p_ + (c)[gs_i_]; } \
        (last) = gs_a_; (before) = gs_p_; } while (0)

    /* GS_BK_COPIES(DEFINE): DEFINE(T, S, P, F) made for float (S = f) and double (S = d)
       and, where GCC targets x86, again as FMA copies (S = ff, fd; F = 1), whose functions,
       declared GS_BK_FN(F), are compiled with target("avx2,fma"), as torch's AVX2/AVX-512
       builds are; P is the plain copy's suffix */
    #define GS_BK_FN(F) static GS_BK_FN_##F
    #define GS_BK_FN_0
    /* a helper inlined into every caller (where its constant arguments fold away) */
    #if defined(__GNUC__)
    #define GS_BK_INLINE(F) GS_BK_FN(F) inline __attribute__((always_inline))
    #else
    #define GS_BK_INLINE(F) GS_BK_FN(F) inline
    #endif
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define GS_BK_FMA_COPIES 1
    #define GS_BK_FN_1 __attribute__((target("avx2,fma")))
    #define GS_BK_COPIES(DEFINE) DEFINE(float, f, f, 0) DEFINE(double, d, d, 0) \
        DEFINE(float, ff, f, 1) DEFINE(double, fd, d, 1)
    /* the table of the plain copies, or of the FMA copies when fma */
    #define GS_BK_PICK(fma, plain, fused) ((fma) ? (fused) : (plain))
    #else
    #define GS_BK_FMA_COPIES 0
    #define GS_BK_COPIES(DEFINE) DEFINE(float, f, f, 0) DEFINE(double, d, d, 0)
    #define GS_BK_PICK(fma, plain, fused) (plain)
    #endif

    /* name(code, single, fma, x, out, start, stop): out[i] = f(x[i]) for i in [start,
       stop), f the code-th function of the table NAME_f (float, or NAME_ff with fma),
       NAME_d (double; NAME_##FD with fma) */
    #define GS_BK_UNARY_RANGE(name, NAME, FD) \
    static void name(int code, int single, int fma, const char* x, char* out, \
                     Py_ssize_t start, Py_ssize_t stop) { \
        Py_ssize_t i; \
        if (single) { \
            float (*f)(float) = GS_BK_PICK(fma, NAME##_f, NAME##_ff)[code]; \
            for (i = start; i < stop; i++) ((float*)out)[i] = f(((const float*)x)[i]); \
        } else { \
            double (*f)(double) = GS_BK_PICK(fma, NAME##_d, NAME##_##FD)[code]; \
            for (i = start; i < stop; i++) ((double*)out)[i] = f(((const double*)x)[i]); \
        } \
    }

    /* name(code, single, fma, x, sx, y, sy, out, start, stop): out[i] = f(x[i * sx],
       y[i * sy]) for i in [start, stop) (a step of 0 repeats one element) */
    #define GS_BK_BINARY_RANGE(name, NAME) \
    static void name(int code, int single, int fma, const char* x, Py_ssize_t sx, \
                     const char* y, Py_ssize_t sy, char* out, Py_ssize_t start, \
                     Py_ssize_t stop) { \
        Py_ssize_t i; \
        if (single) { \
            float (*f)(float, float) = GS_BK_PICK(fma, NAME##_f, NAME##_ff)[code]; \
            for (i = start; i < stop; i++) \
                ((float*)out)[i] = f(((const float*)x)[i * sx], ((const float*)y)[i * sy]); \
        } else { \
            double (*f)(double, double) = GS_BK_PICK(fma, NAME##_d, NAME##_fd)[code]; \
            for (i = start; i < stop; i++) \
                ((double*)out)[i] = f(((const double*)x)[i * sx], ((const double*)y)[i * sy]); \
        } \
    }
    #endif
    """
    int GS_BK_FMA_COPIES


# the loops of the modules, for _bessel_kernels' unary and binary
ctypedef void (*unary_range_t)(int code, int single, int fma, const char* x, char* out,
                               Py_ssize_t start, Py_ssize_t stop) noexcept nogil
ctypedef void (*binary_range_t)(int code, int single, int fma, const char* x,
                                Py_ssize_t sx, const char* y, Py_ssize_t sy, char* out,
                                Py_ssize_t start, Py_ssize_t stop) noexcept nogil
