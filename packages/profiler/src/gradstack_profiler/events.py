"""Profile results: ``FunctionEvent``, ``FunctionEventAvg`` and ``EventList``, as in torch.

Times are in microseconds (floats, nanosecond resolution), memory in bytes.

Note [Self vs total]
~~~~~~~~~~~~~~~~~~~~
An event's *total* CPU time runs from its start to its end, so it includes the events it
called (its ``cpu_children``: ops called from inside an op, the ops a backward node runs,
everything inside a ``record_function`` block).  Its *self* CPU time is its total minus
its children's totals: the time spent in the event's own code.  Summing self times over
all events gives the profiled time once; summing totals counts nested time several
times.  The same holds for memory: ``cpu_memory_usage`` includes the children's,
``self_cpu_memory_usage`` does not.

Note [Aggregation is pure]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Events are built once, when a profile's results are first read, with their parent and
children fixed; nothing afterwards changes them.  ``key_averages``, ``total_average`` and
``table`` only read events and return new objects, so calling them in any order, any
number of times, gives the same results (torch's ``key_averages`` altered its events:
pytorch#43869).
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

from ._table import build_table, format_time

__all__ = [
    "Interval",
    "Kernel",
    "FunctionEvent",
    "FunctionEventAvg",
    "EventList",
    "SCOPE_FUNCTION",
    "SCOPE_BACKWARD_FUNCTION",
    "SCOPE_USER",
]

# torch's at::RecordScope values for the kinds of events gradstack records
SCOPE_FUNCTION = 0  # an op
SCOPE_BACKWARD_FUNCTION = 1  # a backward node run by the engine
SCOPE_USER = 7  # a record_function block (USER_SCOPE)

Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class Interval:
    """``[start, end]`` in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """The length of the interval in microseconds."""
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class _TimesMixin:
    """Averages and formatted times shared by events and their aggregates."""

    __slots__ = ()

    @property
    def cpu_time(self):
        """Average total CPU time per call (us)."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def self_cpu_time(self):
        """Average self CPU time per call (us)."""
        return 0.0 if self.count == 0 else self.self_cpu_time_total / self.count

    # Device times come only from load_nvprof's kernels: gradstack itself runs on the
    # CPU, so its events have none.  torch's cuda_* names are aliases.
    @property
    def device_time(self):
        """Average device time per call (us)."""
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    device_memory_usage = cuda_memory_usage = property(lambda self: 0)
    self_device_memory_usage = self_cuda_memory_usage = property(lambda self: 0)

    cpu_time_str = property(lambda self: format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: format_time(self.self_cpu_time_total))


class FunctionEvent(_TimesMixin):
    """One recorded event: an op call, a backward node, a ``record_function`` block.

    Attributes
    ----------
    id : int
        Position in the profile, in start order.
    name : str
        The event's name (``aten::mul``, ``MulBackward0``, a label): the README's naming
        scheme.
    thread : int
        Small thread number, 1 for the first thread seen in the profile (as torch numbers
        threads).
    time_range : Interval
        Start and end in microseconds since the profile began.
    input_shapes : list
        One entry per argument, a tensor's shape or ``[]`` (``record_shapes=True``).
    stack : list of str
        Python frames outside gradstack, innermost first, as ``"file(line): function"``
        (``with_stack=True``).  Events in the backward pass carry their forward op's stack.
    scope : int
        0 for an op, 1 for a backward node, 7 for a ``record_function`` block (torch's
        ``RecordScope``).
    sequence_nr : int
        For an op that created a backward node, and for that node's backward event, the
        node's sequence number; -1 otherwise.
    fwd_thread : int or None
        For a backward event, the thread of its forward op.
    forward_event : FunctionEvent or None
        For a backward event, the op that created its node (None for ``AccumulateGrad``
        and nodes created before the profile).
    cpu_parent, cpu_children :
        The innermost enclosing event on the same thread, and the events directly inside.
    cpu_memory_usage, self_cpu_memory_usage : int
        Bytes allocated minus bytes freed during the event, with and without its children
        (``profile_memory=True``; see the README on what is counted).
    """

    # constant for the events gradstack records: class attributes, so that building an
    # event sets only what varies (an instance may still override them)
    count = 1
    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    device_type = "cpu"
    device_index = 0
    overload_name = ""
    flops = 0
    _self_cpu_time_total = None

    def __init__(
        self,
        id,
        name,
        thread,
        start_us,
        end_us,
        *,
        input_shapes=None,
        stack=None,
        scope=SCOPE_FUNCTION,
        sequence_nr=-1,
        fwd_thread=None,
        forward_event=None,
        cpu_memory_usage=0,
        self_cpu_memory_usage=None,
        is_user_annotation=False,
        trace_name=None,
        node_id=-1,
        use_device=None,
        args=None,
    ):
        self.id = id
        self.name = name
        self.trace_name = name if trace_name is None else trace_name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = [] if input_shapes is None else input_shapes
        self.stack = [] if stack is None else stack
        self.scope = scope
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.forward_event = forward_event
        self.cpu_children = []
        self.cpu_parent = None
        self.cpu_memory_usage = cpu_memory_usage
        self.self_cpu_memory_usage = (
            cpu_memory_usage if self_cpu_memory_usage is None else self_cpu_memory_usage
        )
        self.is_user_annotation = is_user_annotation
        self.kernels = []
        if node_id != -1:
            self.node_id = node_id
        self.use_device = use_device
        self.args = args

    @property
    def key(self):
        """What ``key_averages`` groups by: the name."""
        return self.name

    @property
    def cpu_time_total(self):
        """From the event's start to its end, children included (us)."""
        return self.time_range.end - self.time_range.start

    @property
    def self_cpu_time_total(self):
        """Total time minus the children's total times (us): Note [Self vs total]."""
        if self._self_cpu_time_total is None:
            return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)
        return self._self_cpu_time_total

    @property
    def self_device_time_total(self):
        """The duration of the device kernels this event launched itself (us)."""
        return sum(k.duration for k in self.kernels)

    @property
    def device_time_total(self):
        """Device time of this event's kernels and of its children's (us)."""
        return self.self_device_time_total + sum(c.device_time_total for c in self.cpu_children)

    def append_kernel(self, name, device, duration):
        """Attach a device kernel launched by this event (``load_nvprof``)."""
        self.kernels.append(Kernel(name, device, duration))

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
            f"cpu_time={self.cpu_time_str} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_children={[c.id for c in self.cpu_children]} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
            f"seq_nr={self.sequence_nr}>"
        )


