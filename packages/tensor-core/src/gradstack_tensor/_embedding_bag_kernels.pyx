# cython: language_level=3
"""The kernels of ``embedding_bag``: ``embedding_bag_forward`` (the sums, means or maxima
of bags of a table's rows, in one pass over the indices: Note [A bag in one pass]),
``embedding_bag_backward`` (the table's gradient, a scatter-add of the bags' gradient rows)
and ``embedding_bag_per_sample_weights_backward`` (the gradient of the per-sample weights,
one dot product per index).

A bag ``b`` is the run of indices ``[starts[b], ends[b])`` (empty when ``ends[b] <=
starts[b]``).  Every index and bound is checked before any memory is touched; the float
arguments are checked by ``_kernels.pyx``'s shared code.  Public as
``gradstack_tensor.kernels``.
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport int64_t
from libc.string cimport memset

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport (
    _check_float_array, kernel_avx2, kernel_parallel_threshold, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = [
    "embedding_bag_backward",
    "embedding_bag_forward",
    "embedding_bag_per_sample_weights_backward",
]

cdef extern from *:
    """
    /* Note [A bag in one pass]: dst += src * s over a row (s == 1: dst += src), the
       rows' loop of the forward and of the backward; GS_BODY, GS_DISPATCH: _kernels.pxd */
    #define GS_BAG_BODY(name, T)                                                     \
    GS_BODY void name(T* restrict dst, const T* restrict src, T s, Py_ssize_t n) {   \
        Py_ssize_t d;                                                                \
        if (s == (T)1) {                                                             \
            for (d = 0; d < n; d++)                                                  \
                dst[d] = dst[d] + src[d];                                            \
        } else {                                                                     \
            for (d = 0; d < n; d++)                                                  \
                dst[d] = dst[d] + src[d] * s;                                        \
        }                                                                            \
    }
    GS_BAG_BODY(gs_bag_body_f32, float)
    GS_BAG_BODY(gs_bag_body_f64, double)
    static void gs_bag_f32_default(float* dst, const float* src, float s, Py_ssize_t n)
    { gs_bag_body_f32(dst, src, s, n); }
    static void gs_bag_f64_default(double* dst, const double* src, double s, Py_ssize_t n)
    { gs_bag_body_f64(dst, src, s, n); }
    #if GS_AVX2_CLONES
    /* "avx2" without "fma": the product and the sum round separately in both copies */
    __attribute__((target("avx2")))
    static void gs_bag_f32_avx2(float* dst, const float* src, float s, Py_ssize_t n)
    { gs_bag_body_f32(dst, src, s, n); }
    __attribute__((target("avx2")))
    static void gs_bag_f64_avx2(double* dst, const double* src, double s, Py_ssize_t n)
    { gs_bag_body_f64(dst, src, s, n); }
    #endif
    static void gs_bag_f32(int gs_avx2, float* dst, const float* src, float s, Py_ssize_t n)
    { GS_DISPATCH(gs_bag_f32, (dst, src, s, n)); }
    static void gs_bag_f64(int gs_avx2, double* dst, const double* src, double s,
                           Py_ssize_t n)
    { GS_DISPATCH(gs_bag_f64, (dst, src, s, n)); }
    """
    void gs_bag_f32(int avx2, float* dst, const float* src, float s, Py_ssize_t n) noexcept nogil
    void gs_bag_f64(int avx2, double* dst, const double* src, double s,
                    Py_ssize_t n) noexcept nogil


cdef inline void _add_row(real* dst, const real* src, real s, Py_ssize_t n,
                          int avx2) noexcept nogil:
    if real is float:
        gs_bag_f32(avx2, dst, src, s, n)
    else:
        gs_bag_f64(avx2, dst, src, s, n)


cdef enum:
    MODE_SUM = 0
    MODE_MEAN = 1
    MODE_MAX = 2

# Note [A bag in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's embedding_bag (CPU, sum and mean) adds, for each bag in order, the rows its
# indices name (times the per-sample weight) into the bag's output row, then divides a
# mean by the bag's size; padding_idx's entries neither add nor count.  Built from
# embedding + index_add, that is a (indices, dim) copy of the rows, a second pass to add
# them, and in the backward a gather of the gradient rows back to (indices, dim) before
# embedding's scatter-add.  Here the forward reads each named row once and adds it into
# its bag's row (the same additions in the same order as torch's loop: float32 sums equal
# torch's where torch's vectorised add does not fuse the weight into an FMA), and the
# backward adds the bag's gradient row, times the entry's scale (its per-sample weight,
# 1 / bag size for a mean, 1 / the index's count for scale_grad_by_freq), straight into
# the table's gradient row, with no intermediate of the indices' size.
#   - max: the first non-padding entry of a bag sets each element, a later one replaces
#     it only when strictly greater (torch's `weight_item > current_item`: the first of
#     equal maxima wins, and a NaN wins only as the first); the winning row is recorded
#     per element, and the backward adds the gradient there.  An empty bag gives zeros and
#     no gradient (recorded row -1).
#   - threads: the forward splits the bags (each writes its own output row) from
#     kernel_parallel_threshold() elements of rows read (memory-bound, _kernels.pyx's
#     threshold).  The backward's bags may name one row, so it runs on one thread, in
#     index order (the passes it serves are as large as the forward's: a thread split by
#     destination rows would make every thread scan all the indices).


cdef int _mode_code(str func, object mode) except -1:
    if mode == "sum":
        return MODE_SUM
    if mode == "mean":
        return MODE_MEAN
    if mode == "max":
        return MODE_MAX
    raise ValueError(f"{func}: mode must be 'sum', 'mean' or 'max', got {mode!r}")


cdef cnp.ndarray _int64_vector(str func, str name, object obj):
    """`obj` as a 1-d C-contiguous int64 array (checked: an int64 array of one dim)."""
    if not cnp.PyArray_Check(obj):
        raise TypeError(f"{func}: {name} must be a numpy ndarray, got {type(obj).__name__}")
    cdef cnp.ndarray a = <cnp.ndarray>obj
    if a.dtype != np.int64 or not cnp.PyArray_ISNOTSWAPPED(a):
        raise TypeError(
            f"{func}: {name} must be an int64 array, got {a.dtype}; cast it, for example "
            f"{name}.astype(np.int64)"
        )
    if a.ndim != 1:
        raise ValueError(f"{func}: {name} must be 1-d, got shape {(<object>a).shape}")
    return a if cnp.PyArray_ISCARRAY_RO(a) else np.ascontiguousarray(a)


cdef cnp.ndarray _matrix(str func, str name, object obj):
    """A float32/float64 2-d array, C-contiguous (a copy otherwise)."""
    _check_float_array(func, name, obj)
    cdef cnp.ndarray a = <cnp.ndarray>obj
    if a.ndim != 2:
        raise ValueError(f"{func}: {name} must be 2-d, got shape {(<object>a).shape}")
    return a if cnp.PyArray_ISCARRAY_RO(a) else np.ascontiguousarray(a)


cdef object _new(object make, object shape, object dtype):
    """A result array allocated as gradstack's (as _index_kernels.pyx's _result)."""
    enter_op()
    try:
        return make(shape, dtype=dtype)
    finally:
        exit_op()


cdef tuple _check_bags(str func, object indices, object starts, object ends,
                       Py_ssize_t num_weights):
    """The checked (indices, starts, ends) arrays: indices in [0, num_weights), 0 <= starts,
    ends <= len(indices)."""
    cdef cnp.ndarray idx = _int64_vector(func, "indices", indices)
    cdef cnp.ndarray st = _int64_vector(func, "starts", starts)
    cdef cnp.ndarray en = _int64_vector(func, "ends", ends)
    if st.shape[0] != en.shape[0]:
        raise ValueError(
            f"{func}: starts and ends must have one entry per bag, got {st.shape[0]} and "
            f"{en.shape[0]}"
        )
    cdef Py_ssize_t m = idx.shape[0]
    cdef Py_ssize_t bags = st.shape[0]
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(idx)
    cdef const int64_t* sp = <const int64_t*>cnp.PyArray_DATA(st)
    cdef const int64_t* ep = <const int64_t*>cnp.PyArray_DATA(en)
    cdef Py_ssize_t i, bad = -1
    with nogil:
        for i in range(m):
            if ip[i] < 0 or ip[i] >= num_weights:
                bad = i
                break
    if bad >= 0:
        raise IndexError(
            f"{func}: index {ip[bad]} is out of bounds for dimension 0 with size {num_weights}"
        )
    for i in range(bags):
        if sp[i] < 0 or ep[i] > m:
            raise ValueError(
                f"{func}: bag {i} is [{sp[i]}, {ep[i]}), outside the {m} indices; starts must "
                "be >= 0 and ends <= len(indices)"
            )
    return idx, st, en


cdef cnp.ndarray _weights_vector(str func, object psw, int typenum, Py_ssize_t m):
    """The per-sample weights: a 1-d array of the table's dtype, one per index."""
    if psw is None:
        return None
    if _check_float_array(func, "per_sample_weights", psw) != typenum:
        raise TypeError(
            f"{func}: per_sample_weights must have the table's dtype, got {psw.dtype}; cast "
            "it first"
        )
    cdef cnp.ndarray a = <cnp.ndarray>psw
    if a.ndim != 1 or a.shape[0] != m:
        raise ValueError(
            f"{func}: per_sample_weights must have one entry per index ({m},), got shape "
            f"{(<object>a).shape}"
        )
    return a if cnp.PyArray_ISCARRAY_RO(a) else np.ascontiguousarray(a)


