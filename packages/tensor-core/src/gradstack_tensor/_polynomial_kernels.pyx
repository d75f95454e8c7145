# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False
"""Kernels of ``torch.special``'s orthogonal polynomials of ``x`` and a degree ``n``
(Chebyshev's four kinds and their shifted forms, Hermite's two, Laguerre's, Legendre's),
each one pass in C over float32 or float64 arrays, with torch's algorithms and float
arithmetic (Note [Bessel kernels follow torch's arithmetic] in ``_bessel_kernels.pyx``).

``_bessel_kernels.binary`` reaches them (its ``BINARY`` begins with :data:`POLYNOMIALS`),
through :func:`polynomial_range` (``_polynomial_kernels.pxd``); it checks the arguments
and sets the threads.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor._bessel_kernels import binary
>>> binary("legendre_polynomial_p", np.array([0.5]), np.array([2.0]))
array([-0.125])
"""

from ._special_c cimport GS_BK_FMA_COPIES  # no-cython-lint (brings the shared C)

__all__ = ["POLYNOMIALS"]


# Note [One Chebyshev function for eight]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch writes the Chebyshev polynomials of the first to fourth kind (T, U, V, W) and
# their shifted forms (of y = 2x - 1) as eight functions of one plan: 0 for a negative
# degree; the values at the ends of [-1, 1] (tested as |x| == 1, or, shifted, x == 1 and
# x == 0, which are not quite y == +-1 in floating point); above a degree (6 for T, 8 for
# U, V and W, 6 and 4 shifted) and inside the interval, the trigonometric form (cos(n acos
# x) for T, ...); else the recurrence r = 2 z q - p from the kind's first term.  The ends'
# values are one table (at 1: 1, n + 1, 1, 2n + 1; at -1: +-1, +-(n + 1), +-(2n + 1), +-1,
# the sign of (-1)^n), so the eight are one function of the kind, shifted or not, and the
# degree; each step is torch's expression in torch's order, so the values are torch's to
# the bit (tests/test_bessel_kernels.py).  One quirk kept: shifted W's trigonometric form,
# where cos(acos(y) / 2) is 1, gives the value at -1, as torch's does.

