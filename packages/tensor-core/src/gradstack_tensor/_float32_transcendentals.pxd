# The float32 sin, cos and tanh loops of _float32_transcendentals.pyx, for _elementwise.pyx
# and, through gradstack_tensor.extension, for graph-engine's backward kernels.
cimport numpy as cnp


cdef void trig_f32_range(bint want_sin, float sign, const float* g, Py_ssize_t g_step,
                         const float* x, float* out, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil
cdef object transcendental_f32(int which, cnp.ndarray x)
cdef tuple sincos_f32(cnp.ndarray x)