# ---------------------------------------------------------------------------------------
# forward


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _bag_forward(real* out, int64_t* arg, const real* w, const int64_t* idx,
                       const real* psw, const int64_t* starts, const int64_t* ends,
                       Py_ssize_t b, Py_ssize_t dim, int mode,
                       int64_t pad) noexcept nogil:
    """Output row `b` (and, for max, its winning rows `arg`)."""
    cdef int avx2 = kernel_avx2()
    cdef real* o = out + b * dim
    cdef int64_t* a = arg + b * dim if mode == MODE_MAX else NULL
    cdef const real* row
    cdef Py_ssize_t i, d
    cdef int64_t k, count = 0
    cdef real s
    for d in range(dim):
        o[d] = 0
    if mode == MODE_MAX:
        for d in range(dim):
            a[d] = -1
    for i in range(starts[b], ends[b]):
        k = idx[i]
        if k == pad:
            continue
        row = w + k * dim
        if mode == MODE_MAX:
            if count == 0:
                for d in range(dim):
                    o[d] = row[d]
                    a[d] = k
            else:
                for d in range(dim):
                    if row[d] > o[d]:
                        o[d] = row[d]
                        a[d] = k
        else:
            _add_row(o, row, psw[i] if psw != NULL else 1, dim, avx2)
        count += 1
    if mode == MODE_MEAN and count > 1:
        s = <real>count
        for d in range(dim):
            o[d] = o[d] / s


