# cython: language_level=3
"""Batch normalisation's per-channel passes: the batch statistics (one pass over
memory), the normalisation and the backward sums, each a loop over one channel's ``N * S``
elements of an ``(N, C, *S)`` array (Note [Batch norm follows torch's CPU kernel]).

Every kernel takes C-contiguous float32/float64 arrays (``_kernels.pyx``'s checks, before
any memory is touched) and returns new arrays; channels are split across threads above
the parallel threshold (each channel's sums stay on one thread, so the results do not
depend on the thread count).  Public as ``gradstack_tensor.kernels``.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor.kernels import batch_norm_stats
>>> mean, var = batch_norm_stats(np.array([[1., 10.], [3., 20.]]))
>>> mean, var
(array([ 2., 15.]), array([ 1., 25.]))
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport sqrt
from libc.stdlib cimport free, malloc

from ._kernels cimport (
    _as_float, _check_input, kernel_parallel_threshold, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = [
    "batch_norm_stats",
    "batch_norm_apply",
    "batch_norm_backward",
    "batch_norm_backward_batch_stats",
]

# Note [Batch norm follows torch's CPU kernel]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch 2.13's batch_norm_cpu_collect_stats_contiguous_impl sums each channel in double
# (acc_type of float and double), the mean first, then the squared deviations from it; the
# forward is ``x * alpha + beta`` with ``alpha = invstd * weight`` and ``beta = bias - mean
# * alpha`` per channel in the input's dtype; the backward
# (batch_norm_cpu_backward_contiguous_impl) sums ``dy`` and ``(x - mean) * dy`` in double,
# then ``dx = (dy - sum / n - (x - mean) * dotp * invstd^2 / n) * invstd * weight`` in the
# input's dtype.  These loops do the same, so float32 results are torch's up to the order
# of the double sums.
#
# Note [One pass over memory for the statistics]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A channel is N rows of S contiguous elements (one per sample).  A row of at least
# ROW_PASS_MIN elements is read twice while it is in the L1 cache, for its mean and its
# sum of squared deviations, and the rows are merged as they come (Chan et al.'s parallel
# variance: the merged mean moves by delta * S / (seen + S), the squares gain
# delta^2 * seen * S / (seen + S)).  The channel is read from memory once instead of
# twice, with a double-precision result as exact as the two-pass one.  Shorter rows take
# the two passes over the channel.
#
# Note [Four partial sums]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# One running double sum waits for its previous addition at every element (4 cycles of
# latency); four independent sums over the elements j = 0, 1, 2, 3 mod 4, added at the end
# of each row, run four times as fast.  The order of the additions changes (as torch's
# vectorised sums change it), the result stays a double sum: rounding far below float32's.

#
# Note [Batch norm over (N, C): a pass along the rows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# With one element per (sample, channel) (``BatchNorm1d`` on ``(N, C)``), a channel is a
# column: the loops over one channel would stride through memory by ``C`` elements and
# touch a new cache line at every element.  These inputs take loops along the rows instead,
# as torch's kernel for that layout (its channels-last loops): per-channel double
# accumulators gain a whole row at a time, in row order, so every channel's sums are added
# in the same order as the column loops add them (the same bits), and the rows vectorise.
# Threads split the channels into blocks (each channel's sums stay on one thread).

cdef enum:
    ROW_PASS_MIN = 64   # rows at least this long take the one-pass statistics


cdef struct Layout:
    Py_ssize_t n, c, s          # batch, channels, elements per (sample, channel)


cdef int _layout(str func, str name, object x, Layout* lay) except -1:
    _check_input(func, name, x)
    cdef cnp.ndarray a = <cnp.ndarray>x
    if cnp.PyArray_NDIM(a) < 2:
        raise ValueError(f"{func}: {name} must be (N, C, *), got shape {x.shape}")
    lay.n = cnp.PyArray_DIM(a, 0)
    lay.c = cnp.PyArray_DIM(a, 1)
    lay.s = 1
    for i in range(2, cnp.PyArray_NDIM(a)):
        lay.s *= cnp.PyArray_DIM(a, i)
    return 0


cdef cnp.ndarray _channel_array(str func, str name, object a, Py_ssize_t c, object dtype):
    if (not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != (c,)
            or not a.flags.c_contiguous):
        raise ValueError(
            f"{func}: {name} must be a C-contiguous {np.dtype(dtype)} array of shape ({c},), "
            f"got {type(a).__name__} {getattr(a, 'dtype', '')} {getattr(a, 'shape', '')}"
        )
    return <cnp.ndarray>a


cdef int _threads(const Layout* lay) noexcept nogil:
    cdef int n = kernel_threads(lay.n * lay.c * lay.s, kernel_parallel_threshold())
    return <int>min(<Py_ssize_t>n, lay.c) if lay.c > 0 else 1


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double _row_sum(const real* row, Py_ssize_t n) noexcept nogil:
    """The sum of ``row[:n]`` in double, four partial sums (Note [Four partial sums])."""
    cdef double a0 = 0, a1 = 0, a2 = 0, a3 = 0
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        a0 += row[j]
        a1 += row[j + 1]
        a2 += row[j + 2]
        a3 += row[j + 3]
        j += 4
    while j < n:
        a0 += row[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double _row_squares(const real* row, Py_ssize_t n, double m) noexcept nogil:
    """The sum of ``(row[:n] - m) ** 2`` in double, four partial sums."""
    cdef double a0 = 0, a1 = 0, a2 = 0, a3 = 0, d0, d1, d2, d3
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        d0 = row[j] - m
        d1 = row[j + 1] - m
        d2 = row[j + 2] - m
        d3 = row[j + 3] - m
        a0 += d0 * d0
        a1 += d1 * d1
        a2 += d2 * d2
        a3 += d3 * d3
        j += 4
    while j < n:
        d0 = row[j] - m
        a0 += d0 * d0
        j += 1
    return (a0 + a1) + (a2 + a3)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _stats_channel(const real* x, const Layout* lay, Py_ssize_t c, double* mean,
                         double* var) noexcept nogil:
    cdef Py_ssize_t i
    cdef const real* row
    cdef double total = 0, sq = 0, m = 0, row_mean, delta, seen
    cdef Py_ssize_t count = lay.n * lay.s
    if lay.s < ROW_PASS_MIN:   # short rows: two passes over the channel
        for i in range(lay.n):
            total += _row_sum(x + (i * lay.c + c) * lay.s, lay.s)
        m = total / count if count else 0.0
        for i in range(lay.n):
            sq += _row_squares(x + (i * lay.c + c) * lay.s, lay.s, m)
    else:                      # Note [One pass over memory for the statistics]
        for i in range(lay.n):
            row = x + (i * lay.c + c) * lay.s
            row_mean = _row_sum(row, lay.s) / lay.s
            seen = <double>(i * lay.s)
            delta = row_mean - m
            m += delta * lay.s / (seen + lay.s)
            sq += _row_squares(row, lay.s, row_mean) + delta * delta * seen * lay.s / (
                seen + lay.s)
    mean[c] = m
    var[c] = sq / count if count else 0.0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _stats_columns(const real* x, const Layout* lay, Py_ssize_t c0, Py_ssize_t c1,
                         double* mean, double* var) noexcept nogil:
    """Channels ``c0:c1`` of an ``(N, C)`` input, along the rows (Note [Batch norm over
    (N, C): a pass along the rows])."""
    cdef Py_ssize_t i, c
    cdef const real* row
    cdef double d
    cdef Py_ssize_t n = lay.n
    for c in range(c0, c1):
        mean[c] = 0
        var[c] = 0
    for i in range(n):
        row = x + i * lay.c
        for c in range(c0, c1):
            mean[c] += row[c]
    for c in range(c0, c1):
        mean[c] = mean[c] / n if n else 0.0
    for i in range(n):
        row = x + i * lay.c
        for c in range(c0, c1):
            d = row[c] - mean[c]
            var[c] += d * d
    for c in range(c0, c1):
        var[c] = var[c] / n if n else 0.0


cdef enum:
    COLUMN_BLOCK = 256  # channels a thread takes at a time on the (N, C) layout


cdef void _stats(const real* x, const Layout* lay, double* mean, double* var,
                 int nthreads) noexcept nogil:
    cdef Py_ssize_t c, b, nblocks
    if lay.s == 1:
        nblocks = (lay.c + COLUMN_BLOCK - 1) // COLUMN_BLOCK
        if nthreads <= 1 or nblocks <= 1:
            _stats_columns(x, lay, 0, lay.c, mean, var)
        else:
            for b in prange(nblocks, schedule="static", num_threads=nthreads):
                _stats_columns(x, lay, b * COLUMN_BLOCK, min((b + 1) * COLUMN_BLOCK, lay.c),
                               mean, var)
        return
    if nthreads <= 1:
        for c in range(lay.c):
            _stats_channel(x, lay, c, mean, var)
    else:
        for c in prange(lay.c, schedule="static", num_threads=nthreads):
            _stats_channel(x, lay, c, mean, var)


def batch_norm_stats(x):
    """Each channel's mean and biased variance over the batch and the spatial dims,
    accumulated in float64 (torch's ``batch_norm_cpu_collect_stats``).

    Parameters
    ----------
    x : ndarray
        ``(N, C, *)``, float32 or float64, C-contiguous.

    Returns
    -------
    (ndarray, ndarray)
        float64 ``(C,)`` means and variances (0 for a channel without elements).

    Examples
    --------
    >>> import numpy as np
    >>> batch_norm_stats(np.ones((2, 1, 3), np.float32))
    (array([1.]), array([0.]))
    """
    cdef Layout lay
    _layout("batch_norm_stats", "x", x, &lay)
    cdef cnp.ndarray mean = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray var = np.empty(lay.c, dtype=np.float64)
    cdef double* mp = <double*>cnp.PyArray_DATA(mean)
    cdef double* vp = <double*>cnp.PyArray_DATA(var)
    cdef int nthreads = _threads(&lay)
    if cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT:
        with nogil:
            _stats(<const float*>cnp.PyArray_DATA(<cnp.ndarray>x), &lay, mp, vp, nthreads)
    else:
        with nogil:
            _stats(<const double*>cnp.PyArray_DATA(<cnp.ndarray>x), &lay, mp, vp, nthreads)
    return mean, var


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _apply_channel(const real* x, real* out, const real* alpha, const real* beta,
                         const Layout* lay, Py_ssize_t c) noexcept nogil:
    cdef Py_ssize_t i, j, base
    cdef real a = alpha[c], b = beta[c]
    for i in range(lay.n):
        base = (i * lay.c + c) * lay.s
        for j in range(lay.s):
            out[base + j] = x[base + j] * a + b


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _apply_rows(const real* x, real* out, const real* alpha, const real* beta,
                      const Layout* lay, Py_ssize_t i0, Py_ssize_t i1) noexcept nogil:
    """Rows ``i0:i1`` of an ``(N, C)`` input (Note [Batch norm over (N, C): a pass along
    the rows])."""
    cdef Py_ssize_t i, c, base
    for i in range(i0, i1):
        base = i * lay.c
        for c in range(lay.c):
            out[base + c] = x[base + c] * alpha[c] + beta[c]


cdef void _apply(const real* x, real* out, const real* alpha, const real* beta,
                 const Layout* lay, int nthreads) noexcept nogil:
    cdef Py_ssize_t c, t, step
    if lay.s == 1:
        if nthreads <= 1 or lay.n < 2:
            _apply_rows(x, out, alpha, beta, lay, 0, lay.n)
        else:
            step = (lay.n + nthreads - 1) // nthreads
            for t in prange(nthreads, schedule="static", num_threads=nthreads):
                _apply_rows(x, out, alpha, beta, lay, min(t * step, lay.n),
                            min((t + 1) * step, lay.n))
        return
    if nthreads <= 1:
        for c in range(lay.c):
            _apply_channel(x, out, alpha, beta, lay, c)
    else:
        for c in prange(lay.c, schedule="static", num_threads=nthreads):
            _apply_channel(x, out, alpha, beta, lay, c)


def batch_norm_apply(x, alpha, beta):
    """``x * alpha + beta`` with one ``alpha`` and ``beta`` per channel (dim 1): batch
    norm's output, ``alpha = invstd * weight``, ``beta = bias - mean * alpha``.

    Parameters
    ----------
    x : ndarray
        ``(N, C, *)``, float32 or float64, C-contiguous.
    alpha, beta : ndarray
        ``(C,)`` of ``x``'s dtype, C-contiguous.

    Returns
    -------
    ndarray
        ``x``'s shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> batch_norm_apply(np.ones((1, 2, 2)), np.array([2., 3.]), np.array([0., 1.]))
    array([[[2., 2.],
            [4., 4.]]])
    """
    cdef str func = "batch_norm_apply"
    cdef Layout lay
    _layout(func, "x", x, &lay)
    cdef cnp.ndarray a = _channel_array(func, "alpha", alpha, lay.c, x.dtype)
    cdef cnp.ndarray b = _channel_array(func, "beta", beta, lay.c, x.dtype)
    cdef cnp.ndarray out = np.empty_like(x)
    cdef int nthreads = _threads(&lay)
    if cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT:
        with nogil:
            _apply(<const float*>cnp.PyArray_DATA(<cnp.ndarray>x), <float*>cnp.PyArray_DATA(out),
                   <const float*>cnp.PyArray_DATA(a), <const float*>cnp.PyArray_DATA(b),
                   &lay, nthreads)
    else:
        with nogil:
            _apply(<const double*>cnp.PyArray_DATA(<cnp.ndarray>x),
                   <double*>cnp.PyArray_DATA(out), <const double*>cnp.PyArray_DATA(a),
                   <const double*>cnp.PyArray_DATA(b), &lay, nthreads)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double _row_dot(const real* x, const real* dy, Py_ssize_t n,
                            double m) noexcept nogil:
    """The sum of ``(x[:n] - m) * dy[:n]`` in double, four partial sums."""
    cdef double a0 = 0, a1 = 0, a2 = 0, a3 = 0
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        a0 += (<double>x[j] - m) * dy[j]
        a1 += (<double>x[j + 1] - m) * dy[j + 1]
        a2 += (<double>x[j + 2] - m) * dy[j + 2]
        a3 += (<double>x[j + 3] - m) * dy[j + 3]
        j += 4
    while j < n:
        a0 += (<double>x[j] - m) * dy[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _backward_channel(const real* dy, const real* x, const real* mean,
                            const real* invstd, const real* weight, real* dx,
                            double* sum_dy, double* dotp, const Layout* lay, Py_ssize_t c,
                            bint train) noexcept nogil:
    cdef Py_ssize_t i, j, base
    cdef double total = 0, dot = 0
    cdef real m = mean[c], inv = invstd[c]
    cdef real w = weight[c] if weight != NULL else 1
    cdef Py_ssize_t count = lay.n * lay.s
    cdef real k, grad_mean, scale
    for i in range(lay.n):
        base = (i * lay.c + c) * lay.s
        total += _row_sum(dy + base, lay.s)
        dot += _row_dot(x + base, dy + base, lay.s, m)
    sum_dy[c] = total
    dotp[c] = dot
    if dx == NULL:
        return
    scale = inv * w
    if train and count:
        k = <real>(dot * inv * inv / count)
        grad_mean = <real>(total / count)
        for i in range(lay.n):
            base = (i * lay.c + c) * lay.s
            for j in range(lay.s):
                dx[base + j] = (dy[base + j] - grad_mean - (x[base + j] - m) * k) * scale
    else:
        for i in range(lay.n):
            base = (i * lay.c + c) * lay.s
            for j in range(lay.s):
                dx[base + j] = dy[base + j] * scale


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _backward_sums(const real* dy, const real* x, const real* mean, double* sum_dy,
                         double* dotp, const Layout* lay, Py_ssize_t c0,
                         Py_ssize_t c1) noexcept nogil:
    """The sums of channels ``c0:c1`` of an ``(N, C)`` input, along the rows (Note [Batch
    norm over (N, C): a pass along the rows]): ``_backward_channel``'s, in its order."""
    cdef Py_ssize_t i, c, base
    for c in range(c0, c1):
        sum_dy[c] = 0
        dotp[c] = 0
    for i in range(lay.n):
        base = i * lay.c
        for c in range(c0, c1):
            sum_dy[c] += dy[base + c]
            dotp[c] += (<double>x[base + c] - mean[c]) * dy[base + c]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _backward_rows(const real* dy, const real* x, const real* mean, real* dx,
                         const real* k, const real* grad_mean, const real* scale,
                         const Layout* lay, bint train, Py_ssize_t i0,
                         Py_ssize_t i1) noexcept nogil:
    """Rows ``i0:i1`` of the input's gradient of an ``(N, C)`` input, with
    ``_backward_channel``'s arithmetic per element."""
    cdef Py_ssize_t i, c, base
    for i in range(i0, i1):
        base = i * lay.c
        if train:
            for c in range(lay.c):
                dx[base + c] = (dy[base + c] - grad_mean[c]
                                - (x[base + c] - mean[c]) * k[c]) * scale[c]
        else:
            for c in range(lay.c):
                dx[base + c] = dy[base + c] * scale[c]


@cython.cdivision(True)
cdef int _backward_by_rows(const real* dy, const real* x, const real* mean,
                           const real* invstd, const real* weight, real* dx, double* sum_dy,
                           double* dotp, const Layout* lay, bint train,
                           int nthreads) except -1 nogil:
    cdef Py_ssize_t c, b, t, step, nblocks = (lay.c + COLUMN_BLOCK - 1) // COLUMN_BLOCK
    cdef Py_ssize_t count = lay.n
    cdef real* coef
    cdef real w
    if nthreads <= 1 or nblocks <= 1:
        _backward_sums(dy, x, mean, sum_dy, dotp, lay, 0, lay.c)
    else:
        for b in prange(nblocks, schedule="static", num_threads=nthreads):
            _backward_sums(dy, x, mean, sum_dy, dotp, lay, b * COLUMN_BLOCK,
                           min((b + 1) * COLUMN_BLOCK, lay.c))
    if dx == NULL:
        return 0
    coef = <real*>malloc(3 * lay.c * sizeof(real) + 1)
    if coef == NULL:
        with gil:
            raise MemoryError("batch_norm_backward: no memory for the channel coefficients")
    train = train and count > 0
    for c in range(lay.c):
        w = weight[c] if weight != NULL else 1
        coef[2 * lay.c + c] = invstd[c] * w                            # scale
        if train:
            coef[c] = <real>(dotp[c] * invstd[c] * invstd[c] / count)    # k
            coef[lay.c + c] = <real>(sum_dy[c] / count)                 # grad_mean
    if nthreads <= 1 or lay.n < 2:
        _backward_rows(dy, x, mean, dx, coef, coef + lay.c, coef + 2 * lay.c, lay, train,
                       0, lay.n)
    else:
        step = (lay.n + nthreads - 1) // nthreads
        for t in prange(nthreads, schedule="static", num_threads=nthreads):
            _backward_rows(dy, x, mean, dx, coef, coef + lay.c, coef + 2 * lay.c, lay, train,
                           min(t * step, lay.n), min((t + 1) * step, lay.n))
    free(coef)
    return 0


cdef int _backward(const real* dy, const real* x, const real* mean, const real* invstd,
                   const real* weight, real* dx, double* sum_dy, double* dotp,
                   const Layout* lay, bint train, int nthreads) except -1 nogil:
    cdef Py_ssize_t c
    if lay.s == 1:
        return _backward_by_rows(dy, x, mean, invstd, weight, dx, sum_dy, dotp, lay, train,
                                 nthreads)
    if nthreads <= 1:
        for c in range(lay.c):
            _backward_channel(dy, x, mean, invstd, weight, dx, sum_dy, dotp, lay, c, train)
    else:
        for c in prange(lay.c, schedule="static", num_threads=nthreads):
            _backward_channel(dy, x, mean, invstd, weight, dx, sum_dy, dotp, lay, c, train)
    return 0


def batch_norm_backward(grad, x, mean, invstd, weight, train, need_input):
    """Batch norm's gradients (torch's ``batch_norm_cpu_backward``): the input's (None
    unless ``need_input``), the weight's ``sum((x - mean) * grad) * invstd`` and the
    bias's ``sum(grad)`` per channel.

    Parameters
    ----------
    grad, x : ndarray
        ``(N, C, *)`` of one shape and dtype (float32 or float64), C-contiguous.
    mean, invstd : ndarray
        ``(C,)`` of their dtype: the statistics that normalised ``x`` (the batch's in
        training, the running ones in evaluation).
    weight : ndarray or None
        ``(C,)`` of their dtype, or None for a unit weight.
    train : bool
        Whether the statistics were the batch's (their gradient flows into the input's).
    need_input : bool
        Whether to compute the input's gradient.

    Returns
    -------
    (ndarray or None, ndarray, ndarray)
        The input's gradient, the weight's and the bias's (these two float64 sums, to be
        cast by the caller).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.], [3.]]); one = np.ones(1)
    >>> gx, gw, gb = batch_norm_backward(np.array([[1.], [0.]]), x, np.array([2.]), one,
    ...                                  None, True, True)
    >>> gx.ravel(), gw, gb
    (array([0., 0.]), array([-1.]), array([1.]))
    """
    cdef str func = "batch_norm_backward"
    cdef Layout lay, lay_x
    _layout(func, "grad", grad, &lay)
    _layout(func, "x", x, &lay_x)
    if grad.shape != x.shape or grad.dtype != x.dtype:
        raise ValueError(f"{func}: grad and x must have one shape and dtype, got "
                         f"{grad.dtype} {grad.shape} and {x.dtype} {x.shape}")
    cdef cnp.ndarray m = _channel_array(func, "mean", mean, lay.c, x.dtype)
    cdef cnp.ndarray inv = _channel_array(func, "invstd", invstd, lay.c, x.dtype)
    cdef cnp.ndarray w = None
    if weight is not None:
        w = _channel_array(func, "weight", weight, lay.c, x.dtype)
    cdef cnp.ndarray dx = np.empty_like(x) if need_input else None
    cdef cnp.ndarray sum_dy = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray dotp = np.empty(lay.c, dtype=np.float64)
    cdef double* sp = <double*>cnp.PyArray_DATA(sum_dy)
    cdef double* dp = <double*>cnp.PyArray_DATA(dotp)
    cdef void* wp = cnp.PyArray_DATA(w) if w is not None else NULL
    cdef void* xp = cnp.PyArray_DATA(dx) if dx is not None else NULL
    cdef bint tr = bool(train)
    cdef int nthreads = _threads(&lay)
    if cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT:
        with nogil:
            _backward(<const float*>cnp.PyArray_DATA(<cnp.ndarray>grad),
                      <const float*>cnp.PyArray_DATA(<cnp.ndarray>x),
                      <const float*>cnp.PyArray_DATA(m), <const float*>cnp.PyArray_DATA(inv),
                      <const float*>wp, <float*>xp, sp, dp, &lay, tr, nthreads)
    else:
        with nogil:
            _backward(<const double*>cnp.PyArray_DATA(<cnp.ndarray>grad),
                      <const double*>cnp.PyArray_DATA(<cnp.ndarray>x),
                      <const double*>cnp.PyArray_DATA(m), <const double*>cnp.PyArray_DATA(inv),
                      <const double*>wp, <double*>xp, sp, dp, &lay, tr, nthreads)
    return dx, dotp * inv.astype(np.float64), sum_dy


# Note [Batch norm's backward makes its statistics channel by channel]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A training-mode backward needs the batch's mean and invstd, which the graph does not
# keep: batch_norm_stats over the whole input, then batch_norm_backward, read the input
# from memory twice more than the gradient's passes need.  Channel by channel instead,
# the statistics (_stats_channel, the same sums in the same order) bring the channel into
# the cache (a ResNet channel is 128 KiB of float32) where the backward's two passes find
# it.  mean and invstd are rounded as the two-kernel path rounds them (``mean64`` to the
# dtype, ``1 / sqrt(var64 + eps)`` in double, then to the dtype), so the results are
# the same bits.

@cython.cdivision(True)
cdef void _backward_stats_channel(const real* dy, const real* x, double eps, double* mean64,
                                  double* var64, real* mean, real* invstd,
                                  const real* weight, real* dx, double* sum_dy,
                                  double* dotp, const Layout* lay,
                                  Py_ssize_t c) noexcept nogil:
    _stats_channel(x, lay, c, mean64, var64)
    mean[c] = <real>mean64[c]
    invstd[c] = <real>(1.0 / sqrt(var64[c] + eps))
    _backward_channel(dy, x, mean, invstd, weight, dx, sum_dy, dotp, lay, c, True)


cdef int _backward_stats(const real* dy, const real* x, double eps, double* mean64,
                         double* var64, real* mean, real* invstd, const real* weight,
                         real* dx, double* sum_dy, double* dotp, const Layout* lay,
                         int nthreads) except -1 nogil:
    cdef Py_ssize_t c
    if lay.s == 1:  # (N, C): the statistics along the rows first, then the backward
        _stats(x, lay, mean64, var64, nthreads)
        for c in range(lay.c):
            mean[c] = <real>mean64[c]
            invstd[c] = <real>(1.0 / sqrt(var64[c] + eps))
        return _backward_by_rows(dy, x, mean, invstd, weight, dx, sum_dy, dotp, lay, True,
                                 nthreads)
    if nthreads <= 1:
        for c in range(lay.c):
            _backward_stats_channel(dy, x, eps, mean64, var64, mean, invstd, weight, dx,
                                    sum_dy, dotp, lay, c)
    else:
        for c in prange(lay.c, schedule="static", num_threads=nthreads):
            _backward_stats_channel(dy, x, eps, mean64, var64, mean, invstd, weight, dx,
                                    sum_dy, dotp, lay, c)
    return 0


def batch_norm_backward_batch_stats(grad, x, eps, weight, need_input):
    """:func:`batch_norm_backward` in training mode with the batch's statistics made on
    the way, channel by channel (Note [Batch norm's backward makes its statistics channel
    by channel]): the same values as ``batch_norm_stats`` followed by
    ``batch_norm_backward`` with ``mean64`` and ``1 / sqrt(var64 + eps)`` rounded to the
    input's dtype, with one pass over memory fewer.

    Parameters
    ----------
    grad, x : ndarray
        ``(N, C, *)`` of one shape and dtype (float32 or float64), C-contiguous.
    eps : float
        Added to the variance.
    weight : ndarray or None
        ``(C,)`` of their dtype, or None for a unit weight.
    need_input : bool
        Whether to compute the input's gradient.

    Returns
    -------
    (ndarray or None, ndarray, ndarray)
        As :func:`batch_norm_backward`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.], [3.]])
    >>> gx, gw, gb = batch_norm_backward_batch_stats(np.array([[1.], [0.]]), x, 0.0, None,
    ...                                              True)
    >>> gx.ravel(), gw, gb
    (array([0., 0.]), array([-1.]), array([1.]))
    """
    cdef str func = "batch_norm_backward_batch_stats"
    cdef Layout lay, lay_x
    _layout(func, "grad", grad, &lay)
    _layout(func, "x", x, &lay_x)
    if grad.shape != x.shape or grad.dtype != x.dtype:
        raise ValueError(f"{func}: grad and x must have one shape and dtype, got "
                         f"{grad.dtype} {grad.shape} and {x.dtype} {x.shape}")
    cdef double e = _as_float(func, "eps", eps)
    cdef cnp.ndarray w = None
    if weight is not None:
        w = _channel_array(func, "weight", weight, lay.c, x.dtype)
    cdef cnp.ndarray dx = np.empty_like(x) if need_input else None
    cdef cnp.ndarray sum_dy = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray dotp = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray mean64 = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray var64 = np.empty(lay.c, dtype=np.float64)
    cdef cnp.ndarray m = np.empty(lay.c, dtype=x.dtype)
    cdef cnp.ndarray inv = np.empty(lay.c, dtype=x.dtype)
    cdef double* sp = <double*>cnp.PyArray_DATA(sum_dy)
    cdef double* dp = <double*>cnp.PyArray_DATA(dotp)
    cdef double* mp = <double*>cnp.PyArray_DATA(mean64)
    cdef double* vp = <double*>cnp.PyArray_DATA(var64)
    cdef void* wp = cnp.PyArray_DATA(w) if w is not None else NULL
    cdef void* xp = cnp.PyArray_DATA(dx) if dx is not None else NULL
    cdef int nthreads = _threads(&lay)
    if cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT:
        with nogil:
            _backward_stats(<const float*>cnp.PyArray_DATA(<cnp.ndarray>grad),
                            <const float*>cnp.PyArray_DATA(<cnp.ndarray>x), e, mp, vp,
                            <float*>cnp.PyArray_DATA(m), <float*>cnp.PyArray_DATA(inv),
                            <const float*>wp, <float*>xp, sp, dp, &lay, nthreads)
    else:
        with nogil:
            _backward_stats(<const double*>cnp.PyArray_DATA(<cnp.ndarray>grad),
                            <const double*>cnp.PyArray_DATA(<cnp.ndarray>x), e, mp, vp,
                            <double*>cnp.PyArray_DATA(m), <double*>cnp.PyArray_DATA(inv),
                            <const double*>wp, <double*>xp, sp, dp, &lay, nthreads)
    return dx, dotp * inv.astype(np.float64), sum_dy
