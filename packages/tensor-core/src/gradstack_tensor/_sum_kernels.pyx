# cython: language_level=3
"""The sum of every element of a float32 array in one vectorised pass (``sum_all``): the
``sum`` op's kernel for a float32 tensor reduced over all its dims (``_elementwise.pyx``,
``sum_dense_f32``), and public as ``gradstack_tensor.kernels.sum_all``.

Threads are set by ``_kernels.pyx``'s shared code, and the AVX2/AVX-512 copies chosen by
its switches (Note [AVX2 clones] there).
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

from ._kernels cimport _check_float_array, kernel_avx2, kernel_avx512, kernel_threads

import numpy as np

cnp.import_array()

__all__ = [
    "SUM_THRESHOLD",
    "sum_all",
]


# Note [float32 sum in float lanes and double blocks]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's float32 add.reduce (pairwise, 8 scalar accumulators) takes ~150 us for 1M
# elements, torch's sum (cascade sum, vectorised) ~45 us.  A C loop cannot sum into one
# accumulator and vectorise (GCC keeps the order of floating-point additions unless
# -ffast-math), so it keeps 64 float lanes: each block of 512 elements is summed row by
# row into the lanes (8 additions per lane, in float32), and each block's lanes are added
# to 64 double accumulators; a chunk of 2**16 elements ends by adding the 64 doubles
# pairwise, and the chunks' sums are added in order in double, rounded once to float32.
# A float32 rounding happens only inside a block (8 terms), so the result is within a few
# float32 ulps of the exact sum when there is no cancellation (torch's and numpy's are
# too; the three differ in the last bits).  ~45 us at 1M elements on one thread (AVX-512;
# ~50 us with AVX2; ~70-80 us in the default SSE2 copy).  nan and inf propagate; float
# lanes can overflow where the double sum would not (8 terms near FLT_MAX), as torch's
# float accumulators do.
#
# Note [sum's threads]
# ~~~~~~~~~~~~~~~~~~~~
# The chunks are fixed (2**16 elements, whatever the number of threads) and their sums
# added in order, so the result has the same bits on any number of threads.  The pass is
# memory-bound at ~0.05 ns an element: a second thread pays for waking the team (~5-10 us)
# from about 2**18 elements (SUM_THRESHOLD; measured on a loaded host: 1M elements 45 us
# on one thread, ~30 us on two).

cdef extern from *:
    """
    #define GS_SUM_LANES 64
    #define GS_SUM_BLOCK 512
    #define GS_SUM_CHUNK 65536

    /* the sum of x[0:n) for n <= GS_SUM_CHUNK (Note [float32 sum in float lanes and
       double blocks]) */
    GS_BODY double gs_sum_chunk_body(const float* x, Py_ssize_t n) {
        double accd[GS_SUM_LANES];
        float accf[GS_SUM_LANES];
        double tail = 0.0;
        Py_ssize_t i = 0, k;
        int j;
        for (j = 0; j < GS_SUM_LANES; j++)
            accd[j] = 0.0;
        for (; i + GS_SUM_BLOCK <= n; i += GS_SUM_BLOCK) {
            for (j = 0; j < GS_SUM_LANES; j++)
                accf[j] = x[i + j];
            for (k = GS_SUM_LANES; k < GS_SUM_BLOCK; k += GS_SUM_LANES)
                for (j = 0; j < GS_SUM_LANES; j++)
                    accf[j] += x[i + k + j];
            for (j = 0; j < GS_SUM_LANES; j++)
                accd[j] += (double)accf[j];
        }
        for (; i < n; i++)
            tail += (double)x[i];
        for (int w = GS_SUM_LANES / 2; w > 0; w /= 2)
            for (j = 0; j < w; j++)
                accd[j] += accd[j + w];
        return accd[0] + tail;
    }

    static double gs_sum_chunk_default(const float* x, Py_ssize_t n) {
        return gs_sum_chunk_body(x, n);
    }
    #if GS_AVX2_CLONES
    __attribute__((target("avx2,fma")))
    static double gs_sum_chunk_avx2(const float* x, Py_ssize_t n) {
        return gs_sum_chunk_body(x, n);
    }
    __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")))
    static double gs_sum_chunk_avx512(const float* x, Py_ssize_t n) {
        return gs_sum_chunk_body(x, n);
    }
    #  define GS_SUM_DISPATCH(name, args) \\
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_SUM_DISPATCH(name, args) GS_DISPATCH(name, args)
    #endif

    static double gs_sum_chunk(int gs_avx2, int gs_avx512, const float* x, Py_ssize_t n) {
        return GS_SUM_DISPATCH(gs_sum_chunk, (x, n));
    }
    """
    Py_ssize_t GS_SUM_CHUNK
    double gs_sum_chunk(int avx2, int avx512, const float* x, Py_ssize_t n) noexcept nogil


cdef Py_ssize_t _sum_threshold = 1 << 18
SUM_THRESHOLD = _sum_threshold


cdef int _sum_f32(const float* x, Py_ssize_t n, double* total) noexcept nogil:
    """The sum of x[0:n) into total (Note [sum's threads]); -1 when out of memory."""
    cdef Py_ssize_t nchunks = (n + GS_SUM_CHUNK - 1) // GS_SUM_CHUNK, c
    cdef int nthreads = kernel_threads(n, _sum_threshold)
    cdef int avx2 = kernel_avx2(), avx512 = kernel_avx512()
    cdef double* parts
    cdef double s = 0.0
    if nchunks <= 1 or nthreads <= 1:
        for c in range(nchunks):
            s += gs_sum_chunk(avx2, avx512, x + c * GS_SUM_CHUNK,
                              min(GS_SUM_CHUNK, n - c * GS_SUM_CHUNK))
        total[0] = s
        return 0
    parts = <double*>malloc(nchunks * sizeof(double))
    if parts == NULL:
        return -1
    for c in prange(nchunks, schedule="static", num_threads=nthreads):
        parts[c] = gs_sum_chunk(avx2, avx512, x + c * GS_SUM_CHUNK,
                                min(GS_SUM_CHUNK, n - c * GS_SUM_CHUNK))
    for c in range(nchunks):
        s += parts[c]
    free(parts)
    total[0] = s
    return 0


cdef object sum_dense_f32(cnp.ndarray x):
    """The 0-d float32 sum of a float32 array that is one dense block (C- or F-contiguous,
    aligned, native byte order), or None for any other array."""
    cdef double total = 0.0
    cdef int status
    cdef cnp.ndarray out
    cdef Py_ssize_t n = cnp.PyArray_SIZE(x)
    cdef const float* xp
    if (cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not cnp.PyArray_ISNOTSWAPPED(x)
            or not (cnp.PyArray_ISCARRAY_RO(x) or cnp.PyArray_ISFARRAY_RO(x))):
        return None
    xp = <const float*>cnp.PyArray_DATA(x)
    with nogil:
        status = _sum_f32(xp, n, &total)
    if status < 0:
        raise MemoryError("sum_all: could not allocate the chunks' partial sums")
    out = cnp.PyArray_EMPTY(0, NULL, cnp.NPY_FLOAT, 0)
    (<float*>cnp.PyArray_DATA(out))[0] = <float>total
    return out


def sum_all(x):
    """The sum of every element of a float32 array that is one dense block (C- or
    F-contiguous), as a 0-d float32 array (Note [float32 sum in float lanes and double
    blocks]).

    Raises
    ------
    TypeError
        If x is not a float32 ndarray.
    ValueError
        If x is not one dense block.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sum_all
    >>> float(sum_all(np.arange(10_000, dtype=np.float32)))
    49995000.0
    """
    _check_float_array("sum_all", "x", x)
    if (<cnp.ndarray>x).dtype != np.float32:
        raise TypeError(f"sum_all: x must be a float32 array, got {x.dtype}")
    r = sum_dense_f32(<cnp.ndarray>x)
    if r is None:
        raise ValueError("sum_all: x must be C- or F-contiguous; pass np.ascontiguousarray(x)")
    return r
