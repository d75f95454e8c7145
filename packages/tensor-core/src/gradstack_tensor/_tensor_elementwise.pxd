from ._tensor_base cimport TensorBase


# OpTableMethods is written at build time (_op_methods.pxi, which _tensor_elementwise.pyx
# includes): Note [Generated from the op table] in _op_table.py
cdef class OpTableMethods(TensorBase):
    pass


cdef class ElementwiseMethods(OpTableMethods):
    pass
