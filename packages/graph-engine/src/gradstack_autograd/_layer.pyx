# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The autograd dispatch layer: derivative-table rows (``Derivative``), recording nodes
(``OpNode``), in-place ops and views (``CopySlices``, ``AsStridedBackward0``), forward-mode
AD's hooks.

``Derivative`` and ``OpNode`` are declared for the engine in ``_layer.pxd``.
"""
cimport cython
from cpython.object cimport PyObject, PyTypeObject
from cpython.type cimport PyType_IsSubtype
cimport numpy as cnp
from gradstack_tensor.extension cimport (
    DispatchLayer, Op, Tensor, call_next, data_of, enter_op, exit_op, set_byproduct_wanted,
    shape_of, wrap, wrap_view,
)

from gradstack_autograd._grad_mode cimport (
    anomaly_enabled, forward_ad_active, gs_get_grad_enabled, gs_get_inference_mode,
    gs_set_grad_enabled, set_forward_ad_active,
)
from gradstack_autograd._inline cimport untrack
from gradstack_autograd._native cimport (
    NATIVE_NONE, broadcastable_to, native_apply, native_code, np_sum_to, sum_to,
)
from gradstack_autograd._node cimport (
    AutogradMeta, Node, SavedTensor, _check_node_grads, check_saved, gradient_edge,
    materialize_zeros,
    meta_of, next_sequence_nr, save_tensor,
)

import traceback
import operator
import weakref

import numpy as np

from gradstack_autograd import _backward_kernels
from gradstack_autograd._node import NO_EDGE

try:
    from gradstack_tensor import kernels as _kernels
except ImportError:  # pragma: no cover - a tensor-core build without the fused kernels
    _kernels = None

cnp.import_array()

# how a view was made (Note [Views follow in-place writes on their base])
cdef enum ViewCreation:
    VIEW_DEFAULT = 0
    VIEW_NO_GRAD = 1
    VIEW_MULTI_OUTPUT = 2

@cython.binding(False)
cdef class Derivative:
    """One op's entry in the derivative table: everything about differentiating it.

    Built by ``derivatives.register`` from names (read that module for the table itself);
    the engine, the native fast path (``fused``), forward mode (``jvp``) and vmap
    (``batch_rule``) all read this one object.  Names are resolved to argument positions
    once, here, so that recording a node costs no lookup by name (Note [Entries by name]).

    Its fields are declared in ``_layer.pxd`` (the engine reads ``batchable``).
    """

    def __init__(self, str op_name, node_name, backward, tuple inputs=(0,), tuple save=(),
                 bint save_output=False, bint list_input=False, bint differentiable=True,
                 extra=None, jvp=None, bint batchable=True, tuple save_for=None,
                 tuple output_for=None, tuple signature=(), str fused=None,
                 tuple sizes=(), batch_rule=None, tuple save_if=None, output_if=None):
        cdef Py_ssize_t i
        if save_for is not None and len(save_for) != len(save):
            raise ValueError(f"{op_name}: save_for needs one entry per save position")
        self.op_name = op_name
        self.signature = signature
        self.save_for = save_for
        if save_if is not None and len(save_if) != len(save):
            raise ValueError(f"{op_name}: save_if needs one entry per save position")
        self.save_if = save_if
        self.output_if = output_if
        self.output_for = output_for
        self.node_name = node_name
        self.backward = backward
        self.inputs = inputs
        self.save = save
        self.save_output = save_output
        self.list_input = list_input
        self.differentiable = differentiable
        self.extra = extra
        self.jvp = jvp
        self.batch_rule = batch_rule
        self.batchable = batchable
        self.fused = fused
        self.native = native_code(fused)
        self.sizes = sizes
        self.shown = None
        self.shown_names = ()
        self.byproduct = False
        self.keeps_zero = None
        self.slots = {}
        for i in range(len(save)):
            pos = <Py_ssize_t>save[i]
            self.slots[signature[pos] if pos < len(signature) else f"arg{pos}"] = i
        if save_output:
            self.slots["result"] = len(save)
        self._classes = {}

    cpdef Py_ssize_t slot(self, str name) except -2:
        """The index in ``node.saved`` of the saved value ``name`` (KeyError if not saved)."""
        cdef object i = self.slots.get(name)
        if i is None:
            raise KeyError(
                f"{self.op_name}'s entry saves no value named {name!r} "
                f"(it saves {', '.join(self.slots) or 'nothing'})"
            )
        return <Py_ssize_t>i

    cdef object node_class(self, tuple args):
        if self._fixed_class is not None:
            return self._fixed_class
        name = self.node_name if isinstance(self.node_name, str) else self.node_name(args)
        cls = self._classes.get(name)
        if cls is None:
            cls = _node_class(name)
            _add_saved_properties(cls, self)
            self._classes[name] = cls
            if isinstance(self.node_name, str):
                self._fixed_class = cls         # one name: no lookup next time
        return cls

    def __repr__(self):
        return f"<Derivative of {self.op_name}>"


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
        cls = type(name, (OpNode,), {"__slots__": (), "__module__": "gradstack_autograd.nodes",
                                     "__doc__": f"Backward node {name} (see the derivative table)."})
        _NODE_CLASSES[name] = cls
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


# ----------------------------------------------------------------------------------------
# Recording


cdef inline bint _requires_grad(object x):
    return isinstance(x, Tensor) and (<Tensor>x)._requires_grad


cdef bint _any_requires_grad(tuple args):
    for a in args:
        if isinstance(a, Tensor):
            if (<Tensor>a)._requires_grad:
                return True
        elif type(a) is tuple or type(a) is list:
            for b in a:
                if _requires_grad(b):
                    return True
    return False


cdef inline bint _is_float_tensor(object x):
    cdef int num
    if not isinstance(x, Tensor):
        return False
    num = cnp.PyArray_TYPE(data_of(<Tensor>x))
    return num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE or num == cnp.NPY_FLOAT16


cdef object _save_value(object v, Node node):
    if isinstance(v, Tensor):
        return save_tensor(<Tensor>v, False, node)
    if type(v) is tuple or type(v) is list:
        return _save_values(v, node)
    return v


cdef tuple _save_values(object values, Node node):
    # (a loop of its own: a generator expression in _save_value would make Cython allocate
    # its closure on every call, also for the plain values that are most of them)
    cdef list out = []
    for x in values:
        out.append(_save_value(x, node))
    return tuple(out)


cdef void _check_view_usable(Tensor x, AutogradMeta meta) except *:
    """Raise torch's error for a no_grad or multi-output view that may no longer be used
    with grad mode on (Note [Views follow in-place writes on their base])."""
    if meta.view_stale:
        _raise_stale_view(x, meta)
    if (meta.view_creation == VIEW_MULTI_OUTPUT and x._grad_fn is not None
            and x.version_counter().value != meta.base_version):
        # written since through an alias autograd does not see (``v.detach()``, whose
        # writes move the shared version): torch finds the version moved and refuses
        # to rebuild the grad_fn of such a view (fuzz seed 4 #11584)
        meta.view_stale = True
        _raise_stale_view(x, meta)
    if (meta.view_creation == VIEW_NO_GRAD
            and x.version_counter().value != meta.base_version
            and (x._grad_fn is not None
                 or (x._view_base is not None and x._view_base._requires_grad))):
        # written since (through any alias): torch's regeneration of its grad_fn
        # refuses it (fuzz seed 8 #12458), also for a view of such a view made with grad
        # mode on, which has a grad_fn (seed 33 #16437).  A view without a grad_fn whose
        # base does not require grad (one the user gave requires_grad_()) is its own leaf:
        # torch returns its null grad_fn before it looks at the version.
        meta.view_stale = True
        _raise_stale_view(x, meta)


# Note [A stale view's error comes before the kernel's]
# torch's autograd kernel collects the inputs' edges (reading a view's grad_fn, which
# refuses a stale one) before it calls the op's kernel, whose own errors (shapes that do
# not broadcast, a float tensor in bitwise_and ...) come after.  The recording layer here
# runs the kernel first and collects edges after it; when the kernel raises, it checks the
# inputs that require grad for stale views, and raises the view's error instead (fuzz seed
# 20 #15542, seed 26 #6106).  Ops whose kernel runs are unchanged: a non-differentiable op
# (comparisons, argmax, isnan, detach, ``.int()`` ...) uses such a view freely, in torch as
# here, and a recorded op refuses it when it collects the edges.

cdef void _check_inputs_usable(tuple args) except *:
    for x in args:
        if isinstance(x, Tensor):
            if (<Tensor>x)._requires_grad and (<Tensor>x)._autograd_meta is not None:
                _check_view_usable(<Tensor>x, <AutogradMeta?>(<Tensor>x)._autograd_meta)
        elif type(x) is tuple or type(x) is list:
            for y in x:
                if isinstance(y, Tensor) and (<Tensor>y)._requires_grad \
                        and (<Tensor>y)._autograd_meta is not None:
                    _check_view_usable(<Tensor>y, <AutogradMeta?>(<Tensor>y)._autograd_meta)


cdef inline object _input_edge(object x):
    """The edge an op's input ``x`` sends its gradient along (NO_EDGE if none)."""
    cdef AutogradMeta meta
    if not _requires_grad(x):
        return NO_EDGE
    if (<Tensor>x)._autograd_meta is not None:
        meta = <AutogradMeta?>(<Tensor>x)._autograd_meta
        _check_view_usable(<Tensor>x, meta)
        meta.grad_fn_unread = False     # torch regenerates it here (collect_next_edges)
        if ((<Tensor>x)._grad_fn is None and meta.view_creation == VIEW_NO_GRAD
                and (<Tensor>x)._view_base is not None
                and (<Tensor>x)._view_base._requires_grad):
            # torch: a view made under no_grad of a base that requires grad requires grad
            # too, and feeds nothing; one the user gave requires_grad_() is its own leaf
            # (fuzz seed 30 #12903)
            return NO_EDGE
        if meta.requires_grad_from_base and not _regenerate_view(<Tensor>x, meta):
            return NO_EDGE      # Note [A view follows its base's requires_grad_()]
        if meta.history_apart_from_base:
            _regenerate_history_apart_from_base(<Tensor>x, meta)
    return gradient_edge(<Tensor>x)


