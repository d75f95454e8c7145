# The float32 sin, cos and tanh loops of _float32_transcendentals.pyx, for _elementwise.pyx
# and, through gradstack_tensor.extension, for graph-engine's backward kernels.
cimport numpy as cnp


cdef void trig_f32_range(bint want_sin, float sign, const float* g, Py_ssize_t g_step,
                         const float* x, float* out, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil
cdef object transcendental_f32(int which, cnp.ndarray x)
cdef tuple sincos_f32(cnp.ndarray x)
# float32 tanh on [start, stop) (Note [float32 tanh]), for _rnn_kernels.pyx; out must not
# be x (the libm pass for |x| > 1e15 and nan reads x again)
cdef void _tanh_range(const float* x, float* out, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil
