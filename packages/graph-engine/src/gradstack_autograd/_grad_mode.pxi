# Included by _core.pyx: thread-local grad mode and inference mode, global anomaly mode.
#
# Note [Grad mode lives in C thread-local storage]
# Every op asks "is grad mode on?"; a threading.local lookup costs ~50 ns, a C __thread
# variable ~1 ns.  New threads start with grad mode on and inference mode off, as torch's.

cdef extern from *:
    """
    static __thread int gs_grad_enabled = 1;
    static __thread int gs_inference_mode = 0;
    static inline int gs_get_grad_enabled(void) { return gs_grad_enabled; }
    static inline void gs_set_grad_enabled(int v) { gs_grad_enabled = v; }
    static inline int gs_get_inference_mode(void) { return gs_inference_mode; }
    static inline void gs_set_inference_mode(int v) { gs_inference_mode = v; }
    """
    int gs_get_grad_enabled() nogil
    void gs_set_grad_enabled(int v) nogil
    int gs_get_inference_mode() nogil
    void gs_set_inference_mode(int v) nogil


cdef bint _anomaly_enabled = False
cdef bint _anomaly_check_nan = True


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
