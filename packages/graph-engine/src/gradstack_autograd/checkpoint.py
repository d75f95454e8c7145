"""Activation checkpointing (``torch.utils.checkpoint``): ``checkpoint(fn, *args)`` runs
``fn`` without keeping what its backward would read, and runs it again in the backward
pass to get those values back; ``checkpoint_sequential`` does so for the segments of a
sequence of modules.  Memory falls from every intermediate of ``fn`` to its inputs and
outputs, at the cost of a second forward.

Two implementations, as torch's:

- ``use_reentrant=True`` (torch's default when the argument is omitted, with torch's
  warning): ``fn`` runs under ``no_grad`` inside a custom ``Function``; its backward runs
  ``fn`` again on detached copies of the inputs under grad mode and calls ``backward``
  inside the backward pass.  Gradients reach the tensors that are arguments of
  ``checkpoint`` only (a parameter that ``fn`` reads from a closure gets its gradient too,
  through that inner ``backward``, as in torch).
- ``use_reentrant=False``: ``fn`` runs under grad mode and records its graph, but under
  saved-tensor hooks (``autograd.graph.saved_tensors_hooks``) that keep an index instead of
  each saved tensor.  The first time backward unpacks one, ``fn`` runs again under hooks
  that collect what it saves, in the same order; each index is then answered from that
  recomputation.  This form works with ``autograd.grad``, ``backward(inputs=...)`` and
  keyword arguments.

Note [The recomputation draws the forward's random numbers]
With ``preserve_rng_state=True`` (the default) the CPU generator's state is taken before
``fn`` runs and set again before the recomputation (inside ``random.fork_rng``, so the
caller's stream goes on where it was): a ``dropout`` inside ``fn`` draws the same mask
twice, and the gradient is the one of the forward that ran.

Note [The recomputation runs under the forward's autocast]
As torch's, both forms take the CPU autocast state (enabled, dtype, cache) when ``fn``
runs and set it again around the recomputation, which runs in the backward pass, usually
outside the ``autocast`` block: ``fn`` then computes in the forward's dtypes (a bfloat16
activation meets the layer's float32 weight through autocast's cast, as it did), and the
values backward reads are the forward's.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd  # noqa: F401 - the autograd layer
>>> x = gt.tensor([1.0, 2.0], requires_grad=True)
>>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
>>> y.backward()
>>> [round(v, 4) for v in x.grad.tolist()]
[1.3818, 0.077]
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any

import gradstack_tensor as gt
from gradstack_tensor import random as _random

from . import grad_mode
from .function import Function
from .graph import saved_tensors_hooks
from .graph_api import backward as _backward

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
    "GraphExecGroup",
]

_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n"
)


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (torch's error)."""


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of ``inputs`` detached, with its ``requires_grad`` kept (torch's)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, gt.Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """torch's warning when no tensor of ``inputs`` requires grad (the reentrant
    checkpoint's gradients would all be None)."""
    if not any(isinstance(i, gt.Tensor) and i.requires_grad for i in inputs):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3
        )


def _autocast_state() -> dict:
    """The CPU autocast state to run the recomputation under (Note [The recomputation runs
    under the forward's autocast])."""
    return {
        "enabled": gt.is_autocast_enabled("cpu"),
        "dtype": gt.get_autocast_dtype("cpu"),
        "cache_enabled": gt.is_autocast_cache_enabled(),
    }


class CheckpointFunction(Function):
    """The reentrant form of :func:`checkpoint` (torch's ``CheckpointFunction``):
    ``CheckpointFunction.apply(function, preserve_rng_state, *args)``."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _random.get_rng_state()
        ctx.autocast_state = _autocast_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, arg in enumerate(args):
            if isinstance(arg, gt.Tensor):
                tensors.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensors)
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:  # Note [The recomputation draws the forward's ...]
                _random.set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad(), gt.autocast("cpu", **ctx.autocast_state):
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, gt.Tensor):
            outputs = (outputs,)
        with_grad, their_grads = [], []
        for out, g in zip(outputs, grads):
            if isinstance(out, gt.Tensor) and out.requires_grad:
                with_grad.append(out)
                their_grads.append(g)
        if not with_grad:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward(with_grad, their_grads)
        return (None, None) + tuple(
            inp.grad if isinstance(inp, gt.Tensor) else None for inp in detached
        )


class _Holder:
    """What the forward's pack hook keeps instead of a saved tensor: its position."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class _Frame:
    """One non-reentrant checkpoint: the function, its arguments, the generator state and
    the values of its last recomputation not yet handed to backward."""

    def __init__(self, fn, args, kwargs, preserve_rng_state):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.preserve = preserve_rng_state
        self.rng_state = _random.get_rng_state() if preserve_rng_state else None
        self.autocast_state = _autocast_state()
        self.count = 0
        self.recomputed: dict[int, Any] = {}

    def pack(self, tensor):
        holder = _Holder(self.count)
        self.count += 1
        return holder

    def unpack(self, holder):
        if holder.index not in self.recomputed:
            self.recompute()
        if holder.index not in self.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                "make sure to do so only once. Otherwise please open an issue with details "
                "on your use case."
            )
        return self.recomputed.pop(holder.index)

    def recompute(self) -> None:
        values: list = []

        def collect(tensor):
            values.append(tensor.detach() if tensor.requires_grad else tensor)
            return tensor

        with _random.fork_rng(enabled=self.preserve):
            if self.preserve:  # Note [The recomputation draws the forward's random numbers]
                _random.set_rng_state(self.rng_state)
            with (
                grad_mode.enable_grad(),
                gt.autocast("cpu", **self.autocast_state),
                saved_tensors_hooks(collect, lambda t: t),
            ):
                self.fn(*self.args, **self.kwargs)
        if len(values) != self.count:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during "
                "the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {self.count}\n"
                f"Number of tensors saved during recomputation: {len(values)}.\n{_DEBUG_TIP}"
            )
        self.recomputed = dict(enumerate(values))


