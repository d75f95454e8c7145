# The C state of a tensor, for the modules that cimport it: tensor-core's kernels and the
# Tensor's method groups, and, through gradstack_tensor/extension.pxd, the layers above.
cimport numpy as cnp


cdef class VersionCounter:
    # Shared by a tensor and all its views; bumped by every in-place op.
    cdef public Py_ssize_t value
    # (op name, "file:line") of the last in-place write, for error messages
    cdef public object last_writer
    # set by the autograd layer when a saved tensor needs last_writer's location
    cdef public bint track_writes


cdef class TensorBase:
    # the fields of every Tensor (the class gradstack_tensor.Tensor adds only methods)
    cdef cnp.ndarray _data              # the storage, never NULL (Note [A tensor always has storage])
    cdef VersionCounter _vc             # created lazily, shared with views
    cdef TensorBase _view_base          # the tensor whose storage this view aliases, or None
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


cdef TensorBase make_tensor(cnp.ndarray data)
cdef TensorBase new_empty_tensor(type cls)
cdef object dtype_of_array(cnp.ndarray a)
cdef object autograd_extension()
cdef object need_autograd(str what)
cdef TensorBase expect_other(object x, str name)


cdef inline cnp.ndarray data_of(TensorBase t):
    return t._data


cdef inline tuple shape_of(cnp.ndarray a):
    return (<object>a).shape


cdef inline cnp.ndarray as_ndarray(object r):
    """``r`` as an ndarray: numpy returns 0-d results as scalars."""
    if cnp.PyArray_Check(r):
        return <cnp.ndarray>r
    return cnp.PyArray_FROM_O(r)
