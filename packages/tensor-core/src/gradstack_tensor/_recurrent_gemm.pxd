# cython: language_level=3
# The C entry point of the packed-weight product, for the layer loops of _rnn_kernels.pyx
# (Note [A layer's steps in one C loop] there).

cdef int panel_kernel_available() noexcept nogil
cdef void panel_matmul_into(const float* a, const float* panels, const float* bias,
                            float* c, Py_ssize_t M, Py_ssize_t K,
                            Py_ssize_t N) noexcept nogil
