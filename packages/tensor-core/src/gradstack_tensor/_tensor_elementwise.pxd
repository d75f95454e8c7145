from ._tensor_base cimport TensorBase


cdef class ElementwiseMethods(TensorBase):
    pass
