# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The backward engine: ``run_backward`` (shared by ``backward`` and ``grad``), graph tasks,
the node observer (the profiler).
"""
cimport cython
from cpython.object cimport Py_TYPE, PyTypeObject
cimport numpy as cnp
from gradstack_tensor.extension cimport Tensor, data_of, shape_of, wrap

from gradstack_autograd._derivative cimport Derivative
from gradstack_autograd._grad_mode cimport (
    anomaly_check_nan, anomaly_enabled, forward_ad_active, gs_get_grad_enabled,
    gs_get_grads_batch, gs_set_grad_enabled, gs_set_grads_batch,
)
from gradstack_autograd._native cimport broadcastable_to, sum_to
from gradstack_autograd._node cimport (
    AccumulateGrad, AutogradMeta, EfficientZero, Node, add_into_array, check_saved, free_saved,
    gradient_edge, materialize_zero, new_efficient_zero,
)
from gradstack_autograd._op_node cimport OpNode

import heapq
import threading as _threading

import numpy as np

cnp.import_array()


# Note [How the engine runs a backward pass]
# 1. Find the nodes to run: walk the graph from the roots with an explicit stack (never
#    recursion: chains of millions of nodes are fine).  When targets are given (grad(), or
#    backward(inputs=...)), keep only nodes on a path to a target (a post-order pass).
# 2. Count, for each kept node, the edges coming into it from kept nodes.
# 3. Run ready nodes (count zero) from a heap ordered by creation, newest first (torch's
#    order; leaf accumulators first of all), so the order is deterministic.
# 4. For each node, in this order (written down in the package README and tested):
#      tensor hooks on each output (may replace the gradient) -> retain_grad stores ->
#      capture for grad() targets (Note [Captured gradients and tensor hooks]) -> node
#      pre-hooks -> the node -> node post-hooks;
#    then each gradient produced is validated once, here (count, shape with broadcast
#    reduction, dtype), and added into the buffer of the node it flows to.
# 5. Unless retain_graph, each node frees its saved tensors as soon as it has run.
#
# Note [Batched backward]
# ``grad(..., is_grads_batched=True)`` (and functional-api's jacobian/hessian) run ONE pass
# in which every gradient carries one extra leading dim, the batch (pytorch#50584 loops one
# pass per row instead).  The run is marked in a C thread-local (the batch size, -1 when
# not batched; it lives in _grad_mode.pyx).  Formulas that use shapes read it through
# ``grads_batched()`` and keep the leading dim (``_lead`` in derivatives._formulas);
# elementwise and matmul formulas broadcast over it as they are.  ``validate_grad``/``sum_to``
# compare shapes ignoring the leading dim and reduce broadcasts while keeping it.  A graph
# holding a node that cannot take a batch (custom Function, in-place on a view, a
# Derivative marked ``batchable=False``, any hook) is run row by row instead:
# ``unbatchable_reason`` says which node, and graph_api._batched_grad falls back to the
# loop.

cdef object validate_grad(object g, Node node, tuple edge, Py_ssize_t i):
    """Check gradient ``i`` produced by ``node`` against its input's shape and dtype (one place)."""
    cdef tuple shape, gshape
    cdef int dtype
    cdef cnp.ndarray gd
    if type(g) is EfficientZero:
        return _fitted_zero(<EfficientZero>g, edge)
    if not isinstance(g, Tensor):
        raise TypeError(
            f"Function {node.name()} returned a {type(g).__name__} as gradient {i}; expected a "
            "Tensor or None"
        )
    shape = <tuple>edge[2]
    dtype = edge[3]
    gd = data_of(<Tensor>g)
    if shape is None:
        return g
    if gs_get_grads_batch() >= 0:
        return _validate_batched_grad(<Tensor>g, node, shape, dtype, i)
    if _same_shape(gd, shape):
        if cnp.PyArray_TYPE(gd) == dtype:
            return g                                  # the common case: nothing to do
        return _cast_grad(g, dtype)
    gshape = shape_of(gd)
    if gshape != shape:
        if not broadcastable_to(shape, gshape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(gshape)} but expected shape compatible with {list(shape)}"
            )
        g = sum_to(<Tensor>g, shape)
    if cnp.PyArray_TYPE(data_of(<Tensor>g)) != dtype:
        g = _cast_grad(g, dtype)
    return g


cdef EfficientZero _fitted_zero(EfficientZero z, tuple edge):
    """An efficient zero of the edge's shape and dtype (a batched backward keeps the batch)."""
    cdef tuple shape = <tuple>edge[2]
    cdef Py_ssize_t batch = gs_get_grads_batch()
    if shape is None:
        return z
    if batch >= 0:
        shape = (batch,) + shape
    if shape == z.shape and <int>edge[3] == z.dtype_num:
        return z
    return new_efficient_zero(shape, <int>edge[3])


cdef object _settle_zeros(Node node, list grads):
    """Note [Efficient zeros]: where ``grads`` holds only efficient zeros (and Nones) and
    ``node``'s entry says its formula passes them on (``keeps_zero``; an OpNode without
    node hooks), that rule (True, or one bool per input); otherwise None, with the node's
    efficient zeros made real zeros, for the node and its hooks."""
    cdef Py_ssize_t k
    cdef bint any_zero = False, any_real = False
    for k in range(len(grads)):
        if type(grads[k]) is EfficientZero:
            any_zero = True
        elif grads[k] is not None:
            any_real = True
    if not any_zero:
        return None
    if (not any_real and not node.pre_hooks and not node.post_hooks
            and isinstance(node, OpNode) and isinstance(node.entry, Derivative)):
        keeps = (<Derivative>node.entry).keeps_zero
        if type(keeps) is dict:
            keeps = (<dict>keeps).get(node.name())
        if keeps is not None:
            return keeps    # (a custom Function's node is no OpNode: it runs, on zeros)
    _materialize_zeros(grads)
    return None


cdef tuple _call_with_zeros(Node node, list grads, object keeps):
    """Run ``node`` whose gradients are all efficient zeros, by its rule ``keeps``: the
    inputs it keeps receive efficient zeros, the others what its formula computes from
    real zeros (torch's formula, on a materialized ZeroTensor)."""
    cdef Py_ssize_t i
    cdef list out
    check_saved(node)
    if keeps is True:
        return _zeros_for_inputs(node)
    for i in range(len(node.next_edges)):
        if (<tuple>node.next_edges[i])[0] is not None and not (i < len(keeps) and keeps[i]):
            break
    else:
        return _zeros_for_inputs(node)
    _materialize_zeros(grads)
    out = list(_call_node(node, grads, None))
    zeros = _zeros_for_inputs(node)
    for i in range(min(len(out), len(keeps))):
        if keeps[i] and out[i] is not None:
            out[i] = zeros[i]
    return tuple(out)


cdef void _materialize_zeros(list grads) except *:
    cdef Py_ssize_t k
    for k in range(len(grads)):
        if type(grads[k]) is EfficientZero:
            grads[k] = materialize_zero(<EfficientZero>grads[k])


cdef tuple _zeros_for_inputs(Node node):
    """What a node whose gradients are all efficient zeros sends on: one to each input."""
    cdef list out = []
    for edge in node.next_edges:
        if (<tuple>edge)[0] is None:
            out.append(None)
        else:
            out.append(new_efficient_zero((<tuple>edge)[2], <int>(<tuple>edge)[3]))
    return tuple(out)


cdef object _validate_batched_grad(Tensor g, Node node, tuple shape, int dtype, Py_ssize_t i):
    """validate_grad in a batched backward: the shape check ignores the leading (batch) dim."""
    cdef tuple gshape = shape_of(data_of(g))
    cdef Py_ssize_t batch = gs_get_grads_batch()
    if len(gshape) == 0 or gshape[0] != batch:
        raise RuntimeError(
            f"Function {node.name()} returned a gradient at index {i} of shape {list(gshape)} "
            f"in a batched backward (is_grads_batched=True) whose leading dim is not the batch "
            f"(size {batch}); expected shape {[batch] + list(shape)}. Its formula must keep "
            "the batch dim (see Note [Batched backward]), or be marked batchable=False."
        )
    if gshape[1:] != shape:
        if not broadcastable_to(shape, gshape[1:]):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(gshape)} but expected shape compatible with {[batch] + list(shape)} "
                "(batched backward: the first dim is the batch)"
            )
        g = <Tensor>sum_to(g, shape)
    if cnp.PyArray_TYPE(data_of(g)) != dtype:
        return _cast_grad(g, dtype)
    return g


cdef inline bint _same_shape(cnp.ndarray a, tuple shape):
    cdef Py_ssize_t i, n = cnp.PyArray_NDIM(a)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    if n != len(shape):
        return False
    for i in range(n):
        if dims[i] != <Py_ssize_t>shape[i]:
            return False
    return True


cdef object _cast_grad(object g, int num):
    """A gradient cast to its input's dtype; a complex gradient of a real input keeps its
    real part, without numpy's warning (torch's ``handle_r_to_c``: Note [The conjugate
    Wirtinger gradient] in derivatives/_wirtinger.py)."""
    if cnp.PyArray_ISCOMPLEX(data_of(<Tensor>g)) and not cnp.PyTypeNum_ISCOMPLEX(num):
        g = g.real
    return g.to(_dtype_of_num(num))


cdef object _dtype_of_num(int num):
    from gradstack_tensor.dtypes import from_numpy_dtype
    return from_numpy_dtype(np.dtype(cnp.PyArray_TypeObjectFromType(num)))


cdef void _check_nan(object g, Node node, Py_ssize_t i) except *:
    if g is None or not isinstance(g, Tensor):
        return
    if np.isnan(data_of(<Tensor>g)).any():
        msg = f"Function '{node.name()}' returned nan values in its {i}th output."
        if node.anomaly_trace:
            msg += ("\n\nTraceback of forward call that caused the error (recorded by anomaly "
                    "mode):\n" + node.anomaly_trace)
        raise RuntimeError(msg)


cdef object _add_grads(object a, object b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# Note [Input buffers sum in place]
# A node's input buffer adds up the gradients flowing into each of its outputs; a leaf
# used n times (the tutorial's x and y) receives n of them.  ``a + b`` each time would
# allocate n tensors.  As torch's InputBuffer does, the first sum is a new tensor that the
# engine alone holds, wrapped in an _OwnedGrad while it sits in the buffer, and later
# gradients are added into it in place.  Only the engine's own sum is ever written:
# formulas may return the very tensor they received (add returns ``grad`` twice), so a
# gradient handed in is never modified.  Under create_graph (grad mode on) or forward-mode
# AD the sums stay out of place, to keep the graph and the tangents.

@cython.no_gc
@cython.binding(False)
cdef class _OwnedGrad:
    """A gradient sum created by the engine, held only by one input buffer slot."""
    cdef Tensor tensor


cdef object _buffer_add(object old, object g, bint in_place):
    """``old + g`` for an input buffer slot (Note [Input buffers sum in place])."""
    cdef _OwnedGrad owned
    if g is None:
        return old
    if old is None:
        return g
    if type(g) is EfficientZero:        # Note [Efficient zeros]: ZeroTensor + x is x
        return old
    if type(old) is EfficientZero:
        return g
    if type(old) is _OwnedGrad:
        owned = <_OwnedGrad>old
        add_into_array(data_of(owned.tensor), data_of(<Tensor>g))
        return owned
    if not in_place:
        return old + g
    owned = _OwnedGrad.__new__(_OwnedGrad)
    owned.tensor = <Tensor>(old + g)
    if not cnp.PyArray_ISWRITEABLE(data_of(owned.tensor)) \
            or shape_of(data_of(owned.tensor)) != shape_of(data_of(<Tensor>g)):
        return owned.tensor     # (a broadcast sum: keep it out of place)
    return owned


cdef inline void _unwrap_owned(list grads):
    """Hand a buffer's owned sums to the node as plain tensors."""
    cdef Py_ssize_t k
    for k in range(len(grads)):
        if type(grads[k]) is _OwnedGrad:
            grads[k] = (<_OwnedGrad>grads[k]).tensor


cdef void _run_tensor_hooks(Node node, list grads) except *:
    cdef dict hooks
    cdef object zero
    for nr in range(len(grads)):
        if grads[nr] is None:
            continue
        # Note [Efficient zeros]: the hooks see real zeros; unless one returns a gradient,
        # the node still receives the efficient zero
        zero = None
        if type(grads[nr]) is EfficientZero:
            zero = grads[nr]
            grads[nr] = materialize_zero(<EfficientZero>zero)
        if node.tensor_pre_hooks is not None:
            hooks = node.tensor_pre_hooks.get(nr)
            if hooks:
                for fn in list(hooks.values()):
                    r = fn(grads[nr])
                    if r is not None:
                        grads[nr] = _checked_hook_result(r, grads[nr], node, fn)
                        zero = None
        if node.retained is not None:
            ref = node.retained.get(nr)
            t = ref() if ref is not None else None
            if t is not None:
                _store_retained_grad(<Tensor>t, grads[nr])
        if zero is not None:
            grads[nr] = zero


cdef object _checked_hook_result(object r, object g, Node node, object fn=None):
    if not isinstance(r, Tensor):
        raise TypeError(f"a tensor hook must return a Tensor or None, got {type(r).__name__} "
                        f"(hook on an output of {node.name()})")
    if cnp.PyArray_TYPE(data_of(<Tensor>r)) != cnp.PyArray_TYPE(data_of(<Tensor>g)):
        # torch's check_single_result: a hook may not change the gradient's type
        name = getattr(fn, "__name__", None) or type(fn).__name__
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.type()} "
                           f"got {r.type()})")
    if shape_of(data_of(<Tensor>r)) != shape_of(data_of(<Tensor>g)):
        raise RuntimeError(
            f"hook returned a gradient of shape {list(r.shape)} for a tensor whose gradient "
            f"has shape {list(g.shape)} (hook on an output of {node.name()})"
        )
    return r


cdef void _store_retained_grad(Tensor t, object g) except *:
    if t._grad is None:
        t._grad = (g.clone() if gs_get_grad_enabled()
                   else wrap(np.array(data_of(<Tensor>g), copy=True)))
    else:
        t._grad = t._grad + g


cdef list _run_leaf_hooks(AccumulateGrad node, list grads):
    cdef Tensor var = node.variable
    cdef AutogradMeta meta
    if var._autograd_meta is None or grads[0] is None:
        return grads
    meta = <AutogradMeta?>var._autograd_meta
    if meta.hooks:
        for fn in list(meta.hooks.values()):
            r = fn(grads[0])
            if r is not None:
                grads[0] = _checked_hook_result(r, grads[0], node, fn)
    return grads


