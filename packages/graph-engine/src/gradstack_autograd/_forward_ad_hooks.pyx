# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Forward-mode AD's hooks on the recording layer.

``gradstack_autograd.forward_ad`` installs its callbacks here while a dual level is open
(``_set_forward_ad_callback``); the recording layer (``_layer.pyx``) calls
``_forward_ad_hook`` after every out-of-place op and hands every in-place op to the
in-place callback (``_forward_ad_inplace_hook``), both declared in
``_forward_ad_hooks.pxd``.  Whether forward mode is on is ``_grad_mode``'s flag, which the
other modules read.
"""
from gradstack_tensor.extension cimport Op, Tensor, data_of

from gradstack_autograd._grad_mode cimport set_forward_ad_active
from gradstack_autograd._node cimport Node, SavedTensor


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


cdef object _forward_ad_inplace_hook():
    """The in-place callback, or None (the recording layer calls it instead of its
    in-place path while forward mode is on)."""
    return _forward_ad_inplace_callback


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
