# numpy's ufuncs called without floating-point warnings (Note [Floating-point warnings]).
cimport numpy as cnp

cdef object quiet_call1(object ufunc, object x)
cdef object quiet_call2(object ufunc, object x, object y)
cdef object quiet_inplace2(object ufunc, cnp.ndarray x, object y)
cdef object quiet_sum(cnp.ndarray x, object axis, bint keepdim)