# An observer of node execution (the profiler): begin(node) -> token, end(token).
_node_observer = None


def set_node_observer(observer):
    """Install (or remove, with None) an object told when each backward node runs.

    ``observer.begin(node)`` is called before the node's pre-hooks and returns a token;
    ``observer.end(token)`` after its post-hooks (also when the node raises).
    """
    global _node_observer
    _node_observer = observer


cdef bint _all_none(list grads):
    for g in grads:
        if g is not None:
            return False
    return True


# Note [A table node's apply is called directly]
# The classes of the derivative table's nodes (MulBackward0 ...) are Python subclasses of
# OpNode made by ``_node_class``, with no methods of their own.  Calling the cpdef
# ``apply`` on one makes Cython check for a Python override: a type whose dict version
# differs from the last call's (a chain alternates MulBackward0 and AddBackward0) costs
# an attribute lookup and a bound method each time, ~10% of a 20,000-op chain's backward
# (callgrind).  A node whose class derives from OpNode directly is such a class, so its
# apply is OpNode's, called without the check; any other node keeps the virtual call.

cdef tuple _call_node(Node node, list grads, object zero_keeps):
    cdef tuple gi
    cdef tuple go
    if zero_keeps is not None:      # Note [Efficient zeros]
        return _call_with_zeros(node, grads, zero_keeps)
    if node.pre_hooks:
        go = tuple(grads)
        for fn in list(node.pre_hooks.values()):
            r = fn(go)
            if r is not None:
                go = tuple(r)
        grads = list(go)
    go = tuple(grads)
    if _all_none(grads) and node.name() != "NotImplemented":
        check_saved(node)       # Note [A node unpacks what it saved even when no gradient ...]
        gi = (None,) * len(node.next_edges)
    else:
        try:
            if type(node) is AccumulateGrad:    # (Note [A new .grad takes over the gradient])
                gi = (<AccumulateGrad>node).apply_from_engine(go)
            elif Py_TYPE(node).tp_base == <PyTypeObject*>OpNode:
                # Note [A table node's apply is called directly]
                gi = OpNode.apply(<OpNode>node, go)
            else:
                gi = node.apply(go)
        except Exception as e:
            if node.anomaly_trace:
                e.add_note("Traceback of forward call that caused the error (recorded by "
                           "anomaly mode):\n" + node.anomaly_trace)
            raise
    if node.post_hooks:
        for fn in list(node.post_hooks.values()):
            r = fn(gi, go)
            if r is not None:
                gi = tuple(r)
    if len(gi) != len(node.next_edges):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{len(node.next_edges)}, got {len(gi)})"
        )
    return gi


cdef dict _discover_counting(list roots, dict deps):
    """Every node reachable from ``roots``, counting incoming edges into ``deps`` on the way.

    Without targets every reachable node runs: one traversal finds them and counts their
    dependencies (each node is expanded once, so each edge is counted once).  ``deps``
    holds every reachable node (roots with 0), so it is also the set of nodes found:
    one lookup per edge.
    """
    cdef list stack = list(roots)
    cdef Py_ssize_t top = len(stack)
    cdef Node node
    cdef object child, count
    for node in roots:
        deps[node] = 0
    while top:
        top -= 1
        node = <Node>stack[top]     # (Note [A depth-first stack that never shrinks])
        for edge in node.next_edges:
            child = (<tuple>edge)[0]
            if child is None:
                continue
            count = deps.get(child)
            if count is None:
                deps[child] = 1
                top = _push(stack, top, child)
            else:
                deps[child] = <Py_ssize_t>count + 1
    return deps


# Note [A depth-first stack that never shrinks]
# Walking a chain, the discovery's stack holds one node at a time: with ``append`` and
# ``pop``, CPython's list reallocates its array on every push onto the empty list and on
# every pop back to it (it shrinks below half its capacity), ~400 instructions of
# ``realloc`` per node of a 20,000-op chain (callgrind).  The walks keep their own top
# instead and overwrite the slots below the list's end; the list only ever grows.

cdef inline Py_ssize_t _push(list stack, Py_ssize_t top, object node) except -1:
    """Put ``node`` at ``stack[top]`` (appending at the end); the new top."""
    if top < len(stack):
        stack[top] = node
    else:
        stack.append(node)
    return top + 1


# Note [Dependencies are counted on the nodes]
# A backward pass needs, for every node it reaches, how many edges lead into it: the node
# runs when the last of their gradients has arrived.  Counted in a dict keyed by node,
# the discovery and the countdown cost ~1,200 instructions per node (callgrind, a 20,000-op
# chain): a third of the engine's own time per node.  A pass without targets (backward(),
# where every reachable node runs) counts on two C fields of each node instead: the pass's
# number (``dep_epoch``) and the count (``dep_count``); a node whose epoch is not the
# pass's has not been reached yet.  Only one pass at a time may do so: a backward that
# starts while another counts on the nodes (a backward inside a hook, or another thread)
# counts in its own dict, so neither overwrites the other's counts.  A pass that raises
# leaves stale counts behind, which the next pass's new number ignores.

