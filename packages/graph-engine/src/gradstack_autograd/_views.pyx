# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Views under autograd: how each view was made, its history after in-place writes on its
base (``AsStridedBackward0``), the history of a base written through a view
(``CopySlices``), and torch's refusals of stale views.

The recording layer (``_layer.pyx``) notes every view an op makes and calls in here after
an in-place write; what it cimports is declared in ``_views.pxd`` (the inline
``_check_view_usable`` there runs on every input of a recorded op).  The Notes below say
what torch does and when (Note [Views follow in-place writes on their base] first).
"""
cimport cython
cimport numpy as cnp
from gradstack_tensor.extension cimport Tensor, data_of, shape_of, wrap

from gradstack_autograd._derivative cimport Derivative
from gradstack_autograd._grad_mode cimport forward_ad_active, gs_get_grad_enabled
from gradstack_autograd._inline cimport untrack
from gradstack_autograd._native cimport broadcastable_to, np_sum_to, sum_to
from gradstack_autograd._node cimport (
    AutogradMeta, Node, _check_node_grads, gradient_edge, materialize_zeros, meta_of,
    next_sequence_nr,
)
from gradstack_autograd._op_node cimport OpNode

import weakref

import numpy as np

from gradstack_autograd._node import NO_EDGE

cnp.import_array()


cdef void _check_marked_view(Tensor x, AutogradMeta meta) except *:
    """Raise torch's error for a no_grad or multi-output view that may no longer be used
    with grad mode on (Note [Views follow in-place writes on their base]); the inline
    ``_check_view_usable`` of ``_views.pxd`` calls it for such views only."""
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

cdef void _refresh_after_unrecorded_write(Tensor t) except *:
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


cdef void _refuse_view_write(Tensor t, AutogradMeta meta) except *:
    """torch's refusal of an in-place write (with grad mode on) into ``t``, a view made
    under no_grad or by an op that returns several views; nothing for any other view.
    The in-place path raises the argument errors torch raises first before it calls this
    (``_check_view_may_be_written`` in _layer.pyx)."""
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
    # ``v[0, 0] = x`` writes one element, no overlap).  Before, backward gave a gradient
    # (fuzz seed 4 #2183).
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
