# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Graph nodes, saved tensors, hook handles, per-tensor autograd state, ``.grad`` layout.

The cdef classes and functions that the layer and the engine use are declared in
``_node.pxd``.
"""
cimport cython
cimport numpy as cnp
from cpython.ref cimport Py_REFCNT
from cpython.object cimport PyObject
from gradstack_tensor.extension cimport (
    Tensor, data_of, enter_op, exit_op, shape_of, wrap,
)

from gradstack_autograd._grad_mode cimport (
    gs_get_grad_enabled, gs_get_inference_mode, gs_set_grad_enabled,
)
from gradstack_autograd._inline cimport kernel_operand, retrack, untrack

import threading as _threading
import weakref

import numpy as np

try:
    from gradstack_tensor import kernels as _kernels
except ImportError:  # pragma: no cover - a tensor-core build without the fused kernels
    _kernels = None

cnp.import_array()

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

# ----------------------------------------------------------------------------------------
# Hook handles


cdef Py_ssize_t _next_handle_id = 0


class RemovableHandle:
    """Returned by every ``register_*hook``: ``handle.remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit.
    """

    __slots__ = ("_hooks", "id", "__weakref__")

    def __init__(self, hooks: dict):
        global _next_handle_id
        _next_handle_id += 1
        self.id = _next_handle_id
        self._hooks = hooks     # the dict does not point back at the handle: no cycle

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __repr__(self):
        return f"<RemovableHandle id={self.id}>"


cdef object _add_hook(dict hooks, object fn):
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


# ----------------------------------------------------------------------------------------
# Per-tensor autograd state


@cython.binding(False)
cdef class AutogradMeta:
    """What autograd keeps on a tensor besides ``requires_grad``/``grad``/``grad_fn``."""


cdef AutogradMeta meta_of(Tensor t):
    if t._autograd_meta is None:
        t._autograd_meta = AutogradMeta.__new__(AutogradMeta)
    # (a checked cast: the field is writable from Python)
    return <AutogradMeta?>t._autograd_meta


# ----------------------------------------------------------------------------------------
# Saved tensors

# Note [Saved tensors and reference cycles]
# A node saves its inputs by reference (they do not point back at the node) but its own
# outputs only by storage: an output holding the node as grad_fn while the node holds the
# output would be a cycle that only the GC frees.  When create_graph needs the output as a
# graph member again, unpacking rebuilds a tensor over the same storage with this node as
# its grad_fn, as torch's SavedVariable does.

# pack/unpack hooks pushed by graph.saved_tensors_hooks, innermost last.  Thread-local, as
# torch's: a thread inside `with saved_tensors_hooks(...)` must not pack another thread's
# saved tensors.  The count lives in C thread-local storage (the check on every save).
cdef extern from *:
    """
    static __thread int gs_n_saved_hooks = 0;
    static inline int gs_get_n_saved_hooks(void) { return gs_n_saved_hooks; }
    static inline void gs_set_n_saved_hooks(int v) { gs_n_saved_hooks = v; }
    """
    int gs_get_n_saved_hooks() nogil
    void gs_set_n_saved_hooks(int v) nogil

_saved_hooks_local = _threading.local()


cdef list _saved_hooks_stack():
    stack = getattr(_saved_hooks_local, "stack", None)
    if stack is None:
        stack = _saved_hooks_local.stack = []
    return <list>stack


def _push_saved_tensors_hooks(pack, unpack):
    cdef list stack = _saved_hooks_stack()
    stack.append((pack, unpack))
    gs_set_n_saved_hooks(len(stack))


def _pop_saved_tensors_hooks():
    cdef list stack = _saved_hooks_stack()
    stack.pop()
    gs_set_n_saved_hooks(len(stack))


def saved_tensors_hooks_active():
    """Whether default pack/unpack hooks (``graph.saved_tensors_hooks``) are set on this
    thread: a formula that would keep an array of its own for backward keeps none then."""
    return gs_get_n_saved_hooks() > 0


@cython.no_gc
@cython.binding(False)
cdef class SavedTensor:
    """A tensor saved for backward, with the version it had when it was saved."""

    def __repr__(self):
        return f"<SavedTensor version={self.version} output={self.is_output}>"

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack this saved tensor now with ``pack_hook`` and unpack it with ``unpack_hook``
        whenever it is read (by backward or ``grad_fn._saved_<name>``): torch's
        ``SavedTensor.register_hooks``, reached as ``grad_fn._raw_saved_<name>``.

        One pair per saved tensor; a tensor saved under ``saved_tensors_hooks`` has its pair
        already.  The pack hook runs without grad (Note [Pack hooks run without grad]) and
        its result replaces the saved tensor.

        Examples
        --------
        >>> import gradstack_tensor as gt
        >>> x = gt.ones(3, requires_grad=True)
        >>> y = x.pow(2)
        >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda p: p / 2)
        >>> y.grad_fn._saved_self.tolist()
        [1.0, 1.0, 1.0]
        """
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                "register_hooks(pack_hook, unpack_hook) takes two callables, got "
                f"{type(pack_hook).__name__} and {type(unpack_hook).__name__}"
            )
        if self.freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward."
            )
        if self.hooked:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        if self.tensor is None and self.data is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden (the "
                "node did not save this value: no gradient that reads it was wanted)"
            )
        cdef Tensor t
        if self.is_output:
            t = wrap(self.data)
            t._vc = self.vc
        else:
            t = self.tensor
        prev = gs_get_grad_enabled()
        gs_set_grad_enabled(0)
        try:
            packed = pack_hook(t)
        finally:
            gs_set_grad_enabled(prev)
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.hooked = True
        retrack(self.tensor)
        self.tensor = None   # the packed value stands for it now, as in torch
        self.data = None

    def __dealloc__(self):
        retrack(self.tensor)  # (untracked while saved: the GC may need it again)