cdef str _MULTI_OUTPUT_ADVICE = (
    " This view is the output of a function that returns multiple views. Such functions do "
    "not allow the output views to be modified inplace. You should replace the inplace "
    "operation by an out-of-place one."
)


cdef void _raise_stale_view(Tensor t, AutogradMeta meta) except *:
    """torch's refusal to use a no_grad or multi-output view whose base was written since."""
    if meta.view_creation == VIEW_MULTI_OUTPUT and t._grad_fn is None:
        raise RuntimeError(
            "A view was created in no_grad mode and its base or another view of its base has "
            "been modified inplace with grad mode enabled." + _MULTI_OUTPUT_ADVICE
        )
    if meta.view_creation == VIEW_MULTI_OUTPUT:
        raise RuntimeError(
            f"Output {t._output_nr} of {_node_op_name(t)} is a view and its base or another view "
            "of its base has been modified inplace. This view is the output of a function "
            "that returns multiple views. Such functions do not allow the output views to be "
            "modified inplace. You should replace the inplace operation by an out-of-place one."
        )
    if t._grad_fn is not None:
        raise RuntimeError(
            f"Output {t._output_nr} of {_node_op_name(t)} is a view of a view which was "
            "created in no_grad mode and its base or another view of its base has been "
            "modified inplace with grad mode enabled. Given that this use case is ambiguous "
            "and error-prone, it is forbidden. You can clarify your code by moving both the "
            "view and the inplace either both inside the no_grad block (if you don't want the "
            "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
        )
    raise RuntimeError(
        "A view was created in no_grad mode and its base or another view of its base has "
        "been modified inplace with grad mode enabled. Given that this use case is ambiguous "
        "and error-prone, it is forbidden. You can clarify your code by moving both the view "
        "and the inplace either both inside the no_grad block (if you don't want the inplace "
        "to be tracked) or both outside (if you want the inplace to be tracked)."
    )


cdef inline object _edge_at(tuple args, Py_ssize_t pos, Py_ssize_t nargs):
    return _input_edge(args[pos] if pos < nargs else None)


cdef tuple _NO_ARGS = ()


cdef OpNode _make_node(Derivative d, tuple args):
    # the class's C tp_new, called directly: ``OpNode.__new__(cls)`` compiles to a method
    # call by name (~950 instructions per node, callgrind).  node_class makes the
    # classes (subclasses of OpNode); tp_new with no arguments is what __new__ runs.
    cdef type cls = <type?>d.node_class(args)
    if not PyType_IsSubtype(cls, OpNode):
        raise TypeError(f"{d.op_name}: node class {cls!r} is not an OpNode subclass")
    cdef OpNode node = <OpNode>(<PyTypeObject*>cls).tp_new(cls, <PyObject*>_NO_ARGS, NULL)
    untrack(node)     # Note [Nodes are invisible to the cyclic GC]
    cdef tuple positions = d.inputs
    cdef Py_ssize_t i, n, nargs = len(args)
    cdef object x
    cdef list edges
    node.entry = d
    node.sequence_nr = next_sequence_nr()
    if d.list_input:
        edges = [_input_edge(x) for x in args[positions[0]]]
        node.next_edges = tuple(edges)
        untrack(node.next_edges)
    else:
        n = len(positions)
        if n == 1:      # most ops have one or two inputs: build the tuple directly
            node.next_edges = (_edge_at(args, <Py_ssize_t>positions[0], nargs),)
        elif n == 2:
            node.next_edges = (_edge_at(args, <Py_ssize_t>positions[0], nargs),
                               _edge_at(args, <Py_ssize_t>positions[1], nargs))
        else:
            edges = [NO_EDGE] * n
            for i in range(n):
                edges[i] = _edge_at(args, <Py_ssize_t>positions[i], nargs)
            node.next_edges = tuple(edges)
        untrack(node.next_edges)
    if anomaly_enabled():
        # called from C, format_stack() starts at the Python frame that ran the op: keep it
        node.anomaly_trace = "".join(traceback.format_stack())
    return node


cdef void _attach_outputs(OpNode node, object out) except *:
    cdef Tensor t
    cdef Py_ssize_t i
    if isinstance(out, Tensor):
        t = <Tensor>out
        if _is_float_tensor(t):
            t._grad_fn = node
            t._output_nr = 0
            t._requires_grad = True
        return
    if type(out) is tuple or isinstance(out, tuple):
        node.num_outputs = len(out)
        for i in range(len(out)):
            if _is_float_tensor(out[i]):
                t = <Tensor>out[i]
                t._grad_fn = node
                t._output_nr = i
                t._requires_grad = True


# Note [Save what a gradient needs]
# torch saves a value only when the gradient of an input that requires grad reads it:
# ``a * b`` with only ``a`` requiring grad saves ``b`` alone, so writing into ``a`` in
# place afterwards is fine.  A row's ``save_for`` says, per saved position, which inputs'
# gradients read it; a value no wanted gradient reads is not saved (None in its slot),
# so it neither holds memory nor raises a false "modified by an inplace operation".


cdef inline bint _wanted(Derivative d, OpNode node, Py_ssize_t i):
    """Whether the i-th saved position is read by the gradient of an input that needs one."""
    cdef object which
    if d.save_for is None:
        return True
    which = d.save_for[i]
    if which is None:
        return True
    for k in which:
        if (<tuple>node.next_edges[<Py_ssize_t>k])[0] is not None:
            return True
    return False


cdef list _saved_args(Derivative d, OpNode node, tuple args):
    """The saved values of the op's arguments (the output's are appended by the caller)."""
    cdef tuple positions = d.save
    cdef Py_ssize_t i, pos, nargs = len(args)
    cdef list saved = [None] * len(positions)
    for i in range(len(positions)):
        pos = positions[i]
        if pos < nargs and _wanted(d, node, i) and (
                d.save_if is None or d.save_if[i] is None or d.save_if[i](args)):
            saved[i] = _save_value(args[pos], node)
    return saved


cdef inline bint _output_wanted(Derivative d, tuple args):
    """Whether torch's overload of this call saves the output (``output_for``)."""
    cdef Py_ssize_t pos
    if d.output_if is not None and not d.output_if(args):
        return False
    if d.output_for is None:
        return True
    for k in d.output_for:
        pos = <Py_ssize_t>d.inputs[<Py_ssize_t>k]
        if pos < len(args) and isinstance(args[pos], Tensor):
            return True
    return False


cdef void _save_output(Derivative d, OpNode node, list saved, object out,
                       tuple args) except *:
    if d.save_output and not _output_wanted(d, args):
        saved.append(None)  # (pow by a number: its output is never read)
    elif d.save_output:
        if isinstance(out, Tensor):
            saved.append(save_tensor(<Tensor>out, True, node))
        else:
            saved.append(tuple(save_tensor(<Tensor>o, True, node) if isinstance(o, Tensor)
                               else o for o in out))
    node.saved = tuple(saved)
    untrack(node.saved)     # it holds SavedTensors and values: no cycle through it


