# gradstack_tensor.Tensor, the last link of the class chain (_tensor_base.pyx), and the
# functions that make tensors.  Its C fields are TensorBase's.  Layers above cimport the
# public gradstack_tensor/extension.pxd.
cimport numpy as cnp
from ._tensor_base cimport TensorBase
from ._tensor_composites cimport CompositeMethods


cdef class Tensor(CompositeMethods):
    pass


cdef Tensor wrap(cnp.ndarray data)
cdef Tensor wrap_view(cnp.ndarray data, TensorBase base)
cdef Tensor expect_tensor(object x, str name)
