# The C-level interface of the kernels for other modules (through
# gradstack_tensor.extension for the layers above; Note [Kernels of the layers above]).
cimport cython
cimport numpy as cnp


@cython.cdivision(True)
cdef inline Py_ssize_t kernel_block_size(Py_ssize_t n, int nblocks) noexcept nogil:
    """Elements per block when `n` elements are split into `nblocks` contiguous blocks."""
    return (n + nblocks - 1) // nblocks


cdef int kernel_threads(Py_ssize_t n, Py_ssize_t threshold) noexcept nogil
cdef Py_ssize_t kernel_parallel_threshold() noexcept nogil
cdef int kernel_avx2() noexcept nogil
cdef int _check_input(str func, str name, object obj) except -1
cdef int _check_same(str func, str name_a, object a, str name_b, object b) except -1
cdef void trig_f32_range(bint want_sin, float sign, const float* g, Py_ssize_t g_step,
                         const float* x, float* out, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil
cdef object transcendental_f32(int which, cnp.ndarray x)
cdef tuple sincos_f32(cnp.ndarray x)