cdef void _saved_output_follows(OpNode node, Tensor out) except *:
    """An in-place op on a view saved its output before the view's history was rebased,
    when the view may not have required grad yet (its base did not); torch unpacks that
    output with grad, so that under create_graph a formula reading it (``pow_``'s exponent
    gradient, ``out * log(self)``) records a graph (fuzz seed 2 #10361)."""
    v = node.saved[len(node.saved) - 1]
    if type(v) is SavedTensor:
        (<SavedTensor>v).output_requires_grad = out._requires_grad


cdef void _save_for_backward(Derivative d, OpNode node, tuple args, object out) except *:
    cdef tuple positions = d.save
    cdef Py_ssize_t nargs = len(args)
    if not positions and not d.save_output:
        return
    if (len(positions) == 2 and not d.save_output and d.save_if is None
            and <Py_ssize_t>positions[1] < nargs):
        # the common binary case (mul, div ...), without a temporary list
        node.saved = (
            _save_value(args[<Py_ssize_t>positions[0]], node) if _wanted(d, node, 0) else None,
            _save_value(args[<Py_ssize_t>positions[1]], node) if _wanted(d, node, 1) else None)
        untrack(node.saved)
        return
    _save_output(d, node, _saved_args(d, node, args), out, args)


cdef bint _any_float_output(object out):
    if isinstance(out, Tensor):
        return _is_float_tensor(out)
    if isinstance(out, tuple):
        for o in out:
            if _is_float_tensor(o):
                return True
    return False


cdef object record(Derivative d, tuple args, object out):
    """Record the node of an op that ran on tensors requiring grad; returns ``out``.

    An op whose outputs are all integers or bools (``v.long()``) records nothing: nothing
    could receive its gradient, and torch collects no edges for it, so a stale view as its
    input raises nothing (fuzz seed 9 #1028)."""
    cdef OpNode node
    if d.extra is None and not _any_float_output(out):
        return out      # (an entry with an extra may refuse the call there: prod(dtype=int))
    node = _make_node(d, args)
    _attach_outputs(node, out)
    _save_for_backward(d, node, args, out)
    if d.extra is not None:
        node.extra = d.extra(args, out)
    return out


cdef object _mark_inference(object out):
    if isinstance(out, Tensor):
        (<Tensor>out)._is_inference = True
    elif isinstance(out, tuple):
        for o in out:
            if isinstance(o, Tensor):
                (<Tensor>o)._is_inference = True
    return out


@cython.binding(False)
cdef class AutogradLayer(DispatchLayer):
    """The dispatch layer that builds the graph (DESIGN.md, "How a call flows")."""

    cpdef object handle(self, Op op, tuple args, Py_ssize_t next_index):
        cdef object out
        cdef Derivative d
        if op is None or args is None:      # typed arguments let None through
            raise TypeError("handle() expects an Op and a tuple of arguments, got None")
        if gs_get_inference_mode():
            if op.inplace:
                return call_next(op, args, next_index)
            return _mark_inference(call_next(op, args, next_index))
        if op.inplace:
            return _inplace_call(op, args, next_index)
        if not gs_get_grad_enabled() or not _any_requires_grad(args):
            out = call_next(op, args, next_index)
            if isinstance(out, Tensor):
                if (<Tensor>out)._view_base is not None:
                    _note_view(<Tensor>out, not gs_get_grad_enabled(), None)
                    if gs_get_grad_enabled():
                        _inherit_view_creation(<Tensor>out, args)
            elif type(out) is tuple:
                # (with grad mode on, split/chunk/unbind outputs are multi-output views
                # even of a base that does not require grad: Note [Views follow in-place
                # writes on their base])
                _note_views(<tuple>out, not gs_get_grad_enabled(),
                            op.derivative if gs_get_grad_enabled() else None)
            if forward_ad_active():
                _forward_ad_hook(op, args, out)
            return out
        if op.derivative is None:
            raise RuntimeError(
                f"the op {op.name!r} has no entry in the derivative table, so it cannot be "
                "used on tensors that require grad. Detach the inputs (x.detach()) or add "
                "an entry in gradstack_autograd.derivatives."
            )
        d = <Derivative>op.derivative
        try:
            if d.byproduct:     # (Note [A kernel's by-product] in tensor-core's _elementwise.pyx)
                set_byproduct_wanted(True)
                try:
                    out = call_next(op, args, next_index)
                finally:
                    set_byproduct_wanted(False)
            else:
                out = call_next(op, args, next_index)
        except Exception:
            # Note [A stale view's error comes before the kernel's]
            try:
                _check_inputs_usable(args)
            except RuntimeError as view_error:
                raise view_error from None
            raise
        if d.differentiable:
            record(d, args, out)
        if isinstance(out, Tensor):
            if (<Tensor>out)._view_base is not None:
                _note_view(<Tensor>out, False, None)
                _inherit_view_creation(<Tensor>out, args)
        elif type(out) is tuple:
            _note_views(<tuple>out, False, d if d.differentiable else None)
        if forward_ad_active():
            _forward_ad_hook(op, args, out)
        return out


# forward-mode AD registers itself here (gradstack_autograd.forward_ad); the flag that the
# other modules read lives in _grad_mode.pyx
_forward_ad_callback = None
_forward_ad_inplace_callback = None


def _set_forward_ad_callback(fn, inplace_fn=None):
    """Install (or remove, with None) the forward-mode hooks.

    ``fn(op, args, out)`` runs after every out-of-place op; ``inplace_fn(op, args,
    next_index)`` runs *instead of* every in-place op and must call
    ``_run_inplace(op, args, next_index)`` itself (it needs the values before the write).
    """
    global _forward_ad_callback, _forward_ad_inplace_callback
    _forward_ad_callback = fn
    _forward_ad_inplace_callback = inplace_fn
    set_forward_ad_active(fn is not None)


cdef void _forward_ad_hook(Op op, tuple args, object out) except *:
    if _forward_ad_callback is not None:
        _forward_ad_callback(op, args, out)
        if out is not None:
            _share_output_tangents(out)


# Note [Saved outputs keep their tangents]
# A node saves its outputs by storage (Note [Saved tensors and reference cycles]), so the
# tensor unpacked in backward is a new object: without help it would lose the output's
# tangent, and forward-over-reverse (hvp, hessian's forward-mode outer jacobian) would
# miss every term through a saved output (exp, pow, tanh ...).  The tangent is computed
# after the node is recorded, so the hook copies it into the saved output here, and
# unpacking puts it on the rebuilt tensor.

cdef void _share_output_tangents(object out) except *:
    if isinstance(out, Tensor):
        _share_tangent(<Tensor>out)
    elif isinstance(out, tuple):
        for o in out:
            if isinstance(o, Tensor):
                _share_tangent(<Tensor>o)


cdef void _share_tangent(Tensor t) except *:
    cdef Node node
    if t._fw_grad is None or t._grad_fn is None or not isinstance(t._grad_fn, Node):
        return
    node = <Node>t._grad_fn
    if node.saved is None:
        return
    for v in node.saved:
        if isinstance(v, SavedTensor):
            _share_into(<SavedTensor>v, t)
        elif type(v) is tuple:
            for x in <tuple>v:
                if isinstance(x, SavedTensor):
                    _share_into(<SavedTensor>x, t)


def _share_tangent_py(Tensor t not None):
    """After forward_ad set ``t``'s tangent outside the hook (in-place ops): share it too."""
    _share_tangent(t)


cdef inline void _share_into(SavedTensor s, Tensor t):
    if s.is_output and s.data is not None and s.data is data_of(t):
        s.fw_grad = t._fw_grad


# ----------------------------------------------------------------------------------------
# In-place ops (the API page's "In-place operations on Tensors")


cdef object _inplace_call(Op op, tuple args, Py_ssize_t next_index):
    if forward_ad_active() and _forward_ad_inplace_callback is not None:
        return _forward_ad_inplace_callback(op, args, next_index)
    return _inplace_call_impl(op, args, next_index)


def _run_inplace(Op op not None, tuple args not None, Py_ssize_t next_index):
    """The in-place op's autograd handling and kernel (for the forward-mode in-place hook)."""
    return _inplace_call_impl(op, args, next_index)



