# The thread's autograd modes, for the other modules of the core (cimported: C calls).
#
# The state is C thread-local storage that lives in this one extension module (a
# ``static __thread`` variable exists once per compiled module): the other modules read
# and write it only through these functions (Note [Grad mode lives in C thread-local storage]).

cdef int gs_get_grad_enabled() noexcept nogil
cdef void gs_set_grad_enabled(int v) noexcept nogil
cdef int gs_get_inference_mode() noexcept nogil
cdef void gs_set_inference_mode(int v) noexcept nogil
cdef Py_ssize_t gs_get_grads_batch() noexcept nogil
cdef void gs_set_grads_batch(Py_ssize_t v) noexcept nogil

cdef bint anomaly_enabled() noexcept
cdef bint anomaly_check_nan() noexcept
cdef bint forward_ad_active() noexcept
cdef void set_forward_ad_active(bint active) noexcept