cdef Py_ssize_t _dep_epoch = 0
cdef bint _counting_on_nodes = False


cdef void _discover_on_nodes(list roots, Py_ssize_t epoch) except *:
    """``_discover_counting`` with the counts on the nodes (Note above)."""
    cdef list stack = list(roots)
    cdef Py_ssize_t top = len(stack)
    cdef Node node, child
    cdef object c
    for node in roots:
        node.dep_epoch = epoch
        node.dep_count = 0
    while top:
        top -= 1
        node = <Node>stack[top]     # (Note [A depth-first stack that never shrinks])
        for edge in node.next_edges:
            c = (<tuple>edge)[0]
            if c is None:
                continue
            child = <Node>c
            if child.dep_epoch != epoch:
                child.dep_epoch = epoch
                child.dep_count = 1
                top = _push(stack, top, child)
            else:
                child.dep_count += 1


cdef dict _find_needed(list roots, dict targets):
    """Nodes to run: all reachable ones, or (with targets) those on a path to a target.

    Returns {node: True/False}; False marks a node that is only a capture point.
    """
    cdef dict needed = {}
    cdef list stack
    cdef Node node, child
    cdef dict state = {}      # node -> index of the next edge to visit
    cdef dict leads = {}      # node -> it leads to a target
    if not targets:
        stack = list(roots)
        for node in roots:
            needed[node] = True
        while stack:
            node = stack.pop()
            for edge in node.next_edges:
                child = edge[0]
                if child is not None and child not in needed:
                    needed[child] = True
                    stack.append(child)
        return needed
    # post-order: a node leads to a target if it is one or a child does
    for root in roots:
        if root in state:
            continue
        stack = [root]
        state[root] = 0
        while stack:
            node = stack[-1]
            i = state[node]
            edges = node.next_edges
            if i < len(edges):
                state[node] = i + 1
                child = edges[i][0]
                if child is not None and child not in state:
                    state[child] = 0
                    stack.append(child)
                continue
            stack.pop()
            flag = node in targets
            for edge in edges:
                if edge[0] is not None and leads.get(edge[0], False):
                    flag = True
                    break
            leads[node] = flag
    for node, flag in leads.items():
        if flag:
            needed[node] = True
    return needed


cdef int _check_graph_args(tuple roots, tuple grad_roots, tuple inputs) except -1:
    """The engine's entry points are reachable from Python: check what they cast in C."""
    cdef Py_ssize_t i
    for i in range(len(roots)):
        r = roots[i]
        if not isinstance(r, Tensor):
            raise TypeError(f"backward: the outputs must be Tensors, got {type(r).__name__} "
                            f"at position {i}")
        fn = (<Tensor>r)._grad_fn
        if fn is None and not (<Tensor>r)._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        if fn is not None and not isinstance(fn, Node):
            raise TypeError(f"backward: grad_fn of output {i} is a {type(fn).__name__}, "
                            "not a Node")
    if grad_roots is not None and len(grad_roots) != len(roots):
        raise ValueError(f"backward: {len(roots)} outputs but {len(grad_roots)} gradients")
    if inputs is not None:
        for i in range(len(inputs)):
            x = inputs[i]
            if not isinstance(x, Tensor):
                raise TypeError(f"backward: the inputs must be Tensors, got "
                                f"{type(x).__name__} at position {i}")
            fn = (<Tensor>x)._grad_fn
            if fn is not None and not isinstance(fn, Node):
                raise TypeError(f"backward: grad_fn of input {i} is a {type(fn).__name__}, "
                                "not a Node")
    return 0


def run_backward(tuple roots, tuple grad_roots, bint keep_graph, bint create_graph,
                 tuple inputs=None, bint accumulate=True, bint allow_unused=False,
                 Py_ssize_t batch_size=-1):
    """The engine's entry point, shared by ``backward`` and ``grad`` (see graph_api.py).

    ``roots`` are tensors that require grad, ``grad_roots`` their (validated) gradients.
    With ``accumulate`` the leaves' ``.grad`` are updated (only ``inputs``' if given);
    without it, the gradients reaching ``inputs`` are returned, in order.
    ``batch_size >= 0`` runs a batched pass: every gradient, ``grad_roots`` included, has
    a leading batch dim of that size (Note [Batched backward]; check the graph with
    ``unbatchable_reason`` first).
    """
    _check_graph_args(roots, grad_roots, inputs)
    cdef bint prev = gs_get_grad_enabled() != 0
    cdef Py_ssize_t prev_batch = gs_get_grads_batch()
    cdef list tasks = _graph_tasks()
    tasks.append(_GraphTask(roots, inputs))
    # Note [No cyclic GC during backward]
    cdef int gc_was_enabled = PyGC_Disable()
    gs_set_grad_enabled(create_graph)
    gs_set_grads_batch(batch_size)
    try:
        return _run(roots, grad_roots, keep_graph, inputs, accumulate, allow_unused)
    finally:
        gs_set_grad_enabled(prev)
        gs_set_grads_batch(prev_batch)
        tasks.pop()
        if gc_was_enabled:
            PyGC_Enable()