cdef void _forward(real* out, int64_t* arg, const real* w, const int64_t* idx,
                   const real* psw, const int64_t* starts, const int64_t* ends,
                   Py_ssize_t bags, Py_ssize_t dim, int mode, int64_t pad,
                   int nthreads) noexcept nogil:
    cdef Py_ssize_t b
    if nthreads <= 1:
        for b in range(bags):
            _bag_forward(out, arg, w, idx, psw, starts, ends, b, dim, mode, pad)
        return
    for b in prange(bags, schedule="static", num_threads=nthreads):
        _bag_forward(out, arg, w, idx, psw, starts, ends, b, dim, mode, pad)


def embedding_bag_forward(weight, indices, starts, ends, mode, per_sample_weights=None,
                          padding_idx=-1):
    """The bags' sums, means or maxima of ``weight``'s rows (Note [A bag in one pass]).

    Parameters
    ----------
    weight : ndarray
        ``(num_weights, dim)``, float32 or float64 (a non-contiguous one is copied).
    indices : ndarray
        1-d int64, each in ``[0, num_weights)``.
    starts, ends : ndarray
        1-d int64, one per bag: bag ``b`` is ``indices[starts[b]:ends[b]]`` (empty when
        ``ends[b] <= starts[b]``); ``0 <= starts``, ``ends <= len(indices)``.
    mode : {'sum', 'mean', 'max'}
    per_sample_weights : ndarray, optional
        1-d, one per index, ``weight``'s dtype; each row is scaled by it (``'sum'`` only).
    padding_idx : int, optional
        Entries naming this row are left out of their bag (``-1``: none).

    Returns
    -------
    out : ndarray
        ``(bags, dim)``, ``weight``'s dtype; an empty bag gives zeros.
    max_rows : ndarray or None
        For ``'max'``: ``(bags, dim)`` int64, the row each element came from (``-1`` in an
        empty bag), for :func:`embedding_bag_backward`; else None.

    Raises
    ------
    TypeError, ValueError, IndexError
        For a wrong dtype, shape, mode or bound, or an index out of range (before any
        write).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import embedding_bag_forward
    >>> w = np.arange(10.0).reshape(5, 2)
    >>> idx, st, en = np.array([0, 1, 4, 2]), np.array([0, 3]), np.array([3, 4])
    >>> embedding_bag_forward(w, idx, st, en, "sum")[0]
    array([[10., 13.],
           [ 4.,  5.]])
    >>> out, rows = embedding_bag_forward(w, idx, st, en, "max")
    >>> out, rows
    (array([[8., 9.],
           [4., 5.]]), array([[4, 4],
           [2, 2]]))
    """
    cdef str func = "embedding_bag_forward"
    cdef int code = _mode_code(func, mode)
    cdef cnp.ndarray w = _matrix(func, "weight", weight)
    cdef int typenum = cnp.PyArray_TYPE(w)
    cdef Py_ssize_t nw = w.shape[0]
    cdef Py_ssize_t dim = w.shape[1]
    idx, st, en = _check_bags(func, indices, starts, ends, nw)
    cdef cnp.ndarray psw = _weights_vector(func, per_sample_weights, typenum, idx.shape[0])
    if psw is not None and code != MODE_SUM:
        raise ValueError(f"{func}: per_sample_weights are only supported with mode='sum'")
    cdef int64_t pad = padding_idx
    cdef Py_ssize_t bags = st.shape[0]
    cdef cnp.ndarray out = _new(np.empty, (bags, dim), w.dtype)
    cdef cnp.ndarray arg = _new(np.empty, (bags, dim), np.int64) if code == MODE_MAX else None
    cdef int64_t* ap = <int64_t*>cnp.PyArray_DATA(arg) if arg is not None else NULL
    cdef const void* pp = cnp.PyArray_DATA(psw) if psw is not None else NULL
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(idx)
    cdef const int64_t* sp = <const int64_t*>cnp.PyArray_DATA(st)
    cdef const int64_t* ep = <const int64_t*>cnp.PyArray_DATA(en)
    cdef void* op = cnp.PyArray_DATA(out)
    cdef const void* wp = cnp.PyArray_DATA(w)
    cdef int nthreads = kernel_threads(idx.shape[0] * dim, kernel_parallel_threshold())
    if nthreads > bags:
        nthreads = 1
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _forward(<float*>op, ap, <const float*>wp, ip, <const float*>pp, sp, ep, bags, dim,
                     code, pad, nthreads)
        else:
            _forward(<double*>op, ap, <const double*>wp, ip, <const double*>pp, sp, ep, bags,
                     dim, code, pad, nthreads)
    return out, arg


