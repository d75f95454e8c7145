# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, embedsignature.format=clinic
"""The small-array C loops: elementwise float32/float64 ops without numpy's per-call cost.

The kernels of ``_elementwise.pyx`` try these loops first and fall back to numpy's ufuncs
(``_ufuncs.pyx``) when an operand is large, not C-contiguous, or of another dtype.  Each
function returns None when its loop does not apply, and checks the arrays it is given
(dtype, size, layout) before it reads them.

Note [Small float arrays take C loops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Elementwise float32/float64 ops on C-contiguous operands of at most ``SMALL_SIZE``
elements run a plain C loop into an array from ``PyArray_EMPTY``; everything else goes
to numpy's ufuncs, whose SIMD loops win once arrays are large.  Transcendental unary ops
stop earlier (Note [Where the unary C loops stop]).  Both paths compute the same IEEE
operations (the tests compare them).

Note [Where the unary C loops stop]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The unary C loops call libm in double, one element at a time.  numpy's float32 exp, log,
sin, cos and tanh are AVX2 loops several times faster per element, and its sqrt
vectorises where the C loop's (errno-checking) sqrt does not, so past some size the
numpy path (its ~1 us per call, ~3 us for sigmoid's four passes) wins: a float32 tanh of
4096 elements took 64 us in the C loop and 12 us in numpy.  ``unary_limit`` stops each
loop where the two cost the same (medians on one thread, AMD EPYC with AVX2, contiguous
against F-ordered operands of the same size):

    float32   tanh 32, sin/cos 64, exp/log 128, sqrt 256, sigmoid 512
    float64   sqrt 256, tanh 512; exp/log/sin/cos/sigmoid stay within ~5% of numpy
              or beat it up to SMALL_SIZE (sigmoid 24 us vs 30 us at 4096)
    neg, abs and relu beat numpy up to SMALL_SIZE in both dtypes.
"""
cimport numpy as cnp
from libc.math cimport exp, log, sqrt, sin, cos, tanh, fabs, pow
from libc.string cimport memset

import numpy as np

cnp.import_array()

SMALL_SIZE = 4096   # (small_float in _loops.pxd holds the same number)
cdef Py_ssize_t SMALL = 4096

BINARY_CODES = {"add": B_ADD, "sub": B_SUB, "mul": B_MUL, "div": B_DIV}
UNARY_CODES = {
    "neg": U_NEG, "exp": U_EXP, "log": U_LOG, "sqrt": U_SQRT, "sin": U_SIN, "cos": U_COS,
    "tanh": U_TANH, "sigmoid": U_SIGMOID, "relu": U_RELU, "abs": U_ABS,
}
# in-place ops take the loop of their out-of-place op (t.op_() and t.op() give the same bits)
UNARY_CODES.update({name + "_": code for name, code in list(UNARY_CODES.items())})


ctypedef fused real:
    float
    double


cdef inline void _bin_loop(real* out, real* x, real* y, Py_ssize_t n, int code) noexcept nogil:
    cdef Py_ssize_t i
    if code == B_ADD:
        for i in range(n):
            out[i] = x[i] + y[i]
    elif code == B_SUB:
        for i in range(n):
            out[i] = x[i] - y[i]
    elif code == B_MUL:
        for i in range(n):
            out[i] = x[i] * y[i]
    else:
        for i in range(n):
            out[i] = x[i] / y[i]


cdef inline void _bin_scalar_loop(real* out, real* x, real s, Py_ssize_t n, int code,
                                  bint scalar_first) noexcept nogil:
    cdef Py_ssize_t i
    if code == B_ADD:
        for i in range(n):
            out[i] = x[i] + s
    elif code == B_MUL:
        for i in range(n):
            out[i] = x[i] * s
    elif code == B_SUB:
        if scalar_first:
            for i in range(n):
                out[i] = s - x[i]
        else:
            for i in range(n):
                out[i] = x[i] - s
    else:
        if scalar_first:
            for i in range(n):
                out[i] = s / x[i]
        else:
            for i in range(n):
                out[i] = x[i] / s


