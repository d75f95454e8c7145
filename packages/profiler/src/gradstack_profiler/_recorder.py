"""Recording: the dispatch layer and the node observer that a running profile installs.

Nothing in this module runs unless a :class:`~gradstack_profiler.profile` (or
``emit_nvtx``) is active: the layer is registered on tensor-core's dispatch point and the
observer on graph-engine's engine only between ``__enter__`` and ``__exit__``.  With no
profile, the dispatch point checks one C integer per op, as it does without this package.

Note [Raw records]
~~~~~~~~~~~~~~~~~~
While a profile runs, every event costs two appends of a flat tuple to one list (appending
is atomic under the GIL, so threads may share the list):

    (OP,   op_name, t_start_ns, thread, input_shapes or None, stack or None)
    (NODE, node_name, t_start_ns, thread, node_sequence_nr)
    (USER, label, t_start_ns, thread, stack or None, args)
    (END,  t_end_ns, thread, sequence_nr of the node the op created or -1, bytes allocated)
    (FREE, t_ns, thread, bytes freed)

Each thread's events nest (a callee ends before its caller), so the END of a thread closes
its innermost open event: ``events.build_events`` rebuilds every event, its parent and its
children from this stream after the profile, exactly, without comparing timestamps.  The
tuples hold only ints, strings and None, so the cyclic GC stops tracking them at its first
pass and a long profile does not slow collections down.  Turning records into
``FunctionEvent`` objects, names into ``aten::`` names and thread idents into small
numbers all happen after the profile, off the measured path.

Note [Linking backward nodes to forward ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every node gets a sequence number when the autograd layer creates it; the engine shows
the node to the observer, which records it.  An op's END records the sequence number of
its output's ``grad_fn``.  After the profile, the first op to end with a given number (the
innermost, when an outer op returns what an inner one made) is the one that created the
node, provided the number is newer than the last one handed out before the profile began
(an op may return an input, whose ``grad_fn`` is older).  The backward event then points
at that forward event (``forward_event``, ``sequence_nr``, ``fwd_thread``), as torch's
``sequence_nr`` links them.
"""

from __future__ import annotations

import sys
import threading
import types
import weakref
from functools import partial
from time import perf_counter_ns

from gradstack_autograd import extension as autograd_ext
from gradstack_tensor import DispatchLayer, Tensor, register_layer, unregister_layer
from gradstack_tensor.extension import library_dirs

from ._recording import (
    END,
    FREE,
    NODE,
    OP,
    USER,
    NodeRecorder,
    OpRecorder,
    output_sequence_nr,
)

__all__ = [
    "OP",
    "NODE",
    "USER",
    "END",
    "FREE",
    "LAYER_PRIORITY",
    "active_session",
    "ProfileSession",
]

# Above the autograd layer (100): an op's time includes recording its backward node, as
# torch's op events include autograd's bookkeeping.
LAYER_PRIORITY = 1000

_get_ident = threading.get_ident

# The session being recorded, or None.  One at a time: a second profile (or emit_nvtx)
# inside the first raises, as torch's does.
_active = None
_active_lock = threading.Lock()


def active_session():
    """The running profile's session (or emit_nvtx's), or None."""
    return _active


def _activate(session) -> None:
    global _active
    with _active_lock:
        if _active is not None:
            raise RuntimeError(
                f"a profiler is already running ({_active.describe()}); profiles do not nest. "
                "Exit it first, or use record_function(name) to label a part of it."
            )
        _active = session


def _deactivate(session) -> None:
    global _active
    with _active_lock:
        if _active is session:
            _active = None


def current_sequence_nr() -> int:
    """The sequence number of the newest node (Note [Linking backward nodes to forward ops])."""
    peek = getattr(autograd_ext, "current_sequence_nr", None)
    if peek is not None:
        return peek()
    # an older graph-engine: take a number (the engine only orders nodes by them; a gap
    # changes nothing)
    return autograd_ext.new_sequence_nr()


def input_shapes(args: tuple) -> tuple:
    """torch's ``input_shapes``: one entry per argument, a tensor's shape or ``()``."""
    return tuple(tuple(a.shape) if isinstance(a, Tensor) else () for a in args)


