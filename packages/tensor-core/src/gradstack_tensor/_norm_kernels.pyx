# cython: language_level=3, cdivision=True
"""The row-wise kernels of normalisation: softmax and log_softmax along one dim, layer
norm, each with its backward, fused into one or two passes over each row.

Each kernel replaces a chain of numpy calls (max, subtract, exp, sum, divide: five passes
and four temporaries for a softmax).  The arrays are checked, and the threads set, by
``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels``.  The ops'
kernels (``_impl_reduce.py``'s softmax and log_softmax, ``_impl_nn.py``'s layer_norm)
and graph-engine's backward formulas call them on C-contiguous float32/float64 arrays,
and keep their numpy path for everything else.

Rows
----
A softmax runs along one ``dim`` of a C-contiguous array, seen as ``(outer, n, inner)``:
``inner == 1`` (the last dim) reads each row in place; another dim reduces ``n`` rows of
``inner`` elements at once, with no transposed copy.  Layer norm normalises the last
``normalized`` elements of each row (``x.size // normalized`` rows).  Sums accumulate in
double for both dtypes and are rounded once; the results differ from torch's float32
kernels by at most a few ulps (torch sums in float32, in vector lanes).
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport free, malloc

import numpy as np

from ._kernels cimport (
    _as_float, _check_input, _check_same, kernel_block_size,
    kernel_threads, real,
)

cnp.import_array()

__all__ = ["layer_norm", "layer_norm_backward", "softmax", "softmax_backward"]


cdef extern from *:
    """
    /* Note [float32 exp of the softmax kernels] in _norm_kernels.pyx */
    #include <stdint.h>
    #include <string.h>

    #define GS_NORM_ROUNDER 6755399441055744.0   /* 1.5 * 2**52 */
    #define GS_NORM_LOG2E 1.44269504088896338700e+00
    #define GS_NORM_LN2_HI 6.93147180369123816490e-01
    #define GS_NORM_LN2_LO 1.90821492927058770002e-10

    static inline float gs_norm_expf(float xf) {
        double x = (double)xf;
        double v, t, k, r, p, scale;
        uint64_t bits;
        x = x < -104.0 ? -104.0 : x;          /* exp rounds to 0 in float32 below */
        x = x > 89.0 ? 89.0 : x;              /* and to inf above; NaN passes both */
        v = x * GS_NORM_LOG2E;
        v = v == v ? v : 0.0;                 /* NaN: any k, the polynomial keeps NaN */
        t = v + (GS_NORM_ROUNDER + 1023.0);   /* k + 1023 in the low mantissa bits */
        k = t - (GS_NORM_ROUNDER + 1023.0);
        r = (x - k * GS_NORM_LN2_HI) - k * GS_NORM_LN2_LO;     /* |r| <= 0.35 */
        p = 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        memcpy(&bits, &t, 8);
        bits <<= 52;
        memcpy(&scale, &bits, 8);
        return (float)(p * scale);
    }
    """
    float gs_norm_expf(float x) noexcept nogil


# Note [float32 exp of the softmax kernels]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# libm's expf is a call per element that the compiler cannot vectorise; numpy's float32
# exp is a SIMD loop, so a softmax calling expf would lose to numpy's five passes.
# gs_norm_expf computes exp in double with arithmetic only: k = round(x / ln 2) by the
# 1.5 * 2**52 rounder (which also leaves k + 1023 in the low bits of t, so that 2**k is
# t's bits shifted left by 52, with no int conversion), r = x - k ln 2 (Cody-Waite, ln 2
# split as in fdlibm), exp(r) by its Taylor polynomial to degree 9 (relative error below
# 3e-10 for |r| <= ln 2 / 2), then one rounding to float32: within 1 ulp of the correctly
# rounded value (torch's Sleef expf is within 1 ulp too).  x is clamped to [-104, 89],
# where float32 exp is 0 and inf already; -inf gives 0, NaN stays NaN.  float64 calls
# libm's exp.


cdef inline real _exp(real x) noexcept nogil:
    if real is float:
        return gs_norm_expf(x)
    else:
        return exp(x)


# Note [Threads for the row kernels]
# A softmax spends ~2-4 ns per element (an exp and three passes over a row in cache);
# layer norm ~1-2 ns.  Like sin/cos's (Note [Choosing PARALLEL_THRESHOLD] in
# _kernels.pyx), the team pays from a few thousand elements; the split is by whole rows
# (outer blocks), so a row's sums never depend on the number of threads.  The kernels use
# threads only at or above ROW_THRESHOLD elements (and get_num_threads() > 1).
cdef Py_ssize_t _row_threshold = 1 << 14
ROW_THRESHOLD = _row_threshold


# ---------------------------------------------------------------------------------------
# softmax and log_softmax

cdef void _softmax_row(const real* x, real* y, Py_ssize_t n, bint take_log) noexcept nogil:
    """y = softmax(x) (log_softmax if take_log) over one contiguous row of n > 0."""
    cdef Py_ssize_t j
    cdef real m = x[0]
    cdef real v, e, shift
    cdef double s = 0
    for j in range(1, n):
        v = x[j]
        m = v if (v > m or v != v) else m
    if take_log:
        for j in range(n):
            s += _exp(x[j] - m)
        shift = <real>log(s)
        for j in range(n):
            y[j] = (x[j] - m) - shift
    else:
        for j in range(n):
            e = _exp(x[j] - m)
            y[j] = e
            s += e
        s = 1.0 / s
        for j in range(n):
            y[j] = <real>(y[j] * s)


cdef void _softmax_strided(const real* x, real* y, Py_ssize_t n, Py_ssize_t inner,
                           bint take_log, double* acc, real* mx) noexcept nogil:
    """The same along the middle dim of an (n, inner) block: `inner` columns at once.

    acc and mx hold `inner` values (the sums and the maxima)."""
    cdef Py_ssize_t i, j
    cdef real v, e
    cdef const real* xr
    cdef real* yr
    for i in range(inner):
        mx[i] = x[i]
        acc[i] = 0
    for j in range(1, n):
        xr = x + j * inner
        for i in range(inner):
            v = xr[i]
            mx[i] = v if (v > mx[i] or v != v) else mx[i]
    for j in range(n):
        xr = x + j * inner
        yr = y + j * inner
        for i in range(inner):
            e = _exp(xr[i] - mx[i])
            if not take_log:
                yr[i] = e
            acc[i] += e
    for i in range(inner):
        acc[i] = log(acc[i]) if take_log else 1.0 / acc[i]
    for j in range(n):
        xr = x + j * inner
        yr = y + j * inner
        if take_log:
            for i in range(inner):
                yr[i] = (xr[i] - mx[i]) - <real>acc[i]
        else:
            for i in range(inner):
                yr[i] = <real>(yr[i] * acc[i])


cdef void _softmax_backward_row(const real* g, const real* y, real* out, Py_ssize_t n,
                                bint take_log) noexcept nogil:
    """softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g)."""
    cdef Py_ssize_t j
    cdef double s = 0
    cdef real sr
    if take_log:
        for j in range(n):
            s += g[j]
        sr = <real>s
        for j in range(n):
            out[j] = g[j] - _exp(y[j]) * sr
    else:
        for j in range(n):
            s += g[j] * y[j]
        sr = <real>s
        for j in range(n):
            out[j] = y[j] * (g[j] - sr)


cdef void _softmax_backward_strided(const real* g, const real* y, real* out, Py_ssize_t n,
                                    Py_ssize_t inner, bint take_log,
                                    double* acc) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef const real* gr
    cdef const real* yr
    cdef real* orow
    for i in range(inner):
        acc[i] = 0
    for j in range(n):
        gr = g + j * inner
        yr = y + j * inner
        if take_log:
            for i in range(inner):
                acc[i] += gr[i]
        else:
            for i in range(inner):
                acc[i] += gr[i] * yr[i]
    for j in range(n):
        gr = g + j * inner
        yr = y + j * inner
        orow = out + j * inner
        if take_log:
            for i in range(inner):
                orow[i] = gr[i] - _exp(yr[i]) * <real>acc[i]
        else:
            for i in range(inner):
                orow[i] = yr[i] * (gr[i] - <real>acc[i])


cdef int _softmax_blocks(const real* x, const real* g, real* y, Py_ssize_t start,
                         Py_ssize_t stop, Py_ssize_t n, Py_ssize_t inner, bint take_log,
                         bint backward) noexcept nogil:
    """Outer blocks [start, stop): the forward (g NULL) or backward (x is the output y).

    Returns -1 if the scratch memory of a strided block could not be allocated."""
    cdef Py_ssize_t b, size = n * inner
    cdef double* acc = NULL
    cdef real* mx = NULL
    if inner != 1:
        acc = <double*>malloc(inner * sizeof(double))
        mx = <real*>malloc(inner * sizeof(real))
        if acc == NULL or mx == NULL:
            free(acc)
            free(mx)
            return -1
    for b in range(start, stop):
        if inner == 1:
            if backward:
                _softmax_backward_row(g + b * size, x + b * size, y + b * size, n, take_log)
            else:
                _softmax_row(x + b * size, y + b * size, n, take_log)
        elif backward:
            _softmax_backward_strided(g + b * size, x + b * size, y + b * size, n, inner,
                                      take_log, acc)
        else:
            _softmax_strided(x + b * size, y + b * size, n, inner, take_log, acc, mx)
    free(acc)
    free(mx)
    return 0


cdef int _softmax_run(const real* x, const real* g, real* y, Py_ssize_t outer,
                      Py_ssize_t n, Py_ssize_t inner, bint take_log, bint backward,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    cdef int failed = 0
    if nthreads <= 1 or outer < 2:
        return _softmax_blocks(x, g, y, 0, outer, n, inner, take_log, backward)
    step = kernel_block_size(outer, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < outer:
            if _softmax_blocks(x, g, y, start, min(start + step, outer), n, inner,
                               take_log, backward) != 0:
                failed = 1
    return -failed


cdef tuple _dim_split(cnp.ndarray x, object dim, str func):
    """(outer, n, inner) of C-contiguous `x` around `dim` (checked: an int in range)."""
    cdef int nd = cnp.PyArray_NDIM(x)
    if type(dim) is not int:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}")
    if nd == 0 or not -nd <= dim < nd:
        raise ValueError(
            f"{func}: dim {dim} is out of range for an array with {nd} dimension(s); "
            f"0-d arrays are not supported (use the numpy expression)"
        )
    cdef int d = dim % nd
    cdef Py_ssize_t outer = 1, inner = 1, k
    for k in range(d):
        outer *= x.shape[k]
    for k in range(d + 1, nd):
        inner *= x.shape[k]
    return outer, x.shape[d], inner


cdef object _softmax_call(str func, object x, object g, object dim, bint take_log):
    cdef int typenum = _check_input(func, "output" if g is not None else "x", x)
    if g is not None:
        _check_input(func, "grad", g)
        _check_same(func, "grad", g, "output", x)
    cdef Py_ssize_t outer, n, inner
    outer, n, inner = _dim_split(<cnp.ndarray>x, dim, func)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(
        cnp.PyArray_NDIM(<cnp.ndarray>x), cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(out)
    if size == 0:
        return out
    cdef int nthreads = kernel_threads(size, _row_threshold)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>g) if g is not None else NULL
    cdef void* yp = cnp.PyArray_DATA(out)
    cdef bint backward = g is not None
    cdef int status
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            status = _softmax_run(<const float*>xp, <const float*>gp, <float*>yp, outer, n,
                                  inner, take_log, backward, nthreads)
        else:
            status = _softmax_run(<const double*>xp, <const double*>gp, <double*>yp, outer,
                                  n, inner, take_log, backward, nthreads)
    if status != 0:
        raise MemoryError(f"{func}: could not allocate {inner} elements of scratch memory")
    return out


def softmax(x, dim, log=False):
    """``softmax`` (or ``log_softmax`` if `log`) of `x` along `dim`, as a new array.

    ``exp(x - max) / sum(exp(x - max))``; ``log_softmax`` is ``(x - max) - log(sum(exp(x
    - max)))``.  The maximum and the sum are taken per slice along `dim` (sums in
    double); a slice holding NaN, or +inf, gives NaN, and one of -inf only gives NaN,
    as torch's.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous, at least 1-d (may be empty).
    dim : int
        The dim to normalise along (negative counts from the end).
    log : bool, optional
        Return ``log_softmax`` instead.

    Returns
    -------
    ndarray
        A new C-contiguous array of `x`'s shape and dtype.

    Raises
    ------
    TypeError
        If `x` is not a float32/float64 ndarray or `dim` not an int.
    ValueError
        If `x` is not C-contiguous, is 0-d, or `dim` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softmax
    >>> softmax(np.array([[0.0, np.log(3.0)]]), 1)
    array([[0.25, 0.75]])
    >>> softmax(np.array([[0.0], [np.log(3.0)]]), 0, log=True).round(4)
    array([[-1.3863],
           [-0.2877]])
    """
    return _softmax_call("softmax", x, None, dim, bool(log))


def softmax_backward(grad, output, dim, log=False):
    """The gradient of ``softmax`` (``log_softmax`` if `log`) along `dim`, from its output.

    softmax: ``output * (grad - sum(grad * output))``; log_softmax: ``grad -
    exp(output) * sum(grad)``, the sums along `dim` (in double).

    Parameters
    ----------
    grad, output : ndarray
        The incoming gradient and the forward's result: one shape, one dtype (float32 or
        float64), C-contiguous.
    dim : int
        The forward's dim.
    log : bool, optional
        The forward was ``log_softmax``.

    Returns
    -------
    ndarray
        The gradient of the forward's input, a new C-contiguous array.

    Raises
    ------
    TypeError, ValueError
        As :func:`softmax`; also if `grad` and `output` differ in shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softmax_backward
    >>> softmax_backward(np.array([1.0, 0.0]), np.array([0.25, 0.75]), 0)
    array([ 0.1875, -0.1875])
    """
    return _softmax_call("softmax_backward", output, grad, dim, bool(log))


# ---------------------------------------------------------------------------------------
# layer norm

# Note [Layer norm's moments]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU layer norm takes each row's mean and variance in one pass (Welford, in
# float for float32 inputs) and normalises as ((x - mean) * rstd) * weight + bias.
# Here float32 rows take one pass too, in double, with the sums shifted by the row's
# first element (sum(d) and sum(d * d), d = x - x[0]): the shift keeps E[d^2] - E[d]^2
# from cancelling for rows far from 0, and double holds 29 more bits than the float32
# result needs.  float64 rows take two passes (mean, then the centred squares), as the
# numpy path, so that float64 results keep their last bits (gradcheck).  Then, as torch:
# rstd = 1 / sqrt(var + eps), y = ((x - mean) * rstd) * weight + bias with mean and rstd
# rounded to the dtype (not x * rstd - mean * rstd, which cancels: a row of one element
# must give exactly 0, or bias).

cdef inline void _moments(const real* x, Py_ssize_t n, double eps, double* mean,
                          double* rstd) noexcept nogil:
    cdef Py_ssize_t j
    cdef double s1 = 0, s2 = 0, d, m, var
    cdef double k = x[0]
    if real is float:
        for j in range(n):
            d = x[j] - k
            s1 += d
            s2 += d * d
        d = s1 / n
        var = s2 / n - d * d
        m = k + d
    else:
        for j in range(n):
            s1 += x[j]
        m = s1 / n
        for j in range(n):
            d = x[j] - m
            s2 += d * d
        var = s2 / n
    var = var if var > 0 else 0
    mean[0] = m
    rstd[0] = 1.0 / sqrt(var + eps)


cdef void _ln_rows(const real* x, const real* w, const real* b, real* y, Py_ssize_t start,
                   Py_ssize_t stop, Py_ssize_t n, double eps) noexcept nogil:
    cdef Py_ssize_t r, j
    cdef double mean = 0, rstd = 0
    cdef real m, s
    cdef const real* xr
    cdef real* yr
    for r in range(start, stop):
        xr = x + r * n
        yr = y + r * n
        _moments(xr, n, eps, &mean, &rstd)
        m = <real>mean
        s = <real>rstd
        if w != NULL and b != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) * w[j] + b[j]
        elif w != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) * w[j]
        elif b != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) + b[j]
        else:
            for j in range(n):
                yr[j] = (xr[j] - m) * s


cdef void _ln_forward(const real* x, const real* w, const real* b, real* y, Py_ssize_t rows,
                      Py_ssize_t n, double eps, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1 or rows < 2:
        _ln_rows(x, w, b, y, 0, rows, n, eps)
        return
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            _ln_rows(x, w, b, y, start, min(start + step, rows), n, eps)


cdef void _ln_backward_rows(const real* g, const real* x, const real* w, real* gx,
                            double* gw, double* gb, Py_ssize_t start, Py_ssize_t stop,
                            Py_ssize_t n, double eps) noexcept nogil:
    """gx for rows [start, stop) (if gx), and gw, gb accumulated over them (if not NULL).

    gx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)), gy = g * w, xhat = (x - mean) *
    rstd; gw += g * xhat, gb += g, in double."""
    cdef Py_ssize_t r, j
    cdef double mean = 0, rstd = 0, a, c, xhat, gy
    cdef const real* xr
    cdef const real* gr
    cdef real* gxr
    for r in range(start, stop):
        xr = x + r * n
        gr = g + r * n
        _moments(xr, n, eps, &mean, &rstd)
        if gx != NULL:
            a = 0
            c = 0
            for j in range(n):
                gy = gr[j] * w[j] if w != NULL else gr[j]
                a += gy
                c += gy * (xr[j] - mean)
            a = a / n
            c = c * rstd / n
            gxr = gx + r * n
            for j in range(n):
                gy = gr[j] * w[j] if w != NULL else gr[j]
                xhat = (xr[j] - mean) * rstd
                gxr[j] = <real>(rstd * (gy - a - xhat * c))
        if gw != NULL:
            for j in range(n):
                gw[j] += gr[j] * ((xr[j] - mean) * rstd)
        if gb != NULL:
            for j in range(n):
                gb[j] += gr[j]


cdef void _ln_backward(const real* g, const real* x, const real* w, real* gx, double* gw,
                       double* gb, Py_ssize_t rows, Py_ssize_t n, double eps,
                       int nthreads) noexcept nogil:
    """Threads split gx by rows; gw and gb then take one pass of their own over the rows in
    order, so that their sums do not depend on the number of threads."""
    cdef Py_ssize_t block, start, step
    if nthreads <= 1 or rows < 2 or gx == NULL:
        _ln_backward_rows(g, x, w, gx, gw, gb, 0, rows, n, eps)
        return
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            _ln_backward_rows(g, x, w, gx, NULL, NULL, start, min(start + step, rows), n,
                              eps)
    if gw != NULL or gb != NULL:
        _ln_backward_rows(g, x, w, NULL, gw, gb, 0, rows, n, eps)


cdef Py_ssize_t _ln_check(str func, object x, Py_ssize_t normalized, object weight,
                          object bias) except -1:
    """Check the arrays of a layer norm; return the number of rows."""
    _check_input(func, "x", x)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(<cnp.ndarray>x)
    if normalized < 1 or (size and size % normalized):
        raise ValueError(
            f"{func}: normalized must be a positive divisor of x.size ({size}), got "
            f"{normalized}; pass the product of the normalised trailing dims"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        _check_input(func, name, p)
        if cnp.PyArray_TYPE(<cnp.ndarray>p) != cnp.PyArray_TYPE(<cnp.ndarray>x):
            raise TypeError(
                f"{func}: {name} must have x's dtype ({x.dtype}), got {p.dtype}; cast it "
                f"with {name}.astype(x.dtype)"
            )
        if cnp.PyArray_SIZE(<cnp.ndarray>p) != normalized:
            raise ValueError(
                f"{func}: {name} must have `normalized` ({normalized}) elements, got shape "
                f"{p.shape}"
            )
    return size // normalized if normalized else 0


cdef inline void* _data_or_null(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a) if a is not None else NULL


def layer_norm(x, normalized, weight=None, bias=None, eps=1e-5):
    """Layer norm of each row of `normalized` trailing elements of `x`, as a new array.

    ``(x - mean) / sqrt(var + eps) * weight + bias`` with each row's mean and biased
    variance (Note [Layer norm's moments]), as torch's ``native_layer_norm``.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous; its size a multiple of `normalized` (may be 0).
    normalized : int
        The number of elements per row: the product of the normalised trailing dims.
    weight, bias : ndarray or None, optional
        C-contiguous arrays of `normalized` elements in `x`'s dtype (any shape).
    eps : float, optional
        Added to the variance.

    Returns
    -------
    ndarray
        A new C-contiguous array of `x`'s shape and dtype.

    Raises
    ------
    TypeError
        If an array is not a float32/float64 ndarray, or the dtypes differ.
    ValueError
        If an array is not C-contiguous, or the sizes do not fit `normalized`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import layer_norm
    >>> layer_norm(np.array([[1.0, 3.0], [2.0, 6.0]]), 2, eps=0.0)
    array([[-1.,  1.],
           [-1.,  1.]])
    """
    cdef str func = "layer_norm"
    cdef double e = _as_float(func, "eps", eps)
    cdef Py_ssize_t n = normalized
    cdef Py_ssize_t rows = _ln_check(func, x, n, weight, bias)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(
        cnp.PyArray_NDIM(<cnp.ndarray>x), cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    if rows == 0:
        return out
    cdef int nthreads = kernel_threads(rows * n, _row_threshold)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* wp = _data_or_null(weight)
    cdef void* bp = _data_or_null(bias)
    cdef void* yp = cnp.PyArray_DATA(out)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _ln_forward(<const float*>xp, <const float*>wp, <const float*>bp, <float*>yp,
                        rows, n, e, nthreads)
        else:
            _ln_forward(<const double*>xp, <const double*>wp, <const double*>bp,
                        <double*>yp, rows, n, e, nthreads)
    return out


def layer_norm_backward(grad, x, normalized, weight=None, eps=1e-5, *, input_grad=True,
                        weight_grad=True, bias_grad=True):
    """The gradients of :func:`layer_norm` for `x`, its weight and its bias, in one call.

    Each row's mean and rstd are recomputed as the forward's; then ``gx = rstd * (gy -
    mean(gy) - xhat * mean(gy * xhat))`` with ``gy = grad * weight`` and ``xhat = (x -
    mean) * rstd``, ``gweight = sum(grad * xhat)`` and ``gbias = sum(grad)`` over the rows
    (in double, rounded once).

    Parameters
    ----------
    grad, x : ndarray
        The incoming gradient and the forward's input: one shape and dtype (float32 or
        float64), C-contiguous.
    normalized : int
        The forward's number of elements per row.
    weight : ndarray or None, optional
        The forward's weight (`normalized` elements, `x`'s dtype, C-contiguous).
    eps : float, optional
        The forward's eps.
    input_grad, weight_grad, bias_grad : bool, optional
        Which gradients to compute (the others are None).

    Returns
    -------
    tuple
        ``(gx, gweight, gbias)``: gx of `x`'s shape, the others 1-d of `normalized`
        elements, each a new array in `x`'s dtype, or None when not asked for.

    Raises
    ------
    TypeError, ValueError
        As :func:`layer_norm`; also if `grad` and `x` differ in shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import layer_norm_backward
    >>> gx, gw, gb = layer_norm_backward(np.array([[1.0, 0.0]]), np.array([[1.0, 3.0]]), 2,
    ...                                  eps=0.0)
    >>> gx, gw, gb
    (array([[0., 0.]]), array([-1.,  0.]), array([1., 0.]))
    """
    cdef str func = "layer_norm_backward"
    cdef double e = _as_float(func, "eps", eps)
    cdef Py_ssize_t n = normalized
    cdef Py_ssize_t rows = _ln_check(func, x, n, weight, None)
    _check_input(func, "grad", grad)
    _check_same(func, "grad", grad, "x", x)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    cdef cnp.ndarray gx = None
    cdef cnp.ndarray gw = None
    cdef cnp.ndarray gb = None
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    if input_grad:
        gx = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(<cnp.ndarray>x),
                               cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    if weight_grad:
        gw = cnp.PyArray_ZEROS(1, dims, cnp.NPY_DOUBLE, 0)
    if bias_grad:
        gb = cnp.PyArray_ZEROS(1, dims, cnp.NPY_DOUBLE, 0)
    cdef int nthreads = kernel_threads(rows * n, _row_threshold)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* wp = _data_or_null(weight)
    cdef void* gxp = _data_or_null(gx)
    cdef double* gwp = <double*>_data_or_null(gw)
    cdef double* gbp = <double*>_data_or_null(gb)
    if rows and (gx is not None or gw is not None or gb is not None):
        with nogil:
            if typenum == cnp.NPY_FLOAT:
                _ln_backward(<const float*>gp, <const float*>xp, <const float*>wp,
                             <float*>gxp, gwp, gbp, rows, n, e, nthreads)
            else:
                _ln_backward(<const double*>gp, <const double*>xp, <const double*>wp,
                             <double*>gxp, gwp, gbp, rows, n, e, nthreads)
    if typenum == cnp.NPY_FLOAT:
        gw = gw.astype(np.float32) if gw is not None else None
        gb = gb.astype(np.float32) if gb is not None else None
    return gx, gw, gb

