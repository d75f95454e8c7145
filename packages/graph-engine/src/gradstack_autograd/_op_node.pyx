# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""``OpNode``, the node recorded from a row of the derivative table, and its classes.

Each node class (``MulBackward0`` ...) is a subclass of ``OpNode`` made once per name
(``node_class_of``), with torch's ``_saved_<name>`` attributes as properties (Note [Saved
values by name]); its ``apply`` runs the entry's formula, or the native first-order formula
or fused kernel that may replace it (``run_fused``).  ``OpNode`` and ``node_class_of`` are
declared in ``_op_node.pxd`` for the layer, the view nodes and the engine.
"""
cimport cython
cimport numpy as cnp
from gradstack_tensor.extension cimport Tensor, data_of, enter_op, exit_op, wrap

from gradstack_autograd._derivative cimport Derivative
from gradstack_autograd._grad_mode cimport forward_ad_active, gs_get_grad_enabled
from gradstack_autograd._native cimport NATIVE_NONE, native_apply
from gradstack_autograd._node cimport Node, SavedTensor, check_saved

from gradstack_autograd import _backward_kernels

try:
    from gradstack_tensor import kernels as _kernels
except ImportError:  # pragma: no cover - a tensor-core build without the fused kernels
    _kernels = None

cnp.import_array()


cdef dict _NODE_CLASSES = {}


# Note [Saved values by name]
# torch exposes what each built-in node saved as ``grad_fn._saved_<name>``, named as
# the argument in derivatives.yaml (``_saved_self``, ``_saved_other``, ``_saved_dim``,
# ``_saved_result`` for the output, ``_saved_self_sym_sizes`` for an input's shape).
# The entry knows each saved value's name (``slots``); the node class gets one property
# per name when an entry first uses it (a class may be shared by several entries: the
# property reads the node's own entry), so these attributes read the node's saved tuple
# through the same unpacking as the formula: a tensor saved and freed by a backward
# raises torch's "Trying to backward through the graph a second time" error, a tensor
# modified in place since raises the version error, and values that are not tensors come
# back as saved (ints, tuples, None), or as torch shows them where the entry says how
# (``shown``: a reduction's dims as a tuple of torch's uint64 values, a loss's reduction as
# its enum, narrow's start/end/step, sum over everything without dim and keepdim ...;
# the formulas still read the values as saved).  ``grad_fn._raw_saved_<name>`` is the SavedTensor
# itself (a list of them for a saved tensor list), whose ``register_hooks(pack, unpack)``
# packs it at once and unpacks it at every read, as torch's.  Properties, not
# ``__getattr__``: a ``__getattr__`` on the node type made every failed attribute lookup
# on a node cost more.


_A_TENSOR = object()     # a saved tensor, in a ``shown`` dict (Note [Saved values by name])
cdef str _EXTRA = "__extra__"  # the node's ``extra``, in a ``shown`` dict


cdef inline bint _holds_saved_tensors(object v):
    """Whether a saved slot holds a tensor (or a list of them: cat's ``tensors``)."""
    return isinstance(v, SavedTensor) or (
        type(v) is tuple and len(<tuple>v) > 0 and isinstance((<tuple>v)[0], SavedTensor))


def _saved_property(str name):
    def read(OpNode node):
        return node._saved_attribute(name)
    return property(read, doc=f"torch's ``{name}``: a value the node saved (None if not saved)")


cdef void _add_saved_properties(object cls, Derivative d) except *:
    names = ["_saved_" + k for k in d.slots] + ["_raw_saved_" + k for k in d.slots] + [
        "_saved_" + n + "_sym_sizes" for n, _ in d.sizes] + [
        "_saved_" + n for n in d.shown_names]
    for name in names:
        if name not in cls.__dict__:
            setattr(cls, name, _saved_property(name))


def _node_class(str name):
    """The Node subclass called ``name`` (one per name, shared by all ops that use it)."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = type(name, (OpNode,), {
            "__slots__": (), "__module__": "gradstack_autograd.nodes",
            "__doc__": f"Backward node {name} (see the derivative table).",
        })
        _NODE_CLASSES[name] = cls
    return cls


cdef object make_node_class(Derivative d, tuple args):
    """The node class of ``d`` for a call with ``args`` (the inline ``node_class_of`` in
    ``_op_node.pxd`` returns an entry's one class without calling this)."""
    name = d.node_name if isinstance(d.node_name, str) else d.node_name(args)
    cls = d._classes.get(name)
    if cls is None:
        cls = _node_class(name)
        _add_saved_properties(cls, d)
        d._classes[name] = cls
        if isinstance(d.node_name, str):
            d._fixed_class = cls            # one name: no lookup next time
    return cls


@cython.no_gc
@cython.binding(False)
cdef class OpNode(Node):
    """A node recorded from an op of the derivative table; its formula is ``entry.backward``."""

    @property
    def needs_input_grad(self):
        """One bool per differentiable input: whether a gradient is wanted for it."""
        cdef list out = []
        for e in self.next_edges:
            out.append((<tuple>e)[0] is not None)
        return tuple(out)

    @property
    def _saved_tensors(self):
        # torch's built-in nodes have no saved_tensors: their saved values are the
        # ``_saved_<name>`` attributes (a tuple mixing tensors and ints misled users)
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '_saved_tensors' (its saved "
            f"values are the attributes {', '.join(self._saved_names()) or '(none)'})"
        )

    cdef Py_ssize_t _slot(self, str name) except -2:
        return (<Derivative?>self.entry).slot(name)

    cdef dict _shown(self, Derivative d):
        """The entry's ``shown`` view of the saved values: name -> value, a saved tensor
        standing as ``_A_TENSOR`` (read through the unpacking when asked for)."""
        cdef dict values = {}
        for k, i in d.slots.items():
            v = self.saved[<Py_ssize_t>i] if self.saved is not None else None
            if _holds_saved_tensors(v):
                v = _A_TENSOR
            elif k == "result" and v is None and d.output_for is not None:
                continue    # this overload saves no result (pow by a number)
            values[k] = v
        for name, index in d.sizes:
            values[name + "_sym_sizes"] = (<tuple>self.next_edges[<Py_ssize_t>index])[2]
        values[_EXTRA] = self.extra     # (for a presenter that shows what extra holds)
        values = d.shown(values)
        values.pop(_EXTRA, None)
        return values

    cdef list _saved_names(self):
        """torch's ``_saved_*`` attribute names of this node (Note [Saved values by name])."""
        cdef Derivative d
        cdef list names = []
        if not isinstance(self.entry, Derivative):
            return names
        d = <Derivative>self.entry
        if d.shown is not None:
            for k, v in self._shown(d).items():
                names.append("_saved_" + k)
                if v is _A_TENSOR:
                    names.append("_raw_saved_" + k)
            return names
        for k, i in d.slots.items():
            v = self.saved[<Py_ssize_t>i] if self.saved is not None else None
            if k == "result" and d.output_for is not None and self.saved is not None and v is None:
                continue    # this overload saves no result (pow by a number)
            names.append("_saved_" + k)
            if _holds_saved_tensors(v):
                names.append("_raw_saved_" + k)
        for name, _ in d.sizes:
            names.append("_saved_" + name + "_sym_sizes")
        return names

    def __dir__(self):
        # the class's _saved_* properties may belong to another entry sharing the class
        names = {n for n in object.__dir__(self) if not n.startswith(("_saved_", "_raw_saved_"))}
        return sorted(names | set(self._saved_names()))

    cdef object _saved_attribute(self, str name):
        """``grad_fn._saved_<key>`` (Note [Saved values by name])."""
        cdef Derivative d
        cdef object k
        if isinstance(self.entry, Derivative):
            d = <Derivative>self.entry
            if name.startswith("_raw_saved_"):
                k = d.slots.get(name[11:])
                if k is not None and self.saved is not None:
                    v = self.saved[<Py_ssize_t>k]
                    if _holds_saved_tensors(v):
                        return v if isinstance(v, SavedTensor) else list(<tuple>v)
                    if v is None:   # not saved by this call: torch's SavedTensor of None
                        return SavedTensor.__new__(SavedTensor)
                raise AttributeError(
                    f"'{type(self).__name__}' object has no attribute '{name}' (only a saved "
                    "tensor has a raw SavedTensor)"
                )
            key = name[7:]
            if d.shown is not None:
                shown = self._shown(d)
                if key not in shown:
                    raise AttributeError(
                        f"'{type(self).__name__}' object has no attribute '{name}'"
                    )
                if shown[key] is not _A_TENSOR:
                    return shown[key]
            k = d.slots.get(key)
            if k is not None:
                if self.saved is None:
                    return None
                return self.saved_value(<Py_ssize_t>k)
            for size_name, index in d.sizes:
                if key == size_name + "_sym_sizes":
                    return (<tuple>self.next_edges[<Py_ssize_t>index])[2]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def fused(self, *tensors):
        """Run the entry's ``fused`` kernel on the tensors' arrays, or None when it must not
        or cannot run (create_graph, forward AD, arrays the kernel does not take): the
        formula then computes with gradstack ops (Note [Native first-order formulas])."""
        cdef Derivative d = <Derivative?>self.entry
        if d.fused is None:
            raise RuntimeError(f"{d.op_name}'s entry names no fused kernel")
        if _kernels is None:
            return None
        return run_fused(getattr(_backward_kernels, d.fused), tensors)

    def input_shape(self, Py_ssize_t i):
        """The shape of differentiable input ``i`` when the op ran (None if it needs no grad)."""
        return (<tuple>self.next_edges[i])[2]

    cpdef tuple apply(self, tuple grads):
        if not isinstance(self.entry, Derivative) or grads is None:
            raise TypeError(
                f"{type(self).__name__}.apply() needs a node recorded from an op (its entry "
                f"is {type(self.entry).__name__}) and a tuple of gradients"
            )
        cdef Derivative d = <Derivative>self.entry
        cdef object r, e
        for e in self.next_edges:
            if (<tuple>e)[0] is not None:
                break
        else:
            # no input takes a gradient (a view made under no_grad, as torch's, has no
            # edge): nothing to compute, and the formula would find no input shapes.  torch
            # runs the node all the same: its NotImplemented node raises, and any other
            # node unpacks what it saved (Note [A node unpacks what it saved even when no
            # gradient arrives]; fuzz seed 33 #23729, seed 32 #8839)
            if d.backward is None:
                raise RuntimeError(f"derivative for aten::{d.op_name} is not implemented")
            if self.name() == "NotImplemented":
                return d.backward(self, *grads)     # raises, as torch's node does
            check_saved(self)
            return (None,) * len(self.next_edges)
        if d.native != NATIVE_NONE:
            r = native_apply(self, d.native, grads)
            if r is not None:
                return <tuple>r
        fn = d.backward
        if fn is None:      # a row without a formula (torch's NotImplemented node)
            raise RuntimeError(f"derivative for aten::{d.op_name} is not implemented")
        # the formula's arrays are gradstack's, for the block cache, also those it makes
        # with numpy itself (Note [A linear layer's gradients as two GEMMs]; Note [Inside a
        # gradstack op] in tensor-core's _dispatch.pyx)
        enter_op()
        try:
            r = fn(self, grads[0]) if len(grads) == 1 else fn(self, *grads)
        finally:
            exit_op()
        if type(r) is not tuple:
            r = tuple(r) if isinstance(r, list) else (r,)
        return r


def run_fused(kernel, tuple tensors not None):
    """``kernel(*arrays)`` wrapped back into tensors, or None when it must not or cannot run.

    Used by the derivative table's first-order fast paths: never with grad mode on
    (create_graph) nor while forward-mode AD is active (a kernel on raw arrays would drop
    the graph or the tangents), and only when ``_kernels.fusable`` accepts the arrays.
    Written here, in C, because it runs once per hot backward node.
    """
    cdef Py_ssize_t i, n = len(tensors)
    cdef list arrays
    if _kernels is None or gs_get_grad_enabled() or forward_ad_active():
        return None
    arrays = [None] * n
    for i in range(n):
        if not isinstance(tensors[i], Tensor):
            raise TypeError(
                f"run_fused() expects a tuple of Tensors, got {type(tensors[i]).__name__} "
                f"at position {i}"
            )
        arrays[i] = data_of(<Tensor>tensors[i])
    if not _kernels.fusable(*arrays) and not (
            n == 2 and kernel in _backward_kernels.BROADCAST_GRAD_KERNELS
            and _backward_kernels.is_broadcast_grad(arrays[0], arrays[1])
            and _kernels.fusable(arrays[1])):
        return None             # (a broadcast gradient: Note [A broadcast gradient is one number])
    enter_op()  # the result is gradstack's, for the block cache (Note [Inside a gradstack op])
    try:
        r = kernel(*arrays)
    finally:
        exit_op()
    if type(r) is tuple:
        return tuple([wrap(<cnp.ndarray?>a) for a in <tuple>r])
    return wrap(<cnp.ndarray?>r)
