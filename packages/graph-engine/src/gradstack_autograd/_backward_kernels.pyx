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
The one-input kernels (sin, cos, relu, sigmoid and tanh backward) also take as ``grad`` one
number broadcast to the other operand's shape (``is_broadcast_grad``).  The float32 sin and
cos loop is tensor-core's (``trig_f32_range``, Note [float32 sin and cos]).  Results are
new C-contiguous arrays.  From ``PARALLEL_THRESHOLD`` elements (``TRANSCENDENTAL_THRESHOLD``
for sin and cos) they run on
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
    check_kernel_input, check_kernel_same, kernel_block_size, kernel_parallel_threshold,
    kernel_threads, trig_f32_range,
)
from libc.math cimport cos, sin

cnp.import_array()

__all__ = [
    "TRANSCENDENTAL_THRESHOLD", "cos_backward", "div_backward", "mul_backward",
    "cos_backward_from_sin", "relu_backward", "sigmoid_backward", "sin_backward",
    "sin_backward_from_cos", "square_backward", "tanh_backward",
]

ctypedef fused real:
    float
    double

# sin and cos cost ~2-10 ns per element: two threads win from 2k elements (Note
# [Choosing PARALLEL_THRESHOLD] in tensor-core's _kernels.pyx, where it was measured)
cdef Py_ssize_t _transcendental_threshold = 1 << 11
TRANSCENDENTAL_THRESHOLD = _transcendental_threshold


# ---------------------------------------------------------------------------------------
# Element-wise backward formulas with one output: out = f(grad, v)

cdef enum PointwiseOp:
    SIN_BACKWARD
    COS_BACKWARD
    RELU_BACKWARD
    SIGMOID_BACKWARD
    TANH_BACKWARD
    SQUARE_BACKWARD  # grad * (2 * v): pow(v, 2)'s gradient
    TIMES            # grad * v (sin's gradient from cos(x))
    NEG_TIMES        # (-grad) * v (cos's gradient from sin(x))


# (The float32 sin/cos loop is tensor-core's trig_f32_range: Note [float32 sin and cos]
# in its _float32_transcendentals.pyx; the forward sin and cos of float32 tensors take it
# too.)

# Note [relu_backward follows torch]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch computes ReLU's gradient with threshold_backward: ``0 if out <= 0 else grad``.
# The numpy spelling ``grad * (out > 0)`` differs in two corners: a non-finite grad where
# out <= 0 (inf * 0 is nan; torch gives 0), and out = nan (nan > 0 is False, so numpy
# gives 0; torch passes grad through).  The kernel follows torch.

