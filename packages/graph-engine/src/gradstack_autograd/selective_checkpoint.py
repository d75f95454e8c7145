"""Selective activation checkpointing (torch 2.13's ``torch.utils.checkpoint``
``CheckpointPolicy``, ``SelectiveCheckpointContext``, ``create_selective_checkpoint_contexts``
and ``SAC_IGNORED_OPS``): inside ``checkpoint(fn, ..., use_reentrant=False,
context_fn=...)`` a policy says, op by op, whether an output is kept from the forward
(not recomputed in backward) or recomputed.

Note [Selective checkpointing on the dispatch point]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's two dispatch modes are two layers here, below autograd's (priority 50 < 100: they
see each op as its kernel does, inside autograd's recording), registered only while the
checkpoint's forward, resp. its recomputation, runs:

- the caching layer runs each op, numbers its calls per op, asks the policy
  (``policy_fn(ctx, op, *args)``, ``op`` gradstack's :class:`Op`; ``ctx.op_output`` the
  output) and keeps a detached output (with its version) when the policy says save;
- the cached layer, in the recomputation, answers the same call of the same op with the
  kept output (once: a second backward raises torch's error), and runs the others.

The recomputation then records the graph as before, with the kept outputs where the
policy said save: those ops' kernels do not run again.  A kept tensor written in place
since raises torch's error unless ``allow_cache_entry_mutation=True``.  gradstack's
difference: a view or in-place op is always run again (the policy is still asked, and its
calls numbered), as its output must be a view of, or the write into, the recomputed input.

Examples
--------
>>> import functools
>>> import gradstack_tensor as gt
>>> from gradstack_autograd.checkpoint import checkpoint
>>> x = gt.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
>>> context_fn = functools.partial(create_selective_checkpoint_contexts, [gt.get_op("mm")])
>>> out = checkpoint(lambda t: (t.mm(t)).sigmoid().sum(), x, use_reentrant=False,
...                  context_fn=context_fn)
>>> out.backward()
>>> [[round(v, 4) for v in row] for row in x.grad.tolist()]  # (torch: the same)
[[0.2065, 0.6358], [-0.1243, 0.1354]]
"""

from __future__ import annotations

import enum
from collections import defaultdict
from typing import Any

from gradstack_tensor import DispatchLayer, Op, Tensor, get_op, register_layer, unregister_layer

__all__ = [
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]


class SelectiveCheckpointContext:
    """What the policy function is given besides the op and its arguments:
    ``op_output``, the op's output, and ``is_recompute`` (always False: the policy is
    only asked in the forward, as torch 2.13's)."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether an op's output is kept from the forward (``{MUST,PREFER}_SAVE``) or
    recomputed in backward (``{MUST,PREFER}_RECOMPUTE``); the ``CPU_OFFLOAD`` ones are
    recomputed here, as torch's eager checkpoint does (gradstack is on the CPU already).

    >>> CheckpointPolicy.MUST_SAVE.value, CheckpointPolicy.PREFER_RECOMPUTE.value
    (0, 3)
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# ops the policy never sees (torch's: detach, which checkpointing inserts a different
# number of times in the forward and the recomputation)
SAC_IGNORED_OPS = {get_op("detach")}

_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are "
    "nondeterministic or depend on global state that changed between "
    "forward and backward."
)
_PRIORITY = 50  # below autograd's layer (Note [Selective checkpointing on the dispatch point])


class _VersionWrapper:
    """A kept output and its version, to refuse one written in place since."""

    def __init__(self, val) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError(
                    "Tensor cached during selective activation checkpoint has been mutated"
                )
        return self.val.detach() if isinstance(self.val, Tensor) else self.val


def _wrap(out):
    if isinstance(out, Tensor):
        return _VersionWrapper(out.detach())
    if isinstance(out, (tuple, list)):
        return _rebuilt(out, [_wrap(o) for o in out])
    return _VersionWrapper(out)


def _rebuilt(like, items):
    """``items`` in a sequence of ``like``'s type (a named tuple, ``max``'s, included)."""
    if hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def _unwrap(entry, allow):
    if isinstance(entry, _VersionWrapper):
        return entry.get_val(allow)
    return _rebuilt(entry, [_unwrap(e, allow) for e in entry])


class _SelectiveLayer(DispatchLayer):
    """A context manager that registers this layer for its block."""

    def __init__(self, storage) -> None:
        super().__init__(_PRIORITY)
        self.storage = storage
        self.func_counter: defaultdict = defaultdict(int)

    def __enter__(self):
        self.func_counter.clear()
        register_layer(self)
        return self

    def __exit__(self, *exc) -> None:
        unregister_layer(self)


class _CachingLayer(_SelectiveLayer):
    """The forward's layer: runs each op and keeps the outputs the policy saves."""

    def __init__(self, policy_fn, storage) -> None:
        super().__init__(storage)
        self.policy_fn = policy_fn

    def handle(self, op, args, next_index):
        out = self.call_next(op, args, next_index)
        if op in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        policy = self.policy_fn(
            SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args
        )
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE and not (op.is_view or op.inplace):
            self.storage[op][idx] = _wrap(out)
        else:
            self.storage[op][idx] = _RECOMPUTE
        return out


class _CachedLayer(_SelectiveLayer):
    """The recomputation's layer: answers each saved call with its kept output."""

    def __init__(self, storage, allow_cache_entry_mutation=False) -> None:
        super().__init__(storage)
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def handle(self, op, args, next_index):
        if op in SAC_IGNORED_OPS:
            return self.call_next(op, args, next_index)
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        func_storage = self.storage.get(op)
        if func_storage is None:
            raise RuntimeError(
                f"{_name(op)} encountered during backward but not found in storage. "
                f"{_SAC_MISMATCH_MSG}"
            )
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(
                f"{_name(op)} invocation index {idx} encountered during backward but not "
                f"found in storage. {_SAC_MISMATCH_MSG}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once "
                "on any region computed under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return self.call_next(op, args, next_index)
        func_storage[idx] = _CONSUMED
        return _unwrap(entry, self.allow_cache_entry_mutation)


def _name(op) -> str:
    return f"aten.{op.aten or op.name}.default"


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The two context managers of a selective checkpoint, for ``checkpoint``'s
    ``context_fn`` (``functools.partial(create_selective_checkpoint_contexts, policy)``):
    the forward's, which keeps the outputs the policy saves, and the recomputation's,
    which hands them back instead of running their ops (Note [Selective checkpointing on
    the dispatch point]).

    Parameters
    ----------
    policy_fn_or_list : callable or list of Op
        ``policy_fn(ctx, op, *args)`` returning a :class:`CheckpointPolicy` (or a bool:
        True saves), or a list of gradstack ops (``gradstack_tensor.get_op("mm")``, where
        torch lists ``torch.ops.aten.mm.default``) whose outputs are saved.
    allow_cache_entry_mutation : bool
        Do not check that a kept output was not written in place since.

    Returns
    -------
    tuple
        The forward's and the recomputation's context managers.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> def policy(ctx, op, *args):
    ...     save = op.name == "mm"
    ...     return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE
    >>> caching, cached = create_selective_checkpoint_contexts(policy)
    >>> type(caching).__name__, type(cached).__name__
    ('_CachingLayer', '_CachedLayer')
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, Op):
                raise ValueError(
                    f"Expected op in `op_list` to be an OpOverload but got: {op} "
                    f"of type {type(op)}. "
                )
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE

    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return (
        _CachingLayer(policy_fn, storage),
        _CachedLayer(storage, allow_cache_entry_mutation),
    )