# Note [No cyclic GC during backward]
# A backward pass allocates a few tensors per node and frees most of them at once; the
# ones it keeps (buffered sums, .grad) are few.  With the collector on, CPython starts a
# collection every 700 surviving allocations, and now and then a full one that walks every
# object of the program (~5 ms with torch imported): 10-15% of a backward of small ops.
# The pass runs with the collector paused, as torch's C++ engine never wakes Python's,
# and restores it after (only if it was on: nested and concurrent passes compose).
# Garbage cycles made by hooks during the pass are collected after it.

cdef extern from "Python.h":
    int PyGC_Disable()
    int PyGC_Enable()


# Note [Graph tasks]
# Each run_backward is a graph task.  Hooks that must know "which of these tensors will get
# a gradient in *this* pass" (register_multi_grad_hook) ask for the current task's id and
# whether a node will run; the answer is computed on demand from the task's roots and
# inputs (the engine's own loop pays only a push and a pop per backward call).

_graph_tasks_local = _threading.local()
cdef Py_ssize_t _next_graph_task_id = 0


cdef list _graph_tasks():
    tasks = getattr(_graph_tasks_local, "tasks", None)
    if tasks is None:
        tasks = _graph_tasks_local.tasks = []
    return <list>tasks


class _GraphTask:
    __slots__ = ("id", "roots", "inputs", "_needed")

    def __init__(self, roots, inputs):
        global _next_graph_task_id
        _next_graph_task_id += 1
        self.id = _next_graph_task_id
        self.roots = roots
        self.inputs = inputs
        self._needed = None

    def needed(self):
        cdef list root_nodes = []
        cdef dict targets = {}
        if self._needed is None:
            for t in self.roots:
                node = gradient_edge(<Tensor>t)[0]
                if node not in root_nodes:
                    root_nodes.append(node)
            for t in self.inputs or ():
                edge = gradient_edge(<Tensor>t)
                targets.setdefault(edge[0], {}).setdefault(edge[1], []).append(0)
            self._needed = _find_needed(root_nodes, targets)
        return self._needed


def current_graph_task_id():
    """The id of the backward pass running in this thread, or -1 outside of one."""
    cdef list tasks = _graph_tasks()
    return tasks[len(tasks) - 1].id if tasks else -1


def will_engine_execute_node(node):
    """Whether the running backward pass will run ``node`` (a grad_fn or AccumulateGrad)."""
    cdef list tasks = _graph_tasks()
    if not tasks:
        raise RuntimeError("will_engine_execute_node should only be called during the "
                           "backward pass")
    return node in tasks[len(tasks) - 1].needed()


def unbatchable_reason(tuple roots not None, tuple inputs not None):
    """Why a batched ``grad(roots, inputs)`` cannot run in one pass, or None when it can.

    Looks at the nodes the pass would run (those on a path from ``roots`` to ``inputs``):
    each must be a derivative-table node whose formula keeps the batch dim, with no hooks
    (hooks see one gradient, not a batch); leaf targets must have no tensor hooks.
    """
    cdef list root_nodes = []
    cdef dict targets = {}
    cdef Node node
    _check_graph_args(roots, None, inputs)
    for t in roots:
        node = <Node>gradient_edge(<Tensor>t)[0]
        if node not in root_nodes:
            root_nodes.append(node)
    for t in inputs:
        edge = gradient_edge(<Tensor>t)
        targets.setdefault(edge[0], {}).setdefault(edge[1], []).append(0)
    for node in _find_needed(root_nodes, targets):
        if node.pre_hooks or node.post_hooks or node.tensor_pre_hooks or node.retained:
            return f"node {node.name()} has hooks or retains a gradient"
        if isinstance(node, AccumulateGrad):
            meta = (<AccumulateGrad>node).variable._autograd_meta
            if meta is not None and (<AutogradMeta?>meta).hooks:
                return "a differentiated leaf tensor has hooks"
        elif isinstance(node, OpNode):
            if not (<Derivative>node.entry).batchable:
                return f"the formula of {node.name()} ({node.entry.op_name}) is not batchable"
        else:
            return (f"node {node.name()} is not a derivative-table node (custom Function "
                    "or in-place op on a view)")
    return None


