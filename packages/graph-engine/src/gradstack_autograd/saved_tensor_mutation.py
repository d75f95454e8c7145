"""``allow_mutation_on_saved_tensors``: a block under which a tensor saved for backward may
be written in place (torch 2.13's ``torch.autograd.graph``'s, its Note [Allow mutation on
tensors saved for backward]).

Note [Saved tensors cloned before they are written]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As torch's, two pieces:

1. saved-tensor hooks: each tensor saved for backward is packed as a handle, with its
   identity ``(id, data_ptr, version)`` and its alias key ``(data_ptr, version)`` noted,
   and the original kept;
2. a layer on the dispatch point (torch's dispatch mode), outside autograd's, and an
   observer of ``out=`` writes (tensor-core's Note [Observers of out= writes]): before an
   in-place op or an ``out=`` argument writes a tensor, every saved tensor with the
   written tensor's alias key is cloned (once), and the clone stands for it.

Backward unpacks the clone if there is one, else the original; it must run inside the
block (the unpack hook raises torch's AssertionError outside it).  A hooked saved tensor
is not version-checked (Note [Hooked saved tensors are not version-checked] in
``_node.pyx``), as torch's, so the in-place write raises nothing.  A write through a view
whose first element is elsewhere in the storage (another ``data_ptr``) makes no clone:
torch then hands the written values to backward, a wrong gradient; gradstack raises when
backward unpacks that tensor (its version changed, Note [A write the layer did not
see]).  Writes through numpy arrays are seen by nothing, here as in torch.

Examples
--------
>>> import gradstack_tensor as gt
>>> with allow_mutation_on_saved_tensors():
...     a = gt.ones(2, 3, requires_grad=True)
...     b = a.clone()
...     out = (b ** 2).sum()
...     _ = b.sin_()
...     out.backward()
>>> a.grad.tolist()   # 2 * b as it was when saved, not 2 * sin(b)
[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from weakref import WeakKeyDictionary, WeakValueDictionary

from gradstack_tensor import DispatchLayer, register_layer, unregister_layer
from gradstack_tensor.extension import add_out_write_observer, remove_out_write_observer

from . import _grad_mode, _node

__all__ = ["allow_mutation_on_saved_tensors"]

_enabled = False

_NOT_IN_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


def _sid(t):
    return (t.data_ptr(), t._version)


class _Handle:
    pass


class _AllowMutationOnSavedContext:
    """The state of one block (torch's): the originals and clones by handle, the handles
    by tensor identity, the identities by alias key."""

    def __init__(self) -> None:
        self.cloned: WeakKeyDictionary = WeakKeyDictionary()
        self.original: WeakKeyDictionary = WeakKeyDictionary()
        self.version: WeakKeyDictionary = WeakKeyDictionary()  # (each original's, at pack)
        self.tid_to_weakhandle: WeakValueDictionary = WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.version.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, tensor):
        tid, sid = _tid(tensor), _sid(tensor)
        self.sid_to_tid[sid].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # (the same tensor at the same version may be saved twice)
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = tensor
            self.version[handle] = tensor._version
        return handle

    def unpack(self, handle):
        if not _enabled:
            raise AssertionError(_NOT_IN_CONTEXT)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(_NOT_IN_CONTEXT)
        original = self.original[handle]
        if original._version != self.version[handle]:
            # Note [A write the layer did not see]: a view that starts elsewhere in the
            # storage: no clone was made, and the saved value is gone; torch would hand
            # the written tensor to backward
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified "
                f"(version {self.version[handle]} when saved, {original._version} now) by a "
                "write that allow_mutation_on_saved_tensors did not see before it happened "
                "(through a view starting elsewhere in the storage), so its saved value is "
                "lost. Write it with an in-place method on the "
                "tensor itself, or clone() it before writing."
            )
        return original

    def clone_before_write(self, t) -> None:
        sid = _sid(t)
        if sid not in self.sid_to_tid:
            return
        for tid in self.sid_to_tid[sid]:
            handle = self.tid_to_weakhandle.get(tid)
            # (a saved tensor freed by backward before the write has no handle any more)
            if handle is None or handle in self.cloned:
                continue
            prev = _grad_mode.is_grad_enabled()
            _grad_mode._set_grad_enabled(False)  # (below autograd, as torch's mode)
            try:
                self.cloned[handle] = self.original[handle].clone()
            finally:
                _grad_mode._set_grad_enabled(prev)
            del self.original[handle]


class _CloneBeforeWriteLayer(DispatchLayer):
    """Above autograd's layer (100): sees each in-place op once, before it writes."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        super().__init__(150)
        self.ctx = ctx

    def handle(self, op, args, next_index):
        if op.inplace and args and hasattr(args[0], "data_ptr"):
            self.ctx.clone_before_write(args[0])
        return self.call_next(op, args, next_index)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """A block under which tensors saved for backward may be written in place: each is
    cloned before its first write, and backward uses the clone (Note [Saved tensors cloned
    before they are written]).  Run the forward and the backward inside the block.

    Yields
    ------
    _AllowMutationOnSavedContext
        The block's state (for debugging), cleared on exit.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([1.0, 2.0], requires_grad=True)
    >>> with allow_mutation_on_saved_tensors():
    ...     y = x.exp()
    ...     loss = y.sum()
    ...     _ = y.mul_(0)          # exp's backward reads exp(x), saved before the write
    ...     loss.backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [2.7183, 7.3891]
    """
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    layer = _CloneBeforeWriteLayer(ctx)
    _node._push_saved_tensors_hooks(ctx.pack, ctx.unpack)
    register_layer(layer)
    add_out_write_observer(ctx.clone_before_write)  # (out= writes are no ops: torch's is_out)
    try:
        if _enabled:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _enabled = True
        yield ctx
    finally:
        ctx.clear()
        _enabled = False
        remove_out_write_observer(ctx.clone_before_write)
        unregister_layer(layer)
        _node._pop_saved_tensors_hooks()
