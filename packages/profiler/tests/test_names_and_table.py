"""The event naming scheme and the table's formatting."""

from __future__ import annotations

import gradstack_tensor as gt
import pytest
from gradstack_profiler import event_name, profile, record_function
from gradstack_profiler._names import ATEN_OPS, RENAMED
from gradstack_profiler._table import format_memory, format_time, format_time_share
from gradstack_tensor import OPS


def test_naming_scheme():
    assert event_name("mul") == "aten::mul"
    assert event_name("add_") == "aten::add_"
    assert event_name("to_dtype") == "aten::to"
    assert event_name("getitem") == "gradstack::getitem"
    assert event_name("an_extension_op") == "gradstack::an_extension_op"


def test_aten_names_exist_in_torch():
    torch = pytest.importorskip("torch")
    for name in ATEN_OPS:
        assert hasattr(torch.ops.aten, name), f"aten::{name} is not a torch op"
    for aten in RENAMED.values():
        assert hasattr(torch.ops.aten, aten.split("::")[1]), aten


def test_every_tensor_core_op_with_an_aten_twin_is_named_so():
    """A new tensor-core op that torch also has belongs in _names.ATEN_OPS."""
    torch = pytest.importorskip("torch")
    missing = sorted(
        name
        for name in OPS
        if event_name(name).startswith("gradstack::") and hasattr(torch.ops.aten, name)
    )
    assert not missing, f"add these ops to gradstack_profiler/_names.py ATEN_OPS: {missing}"


def test_profile_names_match_torch_for_the_same_program():
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler as tprof

    def program(lib, t):
        u = (t * 2 + 1).exp()
        return (u / t).sum() - u.mean()

    mine, yours = gt.ones(2, 3), torch.ones(2, 3)  # creation is not an op here
    with profile() as ours:
        program(gt, mine)
    with tprof.profile() as theirs:
        program(torch, yours)
    top_level = [e.name for e in theirs.function_events if e.cpu_parent is None]
    assert [e.name for e in ours.events()] == top_level


@pytest.mark.parametrize(
    "us,text",
    [
        (0.0, "0.000us"),
        (12.3456, "12.346us"),
        (999.9994, "999.999us"),
        (1000.0, "1.000ms"),
        (2_500_000.0, "2.500s"),
    ],
)
def test_time_format(us, text):
    assert format_time(us) == text


def test_formats_match_torch():
    pytest.importorskip("torch")
    from torch.autograd import profiler_util as pu

    for us in (0.0, 0.5, 12.3456, 999.9, 1234.5, 3_600_000.0):
        assert format_time(us) == pu._format_time(us)
    for n in (0, 17, 1023, 1024, 1536, -2048, 5 * 1024**2, 3 * 1024**3):
        assert format_memory(n) == pu._format_memory(n)
    assert format_time_share(1.0, 3.0) == pu._format_time_share(1.0, 3.0)


def test_table_options():
    a = gt.ones(1000)
    with profile() as prof:
        with record_function("a_rather_long_label_" + "x" * 60):
            for _ in range(3):
                a * 2
            a.sum()
    rows = prof.key_averages()
    full = rows.table()
    assert full.count("\n") > rows.table(row_limit=1).count("\n")
    one = rows.table(row_limit=1, sort_by="count")
    assert "aten::mul" in one and "aten::sum" not in one
    assert "a_rather_long_label_" + "x" * 32 + "..." in full
    assert "x" * 60 not in full
    wide = rows.table(max_name_column_width=100)
    assert "x" * 60 in wide
    assert rows.table(time_unit="ms").count("ms") >= 3 * 3
    with pytest.raises(ValueError, match="time_unit"):
        rows.table(time_unit="h")
    with pytest.raises(ValueError, match="valid keys: self_cpu_time_total"):
        rows.table(sort_by="self_cpu")
    top = prof.events().table(top_level_events_only=True)
    assert "aten::mul" not in top and "a_rather_long_label" in top
    assert rows.table(header="HEADER").splitlines()[1] == "HEADER"
    # torch's cuda sort keys are accepted (all zero here: the order is kept)
    assert rows.table(sort_by="cuda_time_total") == rows.table()


@pytest.mark.parametrize("key", ["cpu_time_total", "self_cpu_time_total", "cpu_time", "count"])
def test_sorting_orders_rows(key):
    a = gt.ones(100)
    with profile() as prof:
        for _ in range(5):
            a + 1
        a.exp()
        a.sum()
        a * 2
        a * 2
    rows = prof.key_averages()
    table = rows.table(sort_by=key)
    printed = [line.split()[0] for line in table.splitlines()[3 : 3 + len(rows)]]
    expected = [r.key for r in sorted(rows, key=lambda r: getattr(r, key), reverse=True)]
    assert printed == expected
    assert [r.key for r in rows] == ["aten::add", "aten::exp", "aten::sum", "aten::mul"]
