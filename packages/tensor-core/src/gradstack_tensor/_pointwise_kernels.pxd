cimport numpy as cnp

cdef object sign_dense(cnp.ndarray x)
cdef object sign_dense_inplace(cnp.ndarray x)
cdef object exp2_dense(cnp.ndarray x)