# ---------------------------------------------------------------------------------------
# backward


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _backward(real* gw, const real* g, const int64_t* idx, const real* psw,
                    const int64_t* starts, const int64_t* ends, const int64_t* arg,
                    const int64_t* freq, Py_ssize_t bags, Py_ssize_t dim, int mode,
                    int64_t pad) noexcept nogil:
    cdef Py_ssize_t b, i, d
    cdef int64_t k, count
    cdef real s
    cdef const real* src
    cdef int avx2 = kernel_avx2()
    for b in range(bags):
        src = g + b * dim
        if mode == MODE_MAX:
            for d in range(dim):
                k = arg[b * dim + d]
                if k >= 0:
                    s = src[d]
                    if freq != NULL:
                        s = s / <real>freq[k]
                    gw[k * dim + d] += s
            continue
        count = 1
        if mode == MODE_MEAN:
            count = 0
            for i in range(starts[b], ends[b]):
                if idx[i] != pad:
                    count += 1
        for i in range(starts[b], ends[b]):
            k = idx[i]
            if k == pad:
                continue
            s = 1  # torch's order: the frequency, the bag size, the weight
            if freq != NULL:
                s = s / <real>freq[k]
            if count > 1:
                s = s / <real>count
            if psw != NULL:
                s = s * psw[i]
            _add_row(gw + k * dim, src, s, dim, avx2)


