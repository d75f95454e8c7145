"""load_nvprof on a small SQLite file with the tables nvprof writes (Note [The nvprof schema])."""

from __future__ import annotations

import sqlite3

import pytest
from gradstack_profiler import load_nvprof, parse_nvprof_trace
from gradstack_profiler.profiler import load_nvprof as load_from_torch_path

MARKER_START, MARKER_END = 2, 4  # CUPTI_ACTIVITY_FLAG_MARKER_START / _END
THREAD = 2  # CUPTI_ACTIVITY_OBJECT_THREAD
CUDA_LAUNCH_KERNEL = 211


def thread_blob(pid, tid):
    return pid.to_bytes(4, "little") + tid.to_bytes(4, "little") + bytes(4)


def make_trace(path, kernel_table="CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"):
    """Two threads; on thread 7: a mul range holding one kernel launch, a backward range
    with a nested add range holding two launches; on thread 9: one range, no kernels."""
    conn = sqlite3.connect(path)
    conn.executescript(f"""
        CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT,
            timestamp INT, id INT, objectKind INT, objectId BLOB, name INT, domain INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER PRIMARY KEY, cbid INT,
            start INT, end INT, processId INT, threadId INT, correlationId INT,
            returnValue INT);
        CREATE TABLE {kernel_table} (_id_ INTEGER PRIMARY KEY, start INT, end INT,
            deviceId INT, contextId INT, streamId INT, correlationId INT, name INT);
    """)
    strings = {
        1: "aten::mul, seq = 12, sizes = [[2, 3], [2, 3]]",
        2: "MulBackward0, stashed seq = 12",
        3: "aten::add, seq = 13",
        4: "my range",
        5: "void mul_kernel<float>(float*, int)",
        6: "void add_kernel<float>(float*, int)",
    }
    conn.executemany("INSERT INTO StringTable VALUES (?, ?)", strings.items())
    t = 1_000_000_000  # nanoseconds
    markers = [  # (flags, timestamp, id, thread, name)
        (MARKER_START, t + 0, 1, 7, 1),
        (MARKER_END, t + 10_000, 1, 7, 0),
        (MARKER_START, t + 20_000, 2, 7, 2),
        (MARKER_START, t + 21_000, 3, 7, 3),
        (MARKER_END, t + 29_000, 3, 7, 0),
        (MARKER_END, t + 30_000, 2, 7, 0),
        (MARKER_START, t + 5_000, 4, 9, 4),
        (MARKER_END, t + 6_000, 4, 9, 0),
    ]
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, objectKind, objectId, "
        "name, domain) VALUES (?, ?, ?, ?, ?, ?, 0)",
        [(f, ts, i, THREAD, thread_blob(100, tid), n) for f, ts, i, tid, n in markers],
    )
    runtime = [
        (CUDA_LAUNCH_KERNEL, t + 2_000, t + 3_000, 50),
        (CUDA_LAUNCH_KERNEL, t + 22_000, t + 23_000, 51),
        (CUDA_LAUNCH_KERNEL, t + 24_000, t + 25_000, 52),
        (CUDA_LAUNCH_KERNEL, t + 40_000, t + 41_000, 53),
    ]  # outside every range
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, processId, threadId, "
        "correlationId, returnValue) VALUES (?, ?, ?, 100, 7, ?, 0)",
        runtime,
    )
    kernels = [
        (t + 4_000, t + 9_000, 50, 5),
        (t + 24_000, t + 26_000, 51, 6),
        (t + 26_000, t + 27_500, 52, 6),
        (t + 42_000, t + 43_000, 53, 5),
    ]
    conn.executemany(
        f"INSERT INTO {kernel_table} (start, end, deviceId, contextId, streamId, "
        "correlationId, name) VALUES (?, ?, 0, 1, 7, ?, ?)",
        kernels,
    )
    conn.commit()
    conn.close()


def test_load_nvprof_reads_ranges_and_kernels(tmp_path):
    path = tmp_path / "trace.prof"
    make_trace(path)
    events = load_nvprof(str(path))
    assert [e.name for e in events] == ["aten::mul", "my range", "MulBackward0", "aten::add"]
    mul, rng, backward, add = events
    # times: microseconds since the first range
    assert (mul.time_range.start, mul.time_range.end) == (0.0, 10.0)
    assert (backward.time_range.start, backward.time_range.end) == (20.0, 30.0)
    assert (mul.thread, rng.thread, add.thread) == (7, 9, 7)
    # the messages emit_nvtx writes are split back into name, seq and sizes
    assert mul.sequence_nr == 12 and mul.input_shapes == [[2, 3], [2, 3]] and mul.scope == 0
    assert backward.sequence_nr == 12 and backward.scope == 1
    assert add.sequence_nr == 13 and add.input_shapes == []
    assert rng.sequence_nr == -1 and mul.trace_name.startswith("aten::mul, seq = 12")
    # nesting on thread 7
    assert add.cpu_parent is backward and backward.cpu_children == [add]
    assert mul.cpu_parent is None and rng.cpu_parent is None
    assert backward.self_cpu_time_total == pytest.approx(10.0 - 8.0)
    # kernels: launched inside the range, durations in us
    assert [(k.name, k.duration) for k in mul.kernels] == [
        ("void mul_kernel<float>(float*, int)", 5.0)
    ]
    assert [k.duration for k in add.kernels] == [2.0, 1.5]
    assert backward.kernels == [] and rng.kernels == []
    assert add.device_time_total == 3.5 and backward.device_time_total == 3.5
    assert backward.self_device_time_total == 0
    assert events.self_cpu_time_total == pytest.approx(10 + 1 + 2 + 8)


def test_table_of_an_nvprof_trace_has_device_columns(tmp_path):
    path = tmp_path / "trace.prof"
    make_trace(path)
    events = load_from_torch_path(path)
    table = events.key_averages().table(sort_by="self_cuda_time_total")
    for column in ("Self CUDA", "CUDA total", "CUDA time avg"):
        assert column in table
    assert "Self CUDA time total: 8.500us" in table
    assert table.splitlines()[3].split()[0] == "aten::mul"  # 5 us of kernels
    rows = {r.key: r for r in events.key_averages()}
    assert rows["aten::add"].cuda_time_total == 3.5


def test_the_plain_kernel_table_works_too(tmp_path):
    path = tmp_path / "trace.prof"
    make_trace(path, kernel_table="CUPTI_ACTIVITY_KIND_KERNEL")
    events = parse_nvprof_trace(path)
    assert sum(len(e.kernels) for e in events) == 3


def test_a_trace_without_kernels(tmp_path):
    path = tmp_path / "markers.prof"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT,
            timestamp INT, id INT, name INT);
        INSERT INTO StringTable VALUES (1, 'only');
        INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, name)
            VALUES (2, 5000, 1, 1), (4, 9000, 1, 0);
    """)
    conn.commit()
    conn.close()
    (evt,) = load_nvprof(path)
    assert evt.name == "only" and evt.cpu_time_total == 4.0 and evt.thread == 0


def test_bad_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no nvprof trace"):
        load_nvprof(tmp_path / "missing.prof")
    not_sqlite = tmp_path / "text.prof"
    not_sqlite.write_text("hello, this is not a database" * 10)
    with pytest.raises(ValueError, match="not an SQLite database"):
        load_nvprof(not_sqlite)
    empty = tmp_path / "empty.prof"
    sqlite3.connect(empty).execute("CREATE TABLE other (x INT)").connection.commit()
    with pytest.raises(ValueError, match="no table StringTable"):
        load_nvprof(empty)