cdef object _run(tuple roots, tuple grad_roots, bint keep_graph, tuple inputs,
                 bint accumulate, bint allow_unused):
    global _dep_epoch, _counting_on_nodes
    cdef dict buffers = {}
    cdef dict deps = {}
    cdef dict targets = {}          # node -> {output_nr: [input indices]}
    cdef list root_nodes = []
    cdef list captured = None
    cdef Node node
    cdef Py_ssize_t i, nr
    cdef list grads
    cdef Tensor t
    cdef bint on_nodes

    # the root edges, and the gradients flowing into them
    for i in range(len(roots)):
        edge = gradient_edge(<Tensor>roots[i])
        node = <Node>edge[0]
        nr = edge[1]
        grads = buffers.get(node)
        if grads is None:
            grads = buffers[node] = [None] * node.num_outputs
            root_nodes.append(node)
        grads[nr] = _add_grads(grads[nr], grad_roots[i])

    # the targets: edges whose incoming gradient is captured (grad) or accumulated (inputs=)
    if inputs is not None:
        captured = [None] * len(inputs)
        for i in range(len(inputs)):
            t = <Tensor>inputs[i]
            edge = gradient_edge(t)
            targets.setdefault(edge[0], {}).setdefault(edge[1], []).append(i)

    on_nodes = not targets and not _counting_on_nodes
    if on_nodes:        # Note [Dependencies are counted on the nodes]
        _dep_epoch += 1
        _counting_on_nodes = True
        try:
            return _run_graph(root_nodes, buffers, deps, targets, None, captured, inputs,
                              keep_graph, accumulate, allow_unused, _dep_epoch)
        finally:
            _counting_on_nodes = False
    if targets:
        needed = _find_needed(root_nodes, targets)
        for node in needed:
            for edge in node.next_edges:
                child = edge[0]
                if child is not None and child in needed:
                    deps[child] = deps.get(child, 0) + 1
    else:
        needed = _discover_counting(root_nodes, deps)
    return _run_graph(root_nodes, buffers, deps, targets, needed, captured, inputs,
                      keep_graph, accumulate, allow_unused, 0)


