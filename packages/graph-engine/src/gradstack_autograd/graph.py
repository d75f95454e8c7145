"""``gradstack_autograd.graph``: the graph's public types and saved-tensor hooks.

- :class:`Node` is the type of every ``grad_fn``;
- :class:`saved_tensors_hooks` installs ``pack``/``unpack`` hooks applied to every tensor
  a node saves for backward;
- :class:`save_on_cpu` keeps saved tensors in (pinned) CPU memory (a no-op placement here,
  since gradstack computes on the CPU: it copies, so that the saved data are independent);
- :class:`save_on_disk` keeps them in memory-mapped files, for graphs larger than RAM;
- :func:`make_dot` and :func:`render_dot` draw a backward graph (torchviz's call; defined
  in :mod:`.graph_drawing`, re-exported here so that ``gradstack_autograd.graph`` and the
  facade's ``gradstack.autograd.graph`` give the same names).

Examples
--------
>>> import gradstack_tensor as gt, gradstack_autograd as ag
>>> packed = []
>>> def pack(t): packed.append(t.shape); return t
>>> with ag.graph.saved_tensors_hooks(pack, lambda t: t):
...     y = (gt.ones(3, requires_grad=True) * 2).exp()
>>> len(packed)  # exp's result; the product by a number saves no tensor
1
"""

from __future__ import annotations

import os
import tempfile
import threading
import uuid
import weakref

import gradstack_tensor as gt
import numpy as np

from . import _engine, _layer, _node
from ._node import Node, RemovableHandle
from .graph_drawing import GraphvizMissingError, dot_available, make_dot, render_dot
from .saved_tensor_mutation import allow_mutation_on_saved_tensors

__all__ = [
    "Node",
    "saved_tensors_hooks",
    "save_on_cpu",
    "save_on_disk",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "increment_version",
    "RemovableHandle",
    "GradientEdge",
    "get_gradient_edge",
    "make_dot",
    "render_dot",
    "dot_available",
    "GraphvizMissingError",
    "allow_mutation_on_saved_tensors",
    "region_activation_memory_budget",
]


def region_activation_memory_budget(budget: float):
    """torch's activation memory budget of a compiled region (the ratio in ``[0, 1]`` of
    the activations its min-cut partitioner keeps): it only has an effect under
    ``torch.compile``, which gradstack does not have, so after torch's checks of ``budget``
    it raises torch's RuntimeError for eager mode.

    >>> region_activation_memory_budget(0.5)
    Traceback (most recent call last):
    ...
    RuntimeError: torch.autograd.graph.region_activation_memory_budget can only be used inside a torch.compile region; it has no effect in eager mode.
    """  # noqa: E501
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(
            "torch.autograd.graph.region_activation_memory_budget: expects a "
            f"float, got {type(budget).__name__}"
        )
    if not 0.0 <= budget <= 1.0:
        raise ValueError(
            f"torch.autograd.graph.region_activation_memory_budget: must be in [0, 1], got {budget}"
        )
    raise RuntimeError(
        "torch.autograd.graph.region_activation_memory_budget can only be "
        "used inside a torch.compile region; it has no effect in eager mode."
    )


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager: ``pack_hook(tensor) -> object`` runs when a tensor is saved for
    backward, ``unpack_hook(object) -> tensor`` when backward needs it.

    Hooks nest; the innermost pair applies.  ``unpack_hook`` must return a tensor with the
    same content the saved one had.
    """

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks(pack_hook, unpack_hook): both must be callable")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        _node._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _node._pop_saved_tensors_hooks()


_disabled_message = None


class disable_saved_tensors_hooks:  # noqa: N801
    """Context manager under which installing saved-tensor hooks raises ``error_message``."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        global _disabled_message
        self._prev = _disabled_message
        _disabled_message = self.error_message

    def __exit__(self, *exc):
        global _disabled_message
        _disabled_message = self._prev


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Saved tensors are copied to CPU memory when saved and used from there.

    gradstack computes on the CPU, so this only decouples the saved data from later
    in-place changes of the originals (a copy); ``pin_memory`` is accepted and ignored.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(t):
            return (t.detach().clone(), t.requires_grad)

        def unpack(packed):
            return packed[0]

        super().__init__(pack, unpack)


