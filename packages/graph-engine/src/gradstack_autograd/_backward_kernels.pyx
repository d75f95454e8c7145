# cython: language_level=3
"""Fused backward formulas: the kernels a derivative-table entry names in ``fused``.

``sin_backward(grad, x)`` computes ``grad * cos(x)`` in one pass over memory, where the
Python formula would allocate ``cos(x)`` first; ``mul_backward(grad, a, b)`` gives both
gradients of ``a * b`` from one pass.  An entry's ``fused`` field names one of these
(``register(..., fused="sin_backward")``); the formula runs it through ``ctx.fused(...)``,
and ``_native.pyx`` calls ``mul_backward``/``div_backward`` without a Python frame (Note
[Native first-order formulas]).  They live in graph-engine, beside the table that uses
them; tensor-core keeps the kernels every layer uses (accumulation, the SGD update,
``sum_to_shape``) and lends these its thread settings, AVX2 switch and argument checks
(Note [Kernels of the layers above] in tensor-core's ``_kernels.pyx``).

Arrays follow tensor-core's kernel contract: float32 or float64 ``numpy.ndarray`` operands
in native byte order, one dtype and one shape per call, C-contiguous and aligned
(``gradstack_tensor.kernels.fusable`` tells), checked before any memory is touched
(``TypeError`` for a wrong type or dtype, ``ValueError`` for a wrong shape or layout).
Results are new C-contiguous arrays.  From ``PARALLEL_THRESHOLD`` elements
(``TRANSCENDENTAL_THRESHOLD`` for sin and cos) they run on
``gradstack_tensor.kernels.get_num_threads()`` OpenMP threads; the results do not depend
on the number of threads.

Examples
--------
>>> import numpy as np
>>> from gradstack_autograd import _backward_kernels as K
>>> K.mul_backward(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0]))
(array([ 5., 12.]), array([3., 8.]))
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from gradstack_tensor.extension cimport (
    check_kernel_input, check_kernel_same, kernel_avx2, kernel_block_size,
    kernel_parallel_threshold, kernel_threads,
)
from libc.math cimport cos, cosf, fabsf, sin, sinf

cnp.import_array()

__all__ = [
    "TRANSCENDENTAL_THRESHOLD",
    "cos_backward",
    "div_backward",
    "mul_backward",
    "relu_backward",
    "sigmoid_backward",
    "sin_backward",
    "tanh_backward",
]

ctypedef fused real:
    float
    double

# sin and cos cost ~2-10 ns per element: two threads win from 2k elements (Note
# [Choosing PARALLEL_THRESHOLD] in tensor-core's _kernels.pyx, where it was measured)
cdef Py_ssize_t _transcendental_threshold = 1 << 11
TRANSCENDENTAL_THRESHOLD = _transcendental_threshold


# ---------------------------------------------------------------------------------------
# The float32 sin and cos loop, compiled twice (Note [AVX2 clones] in tensor-core's
# _kernels.pyx: a default copy and an AVX2+FMA copy of one always-inlined body; which one
# runs is tensor-core's switch, kernel_avx2(), read at each call).

cdef extern from *:
    """
    #include <math.h>

    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #  define GS_AVX2_CLONES 1
    #  define GS_BODY static inline __attribute__((always_inline))
    #else
    #  define GS_AVX2_CLONES 0
    #  define GS_BODY static CYTHON_INLINE
    #endif

    #define GS_TWO_OVER_PI 6.36619772367581382433e-01
    #define GS_PIO2_HI 1.57079632673412561417e+00  /* the first 33 bits of pi/2 */
    #define GS_PIO2_LO 6.07710050650619224932e-11  /* pi/2 - GS_PIO2_HI */
    #define GS_ROUNDER 6755399441055744.0          /* 1.5 * 2**52 */
    #define GS_TRIG_LIMIT 262144.0f                /* 2**18 */

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

    /* cos(x - shift * pi/2) for |x| <= GS_TRIG_LIMIT: cos(x) with shift 0, sin(x) with 3. */
    GS_BODY float gs_cos_shifted_f32(float x, double shift, int fused) {
        double xd = x;
        double q = gs_madd(xd, GS_TWO_OVER_PI, GS_ROUNDER, fused) - GS_ROUNDER;
        double r = gs_madd(-q, GS_PIO2_LO, gs_madd(-q, GS_PIO2_HI, xd, fused), fused);
        double r2 = r * r;
        double s = gs_madd(r2, 1.0 / 6227020800.0, -1.0 / 39916800.0, fused);
        s = gs_madd(r2, s, 1.0 / 362880.0, fused);
        s = gs_madd(r2, s, -1.0 / 5040.0, fused);
        s = gs_madd(r2, s, 1.0 / 120.0, fused);
        s = gs_madd(r2, s, -1.0 / 6.0, fused);
        double sin_r = gs_madd(r * r2, s, r, fused);
        double c = gs_madd(r2, -1.0 / 87178291200.0, 1.0 / 479001600.0, fused);
        c = gs_madd(r2, c, -1.0 / 3628800.0, fused);
        c = gs_madd(r2, c, 1.0 / 40320.0, fused);
        c = gs_madd(r2, c, -1.0 / 720.0, fused);
        c = gs_madd(r2, c, 1.0 / 24.0, fused);
        c = gs_madd(r2, c, -0.5, fused);
        double cos_r = gs_madd(r2, c, 1.0, fused);
        double quadrant = q + shift;
        double m = quadrant - 4.0 * gs_round_half_even(quadrant * 0.25);
        double u = m * m;
        double cos_m = (u - 1.0) * (u - 6.0) * (1.0 / 6.0);
        double sin_m = m * (4.0 - u) * (1.0 / 3.0);
        return (float)(cos_m * cos_r - sin_m * sin_r);
    }

    /* out = g * cos(x), or -g * sin(x) if want_sin, for |x| <= GS_TRIG_LIMIT; returns
       whether some x in [start, stop) was outside that range (or not finite). */
    GS_BODY int gs_trig_body(int want_sin, const float* g, const float* x, float* out,
                             Py_ssize_t start, Py_ssize_t stop, int fused) {
        double shift = want_sin ? 3.0 : 0.0;
        float sign = want_sin ? -1.0f : 1.0f;
        int outside = 0;
        Py_ssize_t i;
        for (i = start; i < stop; i++) {
            outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT);
            out[i] = (sign * g[i]) * gs_cos_shifted_f32(x[i], shift, fused);
        }
        return outside;
    }

    static int gs_trig_default(int want_sin, const float* g, const float* x, float* out,
                               Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(want_sin, g, x, out, start, stop, 0);
    }

    #if GS_AVX2_CLONES
    __attribute__((target("avx2,fma")))
    static int gs_trig_avx2(int want_sin, const float* g, const float* x, float* out,
                            Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(want_sin, g, x, out, start, stop, 1);
    }
    #endif

    /* avx2: tensor-core's switch, set only where the CPU has AVX2 and FMA */
    static int gs_trig_backward_f32(int avx2, int want_sin, const float* g, const float* x,
                                    float* out, Py_ssize_t start, Py_ssize_t stop) {
    #if GS_AVX2_CLONES
        if (avx2)
            return gs_trig_avx2(want_sin, g, x, out, start, stop);
    #endif
        return gs_trig_default(want_sin, g, x, out, start, stop);
    }
    """
    float GS_TRIG_LIMIT
    int gs_trig_backward_f32(int avx2, int want_sin, const float* g, const float* x,
                             float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# ---------------------------------------------------------------------------------------
# Element-wise backward formulas with one output: out = f(grad, v)

cdef enum PointwiseOp:
    SIN_BACKWARD
    COS_BACKWARD
    RELU_BACKWARD
    SIGMOID_BACKWARD
    TANH_BACKWARD


# Note [float32 sin and cos]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# glibc's sinf/cosf are scalar and branch on the quadrant of x, so on random data they
# cost ~8 ns per element (mispredicted branches).  For float32 the kernels evaluate cos(x)
# themselves, in float64 and without a branch or an integer conversion, so that the
# compiler vectorises the loop (gs_trig_body in the C block above: ~5 ns per element
# with SSE2, ~1.9 ns with AVX2 and FMA, Note [AVX2 clones]):
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
# correctly rounded value every time (glibc's cosf misses ~1 in 70 by an ulp); the one
# visible difference from libm is sin(-0.0) = +0.0.  |x| > GS_TRIG_LIMIT and non-finite x
# (where the float64 path produces garbage or nan) are rare: a second pass, taken only
# when the first saw one, redoes those elements with libm.  float64 keeps libm's sin/cos,
# which numpy uses too.

cdef void _trig_backward_f32(bint want_sin, const float* g, const float* x, float* out,
                             Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """out = g * cos(x), or -g * sin(x) if want_sin (Note [float32 sin and cos])."""
    cdef float sign = -1 if want_sin else 1
    cdef Py_ssize_t i
    if not gs_trig_backward_f32(kernel_avx2(), want_sin, g, x, out, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TRIG_LIMIT):
            out[i] = (sign * g[i]) * (sinf(x[i]) if want_sin else cosf(x[i]))


# Note [relu_backward follows torch]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch computes ReLU's gradient with threshold_backward: ``0 if out <= 0 else grad``.
# The numpy spelling ``grad * (out > 0)`` differs in two corners: a non-finite grad where
# out <= 0 (inf * 0 is nan; torch gives 0), and out = nan (nan > 0 is False, so numpy
# gives 0; torch passes grad through).  The kernel follows torch.

@cython.cdivision(True)
cdef void _pointwise_range(PointwiseOp op, const real* g, const real* v, real* out,
                           Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """out[i] = op(g[i], v[i]) for i in [start, stop); the evaluation order matches numpy's."""
    # Typed constants: Cython writes the literal 1 as 1.0, a double, which would promote
    # float32 arithmetic to float64 and change the rounding.
    cdef real zero = 0, one = 1, grad_i
    cdef Py_ssize_t i
    if real is float and (op == SIN_BACKWARD or op == COS_BACKWARD):
        _trig_backward_f32(op == COS_BACKWARD, g, v, out, start, stop)
    elif op == SIN_BACKWARD:
        for i in range(start, stop):
            out[i] = g[i] * cos(v[i])
    elif op == COS_BACKWARD:
        for i in range(start, stop):
            out[i] = -g[i] * sin(v[i])
    elif op == RELU_BACKWARD:
        for i in range(start, stop):
            grad_i = g[i]  # loaded unconditionally, so that the select below vectorises
            out[i] = zero if v[i] <= zero else grad_i
    elif op == SIGMOID_BACKWARD:
        for i in range(start, stop):
            out[i] = g[i] * v[i] * (one - v[i])
    else:  # TANH_BACKWARD
        for i in range(start, stop):
            out[i] = g[i] * (one - v[i] * v[i])


