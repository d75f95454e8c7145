# cython: language_level=3
"""The reducing scatter: ``scatter_reduce_``, torch's ``scatter_reduce_`` and, with a 1-d
index broadcast along the other dims, its ``index_reduce_``, in one strided pass over the
index (Note [One pass of a reducing scatter]).

Every index is checked against its dimension before any memory is written (an IndexError
names the first bad index in C order).  Public as ``gradstack_tensor.kernels``.
"""

cimport cython
cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.string cimport memset

from ._index_kernels cimport (
    MAX_DIMS, Walk, _find_bad, _index_at, _index_typenum, _next, _result, _walk,
)
from ._kernels cimport _check_float_array, real

import numpy as np

cnp.import_array()

__all__ = ["scatter_reduce_"]

# Note [One pass of a reducing scatter]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU scatter_reduce_ and index_reduce_ combine, for every position p of the index
# in order, src[p] into self at p with p[dim] := index[p]: each destination sees its values
# in C order of the index (the values of one destination all lie on one line along dim, the
# line torch's loop walks in order), starting from self's value, or from the reduction's
# identity where include_self=False (torch fills the positions written first).  numpy's
# ufunc.at took 17x (index_reduce: 44x) torch's time at 10**4 elements.  This walk (the
# one of scatter_add_: Note [One strided scatter-add] in _index_kernels.pyx) does the same
# operations in the same order, in the array's dtype: sum and mean add, prod multiplies,
# amax/amin keep src where it is NaN or larger/smaller (torch's
# ``isnan(src) ? src : std::max(self, src)``: a NaN wins, and of 0.0 and -0.0 the first
# stays), by a select rather than a branch (a mispredicted branch an element took 10x the
# time).  mean counts the values of each position (in out's dtype and layout, hence a
# C-contiguous out) and divides at the end by the count plus one for self, as torch's
# ``out.div_(count)`` with its count of self's dtype (the same rounding past 2**24).  An
# index_reduce row (the index constant along the last axis) is combined as a row, in a
# loop the compiler vectorises.  One thread, as scatter_add_.

cdef enum:
    R_SUM = 0
    R_PROD = 1
    R_MEAN = 2
    R_AMAX = 3
    R_AMIN = 4

REDUCES = {"sum": R_SUM, "prod": R_PROD, "mean": R_MEAN, "amax": R_AMAX, "amin": R_AMIN}


cdef extern from *:
    """
    /* amax/amin of the reducing scatter: src where it is NaN or larger/smaller (no
       short-circuit: a select, not a branch, in the loops) */
    #define GS_SR_MAX(cur, v) ((((v) != (v)) | ((v) > (cur))) ? (v) : (cur))
    #define GS_SR_MIN(cur, v) ((((v) != (v)) | ((v) < (cur))) ? (v) : (cur))
    """
    float _maxf "GS_SR_MAX"(float cur, float v) noexcept nogil
    float _minf "GS_SR_MIN"(float cur, float v) noexcept nogil
    double _maxd "GS_SR_MAX"(double cur, double v) noexcept nogil
    double _mind "GS_SR_MIN"(double cur, double v) noexcept nogil


cdef inline real _max(real cur, real v) noexcept nogil:
    if real is float:
        return _maxf(cur, v)
    else:
        return _maxd(cur, v)


cdef inline real _min(real cur, real v) noexcept nogil:
    if real is float:
        return _minf(cur, v)
    else:
        return _mind(cur, v)


