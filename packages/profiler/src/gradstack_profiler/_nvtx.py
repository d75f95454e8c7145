"""``emit_nvtx``: an NVTX range around every op and backward node, for Nsight tools."""

from __future__ import annotations

from gradstack_autograd import extension as autograd_ext
from gradstack_tensor import DispatchLayer, register_layer, unregister_layer

from . import _recorder
from ._names import event_name

__all__ = ["emit_nvtx", "import_nvtx"]

INSTALL_HINT = "pip install nvtx  (or: pip install 'gradstack-profiler[nvtx]')"


def import_nvtx():
    """NVIDIA's ``nvtx`` module, or an ImportError that says how to install it."""
    try:
        import nvtx
    except ImportError as e:
        raise ImportError(
            f"emit_nvtx() opens NVTX ranges through NVIDIA's `nvtx` package, which is not "
            f"installed: {INSTALL_HINT}"
        ) from e
    if not (hasattr(nvtx, "push_range") and hasattr(nvtx, "pop_range")):
        raise ImportError(
            f"the module `nvtx` found at {getattr(nvtx, '__file__', '?')} has no "
            f"push_range/pop_range: it is not NVIDIA's nvtx package ({INSTALL_HINT})"
        )
    return nvtx


def _peek_sequence_nr():
    peek = getattr(autograd_ext, "current_sequence_nr", None)
    return None if peek is None else peek


class _NvtxLayer(DispatchLayer):
    def __init__(self, session):
        super().__init__(_recorder.LAYER_PRIORITY)
        self._push = session.nvtx.push_range
        self._pop = session.nvtx.pop_range
        self._record_shapes = session.record_shapes
        self._peek = session.peek

    def handle(self, op, args, next_index):
        message = event_name(op.name)
        if self._peek is not None:
            # the number the node this op may create will get (torch's "seq = N")
            message += f", seq = {self._peek() + 1}"
        if self._record_shapes:
            shapes = [list(s) for s in _recorder.input_shapes(args)]
            message += f", sizes = {shapes}"
        self._push(message)
        try:
            return self.call_next(op, args, next_index)
        finally:
            self._pop()


class _NvtxObserver:
    __slots__ = ("_push", "_pop")

    def __init__(self, nvtx):
        self._push = nvtx.push_range
        self._pop = nvtx.pop_range

    def begin(self, node):
        seq = node.sequence_nr
        if 0 <= seq < (1 << 62):
            self._push(f"{node.name()}, stashed seq = {seq}")
        else:
            self._push(node.name())
        return None

    def end(self, token):
        self._pop()


class _NvtxSession:
    def __init__(self, nvtx, record_shapes):
        self.nvtx = nvtx
        self.record_shapes = bool(record_shapes)
        self.peek = _peek_sequence_nr()
        self._layer = _NvtxLayer(self)
        self._observer = _NvtxObserver(nvtx)

    def describe(self):
        return "a gradstack_profiler.emit_nvtx"

    def start(self):
        _recorder._activate(self)
        try:
            if autograd_ext.node_observer() is not None:
                observer = autograd_ext.node_observer()
                raise RuntimeError(
                    f"another observer of backward nodes is installed ({observer!r})"
                )
            register_layer(self._layer)
            autograd_ext.set_node_observer(self._observer)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        try:
            unregister_layer(self._layer)
            if autograd_ext.node_observer() is self._observer:
                autograd_ext.set_node_observer(None)
        finally:
            _recorder._deactivate(self)

    def user_begin(self, name, args):
        self.nvtx.push_range(name)

    def user_end(self, token):
        self.nvtx.pop_range()


class emit_nvtx:
    """Context manager that wraps every op and backward node in an NVTX range.

    Run the program under Nsight Systems (``nsys profile ...``) or nvprof
    (``nvprof --profile-from-start off -o trace.prof -- python script.py``) to see
    gradstack's ops on the timeline; :func:`load_nvprof` reads an nvprof export back.
    Needs NVIDIA's ``nvtx`` package (``pip install nvtx``); without it, entering raises
    an ImportError saying so.

    Range names follow torch's: an op is ``aten::mul, seq = N`` (``N``: the sequence
    number its backward node gets, if it creates one), with ``, sizes = [[2, 3], []]``
    when ``record_shapes``; a backward node is ``MulBackward0, stashed seq = N``, so that
    each backward range can be matched with its forward op.  ``record_function`` blocks
    are ranges named by their label.

    Parameters
    ----------
    enabled : bool
        ``False`` makes it do nothing.
    record_shapes : bool
        Append the shapes of the op's arguments to each range's name.
    """

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = bool(enabled)
        self.record_shapes = record_shapes
        self.entered = False
        self._session = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        session = _NvtxSession(import_nvtx(), self.record_shapes)
        session.start()
        self._session = session
        self.entered = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._session is not None:
            session, self._session = self._session, None
            self.entered = False
            session.stop()
        return False