# Note [A write under no_grad regenerates the views]
# torch regenerates a view's grad_fn when its version moved since the grad_fn was made,
# whatever wrote it: also a write under no_grad, which records nothing.  The view then
# has an AsStridedBackward0 over its base's (unchanged) history, a node the graphs built
# before the write do not contain: ``grad(loss, [v])`` of a loss made before gives None,
# and hooks registered on the view before the write do not run (fuzz seed 22 #7763, seed
# 24 #17187).  The gradients reaching the base are the same.  As for recorded writes
# (Note [Views follow in-place writes on their base]), the live views of the written
# base are given theirs at once.  The same holds for a write with grad mode on that
# records nothing because nothing written requires grad: through ``x.detach()``, which
# shares x's version counter but is not a view of it, the counter leads to the base
# whose views are tracked (``views_base``; fuzz seed 37 #13651).  (The fused optimizer
# kernels write parameters without dispatch: their views keep their grad_fn, with the
# same gradients.)

cdef inline void _refresh_after_unrecorded_write(Tensor t) except *:
    cdef Tensor base = t._view_base if t._view_base is not None else t
    cdef object other
    _refresh_views_of(base)
    if t._vc is not None and t._vc.views_base is not None:
        # a write through another alias of the storage, which shares its version counter
        # (``x.detach().add_(1)``, ``x.detach()[0] = 2``: fuzz seed 37 #13651): every base
        # with tracked views that shares the counter
        for ref in list(<list>t._vc.views_base):
            other = ref()
            if other is not None and other is not base:
                _refresh_views_of(<Tensor>other)


cdef inline void _refresh_views_of(Tensor base) except *:
    if base._requires_grad and base._autograd_meta is not None \
            and (<AutogradMeta>base._autograd_meta).views:
        _refresh_views(base, None)


# Note [Which non-differentiable in-place ops skip the leaf check]
# torch checks "a leaf Variable that requires grad is being used in an in-place operation"
# before the kernel of bitwise_and_/or_/xor_/not_ (whose float kernels then raise), but
# logical_not_ of a float leaf runs, recording nothing.
_INPLACE_WITHOUT_LEAF_CHECK = frozenset({"logical_not_"})

cdef object _inplace_call_impl(Op op, tuple args, Py_ssize_t next_index):
    if len(args) == 0 or not isinstance(args[0], Tensor):
        raise TypeError(
            f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(args[0]).__name__ if args else 'nothing'} (an in-place op writes into "
            "its first argument)"
        )
    cdef Tensor self_t = <Tensor>args[0]
    cdef Tensor base
    cdef Derivative d
    cdef OpNode node
    cdef tuple saved_args
    if self_t._is_inference:
        raise RuntimeError(
            f"Inplace update to inference tensor outside InferenceMode is not allowed "
            f"({op.name} on a tensor of shape {list(self_t.shape)}). You can make a clone to "
            "get a normal tensor before doing inplace update."
        )
    if not gs_get_grad_enabled() or not _any_requires_grad(args):
        out = call_next(op, args, next_index)
        _refresh_after_unrecorded_write(self_t)
        return out
    if not self_t.is_floating_point():
        # an integer or bool tensor never requires grad: writing a value that does
        # (``bool_t.copy_(x)``) records nothing, as in torch
        return call_next(op, args, next_index)
    cdef bint not_differentiable = (
        op.derivative is not None and not (<Derivative>op.derivative).differentiable
    )
    if not_differentiable and op.name in _INPLACE_WITHOUT_LEAF_CHECK:
        # torch: logical_not_ runs even on a leaf that requires grad, and records nothing;
        # the views of the written base (the target too, if a view) then get a new
        # AsStridedBackward0 over the base, as torch regenerates them for the new version
        out = call_next(op, args, next_index)
        base = self_t._view_base if self_t._view_base is not None else self_t
        if base._requires_grad:
            _refresh_views(base, None)
        return out
    base = self_t._view_base
    _check_view_may_be_written(self_t, op, args, next_index)
    if self_t._grad_fn is None and self_t._requires_grad and base is None:
        _validate_arguments_first(op, args, next_index)
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation "
            f"({op.name}). Do it under `with no_grad():`, or on a clone."
        )
    if base is not None and base._grad_fn is None and (base._requires_grad
                                                       or self_t._requires_grad):
        # (torch checks the view's requires_grad and that its base is a leaf: a view
        # given requires_grad_() of its own counts, fuzz seed 7 #10057)
        _validate_arguments_first(op, args, next_index)
        raise RuntimeError(
            f"a view of a leaf Variable that requires grad is being used in an in-place "
            f"operation ({op.name}). Do it under `with no_grad():`, or on a clone."
        )
    if base is not None and self_t._autograd_meta is not None \
            and (<AutogradMeta?>self_t._autograd_meta).grad_fn_unread \
            and not _setitem_of_a_subview(op, args, self_t):
        # Note [A view whose grad_fn torch has not regenerated yet] (``v[1:] = w`` writes
        # a view made now, which has a grad_fn: no error)
        _validate_arguments_first(op, args, next_index)
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation "
            f"({op.name}): this view's base started to require grad through a write into "
            "another view of it, and the view has no history of its own yet. Use the view "
            "in an out-of-place op first, or write through its base."
        )
    if not_differentiable:  # bitwise_or_ ... of a float: the kernel raises torch's error
        return call_next(op, args, next_index)
    if op.derivative is None:
        raise RuntimeError(
            f"the in-place op {op.name!r} has no entry in the derivative table; it cannot "
            "modify a tensor that is part of a graph. Use the out-of-place op."
        )
    d = <Derivative>op.derivative
    node = _make_node(d, args)
    # the formula sees the value `self` had before the write (torch's original_self)
    saved_args = args
    if 0 in d.save and _wanted(d, node, d.save.index(0)):
        saved_args = (args[0].clone(),) + args[1:]
    # Note [In-place ops save their operands before the write]
    # The other operands are saved, with their versions, before the kernel runs: when one
    # shares storage with ``self`` (``y.mul_(y)``, ``y.mul_(y.detach())``, overlapping
    # views) the write bumps the version it was saved at, and backward raises torch's
    # "modified by an inplace operation" instead of reading the written values.
    saved = _saved_args(d, node, saved_args) if (d.save or d.save_output) else None
    old_fn, old_nr = self_t._grad_fn, self_t._output_nr
    base_fn = base._grad_fn if base is not None else None
    out = call_next(op, args, next_index)
    if base is None:
        _attach_outputs(node, self_t)
    elif self_t._autograd_meta is not None:
        (<AutogradMeta?>self_t._autograd_meta).grad_fn_unread = False
    if saved is not None:
        _save_output(d, node, saved, self_t, saved_args)
    if d.extra is not None:
        node.extra = d.extra(saved_args, self_t)
    if base is not None:
        _rebase_view_history(self_t, base, node)
        if saved is not None and d.save_output:
            _saved_output_follows(node, self_t)
        _move_retained(base, base_fn, 0)
    _move_retained(self_t, old_fn, old_nr)
    _refresh_views(base if base is not None else self_t, self_t)
    if base is not None and old_fn is None and _setitem_of_a_subview(op, args, self_t):
        # torch wrote a view of ``self_t``, whose own grad_fn stays unset
        meta_of(self_t).grad_fn_unread = True
    return out


# Note [Views follow in-place writes on their base]
# torch regenerates a view's grad_fn when its base was written in place since the view's
# grad_fn was set: gradients through the view then see the write (AsStridedBackward0 over
# the base's new history), and a view of a tensor that starts to require grad by a write
# requires grad too.  gradstack does it eagerly: every view an op makes is noted (a weak
# reference) on its base, and an in-place op recorded by autograd gives each live view
# of the written base a new AsStridedBackward0.  The list is pruned of dead references
# as it grows (amortised O(1) per view).  Views also carry torch's creation kind: made
# under no_grad (they report requires_grad=True but feed no gradient back, and may not be
# written in place with grad mode on), or returned by an op that returns a list of views
# (split, chunk, unbind, even with one output: they may not be written in place).  Such
# views get no new history when their base is written: they are marked stale, and using
# one in an op recorded by autograd raises torch's error (torch raises reading grad_fn).
# A multi-output view is one even when its base did not require grad (made with grad
# mode on): written in place by an op recorded by autograd, or used after its base
# started to require grad with a write in between, it raises torch's "A view was created
# in no_grad mode ..." (fuzz seed 6 #5342, #18273).


