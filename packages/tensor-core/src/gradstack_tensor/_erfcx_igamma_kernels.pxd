# The loops of _erfcx_igamma_kernels.pyx, for _bessel_kernels.unary and binary.


cdef void erfcx_range(int code, int single, int fma, const char* x, char* out,
                      Py_ssize_t start, Py_ssize_t stop) noexcept nogil
cdef void igamma_range(int code, int single, int fma, const char* x, Py_ssize_t sx,
                       const char* y, Py_ssize_t sy, char* out, Py_ssize_t start,
                       Py_ssize_t stop) noexcept nogil