cdef inline void _un_loop(real* out, real* x, Py_ssize_t n, int code) noexcept nogil:
    cdef Py_ssize_t i
    cdef real v
    cdef double d, e
    if code == U_NEG:
        for i in range(n):
            out[i] = -x[i]
    elif code == U_EXP:
        for i in range(n):
            out[i] = <real>exp(x[i])
    elif code == U_LOG:
        for i in range(n):
            out[i] = <real>log(x[i])
    elif code == U_SQRT:
        for i in range(n):
            out[i] = <real>sqrt(x[i])
    elif code == U_SIN:
        for i in range(n):
            out[i] = <real>sin(x[i])
    elif code == U_COS:
        for i in range(n):
            out[i] = <real>cos(x[i])
    elif code == U_TANH:
        for i in range(n):
            out[i] = <real>tanh(x[i])
    elif code == U_SIGMOID:
        # 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below, with e = exp(-|v|) <= 1: one
        # exp and no branch (the sign of random data defeats prediction), never overflows
        for i in range(n):
            d = x[i]
            e = exp(-fabs(d))
            out[i] = <real>((1.0 if d >= 0 else e) / (1.0 + e))
    elif code == U_RELU:
        for i in range(n):
            v = x[i]
            # as torch's ``x < 0 ? 0 : x``: relu(nan) is nan, relu(-0.0) is -0.0
            out[i] = <real>0 if v < 0 else v
    elif code == U_ABS:
        for i in range(n):
            out[i] = <real>fabs(x[i])


cdef object small_binary(int code, object x, object y):
    """The C loop for ``x (op) y`` when it applies, else None."""
    cdef cnp.ndarray ax, ay, out
    cdef int num
    cdef Py_ssize_t n
    cdef double s
    if cnp.PyArray_Check(x):
        ax = <cnp.ndarray>x
        if not small_float(ax):
            return None
        num = cnp.PyArray_TYPE(ax)
        n = cnp.PyArray_SIZE(ax)
        if cnp.PyArray_Check(y):
            ay = <cnp.ndarray>y
            if cnp.PyArray_TYPE(ay) != num or not cnp.PyArray_ISCARRAY_RO(ay) \
                    or not cnp.PyArray_SAMESHAPE(ax, ay):
                return None
            out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
            if num == cnp.NPY_FLOAT:
                _bin_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                          <float*>cnp.PyArray_DATA(ay), n, code)
            else:
                _bin_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                          <double*>cnp.PyArray_DATA(ay), n, code)
            return out
        if type(y) is float or type(y) is int:
            s = y
            if num == cnp.NPY_FLOAT and s == s and fabs(s) > 3.4028234663852886e38:
                return None  # overflows float32: let numpy decide
            out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                                 <float>s, n, code, False)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                                 s, n, code, False)
            return out
        return None
    if cnp.PyArray_Check(y) and (type(x) is float or type(x) is int):
        ay = <cnp.ndarray>y
        if not small_float(ay):
            return None
        s = x
        num = cnp.PyArray_TYPE(ay)
        if num == cnp.NPY_FLOAT and s == s and fabs(s) > 3.4028234663852886e38:
            return None
        n = cnp.PyArray_SIZE(ay)
        out = cnp.PyArray_EMPTY(ay.ndim, cnp.PyArray_DIMS(ay), num, 0)
        if code == B_ADD or code == B_MUL:
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ay),
                                 <float>s, n, code, False)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ay),
                                 s, n, code, False)
        else:
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ay),
                                 <float>s, n, code, True)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ay),
                                 s, n, code, True)
        return out
    return None


cdef Py_ssize_t unary_limit(int code, int num) noexcept:
    """The largest contiguous array a unary op's C loop takes (Note [Where the unary C
    loops stop]); larger ones go to numpy."""
    if code == U_NEG or code == U_ABS or code == U_RELU:
        return SMALL
    if num == cnp.NPY_FLOAT:
        if code == U_SIGMOID:
            return 512
        if code == U_SQRT:
            return 256
        if code == U_EXP or code == U_LOG:
            return 128
        if code == U_TANH:
            return 32
        return 64                   # sin, cos
    if code == U_SQRT:
        return 256
    if code == U_TANH:
        return 512
    return SMALL                   # exp, log, sin, cos, sigmoid


