# Argument normalisation shared by the Tensor's method groups.

cdef tuple shape_from_args(tuple args, str name)
cdef object dim_arg(object dim)
