# Gradient arithmetic in C that the layer and the engine cimport from _native.pyx: the
# native first-order formulas and the reduction of broadcast gradients (sum_to).
cimport numpy as cnp
from gradstack_tensor.extension cimport Tensor

from gradstack_autograd._node cimport Node

cdef enum NativeFormula:
    NATIVE_NONE = 0
    NATIVE_ADD = 1
    NATIVE_MUL = 2
    NATIVE_DIV = 3
    NATIVE_SUB = 4

cdef int native_code(str fused) except -1
cdef object native_apply(Node node, int formula, tuple grads)

cdef object np_sum_to(cnp.ndarray g, tuple shape)
cdef bint broadcastable_to(tuple shape, tuple target) except -1
cdef object sum_to(Tensor g, tuple shape)
