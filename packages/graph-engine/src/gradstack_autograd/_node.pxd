# Graph nodes, saved tensors and per-tensor autograd state: what the layer and the engine
# cimport from _node.pyx (cdef classes and functions: C calls, no attribute lookups).
cimport cython
cimport numpy as cnp
from gradstack_tensor.extension cimport Tensor, VersionCounter


cdef class AutogradMeta:
    cdef public object grad_accumulator     # weakref to the leaf's AccumulateGrad node
    cdef public dict hooks                  # leaf tensor hooks: id -> fn(grad)
    cdef public dict post_accumulate_hooks  # id -> fn(tensor)
    cdef public bint retains_grad
    cdef public object view_of              # (base tensor, view op, view args) for CopySlices
    cdef public object name
    # Note [Views follow in-place writes on their base], _views.pyx
    cdef public list views                  # on a base: weakrefs of its views made by ops
    cdef public Py_ssize_t views_prune_at   # prune dead weakrefs when the list reaches this
    cdef public int view_creation           # on a view: VIEW_DEFAULT, _NO_GRAD or _MULTI_OUTPUT
    cdef public str view_op                 # on a multi-output view: torch's name ("Split")
    cdef public bint view_stale             # such a view whose base was written since
    # Note [A view whose grad_fn torch has not regenerated yet], _views.pyx
    cdef public bint grad_fn_unread
    # Note [A view follows its base's requires_grad_()], _views.pyx
    cdef public bint requires_grad_from_base  # requires grad only because its base does
    cdef public Py_ssize_t base_version       # the version when it started to
    # (on a multi-output view, or one with history_apart_from_base: the version its
    # grad_fn was made at)
    # Note [A view whose history does not pass through its base], _views.pyx
    cdef public bint history_apart_from_base
    # Note [zero_grad() leaves zeros to be made on first read], _node.pyx: .grad is None
    # and reads as zeros (made then) until it is assigned
    cdef public bint grad_zeros_deferred


# Note [no_gc is declared in the .pxd]
# Cython decides whether a cdef class takes part in the cyclic GC from its own attributes
# and its base's declaration: a subclass compiled in another module (OpNode in
# _op_node.pyx, CopySlices in _views.pyx) sees only this file, so the no_gc of Node must be
# written here as well as on the class itself (Note [Nodes are invisible to the cyclic
# GC]), or those subclasses would become GC types again.
@cython.no_gc
cdef class SavedTensor:
    cdef Tensor tensor             # a saved input (strong reference), else None
    cdef cnp.ndarray data          # a saved output's storage, else None
    cdef VersionCounter vc
    cdef Py_ssize_t version
    cdef Py_ssize_t output_nr
    cdef bint is_output
    cdef bint output_requires_grad
    cdef object packed             # what a pack hook returned
    cdef object unpack_hook
    cdef bint hooked
    cdef bint freed
    # a saved output's tangent (forward-over-reverse, _forward_ad_hooks.pyx)
    cdef object fw_grad
    # a saved output that is a view: a weakref to it (Note [A saved view takes its history
    # from the view])
    cdef object view_ref


@cython.no_gc
cdef class Node:
    # one edge per differentiable input: (node, input_nr, shape, dtype number), or NO_EDGE
    # when that input needs no gradient.  The input's shape and dtype ride on the edge
    # (one allocation instead of two) for the engine's validation.
    cdef public tuple next_edges
    cdef public object entry            # the op's Derivative (None for custom nodes)
    cdef public tuple saved             # SavedTensor or plain values, as the entry's save spec
    cdef public Py_ssize_t sequence_nr  # creation order: the engine runs later nodes first
    cdef public Py_ssize_t num_outputs  # how many forward outputs (gradients coming in)
    cdef public bint released           # saved tensors were freed by a backward
    cdef public dict pre_hooks          # id -> fn(grad_outputs)
    cdef public dict post_hooks         # id -> fn(grad_inputs, grad_outputs)
    cdef public dict tensor_pre_hooks   # output_nr -> {id -> fn(grad)}
    cdef public dict retained           # output_nr -> weakref of a tensor that retains grad
    cdef public dict _metadata
    cdef public object anomaly_trace    # the forward stack, when anomaly mode recorded it
    cdef public object extra            # whatever else the formula needs
    # the engine's count of this node's incoming edges in the backward pass of run
    # ``dep_epoch`` (Note [Dependencies are counted on the nodes] in _engine.pyx)
    cdef Py_ssize_t dep_count
    cdef Py_ssize_t dep_epoch
    cdef object __weakref__

    cpdef object saved_value(self, object key)
    cdef Py_ssize_t _slot(self, str name) except -2
    cdef tuple _unpack_tuple(self, tuple values, Py_ssize_t i)
    cpdef tuple apply(self, tuple grads)


@cython.no_gc
cdef class AccumulateGrad(Node):
    cdef readonly Tensor variable       # the leaf tensor this node accumulates into
    cdef tuple apply_from_engine(self, tuple grads)


cdef object _add_hook(dict hooks, object fn)
cdef AutogradMeta meta_of(Tensor t)
cdef SavedTensor save_tensor(Tensor t, bint is_output, Node owner)
cdef object unpack_saved(SavedTensor s, Node owner, Py_ssize_t index)
cdef void free_saved(Node node) noexcept
cdef void check_saved(Node node) except *
cdef Py_ssize_t next_sequence_nr() noexcept
cdef int _check_node_grads(Node node, tuple grads) except -1
cdef tuple gradient_edge(Tensor t)
cdef AccumulateGrad grad_accumulator(Tensor t)
cdef void accumulate_into_leaf(Tensor var, object new_grad, bint create_graph,
                               bint from_engine=*) except *
cdef void add_into_array(cnp.ndarray dst, cnp.ndarray src) except *


# Note [Efficient zeros], _node.pyx
@cython.final
@cython.no_gc
cdef class EfficientZero:
    cdef readonly tuple shape
    cdef readonly int dtype_num


cdef EfficientZero new_efficient_zero(tuple shape, int dtype_num)
cdef Tensor materialize_zero(EfficientZero z)
cdef tuple materialize_zeros(tuple grads)