cdef void _pointwise(PointwiseOp op, const real* g, const real* v, real* out,
                     Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _pointwise_range(op, g, v, out, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _pointwise_range(op, g, v, out, start, min(start + step, n))


cdef void _pointwise_typed(PointwiseOp op, int typenum, const void* g, const void* v,
                           void* out, Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _pointwise(op, <const float*>g, <const float*>v, <float*>out, n, nthreads)
    else:
        _pointwise(op, <const double*>g, <const double*>v, <double*>out, n, nthreads)


cdef object _run_pointwise(PointwiseOp op, str func, str name, object grad, object v):
    """Check (grad, v), allocate the output and run one element-wise kernel."""
    cdef int typenum = check_kernel_input(func, "grad", grad)
    check_kernel_input(func, name, v)
    check_kernel_same(func, "grad", grad, name, v)
    cdef cnp.ndarray g = <cnp.ndarray>grad
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(g), cnp.PyArray_DIMS(g), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(g)
    cdef bint costly = op == SIN_BACKWARD or op == COS_BACKWARD
    cdef Py_ssize_t threshold = _transcendental_threshold if costly else kernel_parallel_threshold()
    cdef int nthreads = kernel_threads(n, threshold)
    cdef void* gp = cnp.PyArray_DATA(g)
    cdef void* vp = cnp.PyArray_DATA(<cnp.ndarray>v)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if n >= threshold:
        with nogil:
            _pointwise_typed(op, typenum, gp, vp, op_, n, nthreads)
    else:
        _pointwise_typed(op, typenum, gp, vp, op_, n, nthreads)
    return out


def sin_backward(grad, x):
    """Gradient of ``sin``: ``grad * cos(x)`` in one pass.

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    x : ndarray
        The input of ``sin``: same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of `grad`'s shape and dtype.

    Raises
    ------
    TypeError
        If an argument is not an ndarray, or its dtype is not float32/float64, or the
        dtypes differ.
    ValueError
        If the shapes differ or an argument is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import sin_backward
    >>> sin_backward(np.ones(2), np.array([0.0, np.pi]))
    array([ 1., -1.])
    """
    return _run_pointwise(SIN_BACKWARD, "sin_backward", "x", grad, x)


def cos_backward(grad, x):
    """Gradient of ``cos``: ``-grad * sin(x)`` in one pass.

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    x : ndarray
        The input of ``cos``: same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of `grad`'s shape and dtype.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import cos_backward
    >>> cos_backward(np.ones(2), np.array([0.0, np.pi / 2]))
    array([-0., -1.])
    """
    return _run_pointwise(COS_BACKWARD, "cos_backward", "x", grad, x)


def relu_backward(grad, out):
    """Gradient of ``relu`` from its output: ``grad`` where ``out > 0``, else 0.

    This is torch's ``threshold_backward(grad, out, 0)``, which equals
    ``grad * (out > 0)`` except that a non-finite `grad` where ``out <= 0`` gives 0 (not
    nan) and ``out = nan`` passes `grad` through (Note [relu_backward follows torch]).

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    out : ndarray
        The output of ``relu``: same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of `grad`'s shape and dtype.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import relu_backward
    >>> relu_backward(np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.5, -1.0]))
    array([0., 2., 0.])
    """
    return _run_pointwise(RELU_BACKWARD, "relu_backward", "out", grad, out)


def sigmoid_backward(grad, s):
    """Gradient of ``sigmoid`` from its output: ``grad * s * (1 - s)`` in one pass.

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    s : ndarray
        The output of ``sigmoid``: same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of `grad`'s shape and dtype.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import sigmoid_backward
    >>> sigmoid_backward(np.array([1.0, 2.0]), np.array([0.5, 0.25]))
    array([0.25 , 0.375])
    """
    return _run_pointwise(SIGMOID_BACKWARD, "sigmoid_backward", "s", grad, s)


def tanh_backward(grad, t):
    """Gradient of ``tanh`` from its output: ``grad * (1 - t * t)`` in one pass.

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    t : ndarray
        The output of ``tanh``: same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of `grad`'s shape and dtype.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import tanh_backward
    >>> tanh_backward(np.array([1.0, 2.0]), np.array([0.0, 0.5]))
    array([1. , 1.5])
    """
    return _run_pointwise(TANH_BACKWARD, "tanh_backward", "t", grad, t)


# ---------------------------------------------------------------------------------------
# Binary backward formulas: two outputs from one pass over (grad, a, b)

cdef enum BinaryOp:
    MUL_BACKWARD
    DIV_BACKWARD


@cython.cdivision(True)
cdef void _binary_range(BinaryOp op, const real* g, const real* a, const real* b,
                        real* grad_a, real* grad_b, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """(grad_a[i], grad_b[i]) = op's gradients for i in [start, stop), in numpy's order."""
    cdef Py_ssize_t i
    if op == MUL_BACKWARD:
        for i in range(start, stop):
            grad_a[i] = g[i] * b[i]
            grad_b[i] = g[i] * a[i]
    else:  # DIV_BACKWARD
        for i in range(start, stop):
            grad_a[i] = g[i] / b[i]
            grad_b[i] = -g[i] * ((a[i] / b[i]) / b[i])  # torch's order: b * b overflows


cdef void _binary(BinaryOp op, const real* g, const real* a, const real* b,
                  real* grad_a, real* grad_b, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _binary_range(op, g, a, b, grad_a, grad_b, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _binary_range(op, g, a, b, grad_a, grad_b, start, min(start + step, n))


cdef void _binary_typed(BinaryOp op, int typenum, const void* g, const void* a, const void* b,
                        void* grad_a, void* grad_b, Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _binary(op, <const float*>g, <const float*>a, <const float*>b,
                <float*>grad_a, <float*>grad_b, n, nthreads)
    else:
        _binary(op, <const double*>g, <const double*>a, <const double*>b,
                <double*>grad_a, <double*>grad_b, n, nthreads)


cdef object _run_binary(BinaryOp op, str func, object grad, object a, object b):
    """Check (grad, a, b), allocate both outputs and run one binary backward kernel."""
    cdef int typenum = check_kernel_input(func, "grad", grad)
    check_kernel_input(func, "a", a)
    check_kernel_input(func, "b", b)
    check_kernel_same(func, "grad", grad, "a", a)
    check_kernel_same(func, "grad", grad, "b", b)
    cdef cnp.ndarray g = <cnp.ndarray>grad
    cdef int ndim = cnp.PyArray_NDIM(g)
    cdef cnp.ndarray grad_a = cnp.PyArray_EMPTY(ndim, cnp.PyArray_DIMS(g), typenum, 0)
    cdef cnp.ndarray grad_b = cnp.PyArray_EMPTY(ndim, cnp.PyArray_DIMS(g), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(g)
    cdef int nthreads = kernel_threads(n, kernel_parallel_threshold())
    cdef void* gp = cnp.PyArray_DATA(g)
    cdef void* ap = cnp.PyArray_DATA(<cnp.ndarray>a)
    cdef void* bp = cnp.PyArray_DATA(<cnp.ndarray>b)
    cdef void* gap = cnp.PyArray_DATA(grad_a)
    cdef void* gbp = cnp.PyArray_DATA(grad_b)
    if n >= kernel_parallel_threshold():
        with nogil:
            _binary_typed(op, typenum, gp, ap, bp, gap, gbp, n, nthreads)
    else:
        _binary_typed(op, typenum, gp, ap, bp, gap, gbp, n, nthreads)
    return grad_a, grad_b


def mul_backward(grad, a, b):
    """Gradients of ``a * b``: ``(grad * b, grad * a)`` from one pass.

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    a, b : ndarray
        The factors, same shape and dtype as `grad`, C-contiguous (broadcast factors take
        the numpy expression, then `sum_to_shape`).

    Returns
    -------
    (ndarray, ndarray)
        New C-contiguous arrays: the gradient for `a`, then for `b`.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import mul_backward
    >>> mul_backward(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0]))
    (array([ 5., 12.]), array([3., 8.]))
    """
    return _run_binary(MUL_BACKWARD, "mul_backward", grad, a, b)


def div_backward(grad, a, b):
    """Gradients of ``a / b``: ``(grad / b, -grad * ((a / b) / b))`` from one pass (torch's
    order: ``b * b`` would overflow where the quotient does not).

    Parameters
    ----------
    grad : ndarray
        The incoming gradient, float32 or float64, C-contiguous.
    a, b : ndarray
        The numerator and denominator, same shape and dtype as `grad`, C-contiguous.

    Returns
    -------
    (ndarray, ndarray)
        New C-contiguous arrays: the gradient for `a`, then for `b`.  Division by zero
        follows IEEE 754 (inf or nan), as in numpy and torch, without warnings.

    Raises
    ------
    TypeError, ValueError
        As for `sin_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import div_backward
    >>> div_backward(np.array([1.0, 1.0]), np.array([3.0, 4.0]), np.array([2.0, 4.0]))
    (array([0.5 , 0.25]), array([-0.75, -0.25]))
    """
    return _run_binary(DIV_BACKWARD, "div_backward", grad, a, b)
