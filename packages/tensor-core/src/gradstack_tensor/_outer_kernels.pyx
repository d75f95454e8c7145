# cython: language_level=3
"""``outer``: the outer product ``x[i] * y[j]`` of two float32/float64 vectors in one pass
(Note [The outer product by rows]).

The op ``outer`` (``_impl_linalg.py``) takes it for float32/float64 vectors, and so does
``mv``'s backward (``grad.outer(vec)``).  Arguments are checked before any memory is
touched, and threads set, by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels.outer``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport kernel_avx2, kernel_parallel_threshold, kernel_threads, real

import numpy as np

cnp.import_array()

__all__ = ["outer"]

# Note [The outer product by rows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's multiply.outer (and x[:, None] * y) walks the broadcast operands through its
# generic iterator: ~0.5-0.7 ns an element for a 1000 x 1000 float32 result, where
# torch's ger writes it at memory speed (~0.05 ns: 10x faster; mv's backward, whose grad
# of the matrix is this outer product, took 1.5x torch's time).  Row i of the result is
# x[i] times y: one vectorised loop per row, each element one float product (the bits of
# torch's and numpy's).  Rows are split across threads from kernel_parallel_threshold()
# elements (a memory-bound pass, as _kernels.pyx's threshold); the split does not change
# any element.


cdef extern from *:
    """
    /* Note [The outer product by rows]; GS_BODY, GS_DISPATCH: _kernels.pxd */
    #define GS_OUTER_BODY(name, T)                                                   \
    GS_BODY void name(T* restrict out, const T* restrict x, const T* restrict y,     \
                      Py_ssize_t first, Py_ssize_t last, Py_ssize_t m) {             \
        for (Py_ssize_t i = first; i < last; i++) {                                  \
            T a = x[i];                                                              \
            T* restrict row = out + i * m;                                           \
            for (Py_ssize_t j = 0; j < m; j++)                                       \
                row[j] = a * y[j];                                                   \
        }                                                                            \
    }
    GS_OUTER_BODY(gs_outer_body_f32, float)
    GS_OUTER_BODY(gs_outer_body_f64, double)
    #define GS_OUTER_COPIES(T, SUF, attr, CLONE)                                     \
    attr static void gs_outer_##SUF##_##CLONE(T* out, const T* x, const T* y,        \
                                              Py_ssize_t a, Py_ssize_t b,            \
                                              Py_ssize_t m)                          \
    { gs_outer_body_##SUF(out, x, y, a, b, m); }
    GS_OUTER_COPIES(float, f32, , default)
    GS_OUTER_COPIES(double, f64, , default)
    #if GS_AVX2_CLONES
    GS_OUTER_COPIES(float, f32, __attribute__((target("avx2"))), avx2)
    GS_OUTER_COPIES(double, f64, __attribute__((target("avx2"))), avx2)
    #endif
    static void gs_outer_f32(int gs_avx2, float* out, const float* x, const float* y,
                             Py_ssize_t a, Py_ssize_t b, Py_ssize_t m)
    { GS_DISPATCH(gs_outer_f32, (out, x, y, a, b, m)); }
    static void gs_outer_f64(int gs_avx2, double* out, const double* x, const double* y,
                             Py_ssize_t a, Py_ssize_t b, Py_ssize_t m)
    { GS_DISPATCH(gs_outer_f64, (out, x, y, a, b, m)); }
    """
    void gs_outer_f32(int avx2, float* out, const float* x, const float* y, Py_ssize_t first,
                      Py_ssize_t last, Py_ssize_t m) noexcept nogil
    void gs_outer_f64(int avx2, double* out, const double* x, const double* y,
                      Py_ssize_t first, Py_ssize_t last, Py_ssize_t m) noexcept nogil


cdef inline void _rows(real* out, const real* x, const real* y, Py_ssize_t first,
                       Py_ssize_t last, Py_ssize_t m) noexcept nogil:
    if real is float:
        gs_outer_f32(kernel_avx2(), out, x, y, first, last, m)
    else:
        gs_outer_f64(kernel_avx2(), out, x, y, first, last, m)


cdef void _run(real* out, const real* x, const real* y, Py_ssize_t n, Py_ssize_t m,
               int nthreads) noexcept nogil:
    cdef Py_ssize_t i
    if nthreads <= 1 or n < 2:
        _rows(out, x, y, 0, n, m)
        return
    for i in prange(n, schedule="static", num_threads=nthreads):
        _rows(out, x, y, i, i + 1, m)


cdef int _vector(str name, object v) except -1:
    if not cnp.PyArray_Check(v):
        raise TypeError(f"outer: {name} must be a numpy array, got {type(v).__name__}")
    cdef cnp.ndarray a = <cnp.ndarray>v
    cdef int num = cnp.PyArray_TYPE(a)
    if num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE:
        raise TypeError(f"outer: {name} must be float32 or float64, got {a.dtype}")
    if cnp.PyArray_NDIM(a) != 1:
        raise ValueError(f"outer: {name} must be 1-d, got {cnp.PyArray_NDIM(a)} dims")
    if not cnp.PyArray_ISCARRAY_RO(a) or not cnp.PyArray_ISNOTSWAPPED(a):
        raise ValueError(
            f"outer: {name} must be contiguous in native byte order; pass "
            "np.ascontiguousarray"
        )
    return num


def outer(x, y):
    """The outer product ``out[i, j] = x[i] * y[j]`` of two vectors, in one pass (Note [The
    outer product by rows]).

    Parameters
    ----------
    x, y : ndarray
        1-d, float32 or float64 (the same), contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous ``(len(x), len(y))`` array of their dtype.

    Raises
    ------
    TypeError
        If an argument is not a float32/float64 array, or their dtypes differ.
    ValueError
        If an argument is not 1-d and contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import outer
    >>> outer(np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]))
    array([[ 3.,  4.,  5.],
           [ 6.,  8., 10.]])
    """
    cdef int num = _vector("x", x)
    if _vector("y", y) != num:
        raise TypeError(f"outer: x and y must have one dtype, got {x.dtype} and {y.dtype}")
    cdef Py_ssize_t n = cnp.PyArray_DIMS(<cnp.ndarray>x)[0]
    cdef Py_ssize_t m = cnp.PyArray_DIMS(<cnp.ndarray>y)[0]
    enter_op()
    try:
        out = np.empty((n, m), dtype=x.dtype)
    finally:
        exit_op()
    if n == 0 or m == 0:
        return out
    cdef int nthreads = kernel_threads(n * m, kernel_parallel_threshold())
    cdef void* op_ = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef const void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef const void* yp = cnp.PyArray_DATA(<cnp.ndarray>y)
    with nogil:
        if num == cnp.NPY_FLOAT:
            _run(<float*>op_, <const float*>xp, <const float*>yp, n, m, nthreads)
        else:
            _run(<double*>op_, <const double*>xp, <const double*>yp, n, m, nthreads)
    return out