def embedding_bag_backward(grad, indices, starts, ends, num_weights, mode,
                           per_sample_weights=None, padding_idx=-1, scale_grad_by_freq=False,
                           max_rows=None):
    """The gradient of ``weight`` in :func:`embedding_bag_forward`: each bag's gradient row
    added into zeros ``(num_weights, dim)`` at the rows its entries name, times the entry's
    per-sample weight, ``1 / bag size`` (``'mean'``) and ``1 / count of the index in
    indices`` (``scale_grad_by_freq``); for ``'max'``, each element's gradient added at the
    row ``max_rows`` names (Note [A bag in one pass]).

    Parameters
    ----------
    grad : ndarray
        ``(bags, dim)``, float32 or float64.
    indices, starts, ends, mode, per_sample_weights, padding_idx
        As :func:`embedding_bag_forward` (``per_sample_weights`` of grad's dtype).
    num_weights : int
        The table's number of rows.
    scale_grad_by_freq : bool, optional
        Divide by the number of times ``indices`` names the row (all of ``indices``).
    max_rows : ndarray, optional
        The second result of :func:`embedding_bag_forward` (``'max'`` only, required).

    Returns
    -------
    ndarray
        ``(num_weights, dim)``, grad's dtype, C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import embedding_bag_backward
    >>> g = np.array([[1., 2.], [3., 4.]])
    >>> idx, st, en = np.array([0, 1, 0, 2]), np.array([0, 3]), np.array([3, 4])
    >>> embedding_bag_backward(g, idx, st, en, 3, "mean")
    array([[0.66666667, 1.33333333],
           [0.33333333, 0.66666667],
           [3.        , 4.        ]])
    """
    cdef str func = "embedding_bag_backward"
    cdef int code = _mode_code(func, mode)
    cdef cnp.ndarray g = _matrix(func, "grad", grad)
    cdef int typenum = cnp.PyArray_TYPE(g)
    cdef Py_ssize_t nw = num_weights
    if nw < 0:
        raise ValueError(f"{func}: num_weights must be >= 0, got {nw}")
    idx, st, en = _check_bags(func, indices, starts, ends, nw)
    cdef Py_ssize_t bags = st.shape[0]
    cdef Py_ssize_t dim = g.shape[1]
    if g.shape[0] != bags:
        raise ValueError(
            f"{func}: grad must have one row per bag ({bags}), got {(<object>g).shape}"
        )
    cdef cnp.ndarray psw = _weights_vector(func, per_sample_weights, typenum, idx.shape[0])
    cdef cnp.ndarray arg = None
    if code == MODE_MAX:
        if max_rows is None:
            raise ValueError(f"{func}: mode='max' needs max_rows, embedding_bag_forward's rows")
        if not cnp.PyArray_Check(max_rows) or max_rows.dtype != np.int64:
            raise TypeError(f"{func}: max_rows must be an int64 array")
        if max_rows.shape != (<object>g).shape:
            raise ValueError(
                f"{func}: max_rows must have grad's shape {(<object>g).shape}, got {max_rows.shape}"
            )
        arg = np.ascontiguousarray(max_rows)
        if arg.size and (arg.min() < -1 or arg.max() >= nw):
            raise IndexError(f"{func}: max_rows holds a row outside [-1, {nw})")
    cdef cnp.ndarray freq_arr = None
    cdef const int64_t* fp = NULL
    if scale_grad_by_freq and idx.shape[0]:
        freq_arr = np.bincount(idx, minlength=nw).astype(np.int64, copy=False)
        fp = <const int64_t*>cnp.PyArray_DATA(freq_arr)
    cdef cnp.ndarray out = _new(np.empty, (nw, dim), g.dtype)
    cdef void* op = cnp.PyArray_DATA(out)
    memset(op, 0, <size_t>(nw * dim * cnp.PyArray_ITEMSIZE(out)))
    cdef int64_t pad = padding_idx
    cdef const void* gp = cnp.PyArray_DATA(g)
    cdef const void* pp = cnp.PyArray_DATA(psw) if psw is not None else NULL
    cdef const int64_t* ap = <const int64_t*>cnp.PyArray_DATA(arg) if arg is not None else NULL
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(idx)
    cdef const int64_t* sp = <const int64_t*>cnp.PyArray_DATA(st)
    cdef const int64_t* ep = <const int64_t*>cnp.PyArray_DATA(en)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _backward(<float*>op, <const float*>gp, ip, <const float*>pp, sp, ep, ap, fp, bags,
                      dim, code, pad)
        else:
            _backward(<double*>op, <const double*>gp, ip, <const double*>pp, sp, ep, ap, fp,
                      bags, dim, code, pad)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _psw_backward(real* gp, const real* g, const real* w, const int64_t* idx,
                        const int64_t* starts, const int64_t* ends, Py_ssize_t bags,
                        Py_ssize_t dim, int64_t pad) noexcept nogil:
    cdef Py_ssize_t b, i, d
    cdef const real* src
    cdef const real* row
    cdef real s
    for b in range(bags):
        src = g + b * dim
        for i in range(starts[b], ends[b]):
            if idx[i] == pad:
                continue
            row = w + idx[i] * dim
            s = 0
            for d in range(dim):
                s = s + src[d] * row[d]
            gp[i] = gp[i] + s


