# distutils: language = c++
# cython: language_level=3
"""The order-statistics kernels: ``topk_rows``, the k largest (smallest) elements of each
row with their positions, chosen and ordered as torch's CPU ``topk`` chooses them (Note
[topk breaks ties as torch]).

C++ (the module is compiled as C++ for the standard library's selection algorithms).
The arguments are checked in Python-visible code before any memory is read.  Public as
``gradstack_tensor.kernels``.
"""

cimport cython
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t

import numpy as np

cnp.import_array()

__all__ = ["topk_rows"]


# Note [topk breaks ties as torch]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Which of equal elements torch's topk returns, and in which order, is not a stable sort's
# answer: its CPU kernel copies each row into (value, position) pairs and, when k is small
# next to the row (64 k <= n), selects and orders them with std::partial_sort, else with
# std::nth_element at k - 1 followed (for sorted=True) by std::sort of the first k - 1;
# the comparison puts NaN above every number (largest) or below none (smallest) and
# looks at the values only.  These standard algorithms are deterministic: the same
# comparisons on the same sequence make the same moves, so running them here, on the same
# pairs with the same ordering, gives torch's indices for ties, NaNs and sorted=False too
# (tests/test_topk_torch_ties.py compares them on rows full of ties).  It is also one
# O(n) selection per row, where the numpy path took a partition, a stable sort of the
# selection and a full check for ties at the k-th value (2.9x torch at 10**4 elements).
cdef extern from *:
    """
    #include <algorithm>
    #include <utility>
    #include <vector>
    #include <cstdint>

    template <typename T>
    struct GsTopkBefore {
        bool largest;
        bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
            const bool a_nan = a.first != a.first, b_nan = b.first != b.first;
            if (largest)
                return (a_nan && !b_nan) || a.first > b.first;
            return (!a_nan && b_nan) || a.first < b.first;
        }
    };

    /* rows x n elements at `base` (byte strides rs between rows, cs along a row) ->
       the k chosen of each row into vals/idx (m x k, C order) */
    template <typename T>
    static void gs_topk_rows(const char* base, int64_t m, int64_t n, int64_t rs, int64_t cs,
                             int64_t k, bool largest, bool sorted, T* vals, int64_t* idx) {
        std::vector<std::pair<T, int64_t> > row(n);
        GsTopkBefore<T> before;
        before.largest = largest;
        const bool partial = k * 64 <= n;
        for (int64_t i = 0; i < m; ++i) {
            const char* p = base + i * rs;
            for (int64_t j = 0; j < n; ++j) {
                row[j].first = *reinterpret_cast<const T*>(p + j * cs);
                row[j].second = j;
            }
            if (partial) {
                std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
            } else {
                std::nth_element(row.begin(), row.begin() + (k - 1), row.end(), before);
                if (sorted)
                    std::sort(row.begin(), row.begin() + (k - 1), before);
            }
            T* v = vals + i * k;
            int64_t* x = idx + i * k;
            for (int64_t j = 0; j < k; ++j) {
                v[j] = row[j].first;
                x[j] = row[j].second;
            }
        }
    }
    """
    void gs_topk_rows[T](const char* base, int64_t m, int64_t n, int64_t rs, int64_t cs,
                         int64_t k, bint largest, bint sorted, T* vals,
                         int64_t* idx) except + nogil


# the dtypes taken as they are (float16 is compared as float32: Note [float16 as float32])
_TYPES = frozenset({
    cnp.NPY_FLOAT, cnp.NPY_DOUBLE, cnp.NPY_LONGLONG, cnp.NPY_LONG, cnp.NPY_INT,
    cnp.NPY_SHORT, cnp.NPY_BYTE, cnp.NPY_UBYTE,
})


@cython.boundscheck(False)
@cython.wraparound(False)
def topk_rows(rows, k, largest=True, sorted=True):  # noqa: A002 - torch's name
    """The ``k`` largest (``largest=False``: smallest) elements of each row of the 2-d
    array ``rows`` and their column positions, chosen and ordered as torch's CPU topk
    (Note [topk breaks ties as torch]).

    Parameters
    ----------
    rows : ndarray
        2-d, float32/float64/float16 or int8/uint8/int16/int32/int64, any strides.
    k : int
        ``0 <= k <= rows.shape[1]``.
    largest, sorted : bool
        torch's arguments: the largest or the smallest; ordered, or (``sorted=False``)
        in the order the selection leaves them.

    Returns
    -------
    (ndarray, ndarray)
        The values (``rows``' dtype) and positions (int64), each ``(rows.shape[0], k)``,
        C order.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import topk_rows
    >>> topk_rows(np.array([[3., 1., 4., 1., 5.]]), 2)
    (array([[5., 4.]]), array([[4, 2]]))
    """
    if not isinstance(rows, np.ndarray) or (<cnp.ndarray>rows).ndim != 2:
        raise TypeError(f"topk_rows: rows must be a 2-d numpy array, got {type(rows).__name__}"
                        f" of {getattr(rows, 'ndim', '?')} dims")
    cdef cnp.ndarray a = <cnp.ndarray>rows
    source = a
    cdef int typenum = cnp.PyArray_TYPE(a)
    # Note [float16 as float32]: every float16 is exactly a float32 and the order is the
    # same, so torch's comparisons of half values (made in float) are made on the copy
    if a.dtype == np.float16:
        a = a.astype(np.float32)
        typenum = cnp.NPY_FLOAT
    if typenum not in _TYPES or not a.dtype.isnative:
        raise TypeError(f"topk_rows: unsupported dtype {rows.dtype}")
    if not a.flags.aligned:
        a = a.copy()
    cdef int64_t m = a.shape[0], n = a.shape[1]
    cdef int64_t kk = k
    if kk < 0 or kk > n:
        raise ValueError(f"topk_rows: k={k} is out of range for rows of {n} elements")
    values = np.empty((m, kk), dtype=a.dtype)
    indices = np.empty((m, kk), dtype=np.int64)
    cdef const char* base = <const char*>cnp.PyArray_DATA(a)
    cdef int64_t rs = a.strides[0], cs = a.strides[1]
    cdef void* vp = cnp.PyArray_DATA(<cnp.ndarray>values)
    cdef int64_t* ip = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>indices)
    cdef bint big = largest, ordered = sorted
    if m == 0 or kk == 0:
        return values.astype(source.dtype, copy=False), indices
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            gs_topk_rows[float](base, m, n, rs, cs, kk, big, ordered, <float*>vp, ip)
        elif typenum == cnp.NPY_DOUBLE:
            gs_topk_rows[double](base, m, n, rs, cs, kk, big, ordered, <double*>vp, ip)
        elif typenum == cnp.NPY_LONGLONG or typenum == cnp.NPY_LONG:
            gs_topk_rows[int64_t](base, m, n, rs, cs, kk, big, ordered, <int64_t*>vp, ip)
        elif typenum == cnp.NPY_INT:
            gs_topk_rows[int32_t](base, m, n, rs, cs, kk, big, ordered, <int32_t*>vp, ip)
        elif typenum == cnp.NPY_SHORT:
            gs_topk_rows[int16_t](base, m, n, rs, cs, kk, big, ordered, <int16_t*>vp, ip)
        elif typenum == cnp.NPY_BYTE:
            gs_topk_rows[int8_t](base, m, n, rs, cs, kk, big, ordered, <int8_t*>vp, ip)
        else:
            gs_topk_rows[uint8_t](base, m, n, rs, cs, kk, big, ordered, <uint8_t*>vp, ip)
    return values.astype(source.dtype, copy=False), indices