cdef SavedTensor save_tensor(Tensor t, bint is_output, Node owner):
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    if t._is_inference and gs_get_inference_mode() == 0:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can make a "
            "clone to get a normal tensor and use it in autograd. (The tensor of shape "
            f"{list(t.shape)} was created in inference mode; op {owner.name()}.)"
        )
    s.vc = t.version_counter()
    s.vc.track_writes = True
    s.version = s.vc.value
    s.is_output = is_output
    if gs_get_n_saved_hooks():
        pack, unpack = _saved_hooks_stack()[-1]
        s.hooked = True
        s.unpack_hook = unpack
        # an output is packed as a plain alias: handing the hook the tensor itself would let
        # the packed object hold its grad_fn, this node (a cycle through an untracked node)
        # Note [Pack hooks run without grad]: as in torch, the pack hook runs under no_grad,
        # so a hook that computes with the tensor (``lambda t: t * 4``) records no node and
        # saves nothing itself (which would call the hook again, without end)
        prev = gs_get_grad_enabled()
        gs_set_grad_enabled(0)
        try:
            s.packed = pack(_plain_alias(t) if is_output else t)
        finally:
            gs_set_grad_enabled(prev)
        s.output_nr = t._output_nr
        s.output_requires_grad = t._requires_grad
        return s
    if is_output:
        s.data = data_of(t)
        s.output_nr = t._output_nr
        s.output_requires_grad = t._requires_grad
        if t._view_base is not None:
            s.view_ref = weakref.ref(t)
    else:
        s.tensor = t
        if t._grad_fn is not None and t._autograd_meta is None and not _has_instance_dict(t):
            untrack(t)      # Note [Saved intermediates are invisible to the cyclic GC]
    return s


# Note [Saved intermediates are invisible to the cyclic GC]
# A graph keeps every intermediate tensor that a formula needs (the tutorial's loop keeps
# 2,000).  Tracked by the GC, they make young collections frequent and, being long-lived,
# trigger full collections that walk every object of the program: measured as ~10% of the
# tutorial's forward pass.  torch's SavedVariable keeps only the C++ tensor, which the GC
# never sees.  Ours are hidden from it when saved, if nothing can make them part of a
# cycle: a non-leaf (its grad_fn is an untracked node already), without autograd state
# (hooks, retain_grad) and without instance attributes.  A cycle made later through such
# a tensor (``t.me = t``) is seen by the GC again once the tensor is no longer saved: the
# node frees it after backward, or the node dies, and either way ``retrack`` shows it to
# the GC (issue 11: +907 MB over 300 iterations before).  A cycle through the node itself
# (``t.me = y`` where y's node saved t) stays invisible: Note [Nodes are invisible ...].

cdef extern from "Python.h":
    PyObject** _PyObject_GetDictPtr(object obj)
    Py_ssize_t PyDict_Size(object d) except -1


cdef inline bint _has_instance_dict(Tensor t):
    """Whether ``t`` has instance attributes (Cython gives every Tensor an empty dict)."""
    cdef PyObject** slot = _PyObject_GetDictPtr(t)
    return slot != NULL and slot[0] != NULL and PyDict_Size(<object>slot[0]) != 0


cdef Tensor _plain_alias(Tensor t):
    cdef Tensor a = wrap(data_of(t))
    a._vc = t.version_counter()
    return a


_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


cdef inline void _check_usable(SavedTensor s, Node owner, Py_ssize_t index) except *:
    if s.freed:
        raise RuntimeError(f"{_FREED_MESSAGE} (The freed tensors belonged to node {owner.name()}.)")
    # Note [Hooked saved tensors are not version-checked]: as torch's SavedVariable, a
    # tensor packed by saved-tensor hooks is what its unpack hook returns, whatever
    # happened to the original since (torch "can't track versions through the hooks"):
    # ``allow_mutation_on_saved_tensors`` relies on it
    if s.vc.value != s.version and not s.hooked:
        raise RuntimeError(_version_error(s, owner, index))


cdef void check_saved(Node node) except *:
    """Raise what unpacking ``node``'s saved tensors would raise (freed, or modified in
    place since saved).

    Note [A node unpacks what it saved even when no gradient arrives]
    torch's generated nodes unpack their saved variables before they look at the incoming
    gradients, so a graph whose gradient stops on the way (``norm(p=0)``'s backward is
    undefined) still fails at a node whose saved tensor was written in place since
    (``v.atan2_(v)`` saves ``v`` and then writes it; fuzz seed 11 #12062).  The engine
    skips the formula of a node that receives no gradient, and calls this instead; torch's
    ``NotImplemented`` node (floor_divide) raises whatever it receives, so the engine runs
    that one (seed 12 #8075)."""
    cdef Py_ssize_t i = 0
    if node.saved is None:
        return
    for v in node.saved:
        if isinstance(v, SavedTensor):
            _check_usable(<SavedTensor>v, node, i)
        elif type(v) is tuple:
            for w in <tuple>v:
                if isinstance(w, SavedTensor):
                    _check_usable(<SavedTensor>w, node, i)
        i += 1


