# cython: language_level=3
"""The indexing kernels: ``take_rows`` (embedding's forward, a take along rows),
``embedding_backward`` (its gradient, a scatter-add of rows: Note [Embedding's backward is
a scatter-add of rows]) and ``scatter_add_`` (the scatter-add behind the backward of
getitem with an integer index, index_select, gather, unfold and the ``*_add`` writes: Note
[One strided scatter-add]), ``scatter_`` (its writing twin: scatter and scatter's backward)
and ``gather``.

Every index is checked against its dimension before any memory is touched (an IndexError
names the first bad index; gather, which writes only its own result, checks each index
before it reads through it: Note [gather checks as it reads]); the float arguments are
checked by ``_kernels.pyx``'s shared code.  Public as ``gradstack_tensor.kernels``.
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport (
    _check_float_array, kernel_block_size, kernel_parallel_threshold, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = [
    "embedding_backward", "gather", "result_empty", "result_zeros", "scatter_", "scatter_add_",
    "take_rows",
]

# Note [Embedding's backward is a scatter-add of rows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's embedding_dense_backward_cpu starts from zeros (num_weights, dim) and, for each
# index i in order, adds grad's row i into row k = indices[i] (skipping padding_idx), times
# 1 / count[k] under scale_grad_by_freq (``add_(grad[i], alpha=scale)``).  This kernel does
# the same additions in the same order, with no one-hot matrix, no sort and no temporary:
# float32 sums equal torch's whenever torch's vectorised add does not fuse the scale into an
# FMA (it cannot when the scale is 1).  Threads split the *destination rows* as torch's
# parallel_for does: each thread scans every index and adds only the rows of its range, so
# a row's sum is formed in index order whatever the thread count (deterministic), and no
# two threads write one row.  A thread pays a scan of all the indices, so the split is
# worth it from kernel_parallel_threshold() gradient elements on (the memory-bound
# threshold of _kernels.pyx), and only with at least two destination rows per thread.
#
# Note [One strided scatter-add]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``scatter_add_(out, dim, index, src)`` is torch's scatter_add_: for every position p of
# ``index`` (which has src's shape), ``out[p with p[dim] := index[p]] += src[p]``.  The
# index_add form (a 1-d index of slices along dim) is the same call with the index
# broadcast along the other dims (stride 0), so one loop serves both: it walks index/src in
# C order with element strides (any layout, no copy), and when the index is constant along
# the last axis (index_add, embedding) adds whole rows in a loop the compiler vectorises.
# It runs on one thread: with repeated indices, threads would have to split by destination
# (as embedding_backward does), which a general ``dim`` makes a scan per thread of all of
# src; the backward passes it serves are small next to their forward's.


cdef int _index_typenum(str func, str name, object obj) except -1:
    if not cnp.PyArray_Check(obj):
        raise TypeError(f"{func}: {name} must be a numpy ndarray, got {type(obj).__name__}")
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>obj)
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(<cnp.ndarray>obj)
    if (not cnp.PyTypeNum_ISSIGNED(typenum) or (item != 4 and item != 8)
            or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>obj)):
        raise TypeError(
            f"{func}: {name} must be an int32 or int64 array, got {obj.dtype}; cast it, for "
            f"example {name}.astype(np.int64)"
        )
    return typenum


cdef object _result(object make, object shape, object dtype):
    """A result array, allocated as gradstack's (the block cache may serve it: Note [Large
    blocks are reused, not returned to the kernel] in _allocator.pyx), since the kernels
    also run outside an op (graph-engine's backward formulas)."""
    enter_op()
    try:
        return make(shape, dtype=dtype)
    finally:
        exit_op()


cdef bint _plain(cnp.ndarray a) noexcept:
    """C-contiguous and aligned: its data can be read through a typed pointer."""
    return cnp.PyArray_ISCARRAY_RO(a)


cdef bint _is64(cnp.ndarray a) noexcept:
    return cnp.PyArray_ITEMSIZE(a) == 8


cdef int _element_strides(str func, str name, cnp.ndarray a, Py_ssize_t* out) except -1:
    """`a`'s strides in elements (its data must be aligned, as numpy's own arrays are)."""
    cdef int d
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(a)
    if not cnp.PyArray_ISALIGNED(a):
        raise ValueError(f"{func}: {name} is not aligned; pass a copy ({name}.copy())")
    for d in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDE(a, d) % item:
            raise ValueError(f"{func}: {name}'s strides are not whole elements; pass a copy")
        out[d] = cnp.PyArray_STRIDE(a, d) // item
    return 0


# -------------------------------------------------------------------------------------
# take_rows


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _first_bad_flat(const char* idx, bint is64, Py_ssize_t m,
                                int64_t n) noexcept nogil:
    """The position of the first index outside [0, n) among `m` contiguous ones, or -1."""
    cdef Py_ssize_t i
    cdef int64_t k
    for i in range(m):
        k = _index_at(idx, i, is64)
        if k < 0 or k >= n:
            return i
    return -1


def take_rows(weight, indices):
    """``weight[indices]`` for a 2-d ``weight``: the rows it names, copied in one pass.

    Parameters
    ----------
    weight : ndarray
        ``(num_rows, width)``, C-contiguous, of any numeric dtype.
    indices : ndarray
        int32 or int64, C-contiguous, any shape; each in ``[0, num_rows)``.

    Returns
    -------
    ndarray
        ``indices.shape + (width,)``, weight's dtype.

    Raises
    ------
    TypeError
        If an argument is not an ndarray, ``indices`` is not int32/int64 or ``weight``
        holds Python objects.
    ValueError
        If ``weight`` is not 2-d or an array is not C-contiguous.
    IndexError
        If an index is negative or not below ``num_rows`` (checked before any copy).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import take_rows
    >>> take_rows(np.arange(6.0).reshape(3, 2), np.array([2, 0, 2]))
    array([[4., 5.],
           [0., 1.],
           [4., 5.]])
    """
    cdef str func = "take_rows"
    if not cnp.PyArray_Check(weight):
        raise TypeError(f"{func}: weight must be a numpy ndarray, got {type(weight).__name__}")
    _index_typenum(func, "indices", indices)
    cdef cnp.ndarray w = <cnp.ndarray>weight
    cdef cnp.ndarray idx = <cnp.ndarray>indices
    if w.dtype.hasobject:
        raise TypeError(f"{func}: weight holds Python objects ({w.dtype}); pass numbers")
    if cnp.PyArray_NDIM(w) != 2:
        raise ValueError(f"{func}: weight must be 2-d, got shape {weight.shape}")
    if not cnp.PyArray_ISCARRAY_RO(w) or not cnp.PyArray_ISCARRAY_RO(idx):  # (and aligned)
        raise ValueError(
            f"{func}: weight and indices must be C-contiguous; pass np.ascontiguousarray(...)"
        )
    cdef int64_t n = cnp.PyArray_DIM(w, 0)
    cdef Py_ssize_t m = cnp.PyArray_SIZE(idx)
    cdef bint is64 = _is64(idx)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(idx)
    cdef Py_ssize_t bad = _first_bad_flat(ip, is64, m, n)
    if bad >= 0:
        raise IndexError(
            f"index {_index_at(ip, bad, is64)} is out of bounds for dimension 0 with size {n}"
        )
    out = _result(np.empty, tuple(indices.shape) + (weight.shape[1],), weight.dtype)
    cdef size_t row = <size_t>(cnp.PyArray_DIM(w, 1) * cnp.PyArray_ITEMSIZE(w))
    cdef const char* wp = <const char*>cnp.PyArray_DATA(w)
    cdef char* op = <char*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef Py_ssize_t i
    if row:
        with nogil:
            for i in range(m):
                memcpy(op + i * row, wp + _index_at(ip, i, is64) * row, row)
    return out


# -------------------------------------------------------------------------------------
# embedding_backward


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _embedding_rows(real* out, const real* grad, const char* idx, bint is64,
                          Py_ssize_t m, Py_ssize_t width, int64_t padding_idx,
                          const int64_t* counts, int64_t lo, int64_t hi) noexcept nogil:
    """Rows [lo, hi) of embedding's gradient: grad's rows added in index order."""
    cdef Py_ssize_t i, t
    cdef int64_t k
    cdef real scale
    cdef real* o
    cdef const real* s
    for i in range(m):
        k = _index_at(idx, i, is64)
        if k < lo or k >= hi or k == padding_idx:
            continue
        o = out + k * width
        s = grad + i * width
        if counts != NULL:
            scale = <real>(1.0 / <double>counts[k])
            for t in range(width):
                o[t] = o[t] + scale * s[t]
        else:
            for t in range(width):
                o[t] = o[t] + s[t]


cdef void _embedding_backward(real* out, const real* grad, const char* idx, bint is64,
                              Py_ssize_t m, Py_ssize_t width, int64_t num_weights,
                              int64_t padding_idx, const int64_t* counts,
                              int nthreads) noexcept nogil:
    cdef Py_ssize_t block, step, lo
    if nthreads <= 1:
        _embedding_rows(out, grad, idx, is64, m, width, padding_idx, counts, 0, num_weights)
        return
    step = kernel_block_size(num_weights, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        lo = block * step
        _embedding_rows(out, grad, idx, is64, m, width, padding_idx, counts, lo,
                        min(lo + step, num_weights))


def embedding_backward(grad, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False):
    """The gradient of ``weight`` in ``weight[indices]``: ``grad``'s rows added into zeros
    ``(num_weights, width)`` at the rows ``indices`` names, as torch's
    ``embedding_dense_backward`` (Note [Embedding's backward is a scatter-add of rows]).

    Parameters
    ----------
    grad : ndarray
        float32 or float64, shape ``indices.shape + (width,)``, any layout (a
        non-contiguous one is copied first).
    indices : ndarray
        int32 or int64, any layout; each in ``[0, num_weights)``.
    num_weights : int
        The table's number of rows.
    padding_idx : int, optional
        A row that gets no gradient (``-1``: none).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by the number of times ``indices`` names it.

    Returns
    -------
    ndarray
        ``(num_weights, width)``, grad's dtype, C-contiguous.

    Raises
    ------
    TypeError
        If ``grad`` is not float32/float64 or ``indices`` not int32/int64.
    ValueError
        If the shapes do not match or ``num_weights`` is negative.
    IndexError
        If an index is outside ``[0, num_weights)`` (checked before any write).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import embedding_backward
    >>> g = np.array([[1., 2.], [3., 4.], [5., 6.]])
    >>> embedding_backward(g, np.array([2, 0, 2]), 4)
    array([[3., 4.],
           [0., 0.],
           [6., 8.],
           [0., 0.]])
    >>> embedding_backward(g, np.array([2, 0, 2]), 4, padding_idx=0, scale_grad_by_freq=True)
    array([[0., 0.],
           [0., 0.],
           [3., 4.],
           [0., 0.]])
    """
    cdef str func = "embedding_backward"
    cdef int typenum = _check_float_array(func, "grad", grad)
    _index_typenum(func, "indices", indices)
    cdef Py_ssize_t nw = num_weights
    cdef int64_t pad = padding_idx
    if nw < 0:
        raise ValueError(f"{func}: num_weights must be >= 0, got {nw}")
    if grad.ndim != indices.ndim + 1 or grad.shape[:-1] != indices.shape:
        raise ValueError(
            f"{func}: grad's shape {grad.shape} must be indices' shape {indices.shape} plus "
            "one last dim (the embedding width)"
        )
    cdef Py_ssize_t width = grad.shape[-1]
    cdef cnp.ndarray idx = indices if _plain(indices) else indices.copy()
    cdef Py_ssize_t m = cnp.PyArray_SIZE(idx)
    cdef bint is64 = _is64(idx)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(idx)
    cdef Py_ssize_t bad = _first_bad_flat(ip, is64, m, nw)
    if bad >= 0:
        raise IndexError(
            f"index {_index_at(ip, bad, is64)} is out of bounds for dimension 0 with size {nw}"
        )
    cdef cnp.ndarray g = grad if _plain(grad) else grad.copy()
    # empty, zeroed below: a block the cache can serve (it never serves np.zeros' calloc)
    cdef cnp.ndarray out = _result(np.empty, (nw, width), g.dtype)
    cdef cnp.ndarray counts_arr
    cdef const int64_t* counts = NULL
    if scale_grad_by_freq and m:
        counts_arr = np.bincount(idx.reshape(-1), minlength=nw).astype(np.int64, copy=False)
        counts = <const int64_t*>cnp.PyArray_DATA(counts_arr)
    cdef Py_ssize_t work = m * width
    cdef int nthreads = kernel_threads(work, kernel_parallel_threshold())
    if nthreads > nw // 2:
        nthreads = 1
    cdef void* op = cnp.PyArray_DATA(out)
    cdef const void* gp = cnp.PyArray_DATA(g)
    memset(op, 0, <size_t>(nw * width * cnp.PyArray_ITEMSIZE(out)))
    if m == 0 or width == 0:
        return out
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _embedding_backward(<float*>op, <const float*>gp, ip, is64, m, width, nw, pad,
                                counts, nthreads)
        else:
            _embedding_backward(<double*>op, <const double*>gp, ip, is64, m, width, nw, pad,
                                counts, nthreads)
    return out


# -------------------------------------------------------------------------------------
# scatter_add_


# (Walk, MAX_DIMS and _index_at are declared in _index_kernels.pxd)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _next(const Walk* w, Py_ssize_t* coord, Py_ssize_t* ob, Py_ssize_t* sb,
                Py_ssize_t* ib) noexcept nogil:
    """Step `coord` over every axis but the last, in C order, moving the offsets; False at
    the end."""
    cdef int d = w.nd - 2
    while d >= 0:
        coord[d] += 1
        if d != w.dim:
            ob[0] += w.ostr[d]
        sb[0] += w.sstr[d]
        ib[0] += w.istr[d]
        if coord[d] < w.shape[d]:
            return True
        if d != w.dim:
            ob[0] -= w.ostr[d] * w.shape[d]
        sb[0] -= w.sstr[d] * w.shape[d]
        ib[0] -= w.istr[d] * w.shape[d]
        coord[d] = 0
        d -= 1
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _find_bad(const Walk* w, const char* idx, bint is64, int64_t* bad) noexcept nogil:
    """Whether some index is out of range (the first in C order goes to `bad`)."""
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t ob = 0, sb = 0, ib = 0, t, last = w.shape[w.nd - 1]
    cdef Py_ssize_t istep = w.istr[w.nd - 1]
    cdef int64_t k, n = w.n
    cdef int64_t low = -n if w.wrap else 0
    cdef int d
    if istep == 0 and last > 0:    # one index a row (index_add's broadcast): check it once
        last = 1
    for d in range(w.nd):
        coord[d] = 0
    while True:
        if is64:
            for t in range(last):
                k = (<const int64_t*>idx)[ib + t * istep]
                if k < low or k >= n:
                    bad[0] = k
                    return True
        else:
            for t in range(last):
                k = (<const int32_t*>idx)[ib + t * istep]
                if k < low or k >= n:
                    bad[0] = k
                    return True
        if not _next(w, coord, &ob, &sb, &ib):
            return False


ctypedef fused index_t:
    int32_t
    int64_t


cdef inline void _scatter_row(real* out, const real* src, const index_t* idx, Py_ssize_t m,
                              Py_ssize_t odim, Py_ssize_t ss, Py_ssize_t istep, int64_t n,
                              bint wrap) noexcept nogil:
    """``out[idx[t] * odim] += src[t]`` for t < m: a scatter along the last axis."""
    cdef Py_ssize_t t
    cdef int64_t k
    if wrap:
        for t in range(m):
            k = idx[t * istep]
            if k < 0:
                k = k + n
            out[k * odim] += src[t * ss]
    else:
        for t in range(m):
            out[idx[t * istep] * odim] += src[t * ss]


cdef inline void _add_row(real* o, const real* s, Py_ssize_t n) noexcept nogil:
    """``o[:n] += s[:n]``; the rows of one scatter never overlap their source."""
    cdef Py_ssize_t t
    for t in range(n):
        o[t] = o[t] + s[t]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _scatter_add(const Walk* w, real* out, const real* src, const char* idx,
                       bint is64) noexcept nogil:
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t ob = 0, sb = 0, ib = 0, t
    cdef int nd = w.nd, d
    cdef Py_ssize_t last = w.shape[nd - 1]
    cdef Py_ssize_t os = w.ostr[nd - 1], ss = w.sstr[nd - 1], istep = w.istr[nd - 1]
    cdef Py_ssize_t odim = w.ostr[w.dim]
    cdef bint along_last = w.dim == nd - 1
    cdef int64_t k, n = w.n     # (locals: the stores into out cannot change them)
    cdef bint wrap = w.wrap
    cdef real c
    cdef real* o
    cdef const real* s
    for d in range(nd):
        coord[d] = 0
    while True:
        if along_last:
            if is64:
                _scatter_row(out + ob, src + sb, <const int64_t*>idx + ib, last, odim, ss,
                             istep, n, wrap)
            else:
                _scatter_row(out + ob, src + sb, <const int32_t*>idx + ib, last, odim, ss,
                             istep, n, wrap)
        elif istep == 0:      # one index for the whole row: a row added (index_add)
            k = _index_at(idx, ib, is64)
            if k < 0:
                k = k + n
            o = out + ob + k * odim
            s = src + sb
            if os == 1 and ss == 1:
                _add_row(o, s, last)
            elif os == 1 and ss == 0:   # a broadcast value (the gradient of a sum)
                c = s[0]
                for t in range(last):
                    o[t] = o[t] + c
            else:
                for t in range(last):
                    o[t * os] = o[t * os] + s[t * ss]
        else:
            for t in range(last):
                k = _index_at(idx, ib + t * istep, is64)
                if k < 0:
                    k = k + n
                out[ob + k * odim + t * os] += src[sb + t * ss]
        if not _next(w, coord, &ob, &sb, &ib):
            return


cdef int _plan(str func, Walk* w, cnp.ndarray target, cnp.ndarray index, cnp.ndarray other,
               int dim, bint wrap) except -1:
    """The walk over `index` (and `other`, of its shape) into `target` along `dim`; raises
    IndexError for the first index out of range, before any memory is written."""
    _walk(func, w, target, index, other, dim, wrap)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(index)
    cdef bint is64 = _is64(index)
    cdef int64_t bad = 0
    cdef bint found
    with nogil:
        found = _find_bad(w, ip, is64, &bad)
    if found:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {w.n}")
    return 0


cdef int _walk(str func, Walk* w, cnp.ndarray target, cnp.ndarray index, cnp.ndarray other,
               int dim, bint wrap) except -1:
    """The walk of `_plan`, its indices not checked (a caller that checks each as it goes)."""
    cdef int a, nd = cnp.PyArray_NDIM(index)
    w.nd = nd
    w.dim = dim
    w.n = cnp.PyArray_DIM(target, dim)
    w.wrap = wrap
    for a in range(nd):
        w.shape[a] = cnp.PyArray_DIM(index, a)
    _element_strides(func, "out", target, w.ostr)
    _element_strides(func, "src", other, w.sstr)
    _element_strides(func, "index", index, w.istr)
    return 0


def scatter_add_(out, dim, index, src, *, wrap_negative=False):
    """``out[..., index[p], ...] += src[p]`` along ``dim`` for every position ``p`` of
    ``index``, in place: torch's ``scatter_add_`` (Note [One strided scatter-add]).

    Repeated indices add up, in C order of ``index``.  For torch's ``index_add_`` pass a
    1-d index reshaped to ``(1, ..., m, ..., 1)`` and broadcast to ``src.shape``.

    Parameters
    ----------
    out : ndarray
        float32 or float64, writable, any layout; updated in place.
    dim : int
        The dimension the indices run along (negative counts from the end).
    index : ndarray
        int32 or int64, the shape of ``src``, any strides (0 for a broadcast).
    src : ndarray
        out's dtype and number of dims, any layout; ``src.shape[d] <= out.shape[d]`` for
        ``d != dim``.
    wrap_negative : bool, optional
        Whether an index in ``[-n, 0)`` counts from the end (numpy's indexing); else it is
        an error (torch's).

    Raises
    ------
    TypeError, ValueError
        Wrong dtypes, shapes, or a read-only ``out``.
    IndexError
        An index outside ``[0, n)`` (``[-n, n)`` with ``wrap_negative``), checked before
        any write.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import scatter_add_
    >>> out = np.zeros((2, 3))
    >>> scatter_add_(out, 1, np.array([[0, 0, 2]]), np.array([[1., 2., 3.]]))
    >>> out
    array([[3., 0., 3.],
           [0., 0., 0.]])
    """
    _scatter_checked("scatter_add_", out, dim, index, src, wrap_negative, True)
    return None


def scatter_(out, dim, index, src, *, wrap_negative=False):
    """``out[..., index[p], ...] = src[p]`` along ``dim`` for every position ``p`` of
    ``index``, in place: torch's ``scatter_`` without ``reduce``.

    Where an index repeats, the last write in C order of ``index`` wins (as torch's loop,
    which writes each row of ``index`` in order).  The arguments are those of
    :func:`scatter_add_`; ``src`` may be a broadcast (stride 0), for a single value.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import scatter_
    >>> out = np.zeros((2, 3))
    >>> scatter_(out, 1, np.array([[0, 0, 2]]), np.array([[1., 2., 3.]]))
    >>> out
    array([[2., 0., 3.],
           [0., 0., 0.]])
    """
    _scatter_checked("scatter_", out, dim, index, src, wrap_negative, False)
    return None


cdef int _scatter_checked(str func, object out, object dim, object index, object src,
                          bint wrap_negative, bint add) except -1:
    """The checks of scatter_add_/scatter_, then the pass (``add``: sums, else writes)."""
    cdef int typenum = _check_float_array(func, "out", out)
    _check_float_array(func, "src", src)
    _index_typenum(func, "index", index)
    cdef cnp.ndarray o = <cnp.ndarray>out
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef cnp.ndarray i = <cnp.ndarray>index
    if not cnp.PyArray_ISWRITEABLE(o):
        raise ValueError(f"{func}: out is read-only, but it is updated in place")
    if cnp.PyArray_TYPE(s) != typenum:
        raise TypeError(
            f"{func}: out and src must have the same dtype, got {out.dtype} and {src.dtype}"
        )
    cdef int nd = cnp.PyArray_NDIM(o)
    if nd == 0:
        out, index, src = out.reshape(1), index.reshape(1), src.reshape(1)
        o, i, s = <cnp.ndarray>out, <cnp.ndarray>index, <cnp.ndarray>src
        nd = 1
    if cnp.PyArray_NDIM(s) != nd or cnp.PyArray_NDIM(i) != nd:
        raise ValueError(
            f"{func}: out, index and src must have the same number of dims, got "
            f"{out.shape}, {index.shape} and {src.shape}"
        )
    if index.shape != src.shape:
        raise ValueError(f"{func}: index's shape {index.shape} must be src's {src.shape}")
    cdef int d = dim
    if d < -nd or d >= nd:
        raise IndexError(f"{func}: dim {dim} is out of range for {nd} dims")
    d = d % nd
    cdef int a
    for a in range(nd):
        if a != d and cnp.PyArray_DIM(s, a) > cnp.PyArray_DIM(o, a):
            raise ValueError(
                f"{func}: src {src.shape} must be no larger than out {out.shape} apart from "
                f"dim {d}"
            )
    if cnp.PyArray_SIZE(s) == 0:
        return 0
    cdef Walk w
    _plan(func, &w, o, i, s, d, wrap_negative)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(i)
    cdef bint is64 = _is64(i)
    cdef void* op = cnp.PyArray_DATA(o)
    cdef const void* sp = cnp.PyArray_DATA(s)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            if add:
                _scatter_add(&w, <float*>op, <const float*>sp, ip, is64)
            elif is64:
                _scatter_set(&w, <float*>op, <const float*>sp, <const int64_t*>ip)
            else:
                _scatter_set(&w, <float*>op, <const float*>sp, <const int32_t*>ip)
        else:
            if add:
                _scatter_add(&w, <double*>op, <const double*>sp, ip, is64)
            elif is64:
                _scatter_set(&w, <double*>op, <const double*>sp, <const int64_t*>ip)
            else:
                _scatter_set(&w, <double*>op, <const double*>sp, <const int32_t*>ip)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _scatter_set(const Walk* w, real* out, const real* src,
                       const index_t* idx) noexcept nogil:
    """``out[p with p[dim] := idx[p]] = src[p]`` over the walk, in C order (the indices
    were checked by ``_plan``)."""
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t ob = 0, sb = 0, ib = 0, t
    cdef int nd = w.nd, d
    cdef Py_ssize_t last = w.shape[nd - 1]
    cdef Py_ssize_t os = w.ostr[nd - 1], ss = w.sstr[nd - 1], istep = w.istr[nd - 1]
    cdef Py_ssize_t odim = w.ostr[w.dim]
    cdef Py_ssize_t step = 0 if w.dim == nd - 1 else os    # along the last axis: idx moves
    cdef int64_t k, n = w.n
    cdef bint wrap = w.wrap
    for d in range(nd):
        coord[d] = 0
    while True:
        if wrap:
            for t in range(last):
                k = idx[ib + t * istep]
                if k < 0:
                    k = k + n
                out[ob + k * odim + t * step] = src[sb + t * ss]
        else:
            for t in range(last):
                out[ob + idx[ib + t * istep] * odim + t * step] = src[sb + t * ss]
        if not _next(w, coord, &ob, &sb, &ib):
            return


# -------------------------------------------------------------------------------------
# gather


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _gather(const Walk* w, const real* x, real* out, const index_t* idx,
                  int64_t* bad) noexcept nogil:
    """``out[p] = x[p with p[dim] := index[p]]`` over the walk (`out` has its src role),
    each index checked as it is read (Note [gather checks as it reads]): True, with the
    index in `bad`, at the first out of range."""
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t xb = 0, ob = 0, ib = 0, t
    cdef int nd = w.nd, d
    cdef Py_ssize_t last = w.shape[nd - 1]
    cdef Py_ssize_t xs = w.ostr[nd - 1], os = w.sstr[nd - 1], istep = w.istr[nd - 1]
    cdef Py_ssize_t xdim = w.ostr[w.dim]
    cdef Py_ssize_t step = 0 if w.dim == nd - 1 else xs    # along the last axis: idx moves
    cdef int64_t k, n = w.n
    for d in range(nd):
        coord[d] = 0
    while True:
        for t in range(last):
            k = idx[ib + t * istep]
            if <uint64_t>k >= <uint64_t>n:    # (a negative index too)
                bad[0] = k
                return True
            out[ob + t * os] = x[xb + k * xdim + t * step]
        if not _next(w, coord, &xb, &ob, &ib):
            return False


# Note [gather checks as it reads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# gather writes only its own new result, so its indices are checked in the pass that uses
# them, before each read of ``x``: at the first bad index the pass stops and the result is
# dropped.  A separate checking pass (what scatter_add_ needs, since it writes into its
# caller's array) read the whole index twice: about a third of the kernel's time.


def gather(x, dim, index):
    """``out[p] = x[..., index[p], ...]`` along ``dim`` for every position ``p`` of
    ``index``: torch's ``gather`` (the result has index's shape).

    Parameters
    ----------
    x : ndarray
        float32 or float64, any layout.
    dim : int
        The dimension the indices run along (negative counts from the end).
    index : ndarray
        int32 or int64, as many dims as ``x``, any layout; ``index.shape[d] <= x.shape[d]``
        for ``d != dim``; each in ``[0, x.shape[dim])``.

    Returns
    -------
    ndarray
        C-contiguous, index's shape, x's dtype.

    Raises
    ------
    TypeError, ValueError
        Wrong dtypes or shapes.
    IndexError
        An index out of range (checked before anything is read).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gather
    >>> gather(np.array([[1., 2.], [3., 4.]]), 1, np.array([[0, 0], [1, 0]]))
    array([[1., 1.],
           [4., 3.]])
    """
    cdef str func = "gather"
    cdef int typenum = _check_float_array(func, "x", x)
    _index_typenum(func, "index", index)
    cdef int nd = x.ndim
    if index.ndim != nd:
        raise ValueError(
            f"{func}: index must have as many dims as x, got {index.shape} and {x.shape}"
        )
    result = _result(np.empty, index.shape, x.dtype)
    if nd == 0:
        x, index, view = x.reshape(1), index.reshape(1), result.reshape(1)
        nd = 1
    else:
        view = result
    cdef int d = dim
    if d < -nd or d >= nd:
        raise IndexError(f"{func}: dim {dim} is out of range for {nd} dims")
    d = d % nd
    cdef int a
    for a in range(nd):
        if a != d and index.shape[a] > x.shape[a]:
            raise ValueError(
                f"{func}: index {index.shape} must be no larger than x {x.shape} apart from "
                f"dim {d}"
            )
    if result.size == 0:
        return result
    cdef Walk w
    _walk(func, &w, <cnp.ndarray>x, <cnp.ndarray>index, <cnp.ndarray>view, d, False)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(<cnp.ndarray>index)
    cdef bint is64 = _is64(<cnp.ndarray>index)
    cdef const void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* op = cnp.PyArray_DATA(<cnp.ndarray>view)
    cdef int64_t bad = 0
    cdef bint found
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            if is64:
                found = _gather(&w, <const float*>xp, <float*>op, <const int64_t*>ip, &bad)
            else:
                found = _gather(&w, <const float*>xp, <float*>op, <const int32_t*>ip, &bad)
        else:
            if is64:
                found = _gather(&w, <const double*>xp, <double*>op, <const int64_t*>ip, &bad)
            else:
                found = _gather(&w, <const double*>xp, <double*>op, <const int32_t*>ip, &bad)
    if found:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {w.n}")
    return result


# -------------------------------------------------------------------------------------
# result_zeros


def result_zeros(shape, dtype):
    """Zeros for a result built outside an op (a backward formula's), allocated as
    gradstack's: a large block comes from the block cache, its pages already mapped, and
    is zeroed here (Note [Large blocks are reused, not returned to the kernel] in
    _allocator.pyx; ``np.zeros``' calloc is never served from the cache).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import result_zeros
    >>> result_zeros((2, 3), np.float32)
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    out = _result(np.empty, shape, dtype)
    out.fill(0)
    return out


def result_empty(shape, dtype):
    """An uninitialised C-contiguous array allocated as gradstack's, as
    :func:`result_zeros`' but not zeroed: for a result every element of which is written
    next (dropout's noise, drawn into it: its block is then reused by the block cache
    after the backward frees it, where ``empty_like``'s, a factory's, went back to glibc
    and was page-faulted in again at the next step).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import result_empty
    >>> a = result_empty((2, 3), np.float32)
    >>> a.shape, a.dtype, a.flags.c_contiguous
    ((2, 3), dtype('float32'), True)
    """
    return _result(np.empty, shape, dtype)
