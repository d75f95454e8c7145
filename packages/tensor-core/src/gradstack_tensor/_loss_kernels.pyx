# cython: language_level=3
"""Elementwise loss kernels: smooth L1 and Huber, forward and backward, each one pass in C
over float32 or float64 arrays, with torch's formulas.

The ops ``smooth_l1_loss`` and ``huber_loss`` take the forward loop for float32/float64
operands of one dtype and shape (``_impl_nn.py``; the reduction is numpy's sum of the
elementwise loss, as before), and graph-engine's first-order formulas the backward loop
(Note [Loss kernels follow torch's formulas]).  Arguments are checked, and threads set,
by ``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport (
    _as_float, _check_input, _check_same, kernel_avx2, kernel_block_size, kernel_threads,
)

cnp.import_array()

__all__ = [
    "LOSS_THRESHOLD", "huber", "huber_backward", "smooth_l1", "smooth_l1_backward",
]


# Note [Loss kernels follow torch's formulas]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ATen's CPU loops (aten/src/ATen/native/cpu/PointwiseOpsKernel.cpp and
# BinaryOpsKernel.cpp), in the array's dtype, with their roundings in their order:
#   smooth_l1:  z = |x - y|;  z < beta ? 0.5 * z * z / beta : z - 0.5 * beta
#   huber:      z = |x - y|;  z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta)
#   smooth_l1_backward:  d = x - y;  norm * (|d| >= beta ? (d > 0 ? 1 : -1) : d / beta) * g
#   huber_backward:      d = x - y;  norm * (|d| >= delta ? (d > 0 ? 1 : -1) * delta : d) * g
# (the backward formulas are torch's vectorised loops, which contiguous tensors take; its
# scalar loops order the products differently, a rounding apart)
# where norm is 1 / numel for the mean reduction (rounded to the dtype) and 1 otherwise,
# and g the output's gradient (one value for a reduced loss).  The gradient of the target
# is the same loop with x and y swapped (torch's derivative formula), which is exactly the
# negated one.  beta = 0 is torch's l1_loss (its gradient is sign(x - y)): the callers
# keep their other path for it.  The loops are written with selects of computed values
# and compiled without trapping math under GCC so that they vectorise (Note [Vectorised
# float32 division loops] in _division_kernels.pyx).
#
# Note [Loss kernels' threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An element costs well under a nanosecond vectorised: a second thread pays only from
# ~10**5 elements (LOSS_THRESHOLD = 2**17), where the loops are bound by memory.

cdef extern from *:
    """
    #include <math.h>

    #if defined(__GNUC__) && !defined(__clang__)
    #  pragma GCC push_options
    #  pragma GCC optimize ("no-trapping-math")
    #endif

    #define GS_LOSS_BODIES(T, SUFFIX)                                                    \\
    GS_BODY void gs_loss_fwd_##SUFFIX(int huber, T p, const T* x, const T* y, T* out,    \\
                                      Py_ssize_t start, Py_ssize_t stop) {               \\
        Py_ssize_t i;                                                                    \\
        const T half = (T)0.5;                                                           \\
        if (huber) {                                                                     \\
            for (i = start; i < stop; i++) {                                             \\
                T z = x[i] - y[i];                                                       \\
                T quad, lin;                                                             \\
                z = z < 0 ? -z : z;                                                      \\
                quad = half * z * z;                                                     \\
                lin = p * (z - half * p);                                                \\
                out[i] = z < p ? quad : lin;                                             \\
            }                                                                            \\
        } else {                                                                         \\
            for (i = start; i < stop; i++) {                                             \\
                T z = x[i] - y[i];                                                       \\
                T quad, lin;                                                             \\
                z = z < 0 ? -z : z;                                                      \\
                quad = half * z * z / p;                                                 \\
                lin = z - half * p;                                                      \\
                out[i] = z < p ? quad : lin;                                             \\
            }                                                                            \\
        }                                                                                \\
    }                                                                                    \\
    GS_BODY void gs_loss_bwd_##SUFFIX(int huber, T p, T norm, const T* g,                \\
                                      Py_ssize_t g_step, const T* x, const T* y, T* out, \\
                                      Py_ssize_t start, Py_ssize_t stop) {               \\
        Py_ssize_t i;                                                                    \\
        if (huber) {                                                                     \\
            for (i = start; i < stop; i++) {                                             \\
                T d = x[i] - y[i], gv = g[i * g_step];                                   \\
                T ad = d < 0 ? -d : d, side = (d > 0 ? (T)1 : (T)-1) * p;                \\
                out[i] = norm * (ad >= p ? side : d) * gv;                               \\
            }                                                                            \\
        } else {                                                                         \\
            for (i = start; i < stop; i++) {                                             \\
                T d = x[i] - y[i], gv = g[i * g_step];                                   \\
                T ad = d < 0 ? -d : d, side = d > 0 ? (T)1 : (T)-1, mid = d / p;         \\
                out[i] = norm * (ad >= p ? side : mid) * gv;                             \\
            }                                                                            \\
        }                                                                                \\
    }

    GS_LOSS_BODIES(float, f32)
    GS_LOSS_BODIES(double, f64)

    #define GS_LOSS_CLONES(suffix, attr)                                                 \\
        attr static void gs_loss_f32_##suffix(int backward, int huber, float p,          \\
                float norm, const float* g, Py_ssize_t g_step, const float* x,           \\
                const float* y, float* out, Py_ssize_t start, Py_ssize_t stop) {         \\
            if (!backward) gs_loss_fwd_f32(huber, p, x, y, out, start, stop);            \\
            else if (g_step) gs_loss_bwd_f32(huber, p, norm, g, 1, x, y, out, start, stop); \\
            else gs_loss_bwd_f32(huber, p, norm, g, 0, x, y, out, start, stop);          \\
        }                                                                                \\
        attr static void gs_loss_f64_##suffix(int backward, int huber, double p,         \\
                double norm, const double* g, Py_ssize_t g_step, const double* x,        \\
                const double* y, double* out, Py_ssize_t start, Py_ssize_t stop) {       \\
            if (!backward) gs_loss_fwd_f64(huber, p, x, y, out, start, stop);            \\
            else if (g_step) gs_loss_bwd_f64(huber, p, norm, g, 1, x, y, out, start, stop); \\
            else gs_loss_bwd_f64(huber, p, norm, g, 0, x, y, out, start, stop);          \\
        }

    GS_LOSS_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_LOSS_CLONES(avx2, __attribute__((target("avx2,fma"))))
    #endif

    #if defined(__GNUC__) && !defined(__clang__)
    #  pragma GCC pop_options
    #endif

    static void gs_loss_f32(int gs_avx2, int backward, int huber, float p, float norm,
                            const float* g, Py_ssize_t g_step, const float* x,
                            const float* y, float* out, Py_ssize_t start, Py_ssize_t stop) {
        GS_DISPATCH(gs_loss_f32, (backward, huber, p, norm, g, g_step, x, y, out, start,
                                  stop));
    }

    static void gs_loss_f64(int gs_avx2, int backward, int huber, double p, double norm,
                            const double* g, Py_ssize_t g_step, const double* x,
                            const double* y, double* out, Py_ssize_t start,
                            Py_ssize_t stop) {
        GS_DISPATCH(gs_loss_f64, (backward, huber, p, norm, g, g_step, x, y, out, start,
                                  stop));
    }
    """
    void gs_loss_f32(int gs_avx2, int backward, int huber, float p, float norm,
                     const float* g, Py_ssize_t g_step, const float* x, const float* y,
                     float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_loss_f64(int gs_avx2, int backward, int huber, double p, double norm,
                     const double* g, Py_ssize_t g_step, const double* x, const double* y,
                     double* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil


cdef Py_ssize_t _loss_threshold = 1 << 17
LOSS_THRESHOLD = _loss_threshold


cdef void _range(bint single, int backward, int huber, double p, double norm, const char* g,
                 Py_ssize_t g_step, const char* x, const char* y, char* out,
                 Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    if single:
        gs_loss_f32(kernel_avx2(), backward, huber, <float>p, <float>norm, <const float*>g,
                    g_step, <const float*>x, <const float*>y, <float*>out, start, stop)
    else:
        gs_loss_f64(kernel_avx2(), backward, huber, p, norm, <const double*>g, g_step,
                    <const double*>x, <const double*>y, <double*>out, start, stop)


cdef object _run(str func, int backward, int huber, object grad, object x, object y,
                 object param, object norm):
    cdef int typenum = _check_input(func, "x", x)
    _check_input(func, "y", y)
    _check_same(func, "x", x, "y", y)
    cdef double p = _as_float(func, "beta" if not huber else "delta", param)
    cdef double nrm = _as_float(func, "norm", norm)
    if not p > 0:
        raise ValueError(f"{func}: {'delta' if huber else 'beta'} must be positive (got "
                         f"{p}); beta = 0 is l1_loss, whose gradient is sign(x - y)")
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef cnp.ndarray ya = <cnp.ndarray>y
    cdef cnp.ndarray ga = None
    cdef Py_ssize_t g_step = 0
    if backward:
        _check_input(func, "grad", grad)
        ga = <cnp.ndarray>grad
        if cnp.PyArray_TYPE(ga) != typenum:
            raise TypeError(f"{func}: grad must have x's dtype {x.dtype}, got {grad.dtype}; "
                            "cast it, for example grad.astype(x.dtype)")
        if cnp.PyArray_SAMESHAPE(ga, xa):
            g_step = 1
        elif cnp.PyArray_SIZE(ga) != 1:
            raise ValueError(f"{func}: grad must have x's shape {x.shape} or one element "
                             f"(a reduced loss's), got shape {grad.shape}")
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _loss_threshold)
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* gp = <const char*>cnp.PyArray_DATA(ga) if backward else NULL
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef const char* yp = <const char*>cnp.PyArray_DATA(ya)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            _range(single, backward, huber, p, nrm, gp, g_step, xp, yp, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            _range(single, backward, huber, p, nrm, gp, g_step, xp, yp, op_,
                   min(start, n), min(start + step, n))
    return out


def smooth_l1(x, y, beta):
    """torch's elementwise smooth L1 loss of float32/float64 C-contiguous arrays of one
    dtype and shape, ``beta > 0``, as a new array (Note [Loss kernels follow torch's
    formulas]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import smooth_l1
    >>> smooth_l1(np.array([0.5, 3.0]), np.array([0.0, 0.0]), 1.0)
    array([0.125, 2.5  ])
    """
    return _run("smooth_l1", 0, 0, None, x, y, beta, 1.0)


def huber(x, y, delta):
    """torch's elementwise Huber loss of float32/float64 C-contiguous arrays of one dtype
    and shape, ``delta > 0``, as a new array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import huber
    >>> huber(np.array([0.5, 3.0]), np.array([0.0, 0.0]), 2.0)
    array([0.125, 4.   ])
    """
    return _run("huber", 0, 1, None, x, y, delta, 1.0)


def smooth_l1_backward(grad, x, y, beta, norm=1.0):
    """The gradient of the smooth L1 loss with respect to ``x`` (torch's
    smooth_l1_backward): ``grad`` of ``x``'s shape or one element (a reduced loss's),
    ``norm`` 1 / numel for the mean reduction.  The target's gradient is the same call
    with ``x`` and ``y`` swapped.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import smooth_l1_backward
    >>> smooth_l1_backward(np.array(1.0), np.array([0.5, 3.0, -2.0]), np.zeros(3), 1.0)
    array([ 0.5,  1. , -1. ])
    """
    return _run("smooth_l1_backward", 1, 0, grad, x, y, beta, norm)


def huber_backward(grad, x, y, delta, norm=1.0):
    """The gradient of the Huber loss with respect to ``x`` (torch's huber_backward),
    arguments as for :func:`smooth_l1_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import huber_backward
    >>> huber_backward(np.array(1.0), np.array([0.5, 3.0, -2.0]), np.zeros(3), 2.0)
    array([ 0.5,  2. , -2. ])
    """
    return _run("huber_backward", 1, 1, grad, x, y, delta, norm)
