# The C-level interface of _index_kernels.pyx for the other index kernels
# (_scatter_reduce_kernels.pyx): the strided walk over an index into a target along a dim
# (Note [One strided scatter-add]), its bound check and the argument checks.
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cdef enum:
    MAX_DIMS = 64                 # NPY_MAXDIMS in numpy 2

cdef struct Walk:
    int nd
    int dim
    Py_ssize_t shape[MAX_DIMS]     # index's (and src's) shape
    Py_ssize_t ostr[MAX_DIMS]      # out's strides, in elements
    Py_ssize_t sstr[MAX_DIMS]      # src's
    Py_ssize_t istr[MAX_DIMS]      # index's
    int64_t n                      # out.shape[dim]
    bint wrap                      # negative indices count from the end


cdef inline int64_t _index_at(const char* base, Py_ssize_t offset, bint is64) noexcept nogil:
    """The index at `offset` elements from `base` (int64 or int32)."""
    if is64:
        return (<const int64_t*>base)[offset]
    return (<const int32_t*>base)[offset]


cdef int _index_typenum(str func, str name, object obj) except -1
cdef object _result(object make, object shape, object dtype)
cdef bint _next(const Walk* w, Py_ssize_t* coord, Py_ssize_t* ob, Py_ssize_t* sb,
                Py_ssize_t* ib) noexcept nogil
cdef bint _find_bad(const Walk* w, const char* idx, bint is64, int64_t* bad) noexcept nogil
cdef int _walk(str func, Walk* w, cnp.ndarray target, cnp.ndarray index, cnp.ndarray other,
               int dim, bint wrap) except -1
