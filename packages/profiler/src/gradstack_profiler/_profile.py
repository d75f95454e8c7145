"""``profile`` and ``record_function``: torch.autograd.profiler's CPU profiler for gradstack."""

from __future__ import annotations

import functools
import gc
import warnings

from . import _recorder
from ._build import build_events
from .events import EventList

__all__ = ["profile", "record_function"]


class profile:
    """Context manager that records every op, backward node and labelled block inside it.

    Parameters
    ----------
    enabled : bool
        ``False`` makes the context manager do nothing (and cost nothing).
    use_cuda : bool
        Accepted so that torch code runs unchanged: gradstack runs on the CPU, so
        ``True`` warns and profiles the CPU.  ``use_device`` likewise.
    record_shapes : bool
        Record the shape of each op's tensor arguments (``input_shapes``; the
        ``Input Shapes`` column; ``key_averages(group_by_input_shape=True)``).
    with_stack : bool
        Record the Python frames outside gradstack that called each op and block
        (``stack``; ``key_averages(group_by_stack_n=n)``).
    profile_memory : bool
        Record the bytes of the tensors each op creates and of those freed during it (the
        ``CPU Mem`` columns; see the README for what is counted).
    with_flops, with_modules, use_kineto, use_cpu, experimental_config : optional
        torch's other options (and ``custom_trace_id_callback``), accepted for
        compatibility; ``with_flops`` and
        ``with_modules`` warn that they record nothing here.
    acc_events : bool
        Keep the events of earlier runs of this same ``profile`` object when it is entered
        again (by default each ``with`` starts afresh).

    Notes
    -----
    While the profile is active, a dispatch layer above autograd's (so an op's time
    includes recording its backward node, as in torch) and an observer of the backward
    engine are registered; both are removed on exit, also when the block raises.  Results
    (``key_averages``, ``table``, ``events`` ...) are available after the block; they are
    computed once and never change (Note [Aggregation is pure]).

    Unlike torch, ``str(prof)`` is the *aggregated* table, ``prof.table()``, which is
    ``prof.key_averages().table()``; ``prof.events().table()`` lists every event.

    Examples
    --------
    >>> import gradstack_tensor as gt, gradstack_autograd
    >>> from gradstack_profiler import profile
    >>> x = gt.ones(2, 3, requires_grad=True)
    >>> with profile() as prof:
    ...     y = (x * 2).sum()
    ...     y.backward()
    >>> [e.name for e in prof.events()][:2]                     # the forward ops
    ['aten::mul', 'aten::sum']
    >>> [e.name for e in prof.events() if e.scope == 1]       # backward nodes
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> [e for e in prof.events() if e.name == "MulBackward0"][0].forward_event.name
    'aten::mul'
    """

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
    ):
        self.enabled = bool(enabled)
        self.use_cuda = use_cuda
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self._session = None
        self._sessions: list = []
        self._events = None
        if not self.enabled:
            return
        if use_cuda or (use_device not in (None, "cpu")):
            what = "use_cuda=True" if use_cuda else f"use_device={use_device!r}"
            warnings.warn(
                f"profile({what}): gradstack runs on the CPU only, so there is no device "
                "time to record; profiling the CPU.",
                UserWarning,
                stacklevel=2,
            )
        for flag, name in ((with_flops, "with_flops"), (with_modules, "with_modules")):
            if flag:
                warnings.warn(
                    f"profile({name}=True) is not supported by gradstack_profiler "
                    "and records nothing",
                    UserWarning,
                    stacklevel=2,
                )

    # -- context manager ---------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("this profile is already running; a profile is not reentrant")
        session = _recorder.ProfileSession(
            record_shapes=self.record_shapes,
            with_stack=self.with_stack,
            profile_memory=self.profile_memory,
        )
        session.start()
        self.entered = True
        self._session = session
        if not self.acc_events:
            self._sessions = []
        self._events = None
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self.enabled or self._session is None:
            return False
        session, self._session = self._session, None
        session.stop()
        self._sessions.append(session)
        self.entered = False
        return False

    def __repr__(self):
        state = (
            "disabled"
            if not self.enabled
            else "running"
            if self._session is not None
            else f"{len(self._all_events())} events"
        )
        return f"<gradstack_profiler.profile ({state})>"

    # -- results -------------------------------------------------------------------------

    def _check_finished(self):
        if self._session is not None:
            raise RuntimeError(
                "the profile is still running: read its results after the `with` block"
            )

    def _all_events(self) -> tuple:
        self._check_finished()
        if self._events is None:
            # Note [No GC while building]: the events (parent <-> children cycles) are
            # new objects that all survive; letting the cyclic GC scan them again and
            # again while they are made took 40% of the build
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                self._events = self._build()
            finally:
                if gc_was_enabled:
                    gc.enable()
        return self._events

    def _build(self) -> tuple:
        events: list = []
        threads: dict = {}
        t0 = self._sessions[0].start_ns if self._sessions else 0
        for session in self._sessions:
            built = build_events(session, use_device=None, t0=t0, threads=threads)
            offset = len(events)
            for evt in built:
                evt.id += offset
            events.extend(built)
        return tuple(events)

    def _event_list(self, items) -> EventList:
        return EventList(items, use_device=None, profile_memory=bool(self.profile_memory))

    def events(self) -> EventList:
        """Every recorded event, in start order (a new list each call)."""
        return self._event_list(self._all_events())

    @property
    def function_events(self) -> EventList:
        """torch's name for :meth:`events`."""
        return self.events()

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """Events aggregated by name (and input shapes, and stack frames, when asked).

        Returns an ``EventList`` of ``FunctionEventAvg`` rows with ``key``, ``count``,
        ``self_cpu_time_total``, ``cpu_time_total``, ``cpu_time`` and ``self_cpu_time``
        (averages per call), ``input_shapes``, ``cpu_memory_usage`` and
        ``self_cpu_memory_usage``; ``.table()`` prints them.  Pure: Note [Aggregation is
        pure].
        """
        return self.events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        """``key_averages().table(...)``: the aggregated table (see ``EventList.table``)."""
        return self.key_averages().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time (us): the profiled time, counted once."""
        return self.events().self_cpu_time_total

    def total_average(self):
        """Every event added into one row keyed ``"Total"``."""
        return self.events().total_average()

    def export_chrome_trace(self, path):
        """Write a Chrome/Perfetto trace of every event (see ``EventList.export_chrome_trace``)."""
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write flame-graph stacks (needs ``with_stack=True``)."""
        self.events().export_stacks(path, metric)


