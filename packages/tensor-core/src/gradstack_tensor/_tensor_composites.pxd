from ._tensor_search cimport SearchMethods


cdef class CompositeMethods(SearchMethods):
    pass
