# Small helpers that the modules of the core share, compiled into each of them (cdef inline:
# no call through another module's function table on the hot paths that use them).
cimport numpy as cnp

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    void PyObject_GC_Track(void* op)
    int PyObject_GC_IsTracked(object op)
    bint PyObject_IS_GC(object op)


cdef inline void untrack(object o) noexcept:
    """Hide ``o`` from the cyclic GC (Note [Nodes are invisible to the cyclic GC]).

    Only objects of GC types have the header PyObject_GC_UnTrack writes to.
    """
    if PyObject_IS_GC(o):
        PyObject_GC_UnTrack(<void*>o)


cdef inline void retrack(object o) noexcept:
    """Show ``o`` to the cyclic GC again (Note [Saved intermediates are invisible ...])."""
    if o is not None and PyObject_IS_GC(o) and not PyObject_GC_IsTracked(o):
        PyObject_GC_Track(<void*>o)


cdef inline bint kernel_operand(cnp.ndarray a, int typenum, cnp.ndarray like) noexcept:
    """``a`` is a C-contiguous, aligned, native-order array of ``like``'s shape and dtype
    (what tensor-core's ``kernels.fusable`` checks, in C)."""
    return (cnp.PyArray_TYPE(a) == typenum and cnp.PyArray_ISCARRAY_RO(a)
            and cnp.PyArray_ISNOTSWAPPED(a) and cnp.PyArray_SAMESHAPE(a, like))
