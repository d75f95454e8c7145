# dtype promotion of binary operands, for the elementwise kernels.

cdef object operand_dtype_info(object x, str arg=*)
cdef tuple promote_binary(object a, object b, int kind)
cdef object cast_operand(object v, object res)
