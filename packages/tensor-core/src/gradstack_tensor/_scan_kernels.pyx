# cython: language_level=3
"""Scan kernels: the running sum along a dim (``cumsum``), forward or reversed, one pass
in C over a float32 or float64 array.

The op ``cumsum`` takes it for C-contiguous float32/float64 input (``_impl_reduce.py``),
and graph-engine's first-order cumsum gradient its reversed form (Note [cumsum
accumulates in double]).  Arguments are checked, and threads set, by ``_kernels.pyx``'s
shared code; public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

from ._kernels cimport _check_input, kernel_block_size, kernel_threads

cnp.import_array()

__all__ = [
    "SCAN_THRESHOLD",
    "cumsum",
]


# Note [cumsum accumulates in double]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU cumsum runs the sum in its accumulate type (double for float32 and float64)
# from +0 and rounds each prefix once to the dtype: the loop does the same, so a -0.0
# input gives +0.0 (0.0 + -0.0), and the values are torch's bits.  The array is seen as
# (outer, n, inner) around the dim: each outer block is summed along n with a row of
# inner double accumulators, which keeps the memory order (inner contiguous).  The
# reversed sum (from the last element down) is cumsum's gradient, grad.flip(d).cumsum(d)
# .flip(d), in one pass.
#
# Note [Scan kernels' threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The outer blocks are independent: split across threads from SCAN_THRESHOLD = 2**16
# elements (about 50 us of work at one thread; a scan along the only dim of a vector, one
# outer block, stays on one thread).

cdef Py_ssize_t _scan_threshold = 1 << 16
SCAN_THRESHOLD = _scan_threshold


cdef int _scan_blocks(bint single, bint reverse, const char* x, char* out,
                      Py_ssize_t o_start, Py_ssize_t o_stop, Py_ssize_t n,
                      Py_ssize_t inner) noexcept nogil:
    """Scan the outer blocks [o_start, o_stop); -1 when the accumulator row cannot be
    allocated."""
    cdef double* acc = <double*>malloc((inner if inner > 0 else 1) * sizeof(double))
    cdef Py_ssize_t o, j, jj, k, base
    cdef const float* xf = <const float*>x
    cdef const double* xd = <const double*>x
    cdef float* of = <float*>out
    cdef double* od = <double*>out
    cdef double a
    cdef Py_ssize_t step
    if acc == NULL:
        return -1
    if inner == 1:  # a scan along the last dim: one accumulator, a tight loop per row
        step = -1 if reverse else 1
        for o in range(o_start, o_stop):
            a = 0.0
            base = o * n + (n - 1 if reverse else 0)
            if single:
                for _ in range(n):
                    a += <double>xf[base]
                    of[base] = <float>a
                    base += step
            else:
                for _ in range(n):
                    a += xd[base]
                    od[base] = a
                    base += step
        free(acc)
        return 0
    for o in range(o_start, o_stop):
        for k in range(inner):
            acc[k] = 0.0
        for jj in range(n):
            j = n - 1 - jj if reverse else jj
            base = (o * n + j) * inner
            if single:
                for k in range(inner):
                    acc[k] += <double>xf[base + k]
                    of[base + k] = <float>acc[k]
            else:
                for k in range(inner):
                    acc[k] += xd[base + k]
                    od[base + k] = acc[k]
    free(acc)
    return 0


def cumsum(x, int axis, bint reverse=False):
    """The running sum of a float32/float64 C-contiguous array along ``axis`` (from the
    last element down when ``reverse``), accumulated in double and rounded once per
    element, as torch's (Note [cumsum accumulates in double]); a new array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import cumsum
    >>> cumsum(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 1)
    array([[ 1.,  3.,  6.],
           [ 4.,  9., 15.]])
    >>> cumsum(np.array([1.0, 2.0, 3.0]), 0, reverse=True)
    array([6., 5., 3.])
    """
    cdef int typenum = _check_input("cumsum", "x", x)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef int ndim = cnp.PyArray_NDIM(xa)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"cumsum: axis {axis} is out of range for an array of {ndim} dims "
                         "(a 0-d array has no axis to scan; copy it instead)")
    axis = axis % ndim
    cdef Py_ssize_t outer = 1, inner = 1, d
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(xa)
    for d in range(axis):
        outer *= dims[d]
    for d in range(axis + 1, ndim):
        inner *= dims[d]
    cdef Py_ssize_t n = dims[axis]
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(ndim, dims, typenum, 0)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(size, _scan_threshold) if outer > 1 else 1
    cdef bint single = typenum == cnp.NPY_FLOAT
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    cdef int failed = 0
    if size == 0:
        return out
    if nthreads > outer:
        nthreads = <int>outer
    if nthreads <= 1:
        with nogil:
            failed = _scan_blocks(single, reverse, xp, op_, 0, outer, n, inner)
    else:
        step = kernel_block_size(outer, nthreads)
        with nogil:
            for block in prange(nthreads, schedule="static", num_threads=nthreads):
                start = block * step
                failed += _scan_blocks(single, reverse, xp, op_, min(start, outer),
                                       min(start + step, outer), n, inner) != 0
    if failed:
        raise MemoryError(f"cumsum: could not allocate a row of {inner} accumulators")
    return out
