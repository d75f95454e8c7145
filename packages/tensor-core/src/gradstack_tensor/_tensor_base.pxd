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
    # the autograd layer's: weak references to the tensors sharing this counter whose
    # views it tracks (a list, or None), so that a write through any alias of the storage
    # reaches them (``x.detach().add_(1)``)
    cdef public object views_base
    # tensor-core's lazy views of this storage (Note [The conjugate and negative bits] in
    # lazy_views.py): a WeakSet of their records, or None; every write syncs them
    cdef public object lazy_views


cdef class TensorBase:
    # the fields of every Tensor (the class gradstack_tensor.Tensor adds only methods)
    # the storage, never NULL (Note [A tensor always has storage])
    cdef cnp.ndarray _data
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
cdef TensorBase make_view(cnp.ndarray data, TensorBase base)
cdef TensorBase new_empty_tensor(type cls)
cdef object dtype_of_array(cnp.ndarray a)
cdef object autograd_extension()
cdef object need_autograd(str what)
cdef TensorBase expect_other(object x, str name)


cdef inline cnp.ndarray data_of(TensorBase t):
    return t._data


# Note [Shapes are built in C]
# ``ndarray.shape`` goes through attribute lookup and numpy's getter (~350 instructions by
# callgrind); the graph asks for a shape on every recorded edge.  ``shape_of`` builds the
# same tuple of ints from the array's dims directly (~80; ints below 257 are CPython's
# cached objects, and the 0-d shape is the empty tuple singleton, as numpy's is).
#
# Note [The last shape is shared]
# A chain of ops on one shape asks for the same shape over and over, and each new tuple is
# an allocation, a GC link and, when the graph goes, a deallocation (~300 instructions per
# recorded edge).  A tuple of ints is immutable, so the tuple built last (one per module
# that cimports this file; the GIL orders the calls) is returned again while the dims
# match it.  Nothing in gradstack compares shapes by identity.
cdef extern from *:
    """
    static PyObject* gs_last_shape = NULL;
    static PyObject* gs_shape_tuple(PyArrayObject* a) {
        int nd = PyArray_NDIM(a), i;
        npy_intp* dims = PyArray_DIMS(a);
        PyObject* last = gs_last_shape;
        PyObject* t;
        if (last != NULL && PyTuple_GET_SIZE(last) == nd) {
            for (i = 0; i < nd; i++) {
                Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(last, i));
                if (v != (Py_ssize_t)dims[i]) break;
            }
            if (i == nd) { Py_INCREF(last); return last; }
        }
        t = PyTuple_New(nd);
        if (t == NULL) return NULL;
        for (i = 0; i < nd; i++) {
            PyObject* v = PyLong_FromSsize_t((Py_ssize_t)dims[i]);
            if (v == NULL) { Py_DECREF(t); return NULL; }
            PyTuple_SET_ITEM(t, i, v);
        }
        Py_INCREF(t);
        Py_XSETREF(gs_last_shape, t);
        return t;
    }
    """
    tuple gs_shape_tuple(cnp.ndarray a)


cdef inline tuple shape_of(cnp.ndarray a):
    """``a.shape``, built in C (Note [Shapes are built in C])."""
    return gs_shape_tuple(a)


cdef inline cnp.ndarray as_ndarray(object r):
    """``r`` as an ndarray: numpy returns 0-d results as scalars."""
    if cnp.PyArray_Check(r):
        return <cnp.ndarray>r
    return cnp.PyArray_FROM_O(r)