class FunctionEventAvg(_TimesMixin):
    """Events aggregated under one key: sums of times and memory, and the call count.

    ``cpu_time`` and ``self_cpu_time`` are averages per call; the ``*_total`` fields and
    the memory fields are sums.
    """

    __slots__ = (
        "key",
        "count",
        "cpu_time_total",
        "self_cpu_time_total",
        "device_time_total",
        "self_device_time_total",
        "cpu_memory_usage",
        "self_cpu_memory_usage",
        "input_shapes",
        "stack",
        "scope",
        "is_user_annotation",
        "node_id",
        "is_async",
        "is_remote",
        "is_legacy",
        "device_type",
        "use_device",
        "overload_name",
        "flops",
        "cpu_parent",
        "cpu_children",
    )

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = []
        self.stack = []
        self.scope = None
        self.is_user_annotation = False
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.device_type = "cpu"
        self.use_device = None
        self.overload_name = ""
        self.flops = 0
        self.cpu_parent = None
        self.cpu_children = None

    def add(self, other):
        """Add an event (or another aggregate) into this one; ``other`` is not changed."""
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError(
                f"can only add FunctionEvent or FunctionEventAvg, not {type(other).__name__}"
            )
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.is_user_annotation = other.is_user_annotation
            self.node_id = other.node_id
            self.use_device = other.use_device
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        elif other.key != self.key:
            raise ValueError(f"cannot add an event of key {other.key!r} into {self.key!r}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops or 0
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} count={self.count} "
            f"self_cpu_time={self.self_cpu_time_total_str} cpu_time={self.cpu_time_str} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>"
        )


def _group_key(evt, group_by_input_shapes, group_by_stack_n):
    key = [evt.key, evt.node_id, evt.is_user_annotation]
    if group_by_input_shapes:
        key.append(repr(evt.input_shapes))
    if group_by_stack_n > 0:
        key.extend(evt.stack[:group_by_stack_n])
    return tuple(key)