def _unary_c_limit(str name, dtype):
    """The largest C-contiguous array of numpy ``dtype`` whose ``name`` op takes the C loop
    (0 when the op has none); for tests."""
    cdef int code = UNARY_CODES.get(name, 0)
    cdef int num = np.dtype(dtype).num
    if not code or (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE):
        return 0
    return unary_limit(code, num)


cdef object small_unary(int code, cnp.ndarray ax):
    cdef cnp.ndarray out
    cdef int num
    if not small_float(ax):
        return None
    num = cnp.PyArray_TYPE(ax)
    if cnp.PyArray_SIZE(ax) > unary_limit(code, num):
        return None
    out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
    if num == cnp.NPY_FLOAT:
        _un_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), code)
    else:
        _un_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), code)
    return out


# Note [relu takes its C loop at every size]
# torch's relu is ``x < 0 ? 0 : x`` (nan passes, -0.0 stays -0.0), which no single numpy
# ufunc computes: np.maximum turns -0.0 into +0.0, and np.where(x < 0, 0, x) branches per
# element, ~4 ns each on random signs (530 us for the 256 x 512 activations of an MLP,
# 8x np.maximum and 25x a copy).  The C loop's select compiles to a branch-free compare
# and mask, so relu of a float32/float64 array of any size takes it, after a contiguous
# copy when the input is strided (the numpy path, ``_relu_ufunc``, calls this).

cdef object relu_float(cnp.ndarray x):
    """torch's relu of a float32/float64 array of any size and layout, by the C loop (Note
    [relu takes its C loop at every size]); None for other dtypes."""
    cdef cnp.ndarray ax, out
    cdef int num = cnp.PyArray_TYPE(x)
    if num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE:
        return None
    if not cnp.PyArray_ISCARRAY_RO(x) and cnp.PyArray_ISFARRAY_RO(x):
        return relu_float(x.T).T    # a transposed input keeps its layout, as in torch
    ax = x if cnp.PyArray_ISCARRAY_RO(x) else np.ascontiguousarray(x)
    out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
    if num == cnp.NPY_FLOAT:
        _un_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), U_RELU)
    else:
        _un_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), U_RELU)
    return out


cdef object pow_double_by_number(cnp.ndarray x, double y):
    """``x ** y`` for a float64 array ``x`` by libm's ``pow``, element by element (Note
    [float64 pow by a number takes libm's pow]); None for other dtypes.  The result is a
    new C-contiguous array (a transposed input keeps its layout)."""
    cdef cnp.ndarray ax, out
    cdef Py_ssize_t i, n
    cdef double* o
    cdef const double* a
    if cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE:
        return None
    if not cnp.PyArray_ISCARRAY_RO(x) and cnp.PyArray_ISFARRAY_RO(x):
        return pow_double_by_number(x.T, y).T
    ax = x if cnp.PyArray_ISCARRAY_RO(x) else np.ascontiguousarray(x)
    out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), cnp.NPY_DOUBLE, 0)
    n = cnp.PyArray_SIZE(ax)
    o = <double*>cnp.PyArray_DATA(out)
    a = <const double*>cnp.PyArray_DATA(ax)
    with nogil:
        for i in range(n):
            o[i] = pow(a[i], y)
    return out


cdef object small_sum(cnp.ndarray x):
    """The 0-d sum of a small float array (in a double accumulator), or None."""
    cdef Py_ssize_t i, n
    cdef double acc = 0.0
    cdef cnp.ndarray out
    if not small_float(x):
        return None
    n = cnp.PyArray_SIZE(x)
    if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT:
        for i in range(n):
            acc += (<float*>cnp.PyArray_DATA(x))[i]
    else:
        for i in range(n):
            acc += (<double*>cnp.PyArray_DATA(x))[i]
    out = cnp.PyArray_EMPTY(0, NULL, cnp.PyArray_TYPE(x), 0)
    if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT:
        (<float*>cnp.PyArray_DATA(out))[0] = <float>acc
    else:
        (<double*>cnp.PyArray_DATA(out))[0] = acc
    return out


