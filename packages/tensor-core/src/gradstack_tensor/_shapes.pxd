# Argument normalisation shared by the Tensor's method groups; operand overlap checks.

cdef tuple shape_from_args(tuple args, str name)
cdef object dim_arg(object dim)
cpdef check_no_partial_overlap(object dst, object src)
