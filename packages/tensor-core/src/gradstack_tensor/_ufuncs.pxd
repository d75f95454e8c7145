# numpy's ufuncs called without floating-point warnings (Note [Floating-point warnings]).
cimport numpy as cnp

cdef object quiet_call1(object ufunc, object x)
cdef object quiet_call2(object ufunc, object x, object y)
cdef object quiet_inplace2_into(object ufunc, object x, object y, cnp.ndarray out)
cdef object quiet_sum(cnp.ndarray x, object axis, bint keepdim, object dtype)
cdef object quiet_cast(object r, object dtype)
cdef bint unary_float_inplace(object ufunc, cnp.ndarray x) except -1
