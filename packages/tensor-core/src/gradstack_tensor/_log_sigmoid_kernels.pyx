# cython: language_level=3
"""``log_sigmoid`` and ``log_sigmoid_backward``: torch's ``F.logsigmoid`` and its
derivative, and ``softplus``, its mirror, one pass in C each over a float32 or float64
array (Note [log_sigmoid in one pass], Note [softplus as log_sigmoid's mirror]).

The ops ``log_sigmoid`` and ``softplus`` take the forward loops for float32/float64
tensors (``_impl_nn.py``), graph-engine's first-order formula (``LogSigmoidBackward0``)
the backward one.  Arguments are checked, and threads set, by ``_kernels.pyx``'s shared code;
public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp

from ._exp_c cimport gs_exp_f64  # no-cython-lint (brings the shared C: exp)
from ._kernels cimport _check_input
from ._pointwise_run cimport PointwiseCall, run_pointwise

cnp.import_array()

__all__ = ["LOG_SIGMOID_THRESHOLD", "log_sigmoid", "log_sigmoid_backward", "softplus"]

# Note [log_sigmoid in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's log_sigmoid (ATen's log_sigmoid_cpu_kernel) is min(x, 0) - log1p(z) with
# z = exp(-|x|), and its backward (log_sigmoid_backward_cpu_kernel) is
# (max_deriv - sign * z / (1 + z)) * grad with max_deriv = 1, sign = 1 for x < 0 and
# max_deriv = 0, sign = -1 otherwise: one pass each.  numpy took five passes forward
# (abs, negative, exp, log1p, minimum and the subtraction: 1.5x torch's time at 10**6
# float32 elements) and the backward formula grad * sigmoid(-x) three.
#   - float64: torch's formulas with libm's exp and log1p, element by element.
#   - float32: z = exp(-|x|) is computed in double and rounded to float (|x| clamped to
#     104 first by integer selects on its bits, which keep nan: exp(-104) is below every
#     float32, so z rounds to 0 there as Sleef's expf does); exp is Cody-Waite with its
#     Taylor series to r**12 (as _activation_kernels' double exp).  Then log1p(z) for z in
#     [0, 1] is 2 atanh(s), s = z / (2 + z) in [0, 1/3], by its series to s**21 (relative
#     error below 1e-11, and exact for tiny z where log(1 + z) would lose z), and
#     min(x, 0) - log1p(z) is rounded once to float: within an ulp of torch's Sleef
#     values (its two roundings), +0.0 for x above ~104 as torch's.  The backward takes
#     torch's float arithmetic on that z.  Branch-free (the signs by integer selects), so
#     that GCC vectorises the loops (AVX2 copies, Note [AVX2 clones] in _kernels.pyx):
#     about torch's time at 10**6 elements.
#   - nan stays nan; -inf gives -inf and a gradient of grad; +inf gives 0 and 0.
#
# Note [softplus as log_sigmoid's mirror]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# softplus(x) = log1p(exp(beta x)) / beta is -log_sigmoid(-beta x) / beta: the same two
# functions.  torch's softplus_kernel computes v = x * beta in the dtype, returns x where
# v > threshold and log1p(exp(v)) / beta elsewhere; numpy took five passes (multiply,
# compare, exp, log1p, copyto).  The float32 loop computes log1p(exp(v)) as max(v, 0) +
# log1p(exp(-|v|)) with the loops above (no overflow, the same value within an ulp of
# torch's exp-then-log1p), divides by beta and picks x by an integer select; float64 takes
# torch's formula with libm.


cdef extern from *:
    """
    /* Note [log_sigmoid in one pass]; GS_BODY and GS_DISPATCH: _kernels.pxd */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    /* log1p(z) for z in [0, 1] or nan, in float: 2 atanh(s) with s = z / (2 + z) in
       [0, 1/3], by its series to s**15 (truncation below 2e-8 relatively; exact for tiny
       z, where log(1 + z) would lose z) */
    GS_BODY float gs_ls_log1p(float z) {
        float s = z / (2.0f + z);
        float s2 = s * s;
        float p = 1.0f / 15.0f;
        p = p * s2 + 1.0f / 13.0f;
        p = p * s2 + 1.0f / 11.0f;
        p = p * s2 + 1.0f / 9.0f;
        p = p * s2 + 1.0f / 7.0f;
        p = p * s2 + 1.0f / 5.0f;
        p = p * s2 + 1.0f / 3.0f;
        p = p * s2 * s;
        return 2.0f * (s + p);
    }

    /* min(x, 0), and 1.0f for x < 0 else 0.0f, by the sign bit (x = -0.0 gives -0.0, 0) */
    GS_BODY float gs_ls_negative_part(float x) {
        uint32_t bits;
        memcpy(&bits, &x, sizeof bits);
        bits &= 0u - (bits >> 31);
        float m;
        memcpy(&m, &bits, sizeof m);
        return m;
    }

    GS_BODY void gs_ls_f32_body(const float* x, float* out, Py_ssize_t start,
                                Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            float z = gs_expf_neg(x[i]);
            out[i] = gs_ls_negative_part(x[i]) - gs_ls_log1p(z);
        }
    }

    GS_BODY void gs_ls_backward_f32_body(const float* g, const float* x, float* out,
                                         Py_ssize_t start, Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            uint32_t bits;
            memcpy(&bits, x + i, sizeof bits);
            /* x < 0: max_deriv 1, sign 1; else 0, -1 (nan: z is nan, so is the result) */
            uint32_t neg = (bits >> 31) & (uint32_t)((bits & 0x7fffffffu) != 0u);
            float max_deriv = (float)neg;
            float sign = 2.0f * max_deriv - 1.0f;
            float z = gs_expf_neg(x[i]);
            out[i] = (max_deriv - sign * (z / (1.0f + z))) * g[i];
        }
    }

    /* Note [softplus as log_sigmoid's mirror]: torch's softplus_kernel, v = x * beta in
       float, x where v > threshold, else log1p(exp(v)) / beta, with log1p(exp(v)) =
       max(v, 0) + log1p(exp(-|v|)) (the same function, no overflow); the choice by an
       integer select on the bits */
    GS_BODY void gs_softplus_f32_body(float beta, float threshold, const float* x,
                                      float* out, Py_ssize_t start, Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            float v = x[i] * beta;
            uint32_t vb, xb, rb, keep;
            memcpy(&vb, &v, sizeof vb);
            vb &= (vb >> 31) - 1u;                    /* max(v, 0) (v = -0.0 gives +0.0) */
            float pos;
            memcpy(&pos, &vb, sizeof pos);
            float r = (pos + gs_ls_log1p(gs_expf_neg(v))) / beta;
            keep = 0u - (uint32_t)(v > threshold);
            memcpy(&xb, x + i, sizeof xb);
            memcpy(&rb, &r, sizeof rb);
            rb = (xb & keep) | (rb & ~keep);
            memcpy(out + i, &rb, sizeof rb);
        }
    }

    #define GS_LS_CLONE(suffix, attr)                                                  \\
        attr static void gs_ls_f32_##suffix(int kind, float beta, float threshold,         \\
                const float* g, const float* x, float* out, Py_ssize_t start,              \\
                Py_ssize_t stop) {                                                         \\
            if (kind == 0) gs_ls_f32_body(x, out, start, stop);                            \\
            else if (kind == 1) gs_ls_backward_f32_body(g, x, out, start, stop);           \\
            else gs_softplus_f32_body(beta, threshold, x, out, start, stop);               \\
        }
    GS_LS_CLONE(default, )
    #if GS_AVX2_CLONES
    GS_LS_CLONE(avx2, __attribute__((target("avx2,fma"))))
    /* Note [AVX-512 copies of the transcendental loops] in _float32_transcendentals.pyx */
    GS_LS_CLONE(avx512, __attribute__((target(
        "avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512"))))
    #  define GS_LS_DISPATCH(name, args) \\
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_LS_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    /* float64: torch's formulas with libm, one element at a time */
    static void gs_ls_f64(int kind, double beta, double threshold, const double* g,
                          const double* x, double* out, Py_ssize_t start, Py_ssize_t stop) {
        for (Py_ssize_t i = start; i < stop; i++) {
            double a = x[i];
            if (kind == 2) {
                double v = a * beta;
                out[i] = v > threshold ? a : log1p(exp(v)) / beta;
                continue;
            }
            double z = exp(-fabs(a));
            if (kind == 0) {
                out[i] = (a < 0.0 ? a : 0.0) - log1p(z);
            } else {
                double max_deriv = a < 0.0 ? 1.0 : 0.0;
                double sign = a < 0.0 ? 1.0 : -1.0;
                out[i] = (max_deriv - sign * (z / (1.0 + z))) * g[i];
            }
        }
    }

    /* kind 0: log_sigmoid, 1: its backward (g), 2: softplus (beta, threshold) */
    static void gs_ls_range(int gs_avx2, int gs_avx512, int single, int kind, double beta,
                            double threshold, const void* g, const void* x, void* out,
                            Py_ssize_t start, Py_ssize_t stop) {
        if (single)
            GS_LS_DISPATCH(gs_ls_f32, (kind, (float)beta, (float)threshold, (const float*)g,
                                       (const float*)x, (float*)out, start, stop));
        else
            gs_ls_f64(kind, beta, threshold, (const double*)g, (const double*)x,
                      (double*)out, start, stop);
    }
    """
    void gs_ls_range(int avx2, int avx512, int single, int kind, double beta,
                     double threshold, const void* g, const void* x, void* out,
                     Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# Note [log_sigmoid threshold]
# An exp and a log1p in double cost ~2-4 ns an element (float32, AVX2), libm's ~15 ns
# (float64): like the activation loops (Note [Activation threshold] in
# _activation_kernels.pyx), a second thread pays from ~2k elements; not measured on an
# idle host (the load average was above 5 on 2 cores).  Blocks are whole multiples of 64
# elements, so that the vector loop and its scalar remainder split the array alike on any
# number of threads (the same bits).
cdef Py_ssize_t _threshold = 1 << 11
LOG_SIGMOID_THRESHOLD = _threshold


cdef void _loop(const PointwiseCall* c, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    gs_ls_range(c.avx2, c.avx512, c.single, c.kind, c.beta, c.threshold, c.g, c.x, c.out,
                start, stop)


cdef object _apply(str func, int kind, object grad, object x, double beta=1.0,
                   double threshold=0.0):
    cdef int typenum = _check_input(func, "x", x)
    cdef PointwiseCall call
    call.kind = kind
    call.beta = beta
    call.threshold = threshold
    return run_pointwise(func, _loop, &call, grad, x, typenum, _threshold)


def log_sigmoid(x):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))`` of a float32/float64
    C-contiguous array, as a new array (Note [log_sigmoid in one pass]).

    Raises
    ------
    TypeError
        If ``x`` is not a float32/float64 ndarray.
    ValueError
        If it is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import log_sigmoid
    >>> log_sigmoid(np.array([-100.0, 0.0, 2.0]))
    array([-100.        ,   -0.69314718,   -0.12692801])
    """
    return _apply("log_sigmoid", 0, None, x)


def log_sigmoid_backward(grad, x):
    """torch's ``log_sigmoid_backward``: ``grad * (max_deriv - sign * z / (1 + z))`` with
    ``z = exp(-|x|)`` (``= grad * sigmoid(-x)``); ``grad`` and ``x`` float32/float64
    C-contiguous arrays of one shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import log_sigmoid_backward
    >>> log_sigmoid_backward(np.ones(3), np.array([-2.0, 0.0, 2.0]))
    array([0.88079708, 0.5       , 0.11920292])
    """
    return _apply("log_sigmoid_backward", 1, grad, x)


def softplus(x, beta=1.0, threshold=20.0):
    """torch's ``softplus``: ``log1p(exp(beta * x)) / beta``, and ``x`` where ``beta * x >
    threshold``, of a float32/float64 C-contiguous array, as a new array (Note [softplus
    as log_sigmoid's mirror]; ``softplus(x) = -log_sigmoid(-x)`` for ``beta = 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softplus
    >>> softplus(np.array([-2.0, 0.0, 30.0]))
    array([ 0.12692801,  0.69314718, 30.        ])
    """
    return _apply("softplus", 2, None, x, float(beta), float(threshold))
