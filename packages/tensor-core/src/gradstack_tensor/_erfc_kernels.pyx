# cython: language_level=3
"""``erfc_float32`` and ``erfc_backward``: the complementary error function of a float32
array and the derivative of erfc, one vectorised pass each (Note [float32 erfc by erfcx]).

The op ``erfc`` takes ``erfc_float32`` for float32 tensors (``_impl_special.py``; float64
keeps libm's erfc, ``_activation_kernels.erfc``), graph-engine's first-order formula
(``ErfcBackward0``) ``erfc_backward``.  Arguments are checked, and threads set, by
``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp

from ._exp_c cimport gs_exp_f64  # no-cython-lint (brings the shared C: exp)
from ._kernels cimport _check_input
from ._pointwise_run cimport PointwiseCall, run_pointwise

cnp.import_array()

__all__ = ["ERFC_THRESHOLD", "erfc_backward", "erfc_float32"]

# Note [float32 erfc by erfcx]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# libm's erfc, element by element (Note [erfc is its own function] in
# _activation_kernels.pyx), took ~20 ns an element: erfc of 10**6 float32 values was 29x
# torch's time (Sleef's vectorised erfcf), 6x with the backward (five gradstack ops).
# For a float32 x, with a = |x| clamped to 10.1 (by integer selects on the bits, which
# keep nan; erfc(10.1) = 1.4e-46 rounds to 0 in float32, as every erfc beyond does):
#     erfc(a) = exp(-a*a) erfcx(a),   erfc(-a) = 2 - erfc(a),
# in double: a*a is exact (a float's 24 bits squared), exp by Cody-Waite and its Taylor
# series to r**12 (as the other double exps of this package), and erfcx(a) =
# exp(a*a) erfc(a), smooth and in (0.055, 1], is one polynomial of degree 14 in
# u = 1.3713 t + 0.3713, t = (a - 3.75) / (a + 3.75) (the Chebyshev interpolant of erfcx at
# 15 points of a in [0, 10.1], scipy's erfcx; relative error 4.7e-12 at 200,001 points;
# the coefficients' absolute values sum to 1.00008: Horner's rule loses nothing).  No
# cancellation anywhere (2 - erfc(a) is at least 1), so the double value is within
# ~1e-11 relatively of erfc(x) and rounding it once gives the correctly rounded float32
# except within 1e-11 of a rounding boundary; torch's Sleef erfcf is within 1.5 ulp,
# so the two agree within 2 ulp.  Branch-free (the sign by a multiply with 0 or 1), so
# GCC vectorises it: 4 doubles a lane group with AVX2, 8 with AVX-512 (~1 ns an element).
# erfc_backward is torch's ErfcBackward0 in the array's dtype, -2/sqrt(pi) * exp(-x**2)
# * grad: x**2 rounded, the exp in double rounded to float (float32; libm for float64),
# the products in torch's order.


cdef extern from *:
    """
    /* Note [float32 erfc by erfcx]; GS_BODY and GS_DISPATCH: _kernels.pxd */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    GS_BODY void gs_erfc_f32_body(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t bits, mag;
            memcpy(&bits, x + i, sizeof bits);
            mag = bits & 0x7fffffffu;
            mag = mag > 0x7f800000u ? mag : (mag < 0x41219999u ? mag : 0x41219999u); /* 10.1 */
            float af;
            memcpy(&af, &mag, sizeof af);
            double a = af;
            double t = (a - 3.75) / (a + 3.75);
            double u = t * 1.3712871287128714 + 0.37128712871287134;
            double p = -2.189650722443549e-08;
            p = p * u + -3.730386567372102e-08;
            p = p * u + 5.221341749884342e-07;
            p = p * u + 1.3045056857518249e-08;
            p = p * u + -1.0284241167061271e-05;
            p = p * u + 3.152534051964826e-05;
            p = p * u + 9.811859186249747e-05;
            p = p * u + -0.0012890731120544252;
            p = p * u + 0.006506858919516636;
            p = p * u + -0.022404565594514966;
            p = p * u + 0.059310926960166065;
            p = p * u + -0.12648210905263632;
            p = p * u + 0.22181114977216163;
            p = p * u + -0.32206050981807444;
            p = p * u + 0.24007797326434077;
            double e = gs_exp_f64(-(a * a)) * p;   /* -1075 < k <= 0 */
            double neg = (double)(bits >> 31);       /* erfc(-a) = 2 - erfc(a) */
            out[i] = (float)(e + neg * (2.0 - 2.0 * e));
        }
    }

    GS_BODY void gs_erfc_backward_f32_body(const float* g, const float* x, float* out,
                                           Py_ssize_t start, Py_ssize_t stop) {
        const float k = (float)(-1.12837916709551257390);   /* -2 / sqrt(pi) */
        for (Py_ssize_t i = start; i < stop; i++) {
            float sq = x[i] * x[i];
            uint32_t bits;
            memcpy(&bits, &sq, sizeof bits);   /* x*x clamped to 104: exp rounds to 0 there */
            bits = bits > 0x7f800000u ? bits : (bits < 0x42d00000u ? bits : 0x42d00000u);
            memcpy(&sq, &bits, sizeof sq);
            out[i] = (k * (float)gs_exp_f64(-(double)sq)) * g[i];
        }
    }

    #define GS_ERFC_CLONE(suffix, attr)                                                \\
        attr static void gs_erfc_f32_##suffix(const float* g, const float* x,          \\
                float* out, Py_ssize_t start, Py_ssize_t stop) {                       \\
            if (g == NULL) gs_erfc_f32_body(x, out, start, stop);                      \\
            else gs_erfc_backward_f32_body(g, x, out, start, stop);                    \\
        }
    GS_ERFC_CLONE(default, )
    #if GS_AVX2_CLONES
    GS_ERFC_CLONE(avx2, __attribute__((target("avx2,fma"))))
    /* Note [AVX-512 copies of the transcendental loops] in _float32_transcendentals.pyx */
    GS_ERFC_CLONE(avx512, __attribute__((target(
        "avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512"))))
    #  define GS_ERFC_DISPATCH(name, args) \\
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_ERFC_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    /* float64 backward: torch's formula with libm's exp */
    static void gs_erfc_backward_f64(const double* g, const double* x, double* out,
                                     Py_ssize_t start, Py_ssize_t stop) {
        const double k = -1.12837916709551257390;
        for (Py_ssize_t i = start; i < stop; i++)
            out[i] = (k * exp(-(x[i] * x[i]))) * g[i];
    }

    static void gs_erfc_range(int gs_avx2, int gs_avx512, int single, const void* g,
                              const void* x, void* out, Py_ssize_t start, Py_ssize_t stop) {
        if (single)
            GS_ERFC_DISPATCH(gs_erfc_f32, ((const float*)g, (const float*)x, (float*)out,
                                           start, stop));
        else
            gs_erfc_backward_f64((const double*)g, (const double*)x, (double*)out, start,
                                 stop);
    }
    """
    void gs_erfc_range(int avx2, int avx512, int single, const void* g, const void* x,
                       void* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# Note [erfc threshold]
# ~1 ns an element (float32, AVX-512; ~2 with AVX2), ~10 ns for libm's float64 exp: as the
# activation loops (Note [Activation threshold] in _activation_kernels.pyx), a second
# thread pays from ~2k elements; not measured on an idle host.  Blocks are whole
# multiples of 64 elements: the same bits on any number of threads.
cdef Py_ssize_t _threshold = 1 << 11
ERFC_THRESHOLD = _threshold


cdef void _loop(const PointwiseCall* c, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    gs_erfc_range(c.avx2, c.avx512, c.single, c.g, c.x, c.out, start, stop)


cdef object _apply(str func, object grad, object x, bint float32_only):
    cdef int typenum = _check_input(func, "x", x)
    if float32_only and typenum != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: x must be float32, got {x.dtype} (float64: kernels.erfc)")
    cdef PointwiseCall call
    return run_pointwise(func, _loop, &call, grad, x, typenum, _threshold)


def erfc_float32(x):
    """``erfc(x) = 1 - erf(x)`` of a float32 C-contiguous array, as a new array, computed
    directly (Note [float32 erfc by erfcx]); float64 arrays: ``kernels.erfc``.

    Raises
    ------
    TypeError
        If ``x`` is not a float32 ndarray.
    ValueError
        If it is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erfc_float32
    >>> erfc_float32(np.array([-1.0, 0.0, 1.0, 5.0], np.float32))
    array([1.8427008e+00, 1.0000000e+00, 1.5729921e-01, 1.5374598e-12],
          dtype=float32)
    """
    return _apply("erfc_float32", None, x, True)


def erfc_backward(grad, x):
    """torch's ErfcBackward0: ``-2/sqrt(pi) * exp(-x**2) * grad``, for float32/float64
    C-contiguous arrays of one shape and dtype (Note [float32 erfc by erfcx]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import erfc_backward
    >>> erfc_backward(np.ones(2), np.array([0.0, 1.0]))
    array([-1.12837917, -0.4151075 ])
    """
    return _apply("erfc_backward", grad, x, False)