cdef inline real _combine(real cur, real v, int reduce) noexcept nogil:
    if reduce == R_SUM or reduce == R_MEAN:
        return cur + v
    if reduce == R_PROD:
        return cur * v
    if reduce == R_AMAX:
        return _max(cur, v)
    return _min(cur, v)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _row(real* o, Py_ssize_t os, const real* s, Py_ssize_t ss, Py_ssize_t n,
               int reduce) noexcept nogil:
    """``o[t] = o[t] (reduce) s[t]`` for t < n (a row of index_reduce)."""
    cdef Py_ssize_t t
    if os == 1 and ss == 1:     # (each loop contiguous: vectorised)
        if reduce == R_SUM or reduce == R_MEAN:
            for t in range(n):
                o[t] = o[t] + s[t]
        elif reduce == R_PROD:
            for t in range(n):
                o[t] = o[t] * s[t]
        elif reduce == R_AMAX:
            for t in range(n):
                o[t] = _max(o[t], s[t])
        else:
            for t in range(n):
                o[t] = _min(o[t], s[t])
        return
    for t in range(n):
        o[t * os] = _combine(o[t * os], s[t * ss], reduce)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _reduce_walk(const Walk* w, real* out, const real* src, const char* idx, bint is64,
                       int reduce, real* count) noexcept nogil:
    """Combine src into out over the walk, in C order of the index (the indices were
    checked); count[p] += 1 at each position p combined into, when `count` is not NULL."""
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t ob = 0, sb = 0, ib = 0, t, p
    cdef int nd = w.nd, d
    cdef Py_ssize_t last = w.shape[nd - 1]
    cdef Py_ssize_t os = w.ostr[nd - 1], ss = w.sstr[nd - 1], istep = w.istr[nd - 1]
    cdef Py_ssize_t odim = w.ostr[w.dim]
    cdef Py_ssize_t step = 0 if w.dim == nd - 1 else os    # along the last axis: idx moves
    cdef bint rows = istep == 0 and w.dim != nd - 1
    for d in range(nd):
        coord[d] = 0
    while True:
        if rows:         # one index for the whole row (index_reduce)
            p = ob + _index_at(idx, ib, is64) * odim
            _row(out + p, os, src + sb, ss, last, reduce)
            if count != NULL:
                for t in range(last):
                    count[p + t * os] = count[p + t * os] + 1
        else:
            for t in range(last):
                p = ob + _index_at(idx, ib + t * istep, is64) * odim + t * step
                out[p] = _combine(out[p], src[sb + t * ss], reduce)
                if count != NULL:
                    count[p] = count[p] + 1
        if not _next(w, coord, &ob, &sb, &ib):
            return


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _fill_walk(const Walk* w, real* out, const char* idx, bint is64,
                     real value) noexcept nogil:
    """``out[p with p[dim] := index[p]] = value`` over the walk (include_self=False)."""
    cdef Py_ssize_t coord[MAX_DIMS]
    cdef Py_ssize_t ob = 0, sb = 0, ib = 0, t
    cdef int nd = w.nd, d
    cdef Py_ssize_t last = w.shape[nd - 1]
    cdef Py_ssize_t os = w.ostr[nd - 1], istep = w.istr[nd - 1]
    cdef Py_ssize_t odim = w.ostr[w.dim]
    cdef Py_ssize_t step = 0 if w.dim == nd - 1 else os
    for d in range(nd):
        coord[d] = 0
    while True:
        for t in range(last):
            out[ob + _index_at(idx, ib + t * istep, is64) * odim + t * step] = value
        if not _next(w, coord, &ob, &sb, &ib):
            return


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _divide(real* out, const real* count, Py_ssize_t n, real extra) noexcept nogil:
    """mean's last step: out[p] /= count[p] + extra where something was combined (a
    division by 1 elsewhere, exact: no branch in the loop)."""
    cdef Py_ssize_t p
    cdef real c
    for p in range(n):
        c = count[p] + extra
        out[p] = out[p] / (c + (c == 0))


cdef int _reduce(const Walk* w, void* out, const void* src, const char* ip, bint is64,
                 int typenum, int reduce, bint include_self, Py_ssize_t size) except -1:
    cdef cnp.ndarray counts = None
    cdef void* count = NULL
    if reduce == R_MEAN:   # (in out's dtype, as torch's count: the same rounding past 2**24)
        counts = _result(np.empty, (size,), np.float32 if typenum == cnp.NPY_FLOAT
                         else np.float64)  # fmt: skip
        count = cnp.PyArray_DATA(counts)
        memset(count, 0, <size_t>(size * cnp.PyArray_ITEMSIZE(counts)))
    cdef double identity = 0.0
    if reduce == R_PROD:
        identity = 1.0
    elif reduce == R_AMAX:
        identity = -np.inf
    elif reduce == R_AMIN:
        identity = np.inf
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            if not include_self:
                _fill_walk(w, <float*>out, ip, is64, <float>identity)
            _reduce_walk(w, <float*>out, <const float*>src, ip, is64, reduce, <float*>count)
            if count != NULL:
                _divide(<float*>out, <const float*>count, size, include_self)
        else:
            if not include_self:
                _fill_walk(w, <double*>out, ip, is64, identity)
            _reduce_walk(w, <double*>out, <const double*>src, ip, is64, reduce, <double*>count)
            if count != NULL:
                _divide(<double*>out, <const double*>count, size, include_self)
    return 0


