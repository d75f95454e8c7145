# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The thread's autograd modes: grad mode, inference mode, batched backward; anomaly mode
and whether forward-mode AD is on (process-wide).

The other modules of the core cimport the getters of ``_grad_mode.pxd``.
"""

# Note [Grad mode lives in C thread-local storage]
# Every op asks "is grad mode on?"; a threading.local lookup costs ~50 ns, a C __thread
# variable ~1 ns (a call through the cimported function's pointer adds a few instructions).
# New threads start with grad mode on and inference mode off, as torch's.  The variables
# must live in one compiled module: each extension would have its own copy of a static.

cdef extern from *:
    """
    static __thread int gs_tls_grad_enabled = 1;
    static __thread int gs_tls_inference_mode = 0;
    static __thread Py_ssize_t gs_tls_grads_batch = -1;
    """
    int gs_tls_grad_enabled
    int gs_tls_inference_mode
    Py_ssize_t gs_tls_grads_batch


cdef int gs_get_grad_enabled() noexcept nogil:
    return gs_tls_grad_enabled


cdef void gs_set_grad_enabled(int v) noexcept nogil:
    global gs_tls_grad_enabled
    gs_tls_grad_enabled = v


cdef int gs_get_inference_mode() noexcept nogil:
    return gs_tls_inference_mode


cdef void gs_set_inference_mode(int v) noexcept nogil:
    global gs_tls_inference_mode
    gs_tls_inference_mode = v


# the batch size of the batched backward running in this thread, -1 when not batched
# (Note [Batched backward] in _engine.pyx)
cdef Py_ssize_t gs_get_grads_batch() noexcept nogil:
    return gs_tls_grads_batch


cdef void gs_set_grads_batch(Py_ssize_t v) noexcept nogil:
    global gs_tls_grads_batch
    gs_tls_grads_batch = v


cdef bint _anomaly_enabled = False
cdef bint _anomaly_check_nan = True
# forward-mode AD registers itself in _forward_ad_hooks.pyx (_set_forward_ad_callback); read
# everywhere
cdef bint _forward_ad_active = False


cdef bint anomaly_enabled() noexcept:
    return _anomaly_enabled


cdef bint anomaly_check_nan() noexcept:
    return _anomaly_check_nan


cdef bint forward_ad_active() noexcept:
    return _forward_ad_active


cdef void set_forward_ad_active(bint active) noexcept:
    global _forward_ad_active
    _forward_ad_active = active


def is_grad_enabled():
    """Whether autograd records ops in this thread (``torch.is_grad_enabled``)."""
    return gs_get_grad_enabled() != 0


def _set_grad_enabled(bint mode):
    """Set this thread's grad mode; returns the previous mode."""
    cdef bint prev = gs_get_grad_enabled() != 0
    gs_set_grad_enabled(mode)
    return prev


def is_inference_mode_enabled():
    """Whether inference mode is on in this thread."""
    return gs_get_inference_mode() != 0


def _set_inference_mode(bint mode):
    """Set this thread's inference mode; returns the previous mode."""
    cdef bint prev = gs_get_inference_mode() != 0
    gs_set_inference_mode(mode)
    return prev


def is_anomaly_enabled():
    """Whether anomaly detection is on (process-wide, as torch's)."""
    return _anomaly_enabled


def is_anomaly_check_nan_enabled():
    return _anomaly_check_nan


def _set_anomaly_enabled(bint mode, bint check_nan=True):
    """Set anomaly detection; returns the previous ``(mode, check_nan)``."""
    global _anomaly_enabled, _anomaly_check_nan
    prev = (_anomaly_enabled, _anomaly_check_nan)
    _anomaly_enabled = mode
    _anomaly_check_nan = check_nan
    return prev


def grads_batched():
    """Whether the backward pass running in this thread is batched (Note [Batched backward])."""
    return gs_get_grads_batch() >= 0


def grads_batch_size():
    """The batch size of the batched backward running in this thread, or -1."""
    return gs_get_grads_batch()


def forward_ad_enabled():
    """Whether forward-mode AD hooks are installed (a dual level is open)."""
    return _forward_ad_active