@cython.cdivision(True)
cdef void _pointwise_range(PointwiseOp op, const real* g, Py_ssize_t g_step, const real* v,
                           real* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """out[i] = op(g[i], v[i]) for i in [start, stop), or op(g[0], v[i]) with g_step 0 (a
    broadcast gradient: Note [A broadcast gradient is one number]); the evaluation order
    matches numpy's."""
    # Typed constants: Cython writes the literal 1 as 1.0, a double, which would promote
    # float32 arithmetic to float64 and change the rounding.
    cdef real zero = 0, one = 1, two = 2, grad_i
    cdef Py_ssize_t i
    if real is float and (op == SIN_BACKWARD or op == COS_BACKWARD):
        # grad * cos(x), or (-grad) * sin(x): the same products as numpy's -grad * sin(x)
        trig_f32_range(op == COS_BACKWARD, -1 if op == COS_BACKWARD else 1, g, g_step, v,
                       out, start, stop)
    elif g_step == 0:
        grad_i = g[0]
        if op == TIMES or op == NEG_TIMES:
            if op == NEG_TIMES:
                grad_i = -grad_i
            for i in range(start, stop):
                out[i] = grad_i * v[i]
        elif op == SIN_BACKWARD:
            for i in range(start, stop):
                out[i] = grad_i * cos(v[i])
        elif op == COS_BACKWARD:
            for i in range(start, stop):
                out[i] = -grad_i * sin(v[i])
        elif op == RELU_BACKWARD:
            for i in range(start, stop):
                out[i] = zero if v[i] <= zero else grad_i
        elif op == SIGMOID_BACKWARD:
            for i in range(start, stop):
                out[i] = grad_i * v[i] * (one - v[i])
        elif op == SQUARE_BACKWARD:
            for i in range(start, stop):
                out[i] = grad_i * (two * v[i])
        else:  # TANH_BACKWARD
            for i in range(start, stop):
                out[i] = grad_i * (one - v[i] * v[i])
    elif op == TIMES:
        for i in range(start, stop):
            out[i] = g[i] * v[i]
    elif op == NEG_TIMES:
        for i in range(start, stop):
            out[i] = -g[i] * v[i]
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
    elif op == SQUARE_BACKWARD:
        for i in range(start, stop):
            out[i] = g[i] * (two * v[i])
    else:  # TANH_BACKWARD
        for i in range(start, stop):
            out[i] = g[i] * (one - v[i] * v[i])


cdef void _pointwise(PointwiseOp op, const real* g, Py_ssize_t g_step, const real* v,
                     real* out, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _pointwise_range(op, g, g_step, v, out, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _pointwise_range(op, g, g_step, v, out, start, min(start + step, n))


cdef void _pointwise_typed(PointwiseOp op, int typenum, const void* g, Py_ssize_t g_step,
                           const void* v, void* out, Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _pointwise(op, <const float*>g, g_step, <const float*>v, <float*>out, n, nthreads)
    else:
        _pointwise(op, <const double*>g, g_step, <const double*>v, <double*>out, n, nthreads)


# Note [A broadcast gradient is one number]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The gradient of ``x.sum()`` (or ``.mean()``) reaches the op before it as one number
# expanded to x's shape: a view whose strides are all 0.  The one-input kernels below take
# such a gradient as it is and read its one element, so ``tanh(...).sum()``'s backward is
# one pass, ``g * (1 - t * t)`` with g a number, where numpy's formula would take three
# (t * t, 1 - ..., g * ...) and a copy of the expanded gradient would take one more.

cdef bint _broadcast_of_one(object grad, object v) noexcept:
    """Whether ``grad`` is a non-empty array of v's shape, dtype and byte order whose
    strides are all 0 (one number, broadcast), v being a kernel operand."""
    cdef cnp.ndarray g, a
    cdef int d
    if not (cnp.PyArray_Check(grad) and cnp.PyArray_Check(v)):
        return False
    g = <cnp.ndarray>grad
    a = <cnp.ndarray>v
    if (cnp.PyArray_TYPE(g) != cnp.PyArray_TYPE(a) or not cnp.PyArray_ISNOTSWAPPED(g)
            or cnp.PyArray_NDIM(g) != cnp.PyArray_NDIM(a) or cnp.PyArray_SIZE(g) == 0
            or not cnp.PyArray_ISALIGNED(g)):
        return False
    for d in range(cnp.PyArray_NDIM(g)):
        if cnp.PyArray_DIM(g, d) != cnp.PyArray_DIM(a, d) or cnp.PyArray_STRIDE(g, d) != 0:
            return False
    return True


def is_broadcast_grad(grad, v):
    """Whether the one-input kernels (``BROADCAST_GRAD_KERNELS``) take ``grad`` as a
    broadcast number against ``v`` (Note [A broadcast gradient is one number]); ``v``
    itself must still be a kernel operand (``gradstack_tensor.kernels.fusable``).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import is_broadcast_grad
    >>> is_broadcast_grad(np.broadcast_to(np.ones(()), (2, 3)), np.zeros((2, 3)))
    True
    >>> is_broadcast_grad(np.ones((2, 3)), np.zeros((2, 3)))
    False
    """
    return _broadcast_of_one(grad, v)


cdef object _run_pointwise(PointwiseOp op, str func, str name, object grad, object v):
    """Check (grad, v), allocate the output and run one element-wise kernel."""
    cdef Py_ssize_t g_step = 1
    cdef int typenum = check_kernel_input(func, name, v)
    if _broadcast_of_one(grad, v):
        g_step = 0
    else:
        check_kernel_input(func, "grad", grad)
        check_kernel_same(func, "grad", grad, name, v)
    cdef cnp.ndarray a = <cnp.ndarray>v
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    cdef bint costly = op == SIN_BACKWARD or op == COS_BACKWARD
    cdef Py_ssize_t threshold = _transcendental_threshold if costly else kernel_parallel_threshold()
    cdef int nthreads = kernel_threads(n, threshold)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* vp = cnp.PyArray_DATA(a)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if n >= threshold:
        with nogil:
            _pointwise_typed(op, typenum, gp, g_step, vp, op_, n, nthreads)
    else:
        _pointwise_typed(op, typenum, gp, g_step, vp, op_, n, nthreads)
    return out


# Note [The kernels' shared docstring sections]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Every kernel below has the same contract: ``grad`` and its operands of one dtype and
# shape, new C-contiguous results, the module's checks.  Its docstring says what it
# computes and shows an example; ``_documented`` writes the Parameters, Returns and Raises
# sections between the two, from the names and roles of its operands.

def _documented(str operands, str role, bint pair=False):
    """Decorator: the kernel's docstring with its Parameters, Returns and Raises sections
    (Note [The kernels' shared docstring sections]); `operands` and `role` name and
    describe the operands besides ``grad``; `pair`: it returns two gradients (``a``'s, then
    ``b``'s) and takes ``grad`` as an array only.  (Cython keeps docstrings dedented.)"""
    if pair:
        grad = "The incoming gradient, float32 or float64, C-contiguous."
        returns = """(ndarray, ndarray)
    New C-contiguous arrays: the gradient for `a`, then for `b`."""
    else:
        grad = """The incoming gradient, float32 or float64, C-contiguous; or one number
    broadcast to the other operand's shape and dtype (all strides 0: Note [A broadcast
    gradient is one number])."""
        returns = """ndarray
    A new C-contiguous array of `grad`'s shape and dtype."""

    def document(kernel):
        if kernel.__doc__ is None:  # (docstrings stripped)
            return kernel
        summary, examples = kernel.__doc__.split("\nExamples\n", 1)
        kernel.__doc__ = f"""{summary}
Parameters
----------
grad : ndarray
    {grad}
{operands} : ndarray
    {role}: same shape and dtype as `grad`, C-contiguous.

Returns
-------
{returns}

Raises
------
TypeError
    If an argument is not an ndarray, or its dtype is not float32/float64, or the
    dtypes differ (the module's checks).
ValueError
    If the shapes differ or an argument is not C-contiguous.

Examples
{examples}"""
        return kernel
    return document


@_documented("x", "The input of ``sin``")
def sin_backward(grad, x):
    """Gradient of ``sin``: ``grad * cos(x)`` in one pass.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import sin_backward
    >>> sin_backward(np.ones(2), np.array([0.0, np.pi]))
    array([ 1., -1.])
    """
    return _run_pointwise(SIN_BACKWARD, "sin_backward", "x", grad, x)


@_documented("x", "The input of ``cos``")
def cos_backward(grad, x):
    """Gradient of ``cos``: ``-grad * sin(x)`` in one pass.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import cos_backward
    >>> cos_backward(np.ones(2), np.array([0.0, np.pi / 2]))
    array([-0., -1.])
    """
    return _run_pointwise(COS_BACKWARD, "cos_backward", "x", grad, x)


@_documented("cos_x", "``cos(x)``")
def sin_backward_from_cos(grad, cos_x):
    """Gradient of ``sin`` from ``cos(x)`` computed by the forward pass: ``grad * cos_x``.

    The forward sin of a float32 tensor that requires grad leaves cos(x) (Note [sin and
    cos from one pass] in tensor-core's _float32_transcendentals.pyx); this is then one
    multiply, where `sin_backward` evaluates cos again.  Same bits as `sin_backward` on
    that x.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import sin_backward_from_cos
    >>> sin_backward_from_cos(np.array([2.0, 3.0]), np.array([0.5, -1.0]))
    array([ 1., -3.])
    """
    return _run_pointwise(TIMES, "sin_backward_from_cos", "cos_x", grad, cos_x)


@_documented("sin_x", "``sin(x)``")
def cos_backward_from_sin(grad, sin_x):
    """Gradient of ``cos`` from ``sin(x)`` computed by the forward pass: ``-grad * sin_x``.

    The counterpart of `sin_backward_from_cos`; same bits as `cos_backward` on that x.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import cos_backward_from_sin
    >>> cos_backward_from_sin(np.array([2.0, 3.0]), np.array([0.5, -1.0]))
    array([-1.,  3.])
    """
    return _run_pointwise(NEG_TIMES, "cos_backward_from_sin", "sin_x", grad, sin_x)


@_documented("out", "The output of ``relu``")
def relu_backward(grad, out):
    """Gradient of ``relu`` from its output: ``grad`` where ``out > 0``, else 0.

    This is torch's ``threshold_backward(grad, out, 0)``, which equals
    ``grad * (out > 0)`` except that a non-finite `grad` where ``out <= 0`` gives 0 (not
    nan) and ``out = nan`` passes `grad` through (Note [relu_backward follows torch]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import relu_backward
    >>> relu_backward(np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.5, -1.0]))
    array([0., 2., 0.])
    """
    return _run_pointwise(RELU_BACKWARD, "relu_backward", "out", grad, out)


@_documented("s", "The output of ``sigmoid``")
def sigmoid_backward(grad, s):
    """Gradient of ``sigmoid`` from its output: ``grad * s * (1 - s)`` in one pass.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import sigmoid_backward
    >>> sigmoid_backward(np.array([1.0, 2.0]), np.array([0.5, 0.25]))
    array([0.25 , 0.375])
    """
    return _run_pointwise(SIGMOID_BACKWARD, "sigmoid_backward", "s", grad, s)


@_documented("t", "The output of ``tanh``")
def tanh_backward(grad, t):
    """Gradient of ``tanh`` from its output: ``grad * (1 - t * t)`` in one pass.

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
                        real* grad_a, real* grad_b, Py_ssize_t start,
                        Py_ssize_t stop) noexcept nogil:
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


cdef tuple _run_binary(BinaryOp op, str func, object grad, object a, object b):
    """Check (grad, a, b), allocate both outputs and run one binary backward kernel."""
    check_kernel_input(func, "grad", grad)
    check_kernel_input(func, "a", a)
    check_kernel_input(func, "b", b)
    check_kernel_same(func, "grad", grad, "a", a)
    check_kernel_same(func, "grad", grad, "b", b)
    return _run_binary_checked(op, <cnp.ndarray>grad, <cnp.ndarray>a, <cnp.ndarray>b)


cdef tuple _run_binary_checked(BinaryOp op, cnp.ndarray g, cnp.ndarray a, cnp.ndarray b):
    """``_run_binary`` on operands already checked: float32 or float64, one dtype and one
    shape, C-contiguous, aligned, native byte order."""
    cdef int typenum = cnp.PyArray_TYPE(g)
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


@_documented("a, b", "The factors (broadcast factors take the numpy expression, then "
             "`sum_to_shape`)", pair=True)
def mul_backward(grad, a, b):
    """Gradients of ``a * b``: ``(grad * b, grad * a)`` from one pass.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import mul_backward
    >>> mul_backward(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0]))
    (array([ 5., 12.]), array([3., 8.]))
    """
    return _run_binary(MUL_BACKWARD, "mul_backward", grad, a, b)


cdef tuple mul_backward_c(cnp.ndarray grad, cnp.ndarray a, cnp.ndarray b):
    return _run_binary_checked(MUL_BACKWARD, grad, a, b)


@_documented("a, b", "The numerator and denominator", pair=True)
def div_backward(grad, a, b):
    """Gradients of ``a / b``: ``(grad / b, -grad * ((a / b) / b))`` from one pass (torch's
    order: ``b * b`` would overflow where the quotient does not).

    Division by zero follows IEEE 754 (inf or nan), as in numpy and torch, without
    warnings.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import div_backward
    >>> div_backward(np.array([1.0, 1.0]), np.array([3.0, 4.0]), np.array([2.0, 4.0]))
    (array([0.5 , 0.25]), array([-0.75, -0.25]))
    """
    return _run_binary(DIV_BACKWARD, "div_backward", grad, a, b)


cdef tuple div_backward_c(cnp.ndarray grad, cnp.ndarray a, cnp.ndarray b):
    return _run_binary_checked(DIV_BACKWARD, grad, a, b)


@_documented("x", "The input of the square")
def square_backward(grad, x):
    """Gradient of ``x ** 2``: ``grad * (2 * x)`` in one pass, torch's
    ``grad * (exponent * x.pow(exponent - 1))`` for exponent 2 (``2 * x`` is exact, so the
    same bits).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_autograd._backward_kernels import square_backward
    >>> square_backward(np.array([1.0, 2.0]), np.array([3.0, -0.5]))
    array([ 6., -2.])
    """
    return _run_pointwise(SQUARE_BACKWARD, "square_backward", "x", grad, x)


# the kernels that take a broadcast gradient (Note [A broadcast gradient is one number])
BROADCAST_GRAD_KERNELS = (
    sin_backward, cos_backward, relu_backward, sigmoid_backward, tanh_backward,
    sin_backward_from_cos, cos_backward_from_sin, square_backward,
)