cdef extern from *:
    """
    /* f(x, n) of a float degree n, over the function of an int64 degree */
    #define GS_BK_POLYNOMIAL_N(name, T, S, F) GS_BK_FN(F) T gs_bk_##name##_n_##S(T x, T n) { \
        return gs_bk_##name##_##S(x, gs_bk_degree(n)); }
    #define GS_BK_CHEBYSHEV_N(name, T, S, F, kind, shifted, big) \
        GS_BK_FN(F) T gs_bk_##name##_n_##S(T x, T n) { \
            return gs_bk_chebyshev_##S(x, gs_bk_degree(n), kind, shifted, big); }

    /* the orthogonal polynomials of x and an integer degree n (torch's *_forward(T, int64)) */
    #define GS_BK_DEFINE_POLYNOMIALS(T, S, P, F) \
    /* the value of the kind (0 to 3: T, U, V, W) at 1 (upper) or -1 */ \
    GS_BK_INLINE(F) T gs_bk_chebyshev_end_##S(int kind, int upper, int64_t n) { \
        int64_t m = (kind == 1) ? n + 1 \
            : (kind == 0 || (kind == 2) == upper) ? 1 : n + n + 1; \
        return (upper || n % 2 == 0) ? m : -m; \
    } \
    /* Note [One Chebyshev function for eight] */ \
    GS_BK_INLINE(F) T gs_bk_chebyshev_##S(T x, int64_t n, int kind, int shifted, int64_t big) { \
        T z = shifted ? x + x - (T)1.0 : x, a, p, q, r; int64_t k; \
        if (n < 0) return (T)0.0; \
        if (shifted ? (x == (T)1.0 || x == (T)0.0) : gs_bk_fabs(x) == (T)1.0) \
            return gs_bk_chebyshev_end_##S(kind, shifted ? x == (T)1.0 : x > (T)0.0, n); \
        if ((n > big) && (gs_bk_fabs(z) < (T)1.0)) { \
            a = gs_bk_acos(z); \
            switch (kind) { \
            case 0: return gs_bk_cos(n * a); \
            case 1: \
                if (gs_bk_sin(a) != (T)0.0) return gs_bk_sin((n + 1) * a) / gs_bk_sin(a); \
                return (n + 1) * gs_bk_cos((n + 1) * a) / z; \
            case 2: \
                if (gs_bk_sin(a / (T)2.0) != (T)1.0) \
                    return gs_bk_cos((n + (T)0.5) * a) / gs_bk_cos(a / (T)2.0); \
                return gs_bk_chebyshev_end_##S(2, 0, n); \
            default: \
                if (gs_bk_cos(a / (T)2.0) != (T)1.0) \
                    return gs_bk_sin((n + (T)0.5) * a) / gs_bk_sin(a / (T)2.0); \
                return gs_bk_chebyshev_end_##S(3, !shifted && z > (T)0.0, n); \
            } \
        } \
        q = (kind == 0) ? z : (kind == 1) ? z + z \
            : (kind == 2) ? z + z - (T)1.0 : z + z + (T)1.0; \
        if (n == 0) return (T)1.0; \
        if (n == 1) return q; \
        p = (T)1.0; r = q; \
        for (k = 2; (k <= n) && !isnan(q); k++) { r = (z + z) * q - p; p = q; q = r; } \
        return r; \
    } \
    GS_BK_FN(F) T gs_bk_hermite_polynomial_h_##S(T x, int64_t n) { \
        T p, q, r = (T)0.0; int64_t k; \
        if (n < 0) return (T)0.0; \
        if (n == 0) return (T)1.0; \
        if (n == 1) return x + x; \
        if (n > (GS_BK_IS_FLOAT(T) ? 128 : 512)) return (T)NAN; \
        p = (T)1.0; q = x + x; r = q; \
        for (k = 2; k < n + n; k += 2) { r = (x + x) * q - k * p; p = q; q = r; } \
        return r; \
    } \
    GS_BK_FN(F) T gs_bk_hermite_polynomial_he_##S(T x, int64_t n) { \
        T p = (T)1.0, q = x, r = q; int64_t k; \
        if (n < 0) return (T)0.0; \
        if (n == 0) return (T)1.0; \
        if (n == 1) return x; \
        if (n > (GS_BK_IS_FLOAT(T) ? 128 : 512)) return (T)NAN; \
        for (k = 1; k < n; k++) { r = x * q - k * p; p = q; q = r; } \
        return r; \
    } \
    GS_BK_FN(F) T gs_bk_laguerre_polynomial_l_##S(T x, int64_t n) { \
        T p, q, r = 0; int64_t k; \
        if (n < 0) return (T)0.0; \
        if (gs_bk_fabs(x) == (T)0.0) return (T)1.0; \
        if (n == 0) return (T)1.0; \
        if (n == 1) return (T)1.0 - x; \
        p = (T)1.0; q = (T)1.0 - x; r = q; \
        for (k = 1; (k < n) && !isnan(q); k++) { \
            r = (((k + k) + ((T)1.0 - x)) * q - k * p) / (k + 1); p = q; q = r; } \
        return r; \
    } \
    GS_BK_FN(F) T gs_bk_legendre_polynomial_p_##S(T x, int64_t n) { \
        T p, q, r = 0; int64_t k; \
        if (n < 0) return (T)0.0; \
        if (gs_bk_fabs(x) == (T)1.0) return (x > (T)0.0 || n % 2 == 0) ? (T)1.0 : (T)-1.0; \
        if (n == 0) return (T)1.0; \
        if (n == 1) return x; \
        p = (T)1.0; q = x; r = q; \
        for (k = 1; (k < n) && !isnan(q); k++) { \
            r = ((k + k + 1) * x * q - k * p) / (k + 1); p = q; q = r; } \
        return r; \
    } \
    /* the functions of x and a float degree (truncated as torch's static_cast<int64_t>), \
       in the order of POLYNOMIALS */ \
    GS_BK_CHEBYSHEV_N(chebyshev_t, T, S, F, 0, 0, 6) \
    GS_BK_CHEBYSHEV_N(chebyshev_u, T, S, F, 1, 0, 8) \
    GS_BK_CHEBYSHEV_N(chebyshev_v, T, S, F, 2, 0, 8) \
    GS_BK_CHEBYSHEV_N(chebyshev_w, T, S, F, 3, 0, 8) \
    GS_BK_CHEBYSHEV_N(shifted_t, T, S, F, 0, 1, 6) GS_BK_CHEBYSHEV_N(shifted_u, T, S, F, 1, 1, 6) \
    GS_BK_CHEBYSHEV_N(shifted_v, T, S, F, 2, 1, 6) GS_BK_CHEBYSHEV_N(shifted_w, T, S, F, 3, 1, 4) \
    GS_BK_POLYNOMIAL_N(hermite_polynomial_h, T, S, F) \
    GS_BK_POLYNOMIAL_N(hermite_polynomial_he, T, S, F) \
    GS_BK_POLYNOMIAL_N(laguerre_polynomial_l, T, S, F) \
    GS_BK_POLYNOMIAL_N(legendre_polynomial_p, T, S, F) \
    static T (*const gs_bk_polynomials_##S[])(T, T) = { \
        gs_bk_chebyshev_t_n_##S, gs_bk_chebyshev_u_n_##S, gs_bk_chebyshev_v_n_##S, \
        gs_bk_chebyshev_w_n_##S, gs_bk_hermite_polynomial_h_n_##S, \
        gs_bk_hermite_polynomial_he_n_##S, gs_bk_laguerre_polynomial_l_n_##S, \
        gs_bk_legendre_polynomial_p_n_##S, gs_bk_shifted_t_n_##S, gs_bk_shifted_u_n_##S, \
        gs_bk_shifted_v_n_##S, gs_bk_shifted_w_n_##S};
    GS_BK_COPIES(GS_BK_DEFINE_POLYNOMIALS)
    GS_BK_BINARY_RANGE(gs_bk_polynomial_range, gs_bk_polynomials)
    #define GS_BK_N_POLYNOMIALS ((int)GS_BK_LEN(gs_bk_polynomials_f))
    """
    int GS_BK_N_POLYNOMIALS
    void gs_bk_polynomial_range(int code, int single, int fma, const char* x, Py_ssize_t sx,
                                const char* y, Py_ssize_t sy, char* out,
                                Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# the functions, in the order of the C table
POLYNOMIALS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
)
if len(POLYNOMIALS) != GS_BK_N_POLYNOMIALS:  # pragma: no cover
    raise ImportError("_polynomial_kernels: the function names do not match the C table")


cdef void polynomial_range(int code, int single, int fma, const char* x, Py_ssize_t sx,
                           const char* y, Py_ssize_t sy, char* out, Py_ssize_t start,
                           Py_ssize_t stop) noexcept nogil:
    """out[i] = the code-th polynomial of (x[i * sx], y[i * sy]) for i in [start, stop),
    float32 (single) or float64, with the FMA copies when fma."""
    gs_bk_polynomial_range(code, single, fma, x, sx, y, sy, out, start, stop)
