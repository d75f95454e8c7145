# cython: language_level=3
"""``nextafter``: torch's ``nextafter`` (C's ``std::nextafter``) of two float32 or float64
arrays by integer operations on their bits, one vectorised pass (Note [nextafter by the
bits]).

The op ``nextafter`` and its in-place form take it through ``nextafter_ufunc``, numpy's
``np.nextafter`` calling convention (``_op_table.py``); other layouts, broadcasting and
dtypes keep numpy's loop.  Arguments are checked before any memory is touched, threads set
by ``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels.nextafter``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport kernel_avx2, kernel_block_size, kernel_parallel_threshold, kernel_threads

import numpy as np

cnp.import_array()

__all__ = ["nextafter", "nextafter_ufunc"]

# Note [nextafter by the bits]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's nextafter loop calls libm's nextafterf per element (~7 ns, with its branches):
# 10**6 float32 pairs took 5x torch's time (19x with the graph recorded).  With b the bits
# of x and c those of y, as C's nextafter: nan if either is nan (x's, else y's, quiet);
# y if x == y (+0.0 == -0.0 included); the smallest subnormal with y's sign if x is +-0;
# else b + 1 when y lies beyond x away from zero (y > x > 0 or y < x < 0), b - 1 when
# towards it (inf steps to the largest finite value).  The order of x and y is that of
# their bits mapped to a monotonic signed integer (b ^ ((b >> 31) & 0x7fffffff)), so every
# test is an integer compare and every choice an integer select, which GCC vectorises
# (AVX2 copies, Note [AVX2 clones] in _kernels.pyx).  A memory-bound pass: split across
# threads from kernel_parallel_threshold() elements; each element is computed alike.


cdef extern from *:
    """
    /* Note [nextafter by the bits]; GS_BODY and GS_DISPATCH: _kernels.pxd */
    #include <stdint.h>
    #include <string.h>

    #define GS_NA_BODY(name, T, U, S, SIGN, ABS, INF, QUIET)                           \\
    GS_BODY void name(const T* x, const T* y, T* out, Py_ssize_t start,                \\
                      Py_ssize_t stop) {                                               \\
        for (Py_ssize_t i = start; i < stop; i++) {                                    \\
            U b, c, r;                                                                 \\
            memcpy(&b, x + i, sizeof b);                                               \\
            memcpy(&c, y + i, sizeof c);                                               \\
            U bm = b & ABS, cm = c & ABS;                                              \\
            U xnan = (U)0 - (U)(bm > INF), ynan = (U)0 - (U)(cm > INF);                \\
            U equal = (U)0 - (U)((b == c) | ((bm | cm) == 0));                         \\
            U zero = (U)0 - (U)(bm == 0);                                              \\
            S kb = (S)(b ^ ((U)((S)b >> (sizeof(U) * 8 - 1)) & ABS));                  \\
            S kc = (S)(c ^ ((U)((S)c >> (sizeof(U) * 8 - 1)) & ABS));                  \\
            U up = (U)(kc > kb), positive = (U)((S)b > 0);                             \\
            r = b + (U)1 - ((U)((up ^ positive) & 1) << 1);   /* b + 1 or b - 1 */      \\
            r = (r & ~zero) | (((c & SIGN) | (U)1) & zero);                            \\
            r = (r & ~equal) | (c & equal);                                            \\
            r = (r & ~ynan) | ((c | QUIET) & ynan);                                    \\
            r = (r & ~xnan) | ((b | QUIET) & xnan);                                    \\
            memcpy(out + i, &r, sizeof r);                                             \\
        }                                                                              \\
    }
    GS_NA_BODY(gs_na_f32_body, float, uint32_t, int32_t, 0x80000000u, 0x7fffffffu,
               0x7f800000u, 0x00400000u)
    GS_NA_BODY(gs_na_f64_body, double, uint64_t, int64_t, 0x8000000000000000ULL,
               0x7fffffffffffffffULL, 0x7ff0000000000000ULL, 0x0008000000000000ULL)

    #define GS_NA_CLONE(suffix, attr)                                                  \\
        attr static void gs_na_##suffix(int single, const void* x, const void* y,      \\
                                        void* out, Py_ssize_t a, Py_ssize_t b) {       \\
            if (single) gs_na_f32_body((const float*)x, (const float*)y, (float*)out,  \\
                                       a, b);                                          \\
            else gs_na_f64_body((const double*)x, (const double*)y, (double*)out,      \\
                                a, b);                                                 \\
        }
    GS_NA_CLONE(default, )
    #if GS_AVX2_CLONES
    GS_NA_CLONE(avx2, __attribute__((target("avx2"))))
    #endif
    static void gs_na(int gs_avx2, int single, const void* x, const void* y, void* out,
                      Py_ssize_t a, Py_ssize_t b) {
        GS_DISPATCH(gs_na, (single, x, y, out, a, b));
    }
    """
    void gs_na(int avx2, int single, const void* x, const void* y, void* out,
               Py_ssize_t start, Py_ssize_t stop) noexcept nogil


cdef bint _takes(object a, int num, tuple shape):
    """Whether ``a`` is an ndarray of typenum ``num`` and ``shape``, C-contiguous, aligned,
    in native byte order."""
    return (cnp.PyArray_Check(a) and cnp.PyArray_TYPE(<cnp.ndarray>a) == num
            and (<object>a).shape == shape
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a))


cdef object _run(cnp.ndarray x, cnp.ndarray y, cnp.ndarray out):
    cdef Py_ssize_t n = cnp.PyArray_SIZE(x), block, start, step
    cdef int nthreads = kernel_threads(n, kernel_parallel_threshold())
    cdef int avx2 = kernel_avx2()
    cdef int single = cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT
    cdef const void* xp = cnp.PyArray_DATA(x)
    cdef const void* yp = cnp.PyArray_DATA(y)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            gs_na(avx2, single, xp, yp, op_, 0, n)
        return out
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            gs_na(avx2, single, xp, yp, op_, min(start, n), min(start + step, n))
    return out


cdef cnp.ndarray _empty_like(object x):
    """A new C-contiguous array like ``x``, allocated as an op's (Note [Inside a gradstack
    op] in _dispatch.pyx)."""
    enter_op()
    try:
        return np.empty_like(x, order="C")
    finally:
        exit_op()


def nextafter(x, y):
    """The next representable value after ``x`` towards ``y``, elementwise (C's and
    torch's ``nextafter``, Note [nextafter by the bits]).

    Parameters
    ----------
    x, y : ndarray
        float32 or float64 (the same), one shape, C-contiguous.

    Returns
    -------
    ndarray
        A new C-contiguous array of their shape and dtype.

    Raises
    ------
    TypeError
        If an argument is not a float32/float64 ndarray, or their dtypes differ.
    ValueError
        If their shapes differ or one is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import nextafter
    >>> nextafter(np.array([1.0, 0.0, 2.0]), np.array([2.0, -1.0, 2.0])) - [1, 0, 2]
    array([ 2.22044605e-016, -4.94065646e-324,  0.00000000e+000])
    """
    for name, a in (("x", x), ("y", y)):
        if not cnp.PyArray_Check(a) or a.dtype not in (np.float32, np.float64):
            raise TypeError(
                f"nextafter: {name} must be a float32 or float64 array, got "
                f"{getattr(a, 'dtype', type(a).__name__)}"
            )
    if x.dtype != y.dtype:
        raise TypeError(f"nextafter: x and y must have one dtype, got {x.dtype} and {y.dtype}")
    if x.shape != y.shape:
        raise ValueError(f"nextafter: x and y must have one shape, got {x.shape} and {y.shape}")
    cdef int num = cnp.PyArray_TYPE(<cnp.ndarray>x)
    if not _takes(x, num, x.shape) or not _takes(y, num, x.shape):
        raise ValueError("nextafter: x and y must be C-contiguous; pass np.ascontiguousarray")
    return _run(<cnp.ndarray>x, <cnp.ndarray>y, _empty_like(x))


def nextafter_ufunc(x, y, out=None, casting="same_kind", **kwargs):
    """``np.nextafter(x, y, out=out, casting=casting, **kwargs)``, by the bits
    (:func:`nextafter`) when x, y and ``out`` are C-contiguous float32/float64 arrays of one
    shape and dtype (``out`` may be ``x``: the in-place op; no cast is then made, whatever
    ``casting`` allows); numpy's loop otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import nextafter_ufunc
    >>> nextafter_ufunc(np.float32([1.0]), np.float32([0.0])) < 1
    array([ True])
    """
    cdef int num
    if not kwargs and cnp.PyArray_Check(x):
        num = cnp.PyArray_TYPE(<cnp.ndarray>x)
        if ((num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE) and _takes(x, num, x.shape)
                and _takes(y, num, x.shape)):
            if out is None:
                return _run(<cnp.ndarray>x, <cnp.ndarray>y, _empty_like(x))
            if _takes(out, num, x.shape) and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>out) and (
                    out is x or out is y or not np.shares_memory(out, x)
                    and not np.shares_memory(out, y)):
                return _run(<cnp.ndarray>x, <cnp.ndarray>y, <cnp.ndarray>out)
    if out is not None:
        kwargs["out"] = out
    return np.nextafter(x, y, casting=casting, **kwargs)