class save_on_disk(saved_tensors_hooks):  # noqa: N801
    """Saved tensors live in memory-mapped files under ``directory`` until backward.

    For graphs whose saved activations do not fit in RAM: each saved tensor is written to
    its own ``.npy`` file and read back through ``numpy.memmap`` (the OS pages it in on
    demand).  Files are deleted when the saved tensor is freed.

    Parameters
    ----------
    directory : str, optional
        Where to put the files (default: a new temporary directory).
    min_bytes : int
        Tensors smaller than this stay in memory (files for tiny tensors cost more than
        they save).
    """

    def __init__(self, directory: str | None = None, min_bytes: int = 1 << 16):
        self.directory = directory or tempfile.mkdtemp(prefix="gradstack-saved-")
        os.makedirs(self.directory, exist_ok=True)
        self.min_bytes = min_bytes
        super().__init__(self._pack, self._unpack)

    def _pack(self, t):
        data = t.detach().numpy()
        if data.nbytes < self.min_bytes:
            return ("memory", data.copy())
        path = os.path.join(self.directory, f"{uuid.uuid4().hex}.npy")
        np.save(path, np.ascontiguousarray(data))
        token = _DiskToken(path)
        return ("disk", token)

    @staticmethod
    def _unpack(packed):
        kind, payload = packed
        if kind == "memory":
            return gt.from_numpy(payload)
        return gt.from_numpy(np.load(payload.path, mmap_mode="r+"))


class _DiskToken:
    """Owns one file; removes it when the saved tensor (and so this token) is freed."""

    def __init__(self, path):
        self.path = path
        self._finalizer = weakref.finalize(self, _remove_file, path)


def _remove_file(path):
    try:
        os.remove(path)
    except OSError:
        pass


def increment_version(tensor):
    """Bump ``tensor``'s version, as if it had been modified in place."""
    tensor._bump_version("increment_version")


class GradientEdge(tuple):
    """``(node, output_nr)``: where the gradient of a tensor flows."""

    __slots__ = ()

    def __new__(cls, node, output_nr):
        return super().__new__(cls, (node, output_nr))

    @property
    def node(self):
        return self[0]

    @property
    def output_nr(self):
        return self[1]


def get_gradient_edge(tensor):
    """The edge through which ``tensor``'s gradient flows (its grad_fn or accumulator)."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that "
            "does not require gradients"
        )
    e = _layer.edge_of(tensor)
    return GradientEdge(e[0], e[1])


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass when the gradients of ``tensors`` are computed.

    With ``mode="all"``, ``fn(grads)`` runs after every tensor that takes part in the pass
    got its gradient; ``grads`` has one entry per tensor (None for those the pass does not
    reach).  With ``mode="any"``, ``fn(grad)`` runs on the first gradient computed.  State
    is kept per backward pass (Note [Graph tasks] in _engine.pyx), so a pass that reaches
    only some of the tensors still fires, and nothing leaks into the next pass.
    """
    tensors = tuple(tensors)
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: mode must be 'all' or 'any', got {mode!r}")
    nodes = [_layer.edge_of(t)[0] if t.requires_grad else None for t in tensors]
    lock = threading.Lock()
    count, buffer, expected, ran = {}, {}, {}, set()
    handles = []

    def make_hook(i):
        def hook(grad):
            task = _engine.current_graph_task_id()
            if mode == "any":
                with lock:
                    if task in ran:
                        return None
                    ran.add(task)
                fn(grad)
                return None
            with lock:
                if task not in count:
                    count[task] = 0
                    buffer[task] = [None] * len(tensors)
                    expected[task] = sum(
                        1 for n in nodes if n is not None and _engine.will_engine_execute_node(n)
                    )
                count[task] += 1
                buffer[task][i] = grad
                done = count[task] == expected[task]
                if done:
                    grads = tuple(buffer.pop(task))
                    del count[task], expected[task]
            if done:
                fn(grads)
            return None

        return hook

    for i, t in enumerate(tensors):
        if t.requires_grad:
            handles.append(t.register_hook(make_hook(i)))
    return _MultiHandle(handles)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
