from ._tensor_reductions cimport ReductionMethods


cdef class ShapeMethods(ReductionMethods):
    pass
