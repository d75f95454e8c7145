from ._tensor_shape cimport ShapeMethods


cdef class CompositeMethods(ShapeMethods):
    pass