cdef bint has_zero(cnp.ndarray a):
    """Whether a float32/float64 array holds a zero (a C scan when it is one dense block)."""
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    cdef bint found = False
    cdef float* f
    cdef double* d
    if not (cnp.PyArray_ISCARRAY_RO(a) or cnp.PyArray_ISFARRAY_RO(a)):
        return not np.all(a)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        f = <float*>cnp.PyArray_DATA(a)
        for i in range(n):
            found |= f[i] == 0
    else:
        d = <double*>cnp.PyArray_DATA(a)
        for i in range(n):
            found |= d[i] == 0
    return found


cdef bint sigmoid_tail(cnp.ndarray x, cnp.ndarray out):
    """Redo ``out[i] = exp(x[i])`` where ``out[i]`` is 0 (exp(-x) overflowed: x < -88.7 in
    float32, -709.8 in float64, where sigmoid(x) = e^x / (1 + e^x) rounds to e^x, a
    subnormal or 0), in C when ``x`` and ``out`` share a dense layout; else False."""
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(out)
    cdef float* fx
    cdef float* fo
    cdef double* dx
    cdef double* do
    if cnp.PyArray_TYPE(x) != cnp.PyArray_TYPE(out) or not (
            (cnp.PyArray_ISCARRAY_RO(x) and cnp.PyArray_ISCARRAY_RO(out))
            or (cnp.PyArray_ISFARRAY_RO(x) and cnp.PyArray_ISFARRAY_RO(out))):
        return False
    if cnp.PyArray_TYPE(out) == cnp.NPY_FLOAT:
        fx = <float*>cnp.PyArray_DATA(x)
        fo = <float*>cnp.PyArray_DATA(out)
        for i in range(n):
            if fo[i] == 0:
                fo[i] = <float>exp(fx[i])
    else:
        dx = <double*>cnp.PyArray_DATA(x)
        do = <double*>cnp.PyArray_DATA(out)
        for i in range(n):
            if do[i] == 0:
                do[i] = exp(dx[i])
    return True


# Note [A batched outer product in one pass]
# A per-sample weight gradient (``vmap(grad)`` of a linear layer) is a batched outer
# product ``(B, n, 1) @ (B, 1, m)``, for the first layer of an MLP 64 x 128 x 784 floats
# (26 MB) written per call.  Its cost is the memory pass: numpy's broadcast multiply and
# the +0 that matmul's sum adds (Note [A contraction over one element is a product] in
# _impl_linalg.py) were two passes over the result, 8.9 ms on this host against 3.9 ms
# for one fill.  The loop below writes each element once as ``x_i * y_j + 0`` (without
# -ffast-math the compiler keeps the +0, which turns a -0 product into +0 as a sum does).

