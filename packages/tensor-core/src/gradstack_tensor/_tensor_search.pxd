from ._tensor_shape cimport ShapeMethods


cdef class SearchMethods(ShapeMethods):
    pass