def embedding_bag_per_sample_weights_backward(grad, weight, indices, starts, ends,
                                              padding_idx=-1):
    """The gradient of the per-sample weights of a ``'sum'`` :func:`embedding_bag_forward`:
    for each index, the dot product of its bag's gradient row and the row it names (summed
    over the bags that hold it; 0 for a padding entry or one in no bag).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import embedding_bag_per_sample_weights_backward
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> g = np.array([[1., 1.], [1., -1.]])
    >>> idx, st, en = np.array([0, 2, 1]), np.array([0, 2]), np.array([2, 3])
    >>> embedding_bag_per_sample_weights_backward(g, w, idx, st, en)
    array([ 1.,  9., -1.])
    """
    cdef str func = "embedding_bag_per_sample_weights_backward"
    cdef cnp.ndarray g = _matrix(func, "grad", grad)
    cdef cnp.ndarray w = _matrix(func, "weight", weight)
    cdef int typenum = cnp.PyArray_TYPE(g)
    if cnp.PyArray_TYPE(w) != typenum:
        raise TypeError(f"{func}: grad and weight must have one dtype, got {g.dtype} and "
                        f"{w.dtype}")
    idx, st, en = _check_bags(func, indices, starts, ends, w.shape[0])
    cdef Py_ssize_t bags = st.shape[0]
    cdef Py_ssize_t dim = w.shape[1]
    if g.shape[0] != bags or g.shape[1] != dim:
        raise ValueError(f"{func}: grad must be ({bags}, {dim}), got {(<object>g).shape}")
    cdef cnp.ndarray out = _new(np.zeros, (idx.shape[0],), g.dtype)
    cdef int64_t pad = padding_idx
    cdef void* op = cnp.PyArray_DATA(out)
    cdef const void* gp = cnp.PyArray_DATA(g)
    cdef const void* wp = cnp.PyArray_DATA(w)
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(idx)
    cdef const int64_t* sp = <const int64_t*>cnp.PyArray_DATA(st)
    cdef const int64_t* ep = <const int64_t*>cnp.PyArray_DATA(en)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _psw_backward(<float*>op, <const float*>gp, <const float*>wp, ip, sp, ep, bags, dim,
                          pad)
        else:
            _psw_backward(<double*>op, <const double*>gp, <const double*>wp, ip, sp, ep, bags,
                          dim, pad)
    return out