cdef void _note_view(Tensor view, bint no_grad, str multi_name) except *:
    cdef Tensor base = view._view_base
    cdef AutogradMeta meta
    cdef list live
    if base is None or view is base:
        return
    meta = meta_of(base)
    if meta.views is None:
        meta.views = []
        meta.views_prune_at = 16
        # (Note [A write under no_grad regenerates the views]: any writer finds them)
        vc = base.version_counter()
        if vc.views_base is None:
            vc.views_base = []
        vc.views_base = [r for r in <list>vc.views_base if r() is not None]
        vc.views_base.append(weakref.ref(base))
    # (with the version it was made at: Note [A view follows its base's requires_grad_()])
    meta.views.append((weakref.ref(view), base.version_counter().value))
    if len(meta.views) >= meta.views_prune_at:
        live = [r for r in meta.views if r[0]() is not None]
        meta.views = live
        meta.views_prune_at = 2 * len(live) + 16
    if no_grad:
        if base._requires_grad and not view._requires_grad:
            view._requires_grad = True
            meta = meta_of(view)
            meta.view_creation = VIEW_NO_GRAD
            meta.base_version = view.version_counter().value
        elif not base._requires_grad:
            # torch marks every view made under no_grad (its creation_meta), whatever its
            # base: an in-place write of a value that requires grad into it, with grad
            # mode on, is refused later (fuzz seed 29 #5675)
            meta = meta_of(view)
            meta.view_creation = VIEW_NO_GRAD
            meta.base_version = view.version_counter().value
    elif multi_name is not None:
        meta = meta_of(view)
        meta.view_creation = VIEW_MULTI_OUTPUT
        meta.view_op = multi_name
        meta.base_version = view.version_counter().value
    elif view._grad_fn is not None and not base._requires_grad:
        meta = meta_of(view)
        meta.history_apart_from_base = True
        meta.base_version = view.version_counter().value


# Note [A view whose history does not pass through its base]
# A view of a view that was given ``requires_grad_()`` of its own (``v = x.t();
# v.requires_grad_(); w = v[0]``) has a grad_fn that reaches ``v``, while its base (the
# root ``x``) does not require grad.  When the base is then written in place with nothing
# recorded (``x.sub_(2)``), torch regenerates ``w``'s grad_fn from the base the next time
# it is read or used: an AsStridedBackward0 over ``x``, which feeds nothing, so gradients
# through ``w`` no longer reach ``v`` (fuzz seed 7 #4454).  Such views note the version
# their grad_fn belongs to; once the base requires grad (a recorded write made it), the
# eager regeneration of Note [Views follow in-place writes on their base] takes over.


cdef void _regenerate_history_apart_from_base(Tensor v, AutogradMeta meta) except *:
    cdef Tensor base = v._view_base
    cdef Py_ssize_t current
    if base is not None and v._grad_fn is None:
        # a leaf view of its own flag (Note [A view follows its base's requires_grad_()])
        if not v._requires_grad:
            meta.history_apart_from_base = False
        elif base._requires_grad and v.version_counter().value != meta.base_version:
            _give_view_history(v, base, meta)
            meta.history_apart_from_base = False
        return
    if base is None or base._requires_grad or v._grad_fn is None:
        meta.history_apart_from_base = False
        return
    current = v.version_counter().value
    if current != meta.base_version:
        old_fn, old_nr = v._grad_fn, v._output_nr
        v._grad_fn = _as_strided_node(base, v, NO_EDGE)
        v._output_nr = 0
        meta.base_version = current
        _move_retained(v, old_fn, old_nr)


cdef void _inherit_view_creation(Tensor view, tuple args) except *:
    """A view of a no_grad or multi-output view, made with grad mode on, is one too (torch's
    propagate_creation_meta): ``(v_no_grad.t()).floor_divide_(x)`` raises (fuzz seed 7
    #3213)."""
    cdef AutogradMeta parent, meta
    if not args or not isinstance(args[0], Tensor) or args[0] is view:
        return
    if (<Tensor>args[0])._autograd_meta is None or view._view_base is None:
        return
    parent = <AutogradMeta?>(<Tensor>args[0])._autograd_meta
    if parent.view_creation == VIEW_DEFAULT:
        return
    meta = meta_of(view)
    if meta.view_creation != VIEW_DEFAULT:
        return
    meta.view_creation = parent.view_creation
    meta.view_op = parent.view_op
    meta.base_version = view.version_counter().value


cdef str _node_op_name(Tensor t):
    """torch's name of a view's op in its errors: its node's class without ``Backward<N>``."""
    name = type(t._grad_fn).__name__
    cut = name.rfind("Backward")
    return name[:cut] if cut > 0 else name


cdef void _note_views(tuple outs, bint no_grad, Derivative d) except *:
    cdef str name = None
    cdef object fn
    for o in outs:
        if isinstance(o, Tensor) and (<Tensor>o)._view_base is not None:
            if d is not None and name is None:
                fn = (<Tensor>o)._grad_fn
                name = type(fn).__name__ if fn is not None else ""
                if name.endswith("Backward0"):
                    name = name[:-len("Backward0")]
            _note_view(<Tensor>o, no_grad, name)


cdef void _check_view_may_be_written(Tensor t, Op op, tuple args, Py_ssize_t next_index) except *:
    """torch's refusals of in-place writes into some views (with grad mode on), after the
    argument errors torch raises first (``_validate_arguments_first``: an index with too
    many dims into a multi-output view is an IndexError, fuzz seed 6 #7057)."""
    cdef AutogradMeta meta
    if t._autograd_meta is None or t._view_base is None:
        return
    meta = <AutogradMeta?>t._autograd_meta
    if meta.view_creation == VIEW_MULTI_OUTPUT or meta.view_creation == VIEW_NO_GRAD:
        _validate_arguments_first(op, args, next_index)
    if meta.view_creation == VIEW_MULTI_OUTPUT and t._grad_fn is None:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled." + _MULTI_OUTPUT_ADVICE
        )
    if meta.view_creation == VIEW_MULTI_OUTPUT:
        raise RuntimeError(
            f"Output {t._output_nr} of {_node_op_name(t)} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views. "
            "Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one."
        )
    if meta.view_creation == VIEW_NO_GRAD and t._grad_fn is not None:
        raise RuntimeError(
            f"Output {t._output_nr} of {_node_op_name(t)} is a view of a view which was "
            "created in no_grad mode and is being modified inplace with grad mode enabled. "
            "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside "
            "the no_grad block (if you don't want the inplace to be tracked) or both outside "
            "(if you want the inplace to be tracked)."
        )
    if meta.view_creation == VIEW_NO_GRAD:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad "
            "mode enabled. Given that this use case is ambiguous and error-prone, it is "
            "forbidden. You can clarify your code by moving both the view and the inplace "
            "either both inside the no_grad block (if you don't want the inplace to be "
            "tracked) or both outside (if you want the inplace to be tracked)."
        )


# in-place ops that draw random numbers: the argument check below must not run them twice
cdef frozenset _RANDOM_INPLACE = frozenset({
    "uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
    "cauchy_", "log_normal_",
})


cdef void _validate_arguments_first(Op op, tuple args, Py_ssize_t next_index) except *:
    """Raise the op's own argument error, if any, before the leaf error (torch's order).

    torch parses the arguments before autograd sees the call: ``leaf.atan2_(3.0)`` is a
    TypeError about the argument, not the leaf error.  The kernel runs once on a copy of
    the target, with grad mode off, only on this error path.  Only a TypeError (an
    argument torch's parser refuses) or an IndexError (an index torch resolves before the
    write: ``x0[-2:] = v`` on a 0-d tensor) comes first: the kernel's own errors (a dtype
    without a kernel: ``leaf.bitwise_or_(leaf)``) come after the leaf error in torch.

    Note [Which index errors come before the leaf error]
    For setitem with advanced components (integer or bool tensors, lists), only the
    basic part's IndexError comes first: torch applies ints, slices and ellipsis in
    Python (views) before calling index_put_, and index_put_'s own checks (indices that
    do not broadcast together, an index out of bounds) run after autograd's leaf check
    (fuzz seed 3 #5788, #191).  The basic part is probed with each advanced component
    replaced by full slices (``_basic_index_part``), then the whole index for TypeErrors.
    """
    cdef bint prev
    cdef object basic = None
    # (a slice's step is checked as Python slices the tensor: ``v[::-1] = x`` on a leaf's
    # view is torch's ValueError, fuzz seed 8 #7676)
    cdef tuple first = (TypeError, IndexError, ValueError) if op.name == "setitem_" \
        else (TypeError, IndexError)
    if op.name in _RANDOM_INPLACE:
        return
    if op.name == "setitem_" and len(args) == 3:
        basic = _basic_index_part(args[1])
    prev = gs_get_grad_enabled() != 0
    gs_set_grad_enabled(False)
    try:
        if basic is not None:
            # Note [Which index errors come before the leaf error]: torch resolves the basic
            # part of an index (ints, slices, ellipsis) in Python before index_put_, whose
            # own checks of the advanced part (broadcasting, bounds) come after autograd's
            _probe(op, args[0], (basic, args[2]), next_index, first)
            _probe(op, args[0], args[1:], next_index, (TypeError,))
        else:
            _probe(op, args[0], args[1:], next_index, first)
    finally:
        gs_set_grad_enabled(prev)


