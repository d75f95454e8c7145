# cython: language_level=3
"""Floating-point division kernels: ``fmod``, ``remainder`` and floor division, each one
pass in C over float32 or float64 arrays, with torch's rules.

The ops ``fmod``, ``remainder`` and ``floor_divide`` (and so ``div`` with
``rounding_mode="floor"``, and ``remainder``'s gradient) take these loops for float32/
float64 operands of one dtype whose divisor has the dividend's shape or one element
(``_ufuncs.pyx``); integers keep numpy's loops.  Arguments are checked, and threads set,
by ``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport _check_input, kernel_avx2, kernel_block_size, kernel_threads

cnp.import_array()

__all__ = [
    "DIVISION_THRESHOLD",
    "floor_divide",
    "fmod",
    "remainder",
]


# Note [Division kernels follow torch's formulas]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The loops are ATen's scalar rules in the array's dtype:
#   - fmod(a, b) is C's fmod: exact, the sign of a.  torch's vectorised float32 loop
#     (Sleef's fmodf) gives the same bits except where a / b overflows float32 (|a| >
#     3.4e38 |b|), where it gives NaN; its scalar loop (the tail of a vector, a tensor of
#     fewer than 8 elements) gives C's fmod there, as these loops and numpy's do;
#   - remainder(a, b) is torch's: mod = fmod(a, b), plus b where mod != 0 and the signs
#     of mod and b differ (a zero result keeps a's sign: remainder(-4., 2.) is -0.0, where
#     numpy's remainder gives the sign of b);
#   - floor_divide(a, b) is c10::div_floor_floating: a / b for b == 0 (inf or nan), else
#     div = (a - mod) / b, minus one where mod and b differ in sign, then floor(div),
#     plus one when div - floor(div) > 0.5, and a zero quotient takes the sign of a / b.
#
# Note [A fast exact float32 fmod]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# glibc's fmodf is a bit-by-bit long division (~60 ns an element here, numpy's fmod too),
# where torch's Sleef loop takes ~7 ns.  For float32 a and b with |a / b| < 2**24 the
# remainder is computed in double: n = trunc((double)a / b) is the exact quotient's
# integer part (the exact quotient's distance to the nearest integers is at least 2**-24
# of one when it is not an integer, far above the 2**-29 error of the double division),
# n * b is exact (24 + 24 bits), and a - n * b is exact (a multiple of the smaller ulp of
# a and b, below |b| in magnitude); a zero takes a's sign, as fmod's.  Other operands
# (|a / b| >= 2**24, b infinite or zero, NaN) take fmodf.  float64 takes libm's fmod.
#
# Note [Vectorised float32 division loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The float32 loop is written without branches (selects) so that the compiler vectorises
# it (in the AVX2 copy, Note [AVX2 clones] in _kernels.pyx; GCC needs the loop compiled
# with -fno-trapping-math to vectorise its compares, which changes no value since no
# floating-point exception is ever trapped here): the fast fmod above, then
# remainder's and floor division's fix-ups as selects (a branch on the signs, taken half
# the time on random data, tripled the time).  It computes every element by the fast
# fmod and reports whether any element is outside its range; those elements alone are
# then computed again by the scalar functions (fmodf).  A zero quotient of the floor
# division takes the sign of the double a / b, which is the float32 a / b's.
#
# Note [Division kernels' threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A float32 element costs ~2-5 ns, so a second thread pays from ~32k elements
# (DIVISION_THRESHOLD = 2**15: ~100 us of work at one thread against the ~5-10 us of waking
# an OpenMP team and the memory traffic the two threads share).

cdef extern from *:
    """
    #include <math.h>

    static inline float gs_div_fmodf(float a, float b) {
        double q = (double)a / (double)b;
        if (fabs(q) < 16777216.0 && fabsf(b) < INFINITY) {
            double r = (double)a - trunc(q) * (double)b;
            return copysignf((float)r, a);
        }
        return fmodf(a, b);
    }

    static inline double gs_div_fmod(double a, double b) { return fmod(a, b); }

    static inline float gs_div_remainderf(float a, float b) {
        float mod = gs_div_fmodf(a, b);
        if ((mod != 0) && ((b < 0) != (mod < 0))) mod += b;
        return mod;
    }

    static inline double gs_div_remainder(double a, double b) {
        double mod = fmod(a, b);
        if ((mod != 0) && ((b < 0) != (mod < 0))) mod += b;
        return mod;
    }

    static inline float gs_div_floorf(float a, float b) {
        float mod, div, floordiv;
        if (b == 0) return a / b;
        mod = gs_div_fmodf(a, b);
        div = (a - mod) / b;
        if ((mod != 0) && (b < 0) != (mod < 0)) div -= 1.0f;
        if (div != 0) {
            floordiv = floorf(div);
            if (div - floordiv > 0.5f) floordiv += 1.0f;
        } else {
            floordiv = copysignf(0.0f, a / b);
        }
        return floordiv;
    }

    /* Note [Vectorised float32 division loops]: one body, branch-free, with constant
       kind and divisor step after inlining; returns whether an element needs fmodf.
       Compiled without trapping math (GCC), which alone lets GCC vectorise the compares */
    #if defined(__GNUC__) && !defined(__clang__)
    #  pragma GCC push_options
    #  pragma GCC optimize ("no-trapping-math")
    #endif
    GS_BODY int gs_div_f32_body(int kind, const float* a, const float* b,
                                Py_ssize_t b_step, float* out, Py_ssize_t start,
                                Py_ssize_t stop) {
        Py_ssize_t i;
        int slow = 0;
        for (i = start; i < stop; i++) {
            float av = a[i], bv = b[i * b_step], mod, div, fl, res;
            double q = (double)av / (double)bv;
            int fix;
            mod = copysignf((float)((double)av - trunc(q) * (double)bv), av);
            slow |= !(fabs(q) < 16777216.0) | !(fabsf(bv) < INFINITY);
            if (kind == 0) {
                res = mod;
            } else {
                /* (selects of values, and additions of -0.0 or 0.0 that change no
                   value that is kept: GCC vectorises these, not a conditional add) */
                fix = (mod != 0) & ((bv < 0) != (mod < 0));
                if (kind == 1) {
                    res = mod + (fix ? bv : -0.0f);
                } else {
                    div = (av - mod) / bv;
                    div = div - (fix ? 1.0f : 0.0f);
                    fl = floorf(div);
                    fl = fl + ((div - fl > 0.5f) ? 1.0f : 0.0f);
                    res = (div != 0) ? fl : copysignf(0.0f, (float)q);
                }
            }
            out[i] = res;
        }
        return slow;
    }

    #define GS_DIV_CLONES(suffix, attr)                                                  \
        attr static int gs_div_f32_##suffix(int kind, const float* a, const float* b,    \
                Py_ssize_t b_step, float* out, Py_ssize_t start, Py_ssize_t stop) {      \
            if (b_step) {                                                                \
                if (kind == 0) return gs_div_f32_body(0, a, b, 1, out, start, stop);     \
                if (kind == 1) return gs_div_f32_body(1, a, b, 1, out, start, stop);     \
                return gs_div_f32_body(2, a, b, 1, out, start, stop);                    \
            }                                                                            \
            if (kind == 0) return gs_div_f32_body(0, a, b, 0, out, start, stop);         \
            if (kind == 1) return gs_div_f32_body(1, a, b, 0, out, start, stop);         \
            return gs_div_f32_body(2, a, b, 0, out, start, stop);                        \
        }

    GS_DIV_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_DIV_CLONES(avx2, __attribute__((target("avx2,fma"))))
    #endif
    #if defined(__GNUC__) && !defined(__clang__)
    #  pragma GCC pop_options
    #endif

    /* the float32 loop: the vectorised body, then the elements it cannot take (|a / b|
       >= 2**24, b infinite or zero, NaN) again by the scalar functions */
    static void gs_div_f32(int gs_avx2, int kind, const float* a, const float* b,
                           Py_ssize_t b_step, float* out, Py_ssize_t start,
                           Py_ssize_t stop) {
        Py_ssize_t i;
        if (!GS_DISPATCH(gs_div_f32, (kind, a, b, b_step, out, start, stop))) return;
        for (i = start; i < stop; i++) {
            float av = a[i], bv = b[i * b_step];
            double q = (double)av / (double)bv;
            if (fabs(q) < 16777216.0 && fabsf(bv) < INFINITY) continue;
            out[i] = kind == 0 ? gs_div_fmodf(av, bv)
                   : kind == 1 ? gs_div_remainderf(av, bv) : gs_div_floorf(av, bv);
        }
    }

    static inline double gs_div_floor(double a, double b) {
        double mod, div, floordiv;
        if (b == 0) return a / b;
        mod = fmod(a, b);
        div = (a - mod) / b;
        if ((mod != 0) && (b < 0) != (mod < 0)) div -= 1.0;
        if (div != 0) {
            floordiv = floor(div);
            if (div - floordiv > 0.5) floordiv += 1.0;
        } else {
            floordiv = copysign(0.0, a / b);
        }
        return floordiv;
    }
    """
    float gs_div_fmodf(float a, float b) noexcept nogil
    void gs_div_f32(int gs_avx2, int kind, const float* a, const float* b, Py_ssize_t b_step,
                    float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    double gs_div_fmod(double a, double b) noexcept nogil
    double gs_div_remainder(double a, double b) noexcept nogil
    double gs_div_floor(double a, double b) noexcept nogil


cdef Py_ssize_t _division_threshold = 1 << 15
DIVISION_THRESHOLD = _division_threshold

cdef enum _Function:
    FMOD = 0
    REMAINDER = 1
    FLOOR = 2


cdef void _range(int function, bint single, const char* a, const char* b, Py_ssize_t b_step,
                 char* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t i
    cdef const float* af = <const float*>a
    cdef const float* bf = <const float*>b
    cdef const double* ad = <const double*>a
    cdef const double* bd = <const double*>b
    cdef float* of = <float*>out
    cdef double* od = <double*>out
    if single:
        gs_div_f32(kernel_avx2(), function, af, bf, b_step, of, start, stop)
    else:
        if function == FMOD:
            for i in range(start, stop):
                od[i] = gs_div_fmod(ad[i], bd[i * b_step])
        elif function == REMAINDER:
            for i in range(start, stop):
                od[i] = gs_div_remainder(ad[i], bd[i * b_step])
        else:
            for i in range(start, stop):
                od[i] = gs_div_floor(ad[i], bd[i * b_step])


cdef object _run(str func, int function, object a, object b):
    cdef int typenum = _check_input(func, "a", a)
    cdef int typenum_b = _check_input(func, "b", b)
    cdef cnp.ndarray aa = <cnp.ndarray>a
    cdef cnp.ndarray ba = <cnp.ndarray>b
    cdef Py_ssize_t n = cnp.PyArray_SIZE(aa), block, start, step, b_step
    if typenum_b != typenum:
        raise TypeError(f"{func}: a and b must have the same dtype, got {aa.dtype} (a) and "
                        f"{ba.dtype} (b); cast b, for example b.astype(a.dtype)")
    if cnp.PyArray_SAMESHAPE(aa, ba):
        b_step = 1
    elif cnp.PyArray_SIZE(ba) == 1 and cnp.PyArray_NDIM(ba) <= cnp.PyArray_NDIM(aa):
        b_step = 0  # one divisor for every element
    else:
        raise ValueError(f"{func}: b must have a's shape {a.shape} or one element (a 0-d "
                         f"array), got shape {b.shape}; broadcast it first")
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(aa), cnp.PyArray_DIMS(aa),
                                             typenum, 0)
    cdef int nthreads = kernel_threads(n, _division_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* ap = <const char*>cnp.PyArray_DATA(aa)
    cdef const char* bp = <const char*>cnp.PyArray_DATA(ba)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            _range(function, single, ap, bp, b_step, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _range(function, single, ap, bp, b_step, op_, min(start, n),
                   min(start + step, n))
    return out


def fmod(a, b):
    """C's ``fmod(a, b)`` (the sign of ``a``) of float32/float64 C-contiguous arrays of one
    dtype, ``b`` of ``a``'s shape or of one element, as a new array (Note [Division
    kernels follow torch's formulas]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import fmod
    >>> fmod(np.array([-3.0, 3.0, 5.5]), np.array(2.0))
    array([-1. ,  1. ,  1.5])
    """
    return _run("fmod", FMOD, a, b)


def remainder(a, b):
    """torch's ``remainder(a, b)`` (Python's modulus: the sign of ``b``) of float32/float64
    C-contiguous arrays of one dtype, ``b`` of ``a``'s shape or of one element, as a new
    array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import remainder
    >>> remainder(np.array([-3.0, 3.0, -4.0]), np.array([2.0, -2.0, 2.0]))
    array([ 1., -1., -0.])
    """
    return _run("remainder", REMAINDER, a, b)


def floor_divide(a, b):
    """torch's floor division ``a // b`` (c10::div_floor_floating) of float32/float64
    C-contiguous arrays of one dtype, ``b`` of ``a``'s shape or of one element, as a new
    array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import floor_divide
    >>> floor_divide(np.array([7.0, -7.0, 1.0]), np.array([2.0, 2.0, 0.0]))
    array([ 3., -4., inf])
    """
    return _run("floor_divide", FLOOR, a, b)
