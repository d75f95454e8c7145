from ._tensor_elementwise cimport ElementwiseMethods


cdef class ReductionMethods(ElementwiseMethods):
    pass
