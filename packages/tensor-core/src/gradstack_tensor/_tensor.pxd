# The C-level interface of gradstack_tensor's core, for layers that cimport it
# (graph-engine reads and writes Tensor state and registers its DispatchLayer here).
cimport numpy as cnp


cdef class VersionCounter:
    # Shared by a tensor and all its views; bumped by every in-place op.
    cdef public Py_ssize_t value
    # (op name, "file:line") of the last in-place write, for error messages
    cdef public object last_writer
    # set by the autograd layer when a saved tensor needs last_writer's location
    cdef public bint track_writes


ctypedef object (*ckernel_t)(Op op, tuple args)


cdef class Op:
    cdef readonly str name
    cdef readonly int kind              # one of the KIND_* constants in _tensor.pyx
    cdef readonly bint inplace          # mutates its first argument
    cdef readonly bint is_view          # its output shares storage with its first argument
    cdef readonly object ufunc          # the numpy ufunc behind an elementwise op, else None
    cdef object _kernel                 # Python-level kernel: kernel(*args) -> result
    cdef ckernel_t _ckernel             # C-level kernel, preferred when set
    cdef public object derivative       # the op's derivative-table entry, set by the autograd layer


cdef class DispatchLayer:
    cdef readonly int priority
    cpdef object handle(self, Op op, tuple args, Py_ssize_t next_index)


cdef class Tensor:
    cdef cnp.ndarray _data
    cdef VersionCounter _vc             # created lazily, shared with views
    cdef Tensor _view_base              # the tensor whose storage this view aliases, or None
    cdef public bint _requires_grad
    cdef public object _grad
    cdef public object _grad_fn
    cdef public Py_ssize_t _output_nr
    cdef public object _autograd_meta   # owned by the autograd layer (hooks, retains_grad ...)
    cdef public object _fw_grad         # forward-mode tangents, owned by the autograd layer
    cdef public bint _is_inference
    cdef dict __dict__
    cdef object __weakref__

    cdef VersionCounter version_counter(self)
    cdef void bump_version(self, str op_name)
    cdef _set_requires_grad(self, bint value)


cdef Tensor wrap(cnp.ndarray data)
cdef Tensor wrap_view(cnp.ndarray data, Tensor base)
cdef cnp.ndarray data_of(Tensor t)
cdef object call_next(Op op, tuple args, Py_ssize_t index)
cpdef object dispatch(Op op, tuple args)