cdef object unpack_saved(SavedTensor s, Node owner, Py_ssize_t index):
    cdef Tensor t
    _check_usable(s, owner, index)
    if s.hooked:
        r = s.unpack_hook(s.packed)
        if not isinstance(r, Tensor):
            raise TypeError(
                f"the unpack hook of saved_tensors_hooks must return a Tensor, got "
                f"{type(r).__name__} (node {owner.name()})"
            )
        if s.is_output and s.output_requires_grad and gs_get_grad_enabled() \
                and (<Tensor>r)._grad_fn is None:
            return _output_alias(data_of(<Tensor>r), s, owner)
        return r
    if not s.is_output:
        return s.tensor
    if s.output_requires_grad and gs_get_grad_enabled():
        t = _output_alias(s.data, s, owner)
        if s.view_ref is not None:
            _take_the_views_history(t, s.view_ref())
    else:
        t = wrap(s.data)
        t._vc = s.vc
    if s.fw_grad is not None:
        t._fw_grad = s.fw_grad
    return t


# Note [A saved view takes its history from the view]
# An in-place op on a view (``v5 = v2[::2]; v5.relu_()``) saves its result, ``v5``, and
# the write gives ``v5`` a new grad_fn: an AsStridedBackward0 over the base's CopySlices.
# torch's SavedVariable notes that grad_fn (``is_inplace_on_view``) and unpacks the saved
# result with it, not with the node that saved it; a gradient formula computed with
# ``create_graph=True`` then depends on ``v5`` as the graph sees it, so differentiating it
# again with respect to ``v5`` gives zeros where the node itself would leave ``v5``
# unused (None, or "appears to not have been used in the graph"; fuzz seed 10 #15210).
# A saved output that is a view keeps a weak reference to it and takes its grad_fn when
# unpacked, if the view is alive (torch's weak grad_fn, likewise, may be gone).


cdef void _take_the_views_history(Tensor t, object view) except *:
    if view is not None and (<Tensor>view)._grad_fn is not None:
        t._grad_fn = (<Tensor>view)._grad_fn
        t._output_nr = (<Tensor>view)._output_nr


cdef Tensor _output_alias(cnp.ndarray data, SavedTensor s, Node owner):
    cdef Tensor t = wrap(data)
    t._vc = s.vc
    t._requires_grad = True
    t._grad_fn = owner
    t._output_nr = s.output_nr
    return t


cdef str _version_error(SavedTensor s, Node owner, Py_ssize_t index):
    if s.tensor is not None:
        shape, dtype = list(s.tensor.shape), s.tensor.dtype
    elif s.data is not None:
        shape, dtype = list((<object>s.data).shape), _dtype_of(s.data)
    else:
        shape, dtype = "?", "?"
    writer = s.vc.last_writer
    where = ""
    if writer is not None:
        op_name, location = writer
        where = (f" It was last modified by {op_name}"
                 + (f" at {location}" if location else "") + ".")
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{dtype} {shape}], which is output {s.output_nr} of "
        f"{owner.name()}, is at version {s.vc.value}; expected version {s.version} instead."
        if s.is_output else
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{dtype} {shape}] (saved tensor {index} of {owner.name()}) is at version "
        f"{s.vc.value}; expected version {s.version} instead."
    ) + where + (
        " Hint: clone() the tensor before modifying it in place, or do the in-place op after "
        "backward. Enable anomaly detection (autograd.set_detect_anomaly(True)) to see the "
        "forward operation that saved it."
    )


cdef object _dtype_of(cnp.ndarray a):
    from gradstack_tensor.dtypes import from_numpy_dtype
    return from_numpy_dtype(a.dtype)


cdef void free_saved(Node node) noexcept:
    cdef object v
    if node.saved is None:
        return
    for v in node.saved:
        if isinstance(v, SavedTensor):
            (<SavedTensor>v).freed = True
            retrack((<SavedTensor>v).tensor)
            (<SavedTensor>v).tensor = None
            (<SavedTensor>v).data = None
            (<SavedTensor>v).packed = None
            (<SavedTensor>v).fw_grad = None


# ----------------------------------------------------------------------------------------
# Nodes

cdef Py_ssize_t _sequence_nr = 0
cdef Py_ssize_t ACCUMULATE_PRIORITY = PY_SSIZE_T_MAX