cdef object _run_graph(list root_nodes, dict buffers, dict deps, dict targets, dict needed,
                       list captured, tuple inputs, bint keep_graph, bint accumulate,
                       bint allow_unused, Py_ssize_t epoch):
    """The pass itself: runs the nodes in order, each once its gradients have arrived.
    ``epoch`` > 0: the counts are on the nodes, and every reachable node runs;
    otherwise they are in ``deps``, and the nodes to run are ``needed``."""
    cdef list heap = []
    cdef Node node
    cdef object child
    cdef Py_ssize_t counter = 0, i, nr
    cdef list grads
    cdef tuple gi
    if epoch:
        _discover_on_nodes(root_nodes, epoch)
    for node in root_nodes:
        if (node.dep_count == 0 if epoch
                else (node in needed and deps.get(node, 0) == 0)):
            counter += 1
            heapq.heappush(heap, (-node.sequence_nr, counter, node))

    cdef object next_node = None
    cdef list next_grads = None
    cdef list ready = []
    cdef list ready_grads = []
    cdef Py_ssize_t remaining, n_ready = 0
    cdef object first_ready = None
    cdef list first_grads = None
    cdef bint is_acc
    cdef dict node_targets
    # Note [Input buffers sum in place]
    cdef bint in_place = not gs_get_grad_enabled() and not forward_ad_active()
    cdef bint has_targets = bool(targets)
    cdef bint runs, early
    cdef bint zeros_seen = False                # Note [Efficient zeros]
    cdef object zero_keeps = None
    while heap or next_node is not None:
        if next_node is not None:
            node = <Node>next_node
            grads = next_grads          # (handed on with it: Note [A chain skips the buffers])
            next_node = None
            next_grads = None
        else:
            node = <Node>heapq.heappop(heap)[2]
            grads = buffers.pop(node, None)
        if grads is None:
            grads = [None] * node.num_outputs
        elif in_place:
            _unwrap_owned(grads)
        is_acc = isinstance(node, AccumulateGrad)
        node_targets = targets.get(node) if has_targets else None
        if zeros_seen and (is_acc or node_targets is not None):
            _materialize_zeros(grads)       # a leaf and a captured gradient are real zeros
        # Note [Captured gradients and tensor hooks]
        # torch's engine captures a grad() target's gradient before the tensor hooks of
        # the node when that node runs anyway (it leads to another target: the hooks run
        # as part of the node), and after them when the node is only a capture point (or
        # a leaf: its AccumulateGrad never runs in grad()).  So ``grad(loss, [x, v])``
        # with a hook on ``v`` returns v's gradient unhooked, ``grad(loss, [v])`` hooked.
        runs = is_acc or not has_targets or _has_needed_child(node, needed)
        early = (node_targets is not None and captured is not None and not accumulate
                 and not is_acc and runs)
        if early:
            _capture(node_targets, captured, grads)
        if is_acc:
            grads = _run_leaf_hooks(<AccumulateGrad>node, grads)
        elif node.tensor_pre_hooks is not None or node.retained is not None:
            _run_tensor_hooks(node, grads)
        if node_targets is not None:
            if captured is not None and not early:
                _capture(node_targets, captured, grads)
            if not accumulate and is_acc:
                continue                        # grad(): leaves are captured, not updated
            if accumulate and not is_acc:
                _accumulate_nonleaf_targets(node, node_targets, inputs, grads)
        if not runs:
            continue                            # a pure capture point: nothing beyond it
        zero_keeps = _settle_zeros(node, grads) if zeros_seen else None
        observer = _node_observer
        if observer is None:
            gi = _call_node(node, grads, zero_keeps)
        else:
            # the observer that began a node ends it, even if a profile stops meanwhile
            token = observer.begin(node)
            try:
                gi = _call_node(node, grads, zero_keeps)
            finally:
                observer.end(token)
        for i in range(len(gi)):
            edge = node.next_edges[i]
            child = (<tuple>edge)[0]
            # (without targets every reachable node is needed: no lookup)
            if child is None or (has_targets and child not in needed):
                continue
            g = gi[i]
            if g is not None:
                g = validate_grad(g, node, <tuple>edge, i)
                if type(g) is EfficientZero:
                    zeros_seen = True
                elif anomaly_enabled() and anomaly_check_nan():
                    _check_nan(g, node, i)
            nr = (<tuple>edge)[1]
            if epoch:
                remaining = (<Node>child).dep_count - 1
                (<Node>child).dep_count = remaining
            else:
                remaining = <Py_ssize_t>deps[child] - 1
            if remaining == 0:
                # the last gradient into child: its buffer leaves the dict (or never enters)
                cgrads = buffers.pop(child, None)
                if cgrads is None:
                    cgrads = [None] * (<Node>child).num_outputs
                cgrads[nr] = _buffer_add(cgrads[nr], g, in_place)
                if n_ready == 0:
                    first_ready = child
                    first_grads = cgrads
                else:
                    ready.append(child)
                    ready_grads.append(cgrads)
                n_ready += 1
            else:
                if not epoch:
                    deps[child] = remaining
                cgrads = buffers.get(child)
                if cgrads is None:
                    cgrads = buffers[child] = [None] * (<Node>child).num_outputs
                cgrads[nr] = _buffer_add(cgrads[nr], g, in_place)
        # the buffers now hold the gradients alone (an AccumulateGrad may then take one
        # over as .grad: Note [A new .grad takes over the gradient])
        gi = None
        g = cgrads = None
        if not keep_graph:
            free_saved(node)
            node.released = True
        # Note [A chain skips the buffers]
        # A node whose last input gradient has arrived is ready; its buffer is taken out of
        # ``buffers`` then (a one-input node's never goes in).  A chain hands its single
        # ready node straight on with its gradients; otherwise the ready nodes' buffers go
        # back into ``buffers`` and the heap orders the nodes.  On a 20,000-op chain this
        # leaves two dict operations per node instead of six.
        if n_ready == 1 and not heap:
            next_node = first_ready
            next_grads = first_grads
        elif n_ready:
            buffers[first_ready] = first_grads
            counter += 1
            heapq.heappush(heap, (-(<Node>first_ready).sequence_nr, counter, first_ready))
            for i in range(len(ready)):
                child = ready[i]
                buffers[child] = ready_grads[i]
                counter += 1
                heapq.heappush(heap, (-(<Node>child).sequence_nr, counter, child))
            ready.clear()
            ready_grads.clear()
        n_ready = 0
        first_ready = first_grads = None

    if captured is None:
        return None
    for i in range(len(inputs)):
        if captured[i] is None and not allow_unused and not accumulate:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}, shape {list(inputs[i].shape)}) "
                "appears to not have been used in the graph. Set allow_unused=True if this is "
                "the desired behavior."
            )
    return tuple(captured)


cdef inline void _capture(dict node_targets, list captured, list grads) except *:
    for nr, idxs in node_targets.items():
        for i in idxs:
            captured[i] = _add_grads(captured[i], grads[nr])


cdef bint _has_needed_child(Node node, dict needed):
    for edge in node.next_edges:
        if edge[0] is not None and edge[0] in needed:
            return True
    return False


cdef void _accumulate_nonleaf_targets(Node node, dict slots, tuple inputs, list grads) except *:
    """backward(inputs=[non_leaf]) accumulates into the non-leaf's .grad, as torch does."""
    cdef Tensor t
    for nr, idxs in slots.items():
        if grads[nr] is None:
            continue
        for i in idxs:
            t = <Tensor>inputs[i]
            if t._grad_fn is None:
                continue
            if t._grad is None:
                t._grad = wrap(np.array(data_of(<Tensor>grads[nr]), copy=True)) \
                    if not gs_get_grad_enabled() else grads[nr].clone()
            else:
                t._grad = t._grad + grads[nr]