cdef void _probe(Op op, object target, tuple rest, Py_ssize_t next_index, tuple first) except *:
    """Run the op's kernel on a copy of ``target`` and raise its error if of a ``first``
    type (the leaf error is raised after, by the caller's caller, otherwise)."""
    try:
        probe = wrap(np.array(data_of(<Tensor>target), copy=True))
        call_next(op, (probe,) + rest, next_index)
    except first:
        raise
    except Exception:
        pass


def _basic_index_part(index):
    """``index`` with each advanced component (an integer or bool tensor, array or list)
    replaced by the full slices of the dims it indexes, or None if it has none."""
    parts = index if type(index) is tuple else (index,)
    out = []
    found = False
    for p in parts:
        if isinstance(p, (Tensor, np.ndarray, list)):
            a = np.asarray(data_of(<Tensor>p) if isinstance(p, Tensor) else p)
            if a.ndim == 0 and a.dtype.kind in "iu":
                out.append(p)   # a 0-d integer index is an int
                continue
            found = True
            if a.dtype.kind == "b":
                out.extend([None] if a.ndim == 0 else [slice(None)] * a.ndim)
            else:
                out.append(slice(None))
        else:
            out.append(p)
    return tuple(out) if found else None


cdef void _refresh_views(Tensor base, Tensor written) except *:
    """Give each live view of ``base`` (but ``written``) a grad_fn over base's new history."""
    cdef AutogradMeta meta
    cdef Tensor v
    cdef list live
    if base._autograd_meta is None:
        return
    meta = <AutogradMeta?>base._autograd_meta
    if not meta.views:
        return
    live = []
    edge = None
    for r in meta.views:
        o = r[0]()
        if o is None:
            continue
        live.append(r)
        v = <Tensor>o
        if v is written or v._view_base is not base:
            continue
        if v._autograd_meta is not None:
            (<AutogradMeta?>v._autograd_meta).requires_grad_from_base = False
        if v._autograd_meta is not None \
                and (<AutogradMeta?>v._autograd_meta).view_creation != VIEW_DEFAULT:
            # torch gives such a view no new history: using it with grad mode on raises
            # (it requires grad through its base, which now does)
            (<AutogradMeta?>v._autograd_meta).view_stale = True
            v._requires_grad = True
            continue
        if edge is None:
            edge = gradient_edge(base)
        if v._grad_fn is None:
            # Note [A view whose grad_fn torch has not regenerated yet]
            meta_of(v).grad_fn_unread = True
        old_fn, old_nr = v._grad_fn, v._output_nr
        v._grad_fn = _as_strided_node(base, v, edge)
        v._output_nr = 0
        v._requires_grad = True
        # retain_grad() follows the view to its new grad_fn, as torch's regeneration moves
        # its retains_grad hook (the old node may still run, for the written value: fuzz
        # seed 21 #11001)
        _move_retained(v, old_fn, old_nr)
    meta.views = live
    meta.views_prune_at = 2 * len(live) + 16


# Note [A view whose grad_fn torch has not regenerated yet]
# torch regenerates a view's grad_fn lazily, when it is read (``v.grad_fn``, or ``v`` used
# as an op's input), while its in-place check reads the stored field: a view made while
# its base did not require grad, whose base then started to through a write into another
# view (``v = b[:2]; b[2:].copy_(w)``, or ``v[:1] = w``, which writes a view of ``v``),
# still has no grad_fn stored, so ``v.zero_()`` is torch's "a leaf Variable that requires
# grad is being used in an in-place operation" until ``v`` is read or used (fuzz seed 6
# #12499, #3248, #1958, #6433, #16318).  gradstack gives such views their grad_fn at the
# write (Note [Views follow in-place writes on their base]) and notes ``grad_fn_unread``,
# cleared where torch would regenerate it.


def _grad_fn_read(Tensor t not None):
    """``t.grad_fn`` was read: torch has regenerated it (Note [A view whose grad_fn torch
    has not regenerated yet])."""
    cdef AutogradMeta meta
    if t._autograd_meta is not None:
        meta = <AutogradMeta?>t._autograd_meta
        if meta.view_stale:
            # torch's regeneration refuses such a view (``v.retain_grad()``, ``print(v)``:
            # fuzz seed 7 #8873)
            _raise_stale_view(t, meta)
        meta.grad_fn_unread = False
        if meta.history_apart_from_base:
            _regenerate_history_apart_from_base(t, meta)


cdef bint _setitem_of_a_subview(Op op, tuple args, Tensor target) except -1:
    """Whether ``op`` is ``target[key] = v`` writing a view of ``target`` (torch's
    ``__setitem__`` makes that view first, then writes it)."""
    return (op.name == "setitem_" and len(args) == 3
            and _writes_a_subview(args[1], shape_of(data_of(target))))


cdef bint _whole_dim_slice(slice k, Py_ssize_t length) except -1:
    """torch's indexing returns the tensor itself for a slice, not a view, when its start
    as written is 0 (or none), its stop at least the dim's length (or none) and its step 1:
    ``t[0:]`` and ``t[:99]`` are ``t``, ``t[-1:]`` of a dim of one is a view (fuzz seed 11
    #4769)."""
    start = 0 if k.start is None else operator.index(k.start)
    stop = length if k.stop is None else operator.index(k.stop)
    step = 1 if k.step is None else operator.index(k.step)
    return start == 0 and stop >= length and step == 1


def _writes_a_subview(key, tuple shape):
    """Whether torch's ``t[key] = v`` writes a view of ``t`` rather than ``t`` itself: its
    basic part (ints, None, bools, slices that are not the whole dim) makes a new view."""
    items = key if type(key) is tuple else (key,)
    widths = []
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, bool):
            widths.append(0)
        elif isinstance(k, (Tensor, np.ndarray, list)):
            a = np.asarray(data_of(<Tensor>k) if isinstance(k, Tensor) else k)
            if a.ndim == 0 and a.dtype.kind in "iub":
                return True     # a 0-d integer index selects, a 0-d bool unsqueezes (a
                                # view; fuzz seed 15 #21865)
            widths.append(a.ndim if a.dtype.kind == "b" else 1)
        else:
            widths.append(1)
    after = 0
    seen_ellipsis = False
    for k, w in zip(items, widths):
        if seen_ellipsis:
            after += w
        elif k is Ellipsis:
            seen_ellipsis = True
    dim = 0
    for k, w in zip(items, widths):
        if k is Ellipsis:
            dim = len(shape) - after
            continue
        if k is None or isinstance(k, (bool, int, np.integer)):
            return True
        if isinstance(k, slice):
            if dim >= len(shape):
                return True
            if not _whole_dim_slice(k, shape[dim]):
                return True
        dim += w
    return False


# Note [A view follows its base's requires_grad_()]
# In torch a view requires grad when its base does, whenever the base started to
# (``v = b[0]; b.requires_grad_()``: ``v.requires_grad`` is True).  Such a view has no
# grad_fn and no gradient edge of its own (gradients through it reach nothing) until its
# version moves away from the one its grad_fn belongs to: then torch regenerates its
# grad_fn as AsStridedBackward0 over the base (``v.sqrt_()`` with nothing requiring
# grad, then ``b.requires_grad_()``: gradients through ``v`` reach ``b``).  gradstack
# notes each view's creation version on its base; ``requires_grad_()`` on the base gives
# each view that has no grad_fn either an AsStridedBackward0 (written since) or the flag
# ``requires_grad_from_base``, whose edge is regenerated the same way when the view is
# used after a later unrecorded write (under no_grad).  A view given ``requires_grad_()``
# of its own stays a leaf while its base does not require grad; when it is used or its
# grad_fn read while the base does, and it was written since it was made, torch
# regenerates its grad_fn the same way (``v = x[0]; v.requires_grad_(); x.mul_(2);
# x.requires_grad_()``: gradients through ``v`` reach ``x``, and ``v`` is no longer a
# leaf; fuzz seed 19 #4116).  Such a view carries ``history_apart_from_base`` with its
# creation version, and _regenerate_history_apart_from_base gives it that history.


