"""The event naming scheme and the table's formatting."""

from __future__ import annotations

import ast
from pathlib import Path

import gradstack_profiler
import gradstack_tensor as gt
import pytest
from gradstack_profiler import event_name, profile, record_function
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
    named = {name: op.aten for name, op in OPS.items() if op.aten}
    assert len(named) > 200
    for name, aten in named.items():
        assert hasattr(torch.ops.aten, aten), f"{name}: aten::{aten} is not a torch op"
        assert event_name(name) == f"aten::{aten}"


def test_every_tensor_core_op_with_an_aten_twin_is_named_so():
    """A new tensor-core op that torch also has says so in its op-table row (``aten``)."""
    torch = pytest.importorskip("torch")
    missing = sorted(
        name
        for name in OPS
        if event_name(name).startswith("gradstack::") and hasattr(torch.ops.aten, name)
    )
    assert not missing, f"these ops have an aten twin; name it in their op-table rows: {missing}"


def _op_lists(path, ops):
    """The lists of op names a module's code holds: a container literal, or a string
    (docstrings left out) with three or more op names in it (``ATEN_OPS`` was a split
    string)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            names = [i.value for i in items if isinstance(i, ast.Constant) and i.value in ops]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [] if id(node) in docstrings else [w for w in node.value.split() if w in ops]
        else:
            continue
        if len(names) >= 3:
            found.append(names)
    return found


def test_the_profiler_keeps_no_list_of_ops():
    """The names come from tensor-core's op table (``Op.aten``): the profiler lists no ops,
    so a new op needs no line here (issue 32)."""
    src = Path(gradstack_profiler.__file__).parent
    for path in sorted(src.glob("*.py")):
        assert not _op_lists(path, set(OPS)), f"{path.name} lists ops"


def test_the_list_check_sees_a_list_of_ops(tmp_path):
    listed = tmp_path / "listed.py"
    listed.write_text(
        'ATEN = frozenset("""\nabs add mul\n""".split())\n'
        'RENAMED = {"sum": 1, "t": 2, "view": 3}\n'
        'KEYS = ["cat", "stack"]\n'
    )
    found = sorted(_op_lists(listed, set(OPS)))
    assert found == [["abs", "add", "mul"], ["sum", "t", "view"]]


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