# Note [Nodes are invisible to the cyclic GC]
# A graph of n ops holds ~n nodes; with the GC tracking them, every full collection walks
# the whole graph and building a long chain becomes superlinear (measured: 20,000 ops took
# 2.6x longer).  torch's nodes are C++ objects the GC never sees; ours opt out the same
# way: the cdef classes are no_gc, and the per-op Python subclasses (heap types, which
# CPython always makes GC types) have each instance untracked when it is created.
# The cost is the same as torch's: a cycle *through* a node (a hook whose closure
# holds the tensor it is registered on) is freed only when the hook is removed.  Custom
# Function nodes (Python subclasses with a __dict__) stay tracked.
@cython.no_gc
@cython.binding(False)
cdef class Node:
    """A backward function in the graph (``grad_fn``): torch's ``torch.autograd.graph.Node``.

    ``next_functions`` holds one ``(node, input_nr)`` pair per differentiable input of the
    forward op (``(None, 0)`` when that input needs no gradient).  Each op has its own
    subclass, named as torch names it (``MulBackward0``), so that ``print(t.grad_fn)``
    reads as it does in torch.
    """

    def __cinit__(self):
        self.saved = None
        self.released = False
        self.num_outputs = 1

    def name(self):
        """The node's class name (``"MulBackward0"``)."""
        return type(self).__name__

    @property
    def next_functions(self):
        """``((node, input_nr), ...)``: where the gradient of each input goes."""
        if self.next_edges is None:
            return ()
        return tuple([(e[0], e[1]) for e in self.next_edges])

    @property
    def metadata(self):
        """A dict for user data attached to this node (anomaly mode stores the trace here)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def _sequence_nr(self):
        return self.sequence_nr

    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)``, called after the node ran.

        It may return a tuple replacing ``grad_inputs`` (the gradients the node computed
        for its inputs).  Returns a handle whose ``remove()`` unregisters it.
        """
        if self.post_hooks is None:
            self.post_hooks = {}
        return _add_hook(self.post_hooks, fn)

    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)``, called before the node runs.

        It may return a tuple replacing ``grad_outputs``.
        """
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return _add_hook(self.pre_hooks, fn)

    def _register_tensor_hook(self, Py_ssize_t output_nr, fn):
        if self.tensor_pre_hooks is None:
            self.tensor_pre_hooks = {}
        hooks = self.tensor_pre_hooks.get(output_nr)
        if hooks is None:
            hooks = self.tensor_pre_hooks[output_nr] = {}
        return _add_hook(hooks, fn)

    @property
    def _saved_tensors(self):
        """The unpacked saved values (raises after they were freed)."""
        return tuple(self.saved_value(i) for i in range(len(self.saved or ())))

    cpdef object saved_value(self, object key):
        """A saved value, unpacked (checks versions; raises once freed).

        ``key`` is its index in ``saved``, or for a node of the derivative table its name
        in the op's entry (``"self"``, ``"other"``, ``"dim"``, ``"result"`` ...).
        """
        cdef Py_ssize_t i = self._slot(<str>key) if type(key) is str else key
        v = self.saved[i]
        if isinstance(v, SavedTensor):
            return unpack_saved(<SavedTensor>v, self, i)
        if type(v) is tuple:
            return self._unpack_tuple(<tuple>v, i)
        return v

    cdef Py_ssize_t _slot(self, str name) except -2:
        raise TypeError(f"{self.name()} saves values by position only, not by name ({name!r})")

    cdef tuple _unpack_tuple(self, tuple values, Py_ssize_t i):
        cdef list out = []
        for x in values:
            out.append(unpack_saved(<SavedTensor>x, self, i) if isinstance(x, SavedTensor) else x)
        return tuple(out)

    cpdef tuple apply(self, tuple grads):
        """Compute the gradients of the inputs from the gradients of the outputs."""
        raise NotImplementedError(f"{self.name()}.apply")

    def __call__(self, *grads):
        return materialize_zeros(self.apply(tuple(grads)))

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


# Note [Efficient zeros]
# torch's ``sgn`` (and so ``abs``'s and the norms' formulas, which multiply by
# ``self.sgn()``) has ``_efficientzerotensor`` as its gradient: a ZeroTensor, whose product
# with anything is again a ZeroTensor.  A zero that comes out of sgn's backward stays an
# exact zero through the formulas behind it, even where they multiply it by ``inf`` or
# NaN: the second derivative of ``norm(v, -inf)`` at ``v = -inf`` reaches ``x7`` in
# ``v = outer(x2, x7)`` as 0, where real zeros give ``0 * -inf = nan`` (fuzz seed 20 #6970).
# The engine mirrors that with an EfficientZero, a gradient that holds only a shape and a
# dtype:
#   - a formula returns one (``efficient_zeros(grad)``) and the engine fits it to the edge;
#   - added to a real gradient it disappears (ZeroTensor + g is g);
#   - a built-in node whose incoming gradients are all efficient zeros (or None) passes
#     them on as torch's formula does (its entry's ``keeps_zero``): torch's ZeroTensor is
#     kept by the ops that know it (``grad * f(x)``: MulBackward0, SinBackward0 ...) and
#     materialized by the others (``-grad * ...``, mm, where), so each node, input by
#     input, either hands on an efficient zero without running, or runs its formula on
#     real zeros (an unlisted node always does; fuzz seed 23 #12755: the ``other`` input
#     of RemainderBackward1 gets ``-0 * nan``, NaN, in torch too);
#   - everywhere a user's code or a leaf would see it (hooks, retained and captured
#     gradients, ``.grad``, custom Functions, a node called by hand) it becomes real zeros.
#     (torch stores the ZeroTensor itself in ``.grad``, where it prints as zeros but
#     refuses ``add_``: real zeros are what a user can work with.)

@cython.final
@cython.no_gc
@cython.binding(False)
cdef class EfficientZero:
    """A zero gradient that stays zero through later formulas (Note [Efficient zeros])."""

    def __repr__(self):
        dtype = np.dtype(cnp.PyArray_TypeObjectFromType(self.dtype_num))
        return f"EfficientZero(shape={list(self.shape)}, dtype={dtype})"


cdef EfficientZero new_efficient_zero(tuple shape, int dtype_num):
    cdef EfficientZero z = EfficientZero.__new__(EfficientZero)
    z.shape = shape
    z.dtype_num = dtype_num
    return z


def efficient_zeros(Tensor like not None):
    """An efficient zero of ``like``'s shape and dtype, for a formula to return
    (Note [Efficient zeros]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> efficient_zeros(gt.ones(2, 3))
    EfficientZero(shape=[2, 3], dtype=float32)
    """
    cdef cnp.ndarray a = data_of(like)
    return new_efficient_zero(shape_of(a), cnp.PyArray_TYPE(a))


cdef Tensor materialize_zero(EfficientZero z):
    return wrap(np.zeros(z.shape, dtype=cnp.PyArray_DescrFromType(z.dtype_num)))


cdef tuple materialize_zeros(tuple grads):
    """``grads`` with each efficient zero replaced by real zeros."""
    cdef Py_ssize_t i
    cdef list out = None
    for i in range(len(grads)):
        if type(grads[i]) is EfficientZero:
            if out is None:
                out = list(grads)
            out[i] = materialize_zero(<EfficientZero>grads[i])
    return grads if out is None else tuple(out)


cdef Py_ssize_t next_sequence_nr() noexcept:
    global _sequence_nr
    _sequence_nr += 1
    return _sequence_nr


@cython.no_gc
@cython.binding(False)
cdef class AccumulateGrad(Node):
    """The node that adds a leaf's gradient into ``leaf.grad`` (torch's layout rules 1-4)."""

    cpdef tuple apply(self, tuple grads):
        _check_node_grads(self, grads)
        if self.variable is None:       # made by AccumulateGrad.__new__ alone
            raise RuntimeError("this AccumulateGrad node has no leaf tensor to accumulate into")
        accumulate_into_leaf(self.variable, grads[0], gs_get_grad_enabled() != 0)
        return ()

    cdef tuple apply_from_engine(self, tuple grads):
        """``apply`` as the engine calls it, with the buffer's list and the tuple ``grads``
        as the only other holders of the gradient, which a new ``.grad`` may then take
        over (Note [A new .grad takes over the gradient])."""
        _check_node_grads(self, grads)
        if self.variable is None:
            raise RuntimeError("this AccumulateGrad node has no leaf tensor to accumulate into")
        accumulate_into_leaf(self.variable, grads[0], gs_get_grad_enabled() != 0, True)
        return ()


cdef int _check_node_grads(Node node, tuple grads) except -1:
    """A node's apply() is reachable from Python (``node(g)``): it casts its first
    gradient to Tensor, so check it (the engine's own calls pass validated gradients)."""
    if grads is None or len(grads) == 0 or not (grads[0] is None or isinstance(grads[0], Tensor)):
        got = "nothing" if not grads else type(grads[0]).__name__
        raise TypeError(f"{type(node).__name__}.apply() expects a tuple of gradients "
                        f"(Tensors or None), got {got}")
    return 0


NO_EDGE = (None, 0, None, -1)


cdef tuple gradient_edge(Tensor t):
    """The edge receiving ``t``'s gradient: ``(grad_fn or accumulator, input_nr, shape, dtype)``."""
    cdef cnp.ndarray d = data_of(t)
    cdef tuple edge
    cdef tuple shape = shape_of(d)
    if t._grad_fn is not None:
        if not isinstance(t._grad_fn, Node):     # the field is writable from Python
            raise TypeError(f"grad_fn must be a Node or None, not {type(t._grad_fn).__name__}")
        edge = (t._grad_fn, t._output_nr, shape, cnp.PyArray_TYPE(d))
    else:
        edge = (grad_accumulator(t), 0, shape, cnp.PyArray_TYPE(d))
    # CPython keeps a tuple tracked while it holds any GC-capable object, untracked or not,
    # so edges would stay in every collection forever (Note [Nodes are invisible ...]);
    # the shape (ints only) would be untracked by the first collection that sees it
    untrack(edge)
    untrack(shape)
    return edge


cdef AccumulateGrad grad_accumulator(Tensor t):
    cdef AutogradMeta meta = meta_of(t)
    cdef object acc = None
    if meta.grad_accumulator is not None:
        acc = meta.grad_accumulator()
    if acc is None:
        acc = AccumulateGrad.__new__(AccumulateGrad)
        (<AccumulateGrad>acc).variable = t
        untrack(acc)
        (<AccumulateGrad>acc).next_edges = ()
        (<AccumulateGrad>acc).sequence_nr = ACCUMULATE_PRIORITY
        meta.grad_accumulator = weakref.ref(acc)
    return <AccumulateGrad>acc


cdef inline tuple _shape(Tensor t):
    return shape_of(data_of(t))


# ----------------------------------------------------------------------------------------
# Accumulation into .grad (the API page's "Default gradient layouts")

cdef bint _non_overlapping_and_dense(cnp.ndarray a):
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    dims = sorted(((abs(st), sz) for st, sz in zip((<object>a).strides, shape_of(a))
                   if sz != 1), reverse=True)
    expected = a.itemsize
    for stride, size in reversed(dims):
        if stride != expected:
            return False
        expected *= size
    return True


cdef cnp.ndarray _grad_buffer_like(cnp.ndarray param):
    """An empty array for a new ``.grad``: rule 1 (param's strides) or rule 2 (row-major).
    Allocated as inside an op, so that the block cache may keep it (Note [Inside a
    gradstack op] in tensor-core's _dispatch.pyx)."""
    enter_op()
    try:
        if param.flags.c_contiguous or not _non_overlapping_and_dense(param):
            return np.empty((<object>param).shape, dtype=param.dtype)
        return np.empty_like(param, order="K")
    finally:
        exit_op()


# Note [Accumulation into .grad is atomic]
# Threads may run backward passes that reach the same leaf (torch allows it and sums every
# contribution).  Reading ``.grad``, allocating it and adding into it (the kernel releases
# the GIL for large arrays) is one critical section: without it two threads lose updates
# (issue 11: 4 threads x 200 passes into one 2**16-element leaf lost some in 4 of 5 runs).
# One lock for every leaf keeps it simple; a wait releases the GIL, and hooks run outside.
_ACCUMULATE_LOCK = _threading.Lock()


cdef void accumulate_into_leaf(Tensor var, object new_grad, bint create_graph,
                               bint from_engine=False) except *:
    if new_grad is None:
        return
    with _ACCUMULATE_LOCK:
        _accumulate_locked(var, <Tensor>new_grad, create_graph, from_engine)
    _run_post_accumulate_hooks(var)


# Note [A new .grad takes over the gradient]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A leaf whose .grad is None (``x.grad = None``, ``zero_grad(set_to_none=True)``, the
# first backward) gets its gradient as a new tensor; copying it into a fresh buffer is a
# pass over memory (0.5 ms of the 1M-element workload's 18 ms).  As torch's AccumulateGrad
# does (when ``new_grad.use_count() <= num_expected_refs``), the new .grad takes the
# gradient's array itself when nothing else can see it:
#   - the engine called the node (``apply_from_engine``): the input buffer's list, the
#     tuple handed to the node and the node's own reading of it are then the only
#     references to the gradient tensor (_ENGINE_REFS; the engine drops its other ones
#     before it runs the next node).  A hook that kept it, a retained grad, a gradient the
#     user passed in, a formula that returned a tensor it also keeps: any of them adds a
#     reference, and the gradient is copied as before;
#   - the array is referenced by that tensor alone and its memory is private: it owns it,
#     or it views the whole of an array that nothing else holds but it and, for a view
#     tensor, that view's base tensor, held by the gradient alone (``_memory_is_private``:
#     a Linear weight's gradient is ``t()`` of a product, its bias's a reshape of a sum);
#   - the array is writable, aligned, in native byte order, and has the leaf's dtype,
#     shape and the layout the layout rules give the new .grad (rule 1 or 2);
#   - not under create_graph (the copy keeps the graph there), and the gradient is a plain
#     tensor (no grad_fn, no requires_grad).
# graph-engine's tests/test_new_grad_takes_over.py checks both that it happens in the
# common cases and that it never happens where something else holds the gradient.
cdef Py_ssize_t _ENGINE_REFS = 3
cdef Py_ssize_t _taken_over = 0    # how many times it happened (for the tests)


def _take_over_count():
    """How many new .grad took over their gradient's array so far (Note [A new .grad
    takes over the gradient]); for tests."""
    return _taken_over


cdef bint _can_take_over(Tensor g, cnp.ndarray param):
    """Whether ``g``'s array may become the new .grad of a leaf stored in ``param`` (Note
    [A new .grad takes over the gradient]); ``g`` comes from apply_from_engine."""
    cdef cnp.ndarray a
    if (Py_REFCNT(g) > _ENGINE_REFS or g._requires_grad or g._grad_fn is not None
            or type(g) is not Tensor):
        return False
    a = data_of(g)
    if Py_REFCNT(a) != 2 or not _memory_is_private(g, a):     # (g's reference and ``a``)
        return False
    if (not cnp.PyArray_ISWRITEABLE(a)
            or not cnp.PyArray_ISALIGNED(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or cnp.PyArray_TYPE(a) != cnp.PyArray_TYPE(param)
            or not cnp.PyArray_SAMESHAPE(a, param)):
        return False
    if param.flags.c_contiguous or not _non_overlapping_and_dense(param):
        if cnp.PyArray_IS_C_CONTIGUOUS(a):                     # rule 2 (or 1, row-major)
            return True
    elif (<object>a).strides == (<object>param).strides:       # rule 1
        return True
    # Note [The gradient layout policy]: under ``enforce_grad_layout_policy(False)`` torch
    # lets AccumulateGrad steal a gradient whatever its layout (a permuted parameter's
    # .grad then has the gradient's strides); a new .grad made by copying keeps the rules
    return not is_grad_layout_enforcement_enabled()


# the gradient layout policy of this thread (torch's thread-local
# ``_is_grad_layout_enforcement_enabled``), read only where a layout does not match
_grad_layout_local = _threading.local()


def is_grad_layout_enforcement_enabled():
    """Whether a leaf's new .grad is held to the layout rules on this thread (Note [The
    gradient layout policy]); True unless ``enforce_grad_layout_policy(False)``."""
    return getattr(_grad_layout_local, "enabled", True)


def set_grad_layout_enforcement_enabled(enabled):
    """Set this thread's gradient layout policy (Note [The gradient layout policy])."""
    _grad_layout_local.enabled = bool(enabled)


cdef bint _memory_is_private(Tensor g, cnp.ndarray a):
    """Whether only ``g`` can reach ``a``'s memory: ``a`` owns it, or ``a`` views all of
    an array that owns it and that nothing else holds but ``a`` and, for a view tensor,
    ``g``'s base, itself held by ``g`` alone (a weight's gradient is ``t()`` of a product,
    a bias's a reshape of a sum: Note [A new .grad takes over the gradient]).  The counts
    include this function's own typed locals."""
    cdef cnp.ndarray b, c
    cdef Tensor vb
    cdef PyObject* base = cnp.PyArray_BASE(a)
    if base == NULL:
        return g._view_base is None and cnp.PyArray_CHKFLAGS(a, cnp.NPY_ARRAY_OWNDATA)
    if not cnp.PyArray_Check(<object>base):
        return False
    b = <cnp.ndarray>base                       # held by ``a.base`` (and this local)
    if g._view_base is not None:
        if type(g._view_base) is not Tensor:
            return False
        vb = <Tensor>g._view_base               # held by ``g`` (and this local) alone
        if (Py_REFCNT(vb) != 2 or vb._view_base is not None
                or vb._requires_grad or vb._grad_fn is not None):
            return False
        if data_of(vb) is not b:                # a view of ``b`` (numpy collapses chains)
            c = data_of(vb)
            if Py_REFCNT(c) != 2 or cnp.PyArray_BASE(c) != base:
                return False
        if Py_REFCNT(b) != 3:                   # ``a.base``, the base's array, the local
            return False
    elif Py_REFCNT(b) != 2:
        return False
    return (cnp.PyArray_BASE(b) == NULL and cnp.PyArray_CHKFLAGS(b, cnp.NPY_ARRAY_OWNDATA)
            and cnp.PyArray_SIZE(b) == cnp.PyArray_SIZE(a)
            and cnp.PyArray_TYPE(b) == cnp.PyArray_TYPE(a))


cdef void _accumulate_locked(Tensor var, Tensor g, bint create_graph,
                             bint from_engine) except *:
    global _taken_over
    cdef Tensor old
    cdef cnp.ndarray buf
    old = var._grad
    _end_deferral(var)    # Note [zero_grad() leaves zeros to be made on first read]
    if old is not None and _is_zeroed_grad(old):       # Note [A zeroed .grad receives ...]
        if not create_graph:
            _replace_zeroed_grad(var, old, g, from_engine)
            return
        old = None                                    # a new tensor, as for None
    if old is None:
        if create_graph and g._requires_grad:
            # a differentiable copy keeps the graph, for double backward through .grad
            var._grad = _clone_in_layout(g, data_of(var))      # rule 1 or 2
        elif from_engine and not create_graph and _can_take_over(g, data_of(var)):
            var._grad = wrap(data_of(g))            # Note [A new .grad takes over ...]
            _taken_over += 1
        else:

            buf = _grad_buffer_like(data_of(var))
            np.copyto(buf, data_of(g), casting="unsafe")
            var._grad = wrap(buf)
    elif create_graph:
        var._grad = _add_in_layout(old, g)                     # rule 4: a new tensor
    else:
        _accumulate_inplace(old, g)                            # rule 3: in place


# Note [A zeroed .grad receives the gradient as None would]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The zeros that nn-mini's default ``zero_grad()`` leaves (made when ``.grad`` is read,
# Note [zero_grad() leaves zeros to be made on first read]; the tutorial prints them) are
# marked as "no gradient" until written again (Note [Zeroed gradients count as None]:
# torch 2.x sets ``.grad`` to None there), and so are zeros marked by other code
# (``mark_grad_zeroed``).  Adding the next gradient into those
# zeros is a pass over memory that torch 2.x does not make, so a marked .grad is treated
# as torch treats None:
#   - the new .grad takes over the gradient's array when it may (Note [A new .grad takes
#     over the gradient]): no pass at all. The zeroed tensor is dropped, as torch drops
#     nothing (its .grad was None): a reference to it kept by the user still reads zeros;
#   - else the gradient is copied into the zeroed buffer (one read less than the add), and
#     the write bumps its version, which ends the mark;
#   - under create_graph, the new .grad is a new tensor, as for None (the differentiable
#     copy of rule 1 or 2).
# The values are those of torch 2.x's default: the gradient itself, so a -0.0 stays -0.0
# (``0.0 + -0.0`` would be +0.0, which is what ``zero_grad(set_to_none=False)`` gives,
# unmarked, as in torch).  The mark is ``mark_grad_zeroed``'s attribute, valid while the
# tensor's version is the one it recorded; a write through ``.data`` or ``.numpy()`` does
# not bump the version (as in torch), and is dropped here as torch 2.x would never have
# had it (the optimisers already skip such a .grad).
ZEROED_AT = "_gradstack_zeroed_at_version"


def mark_grad_zeroed(Tensor grad not None):
    """Mark ``grad`` (a ``.grad`` just zeroed in place) as "no gradient" until its next
    write (Note [A zeroed .grad receives the gradient as None would])."""
    setattr(grad, ZEROED_AT, grad._vc.value if grad._vc is not None else 0)


def grad_is_zeroed(object grad):
    """Whether ``grad`` is a ``.grad`` marked by :func:`mark_grad_zeroed` and not written
    since."""
    return isinstance(grad, Tensor) and _is_zeroed_grad(<Tensor>grad)


cdef bint _is_zeroed_grad(Tensor g) except -1:
    cdef object attrs = (<object>g).__dict__
    if not attrs:
        return False
    at = attrs.get(ZEROED_AT)
    return at is not None and at == (g._vc.value if g._vc is not None else 0)


cdef void _replace_zeroed_grad(Tensor var, Tensor old, Tensor g, bint from_engine) except *:
    global _taken_over
    if from_engine and _can_take_over(g, data_of(var)):
        var._grad = wrap(data_of(g))
        _taken_over += 1
    else:
        np.copyto(data_of(old), data_of(g), casting="unsafe")
        old.bump_version("AccumulateGrad")


# Note [zero_grad() leaves zeros to be made on first read]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Zeroing every .grad in place (the Note above) is a pass over all the gradients per
# step, and the next backward drops those zeros (the new .grad takes over the gradient's
# array): 12 us of the TinyModel step's 229 (batch 16, 1000-100-10).  Nothing needs them
# but code that prints .grad between zero_grad() and backward, as the tutorial does; torch
# 2.x has None there.  So nn-mini's default zero_grad() defers them (``defer_grad_zeros``):
#   - .grad is None to everything inside gradstack (the C field): backward gives the leaf
#     its gradient as to None, and optimisers skip it, as torch 2.x does;
#   - reading ``.grad`` from Python makes the zeros then (``deferred_grad_zeros``, in the
#     layout of a new .grad), keeps them as .grad, and marks them zeroed (the Note above),
#     so the tutorial prints zeros and every number after that is the same as before;
#   - assigning or deleting ``.grad``, and backward's accumulation, end the deferral.
# A reference to the old .grad that the user kept now keeps its values, as in torch 2.x
# (the in-place zeroing had zeroed it).


def defer_grad_zeros(Tensor t not None):
    """Set ``t.grad`` to None, reading as zeros until assigned (Note [zero_grad() leaves
    zeros to be made on first read]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> w = gt.ones(2, requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> defer_grad_zeros(w)
    >>> w._grad is None, w.grad.tolist(), grad_is_zeroed(w.grad)
    (True, [0.0, 0.0], True)
    """
    t._grad = None
    meta_of(t).grad_zeros_deferred = True


cdef inline void _end_deferral(Tensor t) except *:
    if t._autograd_meta is not None:
        (<AutogradMeta?>t._autograd_meta).grad_zeros_deferred = False


def end_grad_zeros_deferral(Tensor t not None):
    """Forget deferred zeros: ``t.grad`` was assigned (Note [zero_grad() leaves zeros to be
    made on first read])."""
    _end_deferral(t)


def grad_zeros_deferred(Tensor t not None):
    """Whether ``t.grad`` is None and reads as zeros (Note [zero_grad() leaves zeros to be
    made on first read])."""
    return (t._grad is None and t._autograd_meta is not None
            and (<AutogradMeta?>t._autograd_meta).grad_zeros_deferred)


def deferred_grad_zeros(Tensor t not None):
    """What reading ``t.grad`` gives while the C field is None: the deferred zeros, made
    now, kept as ``.grad`` and marked zeroed, or None (Note [zero_grad() leaves zeros to be
    made on first read])."""
    cdef cnp.ndarray buf
    if not grad_zeros_deferred(t):
        return t._grad
    buf = _grad_buffer_like(data_of(t))
    buf[...] = 0
    zeros = wrap(buf)
    t._grad = zeros
    _end_deferral(t)
    mark_grad_zeroed(zeros)
    return zeros


# Note [Layouts under create_graph]
# With create_graph the new .grad must stay differentiable, so it cannot be an np.empty
# buffer filled by hand.  Ops on a permuted view do it: permute the operands so that the
# wanted layout is row-major, compute (clone, or add) there, make it contiguous, and
# permute back.  Permutes are views, so the result has the wanted strides and a graph.

cdef object _stride_order(cnp.ndarray a):
    """Dims by decreasing |stride| when ``a`` is dense but not row-major, else None."""
    if a.ndim < 2 or a.flags.c_contiguous or not _non_overlapping_and_dense(a):
        return None
    strides = (<object>a).strides
    perm = sorted(range(a.ndim), key=lambda i: -abs(strides[i]))
    return None if perm == list(range(a.ndim)) else perm


cdef object _unpermute(object t, object perm):
    inverse = [0] * len(perm)
    for i, d in enumerate(perm):
        inverse[d] = i
    return t.permute(*inverse)


cdef object _clone_in_layout(Tensor g, cnp.ndarray param):
    """A differentiable copy of ``g`` with ``param``'s layout (rule 1), else row-major (2)."""
    perm = _stride_order(param)
    gp = g if perm is None else g.permute(*perm)
    c = gp.clone() if data_of(<Tensor>gp).flags.c_contiguous else gp.contiguous()
    return c if perm is None else _unpermute(c, perm)


cdef object _add_in_layout(Tensor old, Tensor g):
    """``old + g`` laid out like ``old`` when old is dense (rule 4's attempt)."""
    perm = _stride_order(data_of(old))
    if perm is None:
        return old + g
    r = old.permute(*perm) + g.permute(*perm)
    if not data_of(<Tensor>r).flags.c_contiguous:
        r = r.contiguous()
    return _unpermute(r, perm)


cdef void _accumulate_inplace(Tensor old, Tensor g) except *:
    add_into_array(data_of(old), data_of(g))
    old.bump_version("AccumulateGrad")


cdef void add_into_array(cnp.ndarray dst, cnp.ndarray src) except *:
    """``dst += src``: the fused kernel when both qualify, else numpy (any layout, casting)."""
    cdef int num = cnp.PyArray_TYPE(dst)
    if (_kernels is not None and (num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE)
            and cnp.PyArray_ISWRITEABLE(dst) and kernel_operand(dst, num, dst)
            and kernel_operand(src, num, dst)):      # (what _kernels.fusable checks, in C)
        _kernels.accumulate_(dst, src)
    else:
        np.add(dst, src, out=dst, casting="unsafe")


cdef void _run_post_accumulate_hooks(Tensor var) except *:
    cdef AutogradMeta meta
    if var._autograd_meta is None:
        return
    meta = <AutogradMeta?>var._autograd_meta
    if meta.post_accumulate_hooks:
        for fn in list(meta.post_accumulate_hooks.values()):
            fn(var)


def _add_hook_py(dict hooks not None, fn):
    """Register ``fn`` in ``hooks``; returns its RemovableHandle (for Python modules)."""
    return _add_hook(hooks, fn)


def new_sequence_nr():
    """A new node's sequence number (custom Function nodes take theirs here)."""
    return next_sequence_nr()


def current_sequence_nr():
    """The newest node's sequence number (the next node gets one more); read by the profiler."""
    return _sequence_nr