class EventList(list):
    """A list of events (``FunctionEvent`` or ``FunctionEventAvg``) with torch's helpers.

    ``str(events)`` is ``events.table()``.
    """

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    def _like(self, items):
        return EventList(
            items,
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times (us): the profiled time, counted once."""
        return sum(e.self_cpu_time_total for e in self)

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
        """The events as a text table with torch's columns, and a footer explaining them.

        Parameters
        ----------
        sort_by : str, optional
            An attribute to sort by, largest first: ``self_cpu_time_total``,
            ``cpu_time_total``, ``cpu_time``, ``self_cpu_time``, ``count``,
            ``cpu_memory_usage``, ``self_cpu_memory_usage`` (torch's ``cuda_*`` keys are
            accepted and are zero).  By default rows keep their order.
        row_limit : int
            At most this many rows (-1: all).
        max_name_column_width, max_shapes_column_width, max_src_column_width : int
            Column widths; longer names end in ``...``.
        header : str, optional
            A line printed above the table.
        top_level_events_only : bool
            Only events without a parent.
        time_unit : {"s", "ms", "us"}, optional
            One unit for every time; by default each value picks its own, as torch does.
        """
        return build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def key_averages(
        self,
        group_by_input_shapes=False,
        group_by_stack_n=0,
        group_by_overload_name=False,
        *,
        group_by_input_shape=None,
    ):
        """One ``FunctionEventAvg`` per key, in order of first appearance.

        Parameters
        ----------
        group_by_input_shapes : bool
            Key by (name, input shapes) instead of name (needs ``record_shapes=True``).
            ``group_by_input_shape`` is accepted as a synonym (``profile``'s spelling).
        group_by_stack_n : int
            Also key by the innermost ``n`` stack frames (needs ``with_stack=True``).

        The events are not modified: Note [Aggregation is pure].
        """
        if group_by_input_shape is not None:
            group_by_input_shapes = group_by_input_shape
        stats: dict[tuple, FunctionEventAvg] = {}
        for evt in self:
            key = _group_key(evt, group_by_input_shapes, group_by_stack_n)
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(evt)
        for avg in stats.values():  # copies: a row never shares a list with an event
            avg.stack = list(avg.stack[:group_by_stack_n])
            avg.input_shapes = [list(s) for s in avg.input_shapes] if group_by_input_shapes else []
        return self._like(stats.values())

    def total_average(self):
        """All events added into one ``FunctionEventAvg`` whose key is ``"Total"``."""
        total = FunctionEventAvg()
        for evt in self:
            total.cpu_time_total += evt.cpu_time_total
            total.self_cpu_time_total += evt.self_cpu_time_total
            total.device_time_total += evt.device_time_total
            total.self_device_time_total += evt.self_device_time_total
            total.cpu_memory_usage += evt.cpu_memory_usage
            total.self_cpu_memory_usage += evt.self_cpu_memory_usage
            total.count += evt.count
        total.key = "Total"
        total.use_device = self._use_device
        return total

    # -- export ------------------------------------------------------------------------

    def chrome_trace_events(self):
        """The events as Trace Event Format dicts (complete events, ``"ph": "X"``)."""
        pid = os.getpid()
        out = []
        for evt in self:
            if not isinstance(evt, FunctionEvent):
                raise TypeError(
                    "only FunctionEvents have a time line; export the profile's "
                    "events(), not key_averages()"
                )
            args = {"Event id": evt.id}
            if evt.sequence_nr >= 0:
                args["Sequence number"] = evt.sequence_nr
            if evt.fwd_thread is not None:
                args["Fwd thread id"] = evt.fwd_thread
            if evt.forward_event is not None:
                args["Forward event id"] = evt.forward_event.id
                args["Forward op"] = evt.forward_event.name
            if evt.input_shapes:
                args["Input Dims"] = [list(s) for s in evt.input_shapes]
            if evt.stack:
                args["Call stack"] = ";".join(evt.stack)
            if self._profile_memory:
                args["CPU Mem"] = evt.cpu_memory_usage
                args["Self CPU Mem"] = evt.self_cpu_memory_usage
            if evt.args is not None:
                args["Args"] = str(evt.args)
            if evt.kernels:
                args["Kernels"] = [
                    {"name": str(k.name), "device": k.device, "dur": k.duration}
                    for k in evt.kernels
                ]
            out.append(
                {
                    "name": evt.trace_name,
                    "cat": "memory"
                    if evt.name == "[memory]"
                    else _CATEGORIES.get(evt.scope, "cpu_op"),
                    "ph": "X",
                    "ts": round(evt.time_range.start, 3),
                    "dur": round(evt.time_range.elapsed_us(), 3),
                    "pid": pid,
                    "tid": evt.thread,
                    "args": args,
                }
            )
        return out

    def export_chrome_trace(self, path):
        """Write the events to ``path`` as a Chrome trace (JSON, Trace Event Format).

        Load it in https://ui.perfetto.dev or ``chrome://tracing``.  Every event is a
        complete event (``"ph": "X"``) with ``name``, ``cat``, ``ts`` and ``dur`` (us),
        ``pid``, ``tid`` (the event's thread number) and ``args`` (sequence number and
        forward op of backward events, input dims, call stack, memory when recorded).
        """
        trace = {"traceEvents": self.chrome_trace_events(), "displayTimeUnit": "ms"}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(trace, f)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write ``"frame;frame;... value"`` lines (flame graph input) for events with stacks.

        ``metric`` is ``self_cpu_time_total`` (us, rounded down) or a ``cuda``/``device``
        time (zero here).
        """
        allowed = ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total")
        if metric not in allowed:
            raise ValueError(f"metric must be one of {allowed}, not {metric!r}")
        table = str.maketrans(" ;\t\n", "____")
        with open(path, "w", encoding="utf-8") as f:
            for evt in self:
                value = int(getattr(evt, metric))
                if evt.stack and value > 0:
                    frames = ";".join(e.translate(table) for e in reversed(evt.stack))
                    f.write(f"{frames};{evt.name.translate(table)} {value}\n")


_CATEGORIES = {
    SCOPE_FUNCTION: "cpu_op",
    SCOPE_BACKWARD_FUNCTION: "backward",
    SCOPE_USER: "user_annotation",
}