def _requires_grad_set(Tensor t not None):
    """After ``t.requires_grad_(flag)``: the views of ``t`` follow (see the Note above)."""
    cdef AutogradMeta meta, vm
    cdef Tensor v
    cdef Py_ssize_t current
    _note_leaf_view(t)
    if t._autograd_meta is None:
        return
    meta = <AutogradMeta?>t._autograd_meta
    meta.requires_grad_from_base = False    # its own flag now
    if not meta.views or t._grad_fn is not None:
        return
    current = t.version_counter().value
    for r in meta.views:
        o = r[0]()
        if o is None:
            continue
        v = <Tensor>o
        if v is t or v._view_base is not t or v._grad_fn is not None:
            continue
        vm = meta_of(v)
        if t._requires_grad:
            if v._requires_grad:
                continue                    # its own flag, or made under no_grad
            if <Py_ssize_t>r[1] != current and vm.view_creation == VIEW_DEFAULT:
                _give_view_history(v, t, vm)
            elif <Py_ssize_t>r[1] != current and vm.view_creation == VIEW_MULTI_OUTPUT:
                v._requires_grad = True     # written since: torch refuses its history
                vm.view_stale = True
            else:
                v._requires_grad = True
                vm.requires_grad_from_base = True
                vm.base_version = current
        elif vm.requires_grad_from_base:
            v._requires_grad = False
            vm.requires_grad_from_base = False


cdef void _note_leaf_view(Tensor t) except *:
    """``t.requires_grad_(flag)`` on a view with no grad_fn: note (or forget) its creation
    version, for a later regeneration over its base (Note above)."""
    cdef Tensor base = t._view_base
    cdef AutogradMeta bm, meta
    if base is None or base is t or t._grad_fn is not None:
        return
    if t._autograd_meta is not None:
        meta = <AutogradMeta?>t._autograd_meta
        if meta.view_creation != VIEW_DEFAULT:
            return
        if not t._requires_grad:
            meta.history_apart_from_base = False
            return
    if not t._requires_grad or base._autograd_meta is None:
        return
    bm = <AutogradMeta?>base._autograd_meta
    if not bm.views:
        return
    for r in bm.views:
        if r[0]() is t:
            meta = meta_of(t)
            meta.history_apart_from_base = True
            meta.base_version = <Py_ssize_t>r[1]
            return


cdef bint _regenerate_view(Tensor v, AutogradMeta vm) except -1:
    """A view that requires grad through its base: give it a grad_fn if written since."""
    cdef Tensor base = v._view_base
    if v._grad_fn is not None or base is None or not base._requires_grad:
        vm.requires_grad_from_base = False
        return v._grad_fn is not None
    if v.version_counter().value == vm.base_version:
        return False
    if vm.view_creation == VIEW_MULTI_OUTPUT:
        vm.view_stale = True
        _raise_stale_view(v, vm)
    _give_view_history(v, base, vm)
    return True


cdef void _give_view_history(Tensor v, Tensor base, AutogradMeta vm) except *:
    v._grad_fn = _as_strided_node(base, v, gradient_edge(base))
    v._output_nr = 0
    v._requires_grad = True
    vm.requires_grad_from_base = False


cdef AsStridedBackward0 _as_strided_node(Tensor base, Tensor view, tuple edge):
    cdef AsStridedBackward0 vb = AsStridedBackward0.__new__(AsStridedBackward0)
    cdef cnp.ndarray bdata = data_of(base), vdata = data_of(view)
    untrack(vb)
    vb.sequence_nr = next_sequence_nr()
    vb.base_shape = shape_of(bdata)
    vb.base_strides = (<object>bdata).strides
    vb.view_shape = shape_of(vdata)
    vb.view_strides = (<object>vdata).strides
    vb.view_offset = (vdata.__array_interface__["data"][0]
                      - bdata.__array_interface__["data"][0])
    vb.next_edges = (edge,)
    return vb


cdef void _move_retained(Tensor t, object old_fn, Py_ssize_t old_nr) except *:
    """retain_grad() follows a tensor to its new grad_fn after an in-place op (as torch).

    Without this, ``.grad`` would hold the gradient of the value *before* the write.
    """
    cdef Node old, new
    if t._autograd_meta is None or not (<AutogradMeta?>t._autograd_meta).retains_grad:
        return
    if old_fn is None or old_fn is t._grad_fn or not isinstance(t._grad_fn, Node):
        return
    old = <Node>old_fn
    new = <Node>t._grad_fn
    if old.retained is not None:
        old.retained.pop(old_nr, None)
    if new.retained is None:
        new.retained = {}
    new.retained[t._output_nr] = weakref.ref(t)


cdef void _rebase_view_history(Tensor view, Tensor base, OpNode fn) except *:
    """After an in-place op on ``view``: route gradients through ``base`` (torch's CopySlices)."""
    cdef CopySlices cs = CopySlices.__new__(CopySlices)
    cdef AsStridedBackward0 vb
    untrack(cs)
    cdef cnp.ndarray bdata = data_of(base), vdata = data_of(view)
    cs.sequence_nr = next_sequence_nr()
    cs.fn = fn
    cs.base_shape = shape_of(bdata)
    cs.base_strides = (<object>bdata).strides
    cs.view_shape = shape_of(vdata)
    cs.view_strides = (<object>vdata).strides
    cs.view_offset = vdata.__array_interface__["data"][0] - bdata.__array_interface__["data"][0]
    cdef tuple tail = fn.next_edges[1:]
    if fn.name() == "NotImplemented":
        # torch's NotImplemented node has edges for the inputs that require grad only, and
        # CopySlices drops its first edge as self's, whichever input that is: in
        # ``view.floor_divide_(w)`` with ``view`` not requiring grad, ``w`` loses its edge
        # (its gradient is None, no error; fuzz seed 1 #45403)
        tail = tuple(e for e in fn.next_edges if (<tuple>e)[0] is not None)[1:]
    cs.next_edges = ((gradient_edge(base) if base._requires_grad else NO_EDGE),) + tail
    base._grad_fn = cs
    base._output_nr = 0
    base._requires_grad = True
    vb = _as_strided_node(base, view, (cs, 0, shape_of(bdata), cnp.PyArray_TYPE(bdata)))
    view._grad_fn = vb
    view._output_nr = 0
    view._requires_grad = True


def view_positions(base_shape, base_strides, view_shape, view_strides, Py_ssize_t offset):
    """For each element of a view, its flat (row-major) position in the base tensor.

    Note [Locating a view inside its base]
    Both are described by byte addresses relative to the base's first element: the base's
    element at multi-index b sits at sum(b * base_strides), the view's element at index v
    at offset + sum(v * view_strides).  Sorting the base's addresses and searching the
    view's in them inverts the base's layout whatever its strides (negative ones included).
    """
    base_addr = np.zeros(base_shape, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(base_shape, base_strides)):
        shape = [1] * len(base_shape)
        shape[axis] = size
        base_addr = base_addr + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    view_addr = np.full(view_shape, offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(view_shape, view_strides)):
        shape = [1] * len(view_shape)
        shape[axis] = size
        view_addr = view_addr + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    flat = base_addr.ravel()
    order = np.argsort(flat, kind="stable")
    return order[np.searchsorted(flat[order], view_addr)]