def user_stack(skip: tuple[str, ...], limit: int = 128) -> tuple:
    """The calling Python frames outside gradstack, innermost first: (file, line, function)."""
    frame: types.FrameType | None = sys._getframe(2)
    out: list[tuple] = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith(skip):
            out.append((filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(out)


class _FullOpLayer(DispatchLayer):
    """The layer with record_shapes, with_stack or profile_memory: same records, more fields."""

    def __init__(self, session: ProfileSession):
        super().__init__(LAYER_PRIORITY)
        self._session = session
        self._append = session.records.append

    def handle(self, op, args, next_index):
        s = self._session
        append = self._append
        tid = _get_ident()
        shapes = input_shapes(args) if s.record_shapes else None
        stack = user_stack(s.skip_dirs) if s.with_stack else None
        append((OP, op.name, perf_counter_ns(), tid, shapes, stack))
        try:
            out = self.call_next(op, args, next_index)
        except BaseException:
            append((END, perf_counter_ns(), tid, -1, 0))
            raise
        t1 = perf_counter_ns()
        seq = output_sequence_nr(out)
        nbytes = s.track_allocation(op, args, out) if s.profile_memory else 0
        append((END, t1, tid, seq, nbytes))
        return out


class ProfileSession:
    """What one ``profile`` records between its ``__enter__`` and ``__exit__``."""

    def __init__(self, *, record_shapes=False, with_stack=False, profile_memory=False):
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self.profile_memory = bool(profile_memory)
        self.records: list = []
        self.skip_dirs: tuple[str, ...] = ()
        self.start_ns = 0
        self.stop_ns = 0
        self.n_records = 0  # records made before stop(); later ones are ignored
        self.seq_baseline = 0
        self.running = False
        # profile_memory: id(tensor) -> (weakref whose callback records the free, nbytes)
        self._live: dict[int, tuple] = {}
        if self.record_shapes or self.with_stack or self.profile_memory:
            self._layer = _FullOpLayer(self)
        else:
            self._layer = OpRecorder(self.records, LAYER_PRIORITY)  # in C: _recording.pyx
        self._observer = NodeRecorder(self.records)

    def describe(self) -> str:
        return "a gradstack_profiler.profile"

    # -- lifetime ----------------------------------------------------------------------

    def start(self) -> None:
        _activate(self)
        try:
            if autograd_ext.node_observer() is not None:
                raise RuntimeError(
                    "another observer of backward nodes is installed "
                    f"({autograd_ext.node_observer()!r}); the profiler cannot record backward nodes"
                )
            self.skip_dirs = library_dirs() if self.with_stack else ()
            self.seq_baseline = current_sequence_nr()
            self.running = True
            self.start_ns = perf_counter_ns()
            register_layer(self._layer)
            autograd_ext.set_node_observer(self._observer)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Unregister everything (idempotent; also after a failed start)."""
        self.stop_ns = perf_counter_ns()
        self.n_records = len(self.records)
        self.running = False
        try:
            unregister_layer(self._layer)
            if autograd_ext.node_observer() is self._observer:
                autograd_ext.set_node_observer(None)
        finally:
            self._live.clear()  # the weakrefs die with their callbacks uncalled
            _deactivate(self)

    # -- record_function -----------------------------------------------------------------

    def user_begin(self, name: str, args):
        tid = _get_ident()
        stack = user_stack(self.skip_dirs) if self.with_stack else None
        self.records.append((USER, name, perf_counter_ns(), tid, stack, args))
        return tid

    def user_end(self, token) -> None:
        self.records.append((END, perf_counter_ns(), token, -1, 0))

    # -- profile_memory --------------------------------------------------------------------

    def track_allocation(self, op, args, out) -> int:
        """Bytes of new storage among ``out``'s tensors; watches each for its free.

        Note [What profile_memory counts]
        A tensor an op returns counts as allocated (numel * element_size bytes) unless it
        shares storage with an input: the op is in-place, the tensor is a view
        (``_base`` is set) or it is one of the inputs.  A tensor that an inner op already
        counted is not counted again by the outer op that returns it.  Its bytes count
        as freed when the tensor object is garbage-collected while the profile runs, in
        the event open on that thread at that moment (a ``[memory]`` event when none
        is).  numpy's scratch buffers inside a kernel, and tensors made before the
        profile, are not seen: this is bookkeeping of tensor storage, not an allocator
        trace.
        """
        if op.inplace:
            return 0
        if isinstance(out, Tensor):
            outs = (out,)
        elif isinstance(out, tuple):
            outs = out
        else:
            return 0
        total = 0
        live = self._live
        for t in outs:
            if not isinstance(t, Tensor) or t._base is not None:
                continue
            key = id(t)
            if key in live or any(t is a for a in args):
                continue
            nbytes = t.numel() * t.element_size()
            live[key] = (weakref.ref(t, partial(self._freed, key)), nbytes)
            total += nbytes
        return total

    def _freed(self, key: int, _ref) -> None:
        entry = self._live.pop(key, None)
        if entry is not None and self.running:
            self.records.append((FREE, perf_counter_ns(), _get_ident(), entry[1]))
