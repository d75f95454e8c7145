# The binary backward kernels of _backward_kernels.pyx for C callers (_native.pyx's native
# formulas), without a module lookup and a Python call per node.  Unlike the Python
# functions mul_backward and div_backward they do not check their operands: the caller
# has (float32 or float64, one dtype and one shape, C-contiguous, aligned, native byte
# order: _inline.pxd's kernel_operand for all three).
cimport numpy as cnp

cdef tuple mul_backward_c(cnp.ndarray grad, cnp.ndarray a, cnp.ndarray b)
cdef tuple div_backward_c(cnp.ndarray grad, cnp.ndarray a, cnp.ndarray b)