@cython.no_gc
@cython.binding(False)
cdef class CopySlices(Node):
    """Gradient of a base tensor after an in-place op wrote into one of its views."""
    cdef public OpNode fn
    cdef public tuple base_shape, base_strides, view_shape, view_strides
    cdef public Py_ssize_t view_offset
    cdef object _positions
    cdef object _repeats

    cdef object positions(self):
        if self._positions is None:
            self._positions = view_positions(self.base_shape, self.base_strides,
                                             self.view_shape, self.view_strides, self.view_offset)
        return self._positions

    # Note [Writing through a view that repeats elements]
    # An expanded view shows one base element at several positions.  ``v[0, ..., -1] = 2``
    # on ``v = b.expand(...)`` writes only some of them (in-place ops on all of a view
    # that repeats elements are refused in the forward pass), yet it overwrites the base
    # element itself, and every alias shows the new value.  So the base element's gradient
    # is the op's gradient at the written position, whatever its other aliases say; it is
    # neither the last alias's value (numpy's assignment with repeated indices) nor their
    # sum.  torch's CopySlices, which copies the op's gradient back in storage geometry,
    # gives zeros there too (fuzz seed 2 #18356).
    cdef object written_positions(self):
        """The view's positions the op wrote (a bool mask of the view's shape), or None when
        it wrote all of them or no base element repeats in the view."""
        pos = self.positions()
        if self._repeats is None:
            self._repeats = bool(pos.size != np.unique(pos).size)
        if not self._repeats:
            return None
        entry = self.fn.entry
        if not isinstance(entry, Derivative) or (<Derivative>entry).op_name != "setitem_":
            return None
        key, whole, _ = self.fn.extra
        if whole:
            return None
        mask = np.zeros(self.view_shape, dtype=np.bool_)
        mask[key] = True
        return mask

    # Note [Backward through a write into overlapping memory]
    # torch's forward lets a few in-place ops write into a view whose elements share memory
    # (fill_, zero_, masked_fill_ with its deprecation warning, index_put_ with a mask), but
    # its CopySlices copies the op's gradient back through that view, a write into
    # overlapping memory, and backward raises there.  So does this node, when the view the
    # op wrote repeats base elements: the whole view, or for setitem_ the sub-view that the
    # basic part of its index selects (torch applies ints and slices as views first:
    # ``v[0, 0] = x`` writes one element, no overlap).  Before, backward gave a gradient (fuzz seed 4 #2183).
    cdef void _check_overlapping_write(self) except *:
        pos = self.positions()
        if self._repeats is None:
            self._repeats = bool(pos.size != np.unique(pos).size)
        if not self._repeats:
            return
        entry = self.fn.entry
        if isinstance(entry, Derivative) and (<Derivative>entry).op_name == "setitem_":
            _, whole, written = self.fn.extra
            if not whole:
                # the sub-view the basic part of the index selects (``v[3::3, idx] = x`` of
                # a 1-row view writes into an empty one: fuzz seed 15 #22408)
                sub = pos[written]
                if np.size(sub) == np.unique(sub).size:
                    return
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location. Please clone() the tensor before performing the "
            "operation."
        )

    cpdef tuple apply(self, tuple grads):
        _check_node_grads(self, grads)
        if self.fn is None or self.base_shape is None or grads[0] is None:
            raise RuntimeError(f"{type(self).__name__}.apply() needs a node recorded by an "
                               "in-place op on a view and a gradient")
        if (<tuple>self.next_edges[0])[0] is not None:
            # Note [Backward through a write into overlapping memory]: the copy back runs
            # only for the base's gradient (torch's should_compute_output(0)); a base that
            # did not require grad has no edge, and backward works (fuzz seed 7 #6117)
            self._check_overlapping_write()
        if gs_get_grad_enabled() or forward_ad_active():   # ops: a graph, or tangents, flow
            return self._apply_differentiable(<Tensor>grads[0])
        cdef cnp.ndarray result = np.array(data_of(<Tensor>grads[0]), order="C", copy=True)
        pos = self.positions()
        flat = result.reshape(-1)
        # (np.asarray: a 0-d view's element comes out of numpy as a scalar)
        res = materialize_zeros(self.fn.apply((wrap(np.asarray(flat[pos])),)))
        written = self.written_positions()   # Note [Writing through a view that repeats ...]
        if written is not None:
            pos = pos[written]
        if res[0] is None:
            flat[pos] = 0
        else:
            values = data_of(<Tensor>_sum_to_meta(res[0], self.view_shape))
            flat[pos] = values[written] if written is not None else values
        return (wrap(result),) + self._fit_values(res)

    cdef tuple _fit_values(self, tuple res):
        """The gradients of the in-place op's other inputs, in their own shapes.

        A value written into the view may have more leading size-1 dims than the view
        (``v[None, None, :] = x`` with ``x`` of shape (1, 1, 1, 3)): the op's formula gives
        its gradient in the view's shape, which the engine cannot widen, so reshape it here.
        """
        cdef list out = list(res[1:])
        cdef Py_ssize_t k
        cdef tuple shape, gshape
        for k in range(len(out)):
            g = out[k]
            if g is None or k + 1 >= len(self.next_edges):
                continue
            shape = (<tuple>self.next_edges[k + 1])[2]
            if shape is None:
                continue
            gshape = shape_of(data_of(<Tensor>g))
            lead = len(shape) - len(gshape)
            if lead > 0 and all(s == 1 for s in shape[:lead]) \
                    and broadcastable_to(shape[lead:], gshape):
                if gshape != shape[lead:]:
                    g = sum_to(<Tensor>g, shape[lead:])
                out[k] = g.reshape(shape)
        return tuple(out)

    cdef tuple _apply_differentiable(self, Tensor g):
        """The same with gradstack ops, recorded for double backward (create_graph=True):
        the base's gradient outside the view, plus the in-place op's gradient scattered
        into the view's positions (getitem and its adjoint, index_scatter)."""
        from gradstack_autograd.derivatives import index_scatter
        pos = self.positions()
        numel = int(np.prod(self.base_shape))
        flat = g.reshape(-1)
        res = materialize_zeros(self.fn.apply((flat[wrap(np.asarray(pos))],)))
        view_written = self.written_positions()   # Note [Writing through a view that ...]
        if view_written is not None:
            pos = pos[view_written]
        written = np.zeros(numel, dtype=np.bool_)
        written[pos.reshape(-1)] = True
        # select, never multiply by a 0/1 mask: inf * 0 would be nan (torch writes zeros)
        out = flat.masked_fill(wrap(written), 0.0)
        if res[0] is not None:
            g_view = sum_to(<Tensor>res[0], self.view_shape)
            if view_written is not None:
                g_view = g_view[wrap(view_written)]
            out = out + index_scatter(g_view, (pos,), (numel,))
        return (out.reshape(self.base_shape),) + self._fit_values(res)


@cython.no_gc
@cython.binding(False)
cdef class AsStridedBackward0(Node):
    """Gradient of a view whose base was rewritten in place: scatter into the base's shape."""
    cdef public tuple base_shape, base_strides, view_shape, view_strides
    cdef public Py_ssize_t view_offset
    cdef object _positions

    cdef object positions(self):
        if self._positions is None:
            self._positions = view_positions(self.base_shape, self.base_strides,
                                             self.view_shape, self.view_strides, self.view_offset)
        return self._positions

    cpdef tuple apply(self, tuple grads):
        _check_node_grads(self, grads)
        if self.base_shape is None or grads[0] is None:
            raise RuntimeError(f"{type(self).__name__}.apply() needs a node recorded by an "
                               "in-place op and a gradient")
        cdef Tensor g = <Tensor>grads[0]
        if 0 in self.view_shape:   # torch's as_strided_backward: an empty view gives fresh
            return (wrap(np.zeros(self.base_shape, dtype=data_of(g).dtype)),)   # zeros, no graph
        if gs_get_grad_enabled() or forward_ad_active():   # ops: double backward, tangents
            from gradstack_autograd.derivatives import index_scatter
            numel = int(np.prod(self.base_shape))
            return (index_scatter(g, (self.positions(),), (numel,))
                    .reshape(self.base_shape),)
        cdef cnp.ndarray result = np.zeros(self.base_shape, dtype=data_of(g).dtype)
        np.add.at(result.reshape(-1), self.positions(), data_of(g))
        return (wrap(result),)


cdef object _sum_to_meta(object g, tuple shape):
    if shape_of(data_of(<Tensor>g)) == shape:
        return g
    return wrap(np.asarray(np_sum_to(data_of(<Tensor>g), shape)))


# ----------------------------------------------------------------------------------------
# Helpers for nodes built in Python (custom Functions, forward-mode, DelayedError)


def edge_of(x):
    """The edge for argument ``x``: where its gradient goes, or NO_EDGE."""
    return _input_edge(x)


def attach_output(Tensor t not None, Node node not None, Py_ssize_t output_nr):
    """Make ``node`` the grad_fn of ``t`` (its output number ``output_nr``)."""
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True


def alias_of(Tensor t not None):
    """A new tensor object viewing ``t``'s storage (sharing its version counter), no graph."""
    return wrap_view(data_of(t), t)


def save_for_function(Tensor t not None, bint is_output, Node node not None):
    return save_tensor(t, is_output, node)


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


def native_formula_of(str op_name):
    """The native first-order formula code of ``op_name``'s entry (0 when it has none).

    Read from the entry's ``fused`` field (Note [Native first-order formulas], _native.pyx).
    """
    from gradstack_tensor import OPS
    op = OPS.get(op_name)
    if op is None or not isinstance(op.derivative, Derivative):
        return NATIVE_NONE
    return (<Derivative>op.derivative).native
