# cython: language_level=3
"""The LU factorization with partial pivoting of a batch of float32/float64 matrices in
C: LAPACK's unblocked ``getf2`` (Note [LU by rows in numpy] in ``_impl_factorizations.py``
has the algorithm; this is its loop without numpy's per-column overhead, 40x faster on a
100 x 100 matrix).  Complex matrices take the numpy loop.

``getf2_panel_`` is the same loop on a panel of columns of a larger matrix, the row swaps
applied to whole rows: the base case of the recursive LU (Note [A recursive LU on matrix
products] in ``_impl_factorizations.py``).
"""

cimport cython
cimport numpy as cnp
from libc.float cimport DBL_MIN, FLT_MIN
from libc.math cimport fabs

from ._kernels cimport real

import numpy as np

cnp.import_array()

__all__ = ["getf2_", "getf2_panel_"]


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


def getf2_panel_(a, Py_ssize_t j0, Py_ssize_t j1, pivots, perm, info):
    """Factor columns ``j0:j1`` of rows ``j0:`` of each matrix of ``a`` (``(count, m,
    n)``, C-contiguous, float32 or float64, writeable, ``0 <= j0 <= j1 <= min(m, n)``) in
    place, as getf2 does, with each row swap applied to the whole row (all ``n`` columns)
    and to ``perm`` (``(count, m)`` int64, the row order so far); write the 1-based
    pivots ``j0:j1`` into ``pivots`` (``(count, min(m, n))`` int32) and, where ``info``
    (``(count,)`` int32) is still 0, the 1-based index of a zero pivot.  Columns outside
    ``j0:j1`` are only swapped.  Every argument is checked before any is written.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[[1.0, 2.0], [2.0, 2.0]]])
    >>> p, i = np.zeros((1, 2), np.int32), np.zeros(1, np.int32)
    >>> order = np.array([[0, 1]])
    >>> getf2_panel_(a, 0, 1, p, order, i)
    >>> a.tolist(), p[:, :1].tolist(), order.tolist()
    ([[[2.0, 2.0], [0.5, 2.0]]], [[2]], [[1, 0]])
    """
    if not isinstance(a, np.ndarray) or a.ndim != 3:
        raise TypeError("getf2_panel_: a must be a 3-d numpy array (count, m, n)")
    if a.dtype != np.float32 and a.dtype != np.float64:
        raise TypeError(f"getf2_panel_: a must be float32 or float64, not {a.dtype}")
    if not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError("getf2_panel_: a must be C-contiguous and writeable (pass a copy)")
    count, m, n = a.shape
    k = min(m, n)
    if not 0 <= j0 <= j1 <= k:
        raise ValueError(f"getf2_panel_: need 0 <= j0 <= j1 <= min(m, n) = {k}, got "
                         f"j0 = {j0}, j1 = {j1}")
    for name, arr, shape, dtype in (("pivots", pivots, (count, k), np.int32),
                                    ("perm", perm, (count, m), np.int64),
                                    ("info", info, (count,), np.int32)):
        if (not isinstance(arr, np.ndarray) or arr.dtype != dtype
                or tuple(arr.shape) != shape or not arr.flags.c_contiguous
                or not arr.flags.writeable):
            raise ValueError(f"getf2_panel_: {name} must be a writeable C-contiguous "
                             f"{np.dtype(dtype).name} array of shape {shape}")
    if ((perm < 0) | (perm >= m)).any():
        raise ValueError(f"getf2_panel_: perm's entries must be row indices in [0, {m})")
    if a.dtype == np.float32:
        _getf2_panel[float](a, j0, j1, pivots, perm, info)
    else:
        _getf2_panel[double](a, j0, j1, pivots, perm, info)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _getf2_panel(real[:, :, ::1] a, Py_ssize_t j0, Py_ssize_t j1, int[:, ::1] pivots,
                       cnp.int64_t[:, ::1] perm, int[::1] info) noexcept nogil:
    cdef Py_ssize_t count = a.shape[0], m = a.shape[1], n = a.shape[2]
    cdef Py_ssize_t b, i, j, c, p
    cdef cnp.int64_t ptmp
    cdef real best, size, pivot, scale, tmp, factor
    cdef real tiny = <real>(FLT_MIN if real is float else DBL_MIN)
    for b in range(count):
        for j in range(j0, j1):
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
                    ptmp = perm[b, j]
                    perm[b, j] = perm[b, p]
                    perm[b, p] = ptmp
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
            for i in range(j + 1, m):  # the rank-1 update of the panel's rest
                factor = a[b, i, j]
                for c in range(j + 1, j1):
                    a[b, i, c] = a[b, i, c] - factor * a[b, j, c]