cdef inline void _outer_rows(real* out, char* xp, Py_ssize_t xs, char* yp, Py_ssize_t ys,
                             Py_ssize_t n, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef real xi
    cdef real* yrow = <real*>yp
    for i in range(n):
        xi = (<real*>(xp + i * xs))[0]
        if ys == sizeof(real):
            for j in range(m):
                out[j] = xi * yrow[j] + <real>0
        else:
            for j in range(m):
                out[j] = xi * (<real*>(yp + j * ys))[0] + <real>0
        out += m


def batched_outer_product(cnp.ndarray x not None, cnp.ndarray y not None):
    """``x @ y`` for ``x`` of shape ``(..., n, 1)`` and ``y`` of shape ``(..., 1, m)``, both
    float32 or both float64, in one pass (Note [A batched outer product in one pass]).

    The batch dims broadcast as matmul's do; the result is a new C-contiguous array whose
    elements are ``x[..., i, 0] * y[..., 0, j] + 0`` (the +0 of a matmul's sum).  Returns
    None when the operands are not of this form (other dtypes, mixed dtypes, shapes whose
    batch dims do not broadcast): the caller then takes numpy's path, which raises.

    Examples
    --------
    >>> import numpy as np
    >>> batched_outer_product(np.ones((2, 3, 1)), np.arange(4.0).reshape(1, 1, 4)).shape
    (2, 3, 4)
    """
    cdef int num = cnp.PyArray_TYPE(x)
    cdef int nd, k, kx, ky
    cdef Py_ssize_t n, m, count, b, rem, dx, dy, xs_n, ys_m
    cdef cnp.npy_intp dims[32]
    cdef Py_ssize_t xst[32]
    cdef Py_ssize_t yst[32]
    cdef char* xp
    cdef char* yp
    cdef char* op
    cdef cnp.ndarray out
    if (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or cnp.PyArray_TYPE(y) != num:
        return None
    if x.ndim < 2 or y.ndim < 2 or x.shape[x.ndim - 1] != 1 or y.shape[y.ndim - 2] != 1:
        return None
    nd = max(x.ndim, y.ndim)
    if nd > 32:
        return None
    # the batch dims, right-aligned; a dim of size 1 (or absent) has stride 0
    for k in range(nd - 2):
        kx = k - (nd - x.ndim)
        ky = k - (nd - y.ndim)
        dx = x.shape[kx] if kx >= 0 else 1
        dy = y.shape[ky] if ky >= 0 else 1
        if dx != dy and dx != 1 and dy != 1:
            return None
        dims[k] = dx if dy == 1 else dy
        xst[k] = x.strides[kx] if kx >= 0 and dx != 1 else 0
        yst[k] = y.strides[ky] if ky >= 0 and dy != 1 else 0
    n = x.shape[x.ndim - 2]
    m = y.shape[y.ndim - 1]
    dims[nd - 2] = n
    dims[nd - 1] = m
    out = cnp.PyArray_EMPTY(nd, dims, num, 0)
    count = 1
    for k in range(nd - 2):
        count *= dims[k]
    if count == 0 or n == 0 or m == 0:
        return out
    xs_n = x.strides[x.ndim - 2]
    ys_m = y.strides[y.ndim - 1]
    op = <char*>cnp.PyArray_DATA(out)
    with nogil:
        for b in range(count):
            xp = <char*>cnp.PyArray_DATA(x)
            yp = <char*>cnp.PyArray_DATA(y)
            rem = b
            for k in range(nd - 3, -1, -1):
                xp += (rem % dims[k]) * xst[k]
                yp += (rem % dims[k]) * yst[k]
                rem //= dims[k]
            if num == cnp.NPY_FLOAT:
                _outer_rows(<float*>op, xp, xs_n, yp, ys_m, n, m)
                op += n * m * sizeof(float)
            else:
                _outer_rows(<double*>op, xp, xs_n, yp, ys_m, n, m)
                op += n * m * sizeof(double)
    return out


# Note [Zeroing a contiguous array is a memset]
# numpy's ``fill(0)`` copies the scalar with its strided casting loop: 7.1 us for a
# 100x1000 float32 array (zero_grad of TinyModel's first weight), where ``memset`` takes
# 4.0 us.  Zero is all bits zero in every numpy number type gradstack tensors hold (the
# ints, bool, float16/32/64 and complex as +0), so a contiguous array is cleared with
# memset; any other layout keeps ``fill``.

def fill_zero(cnp.ndarray a not None):
    """Write 0 into every element of ``a`` (writable: the caller checked), by memset when
    it is contiguous (Note [Zeroing a contiguous array is a memset]).

    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> fill_zero(a); a.tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    >>> b = np.ones((2, 3), np.int16)[:, ::2]
    >>> fill_zero(b); b.tolist()
    [[0, 0], [0, 0]]
    """
    if not cnp.PyArray_ISWRITEABLE(a):
        raise ValueError("fill_zero: the array is read-only")
    if (cnp.PyArray_ISCONTIGUOUS(a) or cnp.PyArray_ISFORTRAN(a)) \
            and a.dtype.kind in "biufc" and not a.dtype.hasobject:
        memset(cnp.PyArray_DATA(a), 0, cnp.PyArray_NBYTES(a))
    else:
        a.fill(0)
