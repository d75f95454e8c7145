# The loop of _polynomial_kernels.pyx, for _bessel_kernels.binary.


cdef void polynomial_range(int code, int single, int fma, const char* x, Py_ssize_t sx,
                           const char* y, Py_ssize_t sy, char* out, Py_ssize_t start,
                           Py_ssize_t stop) noexcept nogil
