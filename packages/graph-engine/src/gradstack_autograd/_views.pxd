# Views under autograd: what the recording layer and the in-place path cimport from
# _views.pyx (Note [Views follow in-place writes on their base] there).
from gradstack_tensor.extension cimport Tensor

from gradstack_autograd._derivative cimport Derivative
from gradstack_autograd._node cimport AutogradMeta
from gradstack_autograd._op_node cimport OpNode


# how a view was made: AutogradMeta.view_creation (Note [Views follow in-place writes on
# their base])
cdef enum ViewCreation:
    VIEW_DEFAULT = 0
    VIEW_NO_GRAD = 1        # made under no_grad
    VIEW_MULTI_OUTPUT = 2   # returned by an op that returns several views (split, unbind ...)


cdef void _check_marked_view(Tensor x, AutogradMeta meta) except *


cdef inline void _check_view_usable(Tensor x, AutogradMeta meta) except *:
    """Raise torch's error for a no_grad or multi-output view that may no longer be used
    with grad mode on.  Inline: a recorded op checks every input that has an AutogradMeta,
    and nearly all of them are no views, or views of the default kind, never stale."""
    if meta.view_stale or meta.view_creation != VIEW_DEFAULT:
        _check_marked_view(x, meta)


cdef void _check_inputs_usable(tuple args) except *
cdef void _note_view(Tensor view, bint no_grad, str multi_name) except *
cdef void _note_views(tuple outs, bint no_grad, Derivative d) except *
cdef void _inherit_view_creation(Tensor view, tuple args) except *
cdef bint _regenerate_view(Tensor v, AutogradMeta vm) except -1
cdef void _regenerate_history_apart_from_base(Tensor v, AutogradMeta meta) except *
cdef void _refuse_view_write(Tensor t, AutogradMeta meta) except *
cdef void _refresh_views(Tensor base, Tensor written) except *
cdef void _refresh_after_unrecorded_write(Tensor t) except *
cdef void _rebase_view_history(Tensor view, Tensor base, OpNode fn) except *
cdef void _move_retained(Tensor t, object old_fn, Py_ssize_t old_nr) except *
