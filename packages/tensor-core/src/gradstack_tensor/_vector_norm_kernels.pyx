# cython: language_level=3
"""The sum of squares of an array, ``sum_of_squares``: the vector 2-norm's one pass
(Note [The 2-norm in one pass]), behind ``norm``/``linalg.vector_norm`` over every element
and so behind ``clip_grad_norm_``.

Its argument is checked, and its threads set, by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport (
    _check_input, kernel_avx2, kernel_block_size, kernel_parallel_threshold, kernel_threads,
    real,
)

cnp.import_array()

__all__ = ["sum_of_squares"]

cdef enum:
    MAX_THREADS = 256

# Note [The 2-norm in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's 2-norm is three passes and two temporaries of the input's size (abs, the
# squares, their sum): for a 20000 x 64 embedding's gradient, 10 MiB held and three reads
# of 5 MiB in every clip_grad_norm_.  This kernel reads the array once and keeps nothing:
# sixteen double accumulators (independent lanes, which the compiler packs into vectors,
# AVX2 copy by Note [AVX2 clones]), each element squared in double and the lanes added
# pairwise at the end.  The float32 norm is then the correctly rounded one but for rare
# ties, where torch's float32 accumulation drifts with the size (1.6e-5 relative for
# 1.28M standard normals, one thread): gradstack's value is the exact one, within the
# float32 tolerance of torch's that the tests use.  Threads each take a contiguous block from
# kernel_parallel_threshold() elements on (a memory-bound pass, _kernels.pyx's threshold);
# their partial sums are added in block order, so a thread count gives one result.


cdef extern from *:
    """
    /* Note [The 2-norm in one pass]; GS_BODY and GS_DISPATCH: _kernels.pxd */
    #define GS_SQ_LANES 16

    #define GS_SQ_BODY(name, T)                                                      \
    GS_BODY double name(const T* x, Py_ssize_t start, Py_ssize_t stop) {             \
        double acc[GS_SQ_LANES] = {0};                                               \
        Py_ssize_t i = start;                                                        \
        int j;                                                                       \
        for (; i + GS_SQ_LANES <= stop; i += GS_SQ_LANES)                            \
            for (j = 0; j < GS_SQ_LANES; j++)                                        \
                acc[j] += (double)x[i + j] * (double)x[i + j];                       \
        for (j = 0; i < stop; i++, j++)                                              \
            acc[j] += (double)x[i] * (double)x[i];                                   \
        for (j = GS_SQ_LANES / 2; j > 0; j /= 2) {                                   \
            int k;                                                                   \
            for (k = 0; k < j; k++)                                                  \
                acc[k] += acc[k + j];                                                \
        }                                                                            \
        return acc[0];                                                               \
    }
    GS_SQ_BODY(gs_sq_body_f32, float)
    GS_SQ_BODY(gs_sq_body_f64, double)

    static double gs_sq_f32_default(const float* x, Py_ssize_t a, Py_ssize_t b) {
        return gs_sq_body_f32(x, a, b);
    }
    static double gs_sq_f64_default(const double* x, Py_ssize_t a, Py_ssize_t b) {
        return gs_sq_body_f64(x, a, b);
    }
    #if GS_AVX2_CLONES
    #include <immintrin.h>
    /* The lanes of the default copy in four ymm registers (lane j in register j / 4), so
       both copies add the same squares in the same order (the AVX2 copy with FMAs);
       written with intrinsics, as GCC leaves the lane loop scalar. */
    #define GS_SQ_AVX2(name, T, LOAD)                                                \
    __attribute__((target("avx2,fma")))                                              \
    static double name(const T* x, Py_ssize_t start, Py_ssize_t stop) {              \
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, v;              \
        double acc[GS_SQ_LANES];                                                     \
        Py_ssize_t i = start;                                                        \
        int j;                                                                       \
        for (; i + GS_SQ_LANES <= stop; i += GS_SQ_LANES) {                          \
            v = LOAD(x + i);      s0 = _mm256_fmadd_pd(v, v, s0);                    \
            v = LOAD(x + i + 4);  s1 = _mm256_fmadd_pd(v, v, s1);                    \
            v = LOAD(x + i + 8);  s2 = _mm256_fmadd_pd(v, v, s2);                    \
            v = LOAD(x + i + 12); s3 = _mm256_fmadd_pd(v, v, s3);                    \
        }                                                                            \
        _mm256_storeu_pd(acc, s0);                                                   \
        _mm256_storeu_pd(acc + 4, s1);                                               \
        _mm256_storeu_pd(acc + 8, s2);                                               \
        _mm256_storeu_pd(acc + 12, s3);                                              \
        for (j = 0; i < stop; i++, j++)                                              \
            acc[j] += (double)x[i] * (double)x[i];                                   \
        for (j = GS_SQ_LANES / 2; j > 0; j /= 2) {                                   \
            int k;                                                                   \
            for (k = 0; k < j; k++)                                                  \
                acc[k] += acc[k + j];                                                \
        }                                                                            \
        return acc[0];                                                               \
    }
    #define GS_SQ_LOAD_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
    GS_SQ_AVX2(gs_sq_f32_avx2, float, GS_SQ_LOAD_F32)
    GS_SQ_AVX2(gs_sq_f64_avx2, double, _mm256_loadu_pd)
    #endif
    static double gs_sq_f32(int gs_avx2, const float* x, Py_ssize_t a, Py_ssize_t b) {
        return GS_DISPATCH(gs_sq_f32, (x, a, b));
    }
    static double gs_sq_f64(int gs_avx2, const double* x, Py_ssize_t a, Py_ssize_t b) {
        return GS_DISPATCH(gs_sq_f64, (x, a, b));
    }
    """
    double gs_sq_f32(int avx2, const float* x, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    double gs_sq_f64(int avx2, const double* x, Py_ssize_t start,
                     Py_ssize_t stop) noexcept nogil


cdef inline double _squares(const real* x, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    if real is float:
        return gs_sq_f32(kernel_avx2(), x, start, stop)
    else:  # (an else, so that Cython's float specialisation has no unreachable line)
        return gs_sq_f64(kernel_avx2(), x, start, stop)


cdef double _sum_squares(const real* x, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef double partial[MAX_THREADS]
    cdef Py_ssize_t block, start, step
    cdef double total = 0
    if nthreads <= 1:
        return _squares(x, 0, n)
    if nthreads > MAX_THREADS:
        nthreads = MAX_THREADS
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        partial[block] = _squares(x, start, min(start + step, n))
    for block in range(nthreads):
        total = total + partial[block]
    return total


def sum_of_squares(x):
    """The sum of the squares of ``x``'s elements, accumulated in double, in one pass
    (Note [The 2-norm in one pass]): ``sqrt`` of it is ``x``'s 2-norm.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous, any shape (0-size gives 0.0).

    Returns
    -------
    float
        The sum, a Python float (round it to float32 after the ``sqrt`` for a float32
        norm).

    Raises
    ------
    TypeError
        If ``x`` is not a float32/float64 array.
    ValueError
        If ``x`` is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sum_of_squares
    >>> sum_of_squares(np.array([3.0, 4.0], np.float32))
    25.0
    >>> sum_of_squares(np.zeros((0, 3)))
    0.0
    """
    cdef int typenum = _check_input("sum_of_squares", "x", x)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    cdef const void* p = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef int nthreads = kernel_threads(n, kernel_parallel_threshold())
    cdef double r
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            r = _sum_squares(<const float*>p, n, nthreads)
        else:
            r = _sum_squares(<const double*>p, n, nthreads)
    return r
