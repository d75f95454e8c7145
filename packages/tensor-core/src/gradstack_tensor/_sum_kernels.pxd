cimport numpy as cnp

cdef object sum_dense_f32(cnp.ndarray x)
