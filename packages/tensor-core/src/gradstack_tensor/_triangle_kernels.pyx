# cython: language_level=3
"""``triangle``: torch's ``tril``/``triu`` of a C-contiguous array in one pass, each row a
copy of the kept part and a zero fill of the rest (Note [tril and triu by rows]).

The ops ``tril`` and ``triu`` (``_impl_linalg.py``) take it for every dtype numpy stores
without Python objects, and so do their backward formulas (``grad.tril(diagonal)``).  Its
arguments are checked before any memory is touched, and its threads set, by
``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels.triangle``.
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.string cimport memcpy, memset

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport kernel_parallel_threshold, kernel_threads

import operator

import numpy as np

cnp.import_array()

__all__ = ["triangle"]

# Note [tril and triu by rows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's triu is ``where(tri(n, m, k - 1), zeros, x)``: a boolean mask of the matrix's
# size is built, then a three-operand select walks it (10**6 float32 elements: ~1.0 ms
# forward, 1.65x torch's with the backward, which is a triu too).  Row i of a matrix keeps
# the columns j >= i + diagonal (triu) or j <= i + diagonal (tril), one contiguous run, so
# each row is one memcpy of the kept run and one memset of the other: one read and one
# write of the data, at memory speed (torch's apply_triu_tril does the same per row).  The
# zero of every numeric dtype numpy stores (bool, integers, floats, complex) is all-zero
# bits, +0.0 for floats as torch's.  Rows are split across threads from
# kernel_parallel_threshold() elements (a memory-bound pass, as _kernels.pyx's threshold);
# every element is written alike whatever the split.  ``out`` may be ``x`` itself (the
# in-place form): then only the dropped runs are written.


cdef void _rows(const char* x, char* out, Py_ssize_t first, Py_ssize_t last,
                Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t item, Py_ssize_t diagonal,
                bint upper) noexcept nogil:
    cdef Py_ssize_t r, i, cut, width = cols * item
    cdef const char* src
    cdef char* dst
    for r in range(first, last):
        i = r % rows
        src = x + r * width
        dst = out + r * width
        cut = i + diagonal + (0 if upper else 1)   # the first column of the upper run
        if cut < 0:
            cut = 0
        elif cut > cols:
            cut = cols
        if upper:       # zeros, then the kept run
            memset(dst, 0, cut * item)
            if dst != src:
                memcpy(dst + cut * item, src + cut * item, (cols - cut) * item)
        else:           # the kept run, then zeros
            if dst != src:
                memcpy(dst, src, cut * item)
            memset(dst + cut * item, 0, (cols - cut) * item)


cdef void _run(const char* x, char* out, Py_ssize_t nrows, Py_ssize_t rows, Py_ssize_t cols,
               Py_ssize_t item, Py_ssize_t diagonal, bint upper, int nthreads) noexcept nogil:
    cdef Py_ssize_t r
    if nthreads <= 1 or nrows < 2:
        _rows(x, out, 0, nrows, rows, cols, item, diagonal, upper)
        return
    for r in prange(nrows, schedule="static", num_threads=nthreads):
        _rows(x, out, r, r + 1, rows, cols, item, diagonal, upper)


def triangle(x, diagonal=0, upper=False, out=None):
    """torch's ``tril(x, diagonal)`` (``upper=False``) or ``triu(x, diagonal)``
    (``upper=True``) of every matrix of ``x`` (its last two dims), in one pass (Note [tril
    and triu by rows]).

    Parameters
    ----------
    x : ndarray
        At least 2-d, C-contiguous, of any dtype without Python objects.
    diagonal : int
        The diagonal kept last (tril) or first (triu): 0 the main one, > 0 above it.
    upper : bool
        triu when True, else tril.
    out : ndarray, optional
        ``x`` itself, to write the result in place (the only ``out`` taken); by default a
        new C-contiguous array of ``x``'s shape and dtype.

    Returns
    -------
    ndarray
        ``out``, or the new array.

    Raises
    ------
    TypeError
        If ``x`` is not an ndarray, holds Python objects, ``diagonal`` is not an integer,
        or ``out`` is neither None nor ``x``.
    ValueError
        If ``x`` has fewer than 2 dims, is not C-contiguous, or is read-only with ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import triangle
    >>> triangle(np.arange(1., 10.).reshape(3, 3), upper=True)
    array([[1., 2., 3.],
           [0., 5., 6.],
           [0., 0., 9.]])
    >>> triangle(np.ones((2, 3), np.int64), -1)
    array([[0, 0, 0],
           [1, 0, 0]])
    """
    cdef str func = "triangle"
    if not cnp.PyArray_Check(x):
        raise TypeError(f"{func}: x must be a numpy array, got {type(x).__name__}")
    cdef cnp.ndarray a = <cnp.ndarray>x
    if a.dtype.hasobject:
        raise TypeError(f"{func}: x holds Python objects ({a.dtype}); use np.triu/np.tril")
    if cnp.PyArray_NDIM(a) < 2:
        raise ValueError(f"{func}: x must have at least 2 dims, got {cnp.PyArray_NDIM(a)}")
    if not cnp.PyArray_ISCARRAY_RO(a) or not cnp.PyArray_ISNOTSWAPPED(a):
        raise ValueError(
            f"{func}: x must be C-contiguous in native byte order; pass np.ascontiguousarray(x)"
        )
    try:
        k = operator.index(diagonal)
    except TypeError:
        raise TypeError(
            f"{func}: diagonal must be an integer, got {type(diagonal).__name__}"
        ) from None
    cdef Py_ssize_t rows = cnp.PyArray_DIMS(a)[cnp.PyArray_NDIM(a) - 2]
    cdef Py_ssize_t cols = cnp.PyArray_DIMS(a)[cnp.PyArray_NDIM(a) - 1]
    # |diagonal| beyond the matrix changes nothing: clamp before the C arithmetic
    cdef Py_ssize_t kd = max(-rows - 1, min(cols + 1, k))
    cdef cnp.ndarray result
    if out is None:
        enter_op()
        try:
            result = np.empty_like(a, order="C")
        finally:
            exit_op()
    elif out is x:
        if not cnp.PyArray_ISWRITEABLE(a):
            raise ValueError(f"{func}: out is x, which is read-only")
        result = a
    else:
        raise TypeError(f"{func}: out must be None or x itself (the in-place form)")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    if n == 0:
        return result
    cdef Py_ssize_t nrows = n // cols
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(a)
    cdef int nthreads = kernel_threads(n, kernel_parallel_threshold())
    cdef const char* xp = <const char*>cnp.PyArray_DATA(a)
    cdef char* op_ = <char*>cnp.PyArray_DATA(result)
    cdef bint up = bool(upper)
    with nogil:
        _run(xp, op_, nrows, rows, cols, item, kd, up, nthreads)
    return result