class record_function:
    """Label a block of code in the profile: a context manager and a decorator.

    Inside an active :class:`profile`, the block is one event named ``name`` whose
    children are the ops, blocks and backward nodes run inside it; blocks nest.  Under
    ``emit_nvtx`` it is an NVTX range.  With no profiler running it does nothing.

    Examples
    --------
    >>> from gradstack_profiler import profile, record_function
    >>> import gradstack_tensor as gt
    >>> @record_function("double")
    ... def double(t):
    ...     return t * 2
    >>> with profile() as prof:
    ...     with record_function("outer"):
    ...         y = double(gt.ones(3))
    >>> [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()]
    [('outer', None), ('double', 'outer'), ('aten::mul', 'double')]
    """

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function needs a str name, not {type(name).__name__}")
        self.name = name
        self.args = args
        self._open: list = []

    def __enter__(self):
        session = _recorder.active_session()
        if session is not None:
            self._open.append((session, session.user_begin(self.name, self.args)))
        else:
            self._open.append(None)
        return self

    def __exit__(self, exc_type, exc, tb):
        entry = self._open.pop() if self._open else None
        if entry is not None:
            entry[0].user_end(entry[1])
        return False

    def __call__(self, fn):
        """Decorate ``fn``: each call runs inside a fresh ``record_function(name)``."""
        if not callable(fn):
            raise TypeError("record_function(...) decorates a callable")
        name, args = self.name, self.args

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with record_function(name, args):
                return fn(*a, **kw)

        return wrapper

    def __repr__(self):
        return f"record_function({self.name!r})"