class GraphExecGroup:
    """A block whose backward calls recompute each non-reentrant checkpoint at most once
    (torch's context manager; the backward calls must use disjoint saved activations).

    gradstack's recomputation keeps the values a backward call did not use for the next
    one, so a checkpoint is recomputed once across backward calls over disjoint parts of
    its graph with or without the block; the block records itself (``_get_current_group``)
    and refuses nesting with torch's words.

    >>> with GraphExecGroup() as group:
    ...     GraphExecGroup._get_current_group() is group
    True
    >>> GraphExecGroup._get_current_group() is None
    True
    """

    def __enter__(self):
        current = _graph_exec_group.get()
        if current is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {current}"
            )
        _graph_exec_group.set(self)
        return self

    def __exit__(self, *args) -> None:
        _graph_exec_group.set(None)

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group.get()


class _ThreadValue(threading.local):
    value = None

    def get(self):
        return self.value

    def set(self, value) -> None:
        self.value = value


_graph_exec_group = _ThreadValue()


def noop_context_fn():
    """The default ``context_fn`` of :func:`checkpoint`: two null context managers (the
    forward's and the recomputation's)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# torch's switch of early stopping; gradstack's recomputation always runs the whole
# function, which computes the same values (Note in :func:`checkpoint`'s docstring)
_enable_checkpoint_early_stop = True


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints stop their recomputation early (torch's context
    manager).  It is recorded and restored; gradstack always recomputes the whole function,
    so the results are the same either way.

    >>> with set_checkpoint_early_stop(False):
    ...     pass
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


# torch's override of checkpoint's ``debug`` argument (None: each call's own)
_checkpoint_debug_enabled: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, every :func:`checkpoint` runs with ``debug=enabled`` whatever its
    own argument says (None: each call's own), as torch's context manager.  torch's debug
    mode adds the traces of the operators of both runs to a recomputation's mismatch
    error; gradstack's error gives the counts and the tip to this switch only, so the
    switch is recorded and restored and changes no result.

    >>> with set_checkpoint_debug_enabled(True):
    ...     pass
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=None,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs,
):
    """``function(*args, **kwargs)``, its intermediates recomputed in backward instead of
    kept (see the module's docstring); ``preserve_rng_state=True`` (a keyword) replays the
    generator's draws.  ``determinism_check`` and ``early_stop`` are accepted and do not
    change the result (the recomputation always runs the whole function); ``context_fn``
    returns the two context managers the forward and the recomputation run under.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> w = gt.tensor([[2.0]], requires_grad=True)
    >>> out = checkpoint(lambda x: (x @ w).tanh(), gt.ones(3, 1), use_reentrant=False)
    >>> out.sum().backward()
    >>> round(w.grad.item(), 4)
    0.212
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    frame = _Frame(function, args, kwargs, preserve)
    if context_fn is not None:
        forward_context, recompute_context = context_fn()
        inner = frame.fn

        def run_in_context(*a, **k):
            with recompute_context:
                return inner(*a, **k)

        frame.fn = run_in_context
    else:
        forward_context = None
    with saved_tensors_hooks(frame.pack, frame.unpack):
        if forward_context is not None:
            with forward_context:
                return function(*args, **kwargs)
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs
):
    """Run ``functions`` (a ``Sequential`` or a list of callables) in ``segments`` pieces,
    each but the last under :func:`checkpoint` (torch's split: ``len // segments``
    functions a segment, the rest in the last one, which runs normally).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([0.5], requires_grad=True)
    >>> fs = [lambda t: t * 2, lambda t: t.exp(), lambda t: t + 1, lambda t: t.sin()]
    >>> y = checkpoint_sequential(fs, 2, x, use_reentrant=False)
    >>> y.backward()
    >>> round(x.grad.item(), 4)
    -4.5573
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
            "should be passed explicitly. In version 2.9 we will raise an exception if "
            "use_reentrant is not passed. use_reentrant=False is recommended, but if you "
            "need to preserve the current default behavior, you can pass use_reentrant=True. "
            "Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(  # noqa: A001 - torch's name
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