def scatter_reduce_(out, dim, index, src, reduce, include_self=True):
    """Combine ``src[p]`` into ``out[..., index[p], ...]`` along ``dim`` for every position
    ``p`` of ``index``, in place, with ``reduce``: torch's ``scatter_reduce_`` (Note [One
    pass of a reducing scatter]).

    For torch's ``index_reduce_`` pass a 1-d index reshaped to ``(1, ..., m, ..., 1)`` and
    broadcast to ``src.shape``.

    Parameters
    ----------
    out : ndarray
        float32 or float64, writable, C-contiguous; updated in place.
    dim : int
        The dimension the indices run along (negative counts from the end).
    index : ndarray
        int32 or int64, as many dims as ``out``, any strides (0 for a broadcast);
        ``index.shape[d] <= out.shape[d]`` for ``d != dim``, each in ``[0, out.shape[dim])``.
    src : ndarray
        out's dtype and number of dims, any layout, at least index's size along every dim.
    reduce : str
        ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
    include_self : bool, optional
        Whether the values of ``out`` at the positions written take part (else they start
        from the reduction's identity).

    Raises
    ------
    TypeError, ValueError
        Wrong dtypes, shapes or layout, a read-only ``out``, an unknown ``reduce``.
    IndexError
        An index outside ``[0, out.shape[dim])``, checked before any write.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import scatter_reduce_
    >>> out = np.array([1.0, 2.0, 3.0])
    >>> scatter_reduce_(out, 0, np.array([0, 0, 2]), np.array([5.0, 7.0, 1.0]), "amax")
    >>> out
    array([7., 2., 3.])
    >>> scatter_reduce_(out, 0, np.array([1, 1]), np.array([4.0, 6.0]), "mean", False)
    >>> out
    array([7., 5., 3.])
    """
    cdef str func = "scatter_reduce_"
    cdef int typenum = _check_float_array(func, "out", out)
    _check_float_array(func, "src", src)
    _index_typenum(func, "index", index)
    if reduce not in REDUCES:
        raise ValueError(f"{func}: reduce must be one of {', '.join(REDUCES)}, got {reduce!r}")
    cdef cnp.ndarray o = <cnp.ndarray>out
    if not cnp.PyArray_ISWRITEABLE(o):
        raise ValueError(f"{func}: out is read-only, but it is updated in place")
    if not cnp.PyArray_ISCARRAY(o):
        raise ValueError(f"{func}: out must be C-contiguous; pass np.ascontiguousarray(out)")
    if cnp.PyArray_TYPE(<cnp.ndarray>src) != typenum:
        raise TypeError(
            f"{func}: out and src must have the same dtype, got {out.dtype} and {src.dtype}"
        )
    cdef int nd = cnp.PyArray_NDIM(o)
    if nd == 0:
        out, index, src = out.reshape(1), index.reshape(1), src.reshape(1)
        o = <cnp.ndarray>out
        nd = 1
    if src.ndim != nd or index.ndim != nd:
        raise ValueError(
            f"{func}: out, index and src must have the same number of dims, got "
            f"{out.shape}, {index.shape} and {src.shape}"
        )
    cdef int d = dim
    if d < -nd or d >= nd:
        raise IndexError(f"{func}: dim {dim} is out of range for {nd} dims")
    d = d % nd
    cdef int a
    for a in range(nd):
        if index.shape[a] > src.shape[a] or (a != d and index.shape[a] > out.shape[a]):
            raise ValueError(
                f"{func}: index {index.shape} must be no larger than src {src.shape}, and "
                f"than out {out.shape} apart from dim {d}"
            )
    if index.size == 0:
        return None
    cdef Walk w
    _walk(func, &w, o, <cnp.ndarray>index, <cnp.ndarray>src, d, False)
    cdef const char* ip = <const char*>cnp.PyArray_DATA(<cnp.ndarray>index)
    cdef bint is64 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>index) == 8
    cdef int64_t bad = 0
    cdef bint found
    with nogil:
        found = _find_bad(&w, ip, is64, &bad)
    if found:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {w.n}")
    _reduce(&w, cnp.PyArray_DATA(o), cnp.PyArray_DATA(<cnp.ndarray>src), ip, is64, typenum,
            REDUCES[reduce], bool(include_self), cnp.PyArray_SIZE(o))
    return None
