"""Turn a finished session's raw records into ``FunctionEvent`` objects (Note [Raw records])."""

from __future__ import annotations

from ._names import event_name
from ._recorder import END, FREE, NODE, OP, USER
from .events import (
    SCOPE_BACKWARD_FUNCTION,
    SCOPE_FUNCTION,
    SCOPE_USER,
    FunctionEvent,
)

__all__ = ["build_events", "MEMORY_EVENT_NAME"]

MEMORY_EVENT_NAME = "[memory]"

# AccumulateGrad nodes carry the largest sequence number (the engine runs them first):
# they belong to no forward op
_NO_FORWARD_SEQ = 1 << 62


def _format_stack(raw) -> list[str]:
    return [f"{filename}({line}): {func}" for filename, line, func in raw]


def build_events(session, use_device=None, t0=None, threads=None) -> list[FunctionEvent]:
    """The events of ``session``, in start order, with parents, children, links, memory.

    Deterministic: it reads only the records made before the session stopped, and an
    event still open at the stop (a ``record_function`` exited after the profile) ends
    at the stop.  Times count from ``t0`` (ns; default: the session's start); ``threads``
    maps Python thread idents to the small numbers events show (shared across sessions
    of one ``profile(acc_events=True)``).
    """
    records = session.records[: session.n_records]
    if t0 is None:
        t0 = session.start_ns
    stop_us = (session.stop_ns - t0) / 1000.0
    if threads is None:
        threads = {}  # Python thread ident -> 1, 2, ... in order seen
    open_: dict[int, list] = {}  # thread -> open events, innermost last
    events: list[FunctionEvent] = []
    own_alloc: dict[int, int] = {}  # event id -> bytes it allocated itself
    own_freed: dict[int, int] = {}  # event id -> bytes freed directly inside it
    created: dict[int, FunctionEvent] = {}  # node sequence nr -> the op that created it
    baseline = session.seq_baseline

    def thread_of(ident):
        n = threads.get(ident)
        if n is None:
            n = threads[ident] = len(threads) + 1
        return n

    for rec in records:
        tag = rec[0]
        if tag == END:
            stack = open_.get(rec[2])
            if not stack:
                continue
            evt = stack.pop()
            evt.time_range.end = (rec[1] - t0) / 1000.0
            seq = rec[3]
            if seq > baseline and evt.scope == SCOPE_FUNCTION and seq not in created:
                created[seq] = evt
                evt.sequence_nr = seq
            if rec[4]:
                own_alloc[evt.id] = own_alloc.get(evt.id, 0) + rec[4]
        elif tag == FREE:
            stack = open_.get(rec[2])
            if stack:
                evt = stack[-1]
                own_freed[evt.id] = own_freed.get(evt.id, 0) + rec[3]
            else:
                ts = (rec[1] - t0) / 1000.0
                evt = FunctionEvent(
                    len(events), MEMORY_EVENT_NAME, thread_of(rec[2]), ts, ts, use_device=use_device
                )
                own_freed[evt.id] = rec[3]
                events.append(evt)
        else:
            ident = rec[3]
            start = (rec[2] - t0) / 1000.0
            if tag == OP:
                shapes = None if rec[4] is None else [list(s) for s in rec[4]]
                stack = None if rec[5] is None else _format_stack(rec[5])
                evt = FunctionEvent(
                    len(events),
                    event_name(rec[1]),
                    thread_of(ident),
                    start,
                    None,
                    input_shapes=shapes,
                    stack=stack,
                    use_device=use_device,
                )
            elif tag == NODE:
                seq = rec[4]
                evt = FunctionEvent(
                    len(events),
                    rec[1],
                    thread_of(ident),
                    start,
                    None,
                    scope=SCOPE_BACKWARD_FUNCTION,
                    sequence_nr=seq if 0 <= seq < _NO_FORWARD_SEQ else -1,
                    use_device=use_device,
                )
            elif tag == USER:
                stack = None if rec[4] is None else _format_stack(rec[4])
                # Note [Profiler steps are one key]: torch names the blocks of
                # torch.profiler's steps "ProfilerStep*" (their trace keeps the number),
                # so that key_averages adds the steps up into one row
                name = rec[1]
                step = name.startswith("ProfilerStep#")
                evt = FunctionEvent(
                    len(events),
                    "ProfilerStep*" if step else name,
                    thread_of(ident),
                    start,
                    None,
                    stack=stack,
                    scope=SCOPE_USER,
                    is_user_annotation=True,
                    use_device=use_device,
                    args=rec[5],
                    trace_name=name if step else None,
                )
            else:  # pragma: no cover - a record kind this version does not know
                continue
            stack = open_.setdefault(ident, [])
            if stack:
                parent = stack[-1]
                evt.cpu_parent = parent
                parent.cpu_children.append(evt)
            stack.append(evt)
            events.append(evt)

    for evt in events:  # still open when the profile stopped
        if evt.time_range.end is None:
            evt.time_range.end = max(stop_us, evt.time_range.start)

    # backward events -> the forward op that created their node; the backward pass
    # shows the forward call site (torch does the same)
    for evt in events:
        if evt.scope == SCOPE_BACKWARD_FUNCTION and evt.sequence_nr >= 0:
            fwd = created.get(evt.sequence_nr)
            if fwd is not None:
                evt.forward_event = fwd
                evt.fwd_thread = fwd.thread
                evt.stack = fwd.stack
    for evt in events:
        if evt.scope != SCOPE_BACKWARD_FUNCTION and evt.stack:
            node = evt.cpu_parent
            while node is not None and node.scope != SCOPE_BACKWARD_FUNCTION:
                node = node.cpu_parent
            if node is not None:
                evt.stack = node.stack

    # self times and memory, children before parents (they start later)
    for evt in reversed(events):
        children = evt.cpu_children
        evt._self_cpu_time_total = evt.cpu_time_total - sum(c.cpu_time_total for c in children)
        own = own_alloc.get(evt.id, 0) - own_freed.get(evt.id, 0)
        evt.self_cpu_memory_usage = own
        evt.cpu_memory_usage = own + sum(c.cpu_memory_usage for c in children)
    return events
