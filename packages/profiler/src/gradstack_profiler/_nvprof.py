"""``load_nvprof``: read the NVTX ranges and kernels of an nvprof SQLite export.

Note [The nvprof schema]
~~~~~~~~~~~~~~~~~~~~~~~~
``nvprof -o trace.prof`` writes an SQLite database; torch's ``parse_nvprof_trace`` reads
these tables, and so does this module:

- ``StringTable(_id_, value)``: every string, referenced by id from the other tables;
- ``CUPTI_ACTIVITY_KIND_MARKER(flags, timestamp, id, objectKind, objectId, name, domain)``:
  NVTX ranges as pairs of markers sharing ``id``: the start has ``name`` = the string id of
  the range's message, the end has ``name = 0``.  ``objectKind = 2`` (thread) means
  ``objectId`` packs ``(processId, threadId)`` as two little-endian uint32;
- ``CUPTI_ACTIVITY_KIND_RUNTIME(cbid, start, end, correlationId, ...)``: CUDA runtime
  calls (kernel launches among them);
- ``CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL`` / ``CUPTI_ACTIVITY_KIND_KERNEL``
  ``(start, end, deviceId, correlationId, name, ...)``: kernels, tied to the runtime call
  that launched them by ``correlationId``.

A kernel belongs to the innermost range (of the launching thread, when the runtime table
says which) around the runtime call that launched it; torch joins the same way but gives
the kernel to every enclosing range, counting its time several times.  Timestamps are
nanoseconds; events get microseconds since the first range began.  Range messages
written by :class:`emit_nvtx` (or torch's) are split back into name, ``seq``/``stashed
seq`` and ``sizes``; other messages are kept whole as the name.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from urllib.request import pathname2url

from .events import SCOPE_BACKWARD_FUNCTION, SCOPE_FUNCTION, EventList, FunctionEvent

__all__ = ["load_nvprof", "parse_nvprof_trace"]

_OBJECT_KIND_THREAD = 2

_MESSAGE = re.compile(
    r"^(?P<name>.*?)"
    r"(?:, seq = (?P<seq>-?\d+))?"
    r"(?:, stashed seq = (?P<stashed>\d+))?"
    r"(?:, op_id = \d+)?"
    r"(?:, sizes = (?P<sizes>\[.*\]))?"
    r"(?:, input_op_ids = .*)?$"
)


def load_nvprof(path):
    """Open an nvprof trace (SQLite) and return its NVTX ranges as an ``EventList``."""
    return EventList(parse_nvprof_trace(path), use_device="cuda")


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn, table) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _split_message(message: str):
    """(name, sequence_nr, is_backward, input_shapes) from an NVTX range message."""
    m = _MESSAGE.match(message)
    if m is None:  # pragma: no cover - the pattern matches any string
        return message, -1, False, None
    shapes = None
    if m.group("sizes") is not None:
        try:
            shapes = json.loads(m.group("sizes"))
        except ValueError:
            return message, -1, False, None
    if m.group("stashed") is not None:
        return m.group("name"), int(m.group("stashed")), True, shapes
    seq = int(m.group("seq")) if m.group("seq") is not None else -1
    return m.group("name"), seq, False, shapes


def _thread_of(kind, blob) -> int:
    if kind == _OBJECT_KIND_THREAD and isinstance(blob, (bytes, bytearray)) and len(blob) >= 8:
        return int.from_bytes(blob[4:8], "little")
    return 0


def parse_nvprof_trace(path) -> list[FunctionEvent]:
    """The events of an nvprof SQLite export, sorted by start (Note [The nvprof schema])."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no nvprof trace at {path!r}")
    conn = sqlite3.connect(f"file:{pathname2url(os.path.abspath(path))}?mode=ro", uri=True)
    try:
        try:
            tables = _tables(conn)
        except sqlite3.DatabaseError as e:
            raise ValueError(
                f"{path!r} is not an SQLite database (an nvprof export is): {e}"
            ) from None
        for needed in ("StringTable", "CUPTI_ACTIVITY_KIND_MARKER"):
            if needed not in tables:
                raise ValueError(f"{path!r} is not an nvprof export: it has no table {needed}")
        strings = dict(conn.execute("SELECT _id_, value FROM StringTable"))
        marker_cols = _columns(conn, "CUPTI_ACTIVITY_KIND_MARKER")
        thread_cols = (
            "start.objectKind, start.objectId"
            if {"objectKind", "objectId"} <= marker_cols
            else "NULL, NULL"
        )
        rows = conn.execute(f"""
            SELECT start.id, start.name, start.timestamp, end.timestamp, {thread_cols}
            FROM CUPTI_ACTIVITY_KIND_MARKER AS start
            INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
            WHERE start.name != 0 AND end.name = 0
            ORDER BY start.timestamp, end.timestamp DESC
        """).fetchall()
        seen = set()
        for r in rows:
            if r[0] in seen:
                raise ValueError(f"{path!r}: NVTX range id {r[0]} has more than one start")
            seen.add(r[0])
        t0 = rows[0][2] if rows else 0
        events = []
        by_marker = {}
        for marker_id, name_id, start_ns, end_ns, kind, blob in rows:
            message = strings.get(name_id, f"<string {name_id}>")
            name, seq, backward, shapes = _split_message(message)
            evt = FunctionEvent(
                marker_id,
                name,
                _thread_of(kind, blob),
                (start_ns - t0) / 1000.0,
                (end_ns - t0) / 1000.0,
                input_shapes=shapes,
                sequence_nr=seq,
                scope=SCOPE_BACKWARD_FUNCTION if backward else SCOPE_FUNCTION,
                trace_name=message,
                use_device="cuda",
            )
            events.append(evt)
            by_marker[marker_id] = evt

        kernel_tables = [
            t
            for t in ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL")
            if t in tables
        ]
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            runtime_thread = (
                "runtime.threadId"
                if "threadId" in _columns(conn, "CUPTI_ACTIVITY_KIND_RUNTIME")
                else "0"
            )
            # launch (table, runtime row) -> (range start, marker id, kernel): the innermost
            # range around a launch owns its kernel (torch gives it to every enclosing one)
            owners: dict[tuple, tuple] = {}
            for table in kernel_tables:
                device = "kernel.deviceId" if "deviceId" in _columns(conn, table) else "0"
                for (
                    marker_id,
                    mstart,
                    runtime_id,
                    rthread,
                    kname,
                    kstart,
                    kend,
                    dev,
                ) in conn.execute(f"""
                    SELECT start.id, start.timestamp, runtime._id_, {runtime_thread},
                           kernel.name, kernel.start, kernel.end, {device}
                    FROM CUPTI_ACTIVITY_KIND_MARKER AS start
                    INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
                    INNER JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS runtime
                        ON start.timestamp < runtime.start AND runtime.end < end.timestamp
                    INNER JOIN {table} AS kernel ON kernel.correlationId = runtime.correlationId
                    WHERE start.name != 0 AND end.name = 0
                """):
                    evt = by_marker.get(marker_id)
                    if evt is None or (rthread and evt.thread and rthread != evt.thread):
                        continue  # a range of another thread
                    key = (table, runtime_id)
                    if key not in owners or owners[key][0] < mstart:
                        owners[key] = (mstart, marker_id, kname, kstart, kend, dev)
            for _, marker_id, kname, kstart, kend, dev in sorted(
                owners.values(), key=lambda o: o[3]
            ):
                name = strings.get(kname, kname) if isinstance(kname, int) else kname
                by_marker[marker_id].append_kernel(name, dev, (kend - kstart) / 1000.0)
    finally:
        conn.close()

    _nest(events)
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    return events


def _nest(events) -> None:
    """Parents and children from the intervals, per thread (ranges nest on a thread)."""
    by_thread: dict[int, list] = {}
    for evt in events:
        by_thread.setdefault(evt.thread, []).append(evt)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        stack: list[FunctionEvent] = []
        for evt in thread_events:
            while stack and (
                evt.time_range.start >= stack[-1].time_range.end
                or evt.time_range.end > stack[-1].time_range.end
            ):
                stack.pop()
            if stack:
                evt.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(evt)
            stack.append(evt)
