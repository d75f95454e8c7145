"""The tutorial's "Autograd Profiler" cell, as written, and the numbers it must give."""

from __future__ import annotations

import re
import warnings

import gradstack_tensor as gt
import pytest
from gradstack_profiler import profiler


def run_cell(x, y, z, run_on_gpu=False):
    # the tutorial's code, with `torch.autograd.profiler` -> `profiler`
    with profiler.profile(use_cuda=run_on_gpu) as prf:
        for _ in range(1000):
            z = (z / x) * y
    table = prf.key_averages().table(sort_by="self_cpu_time_total")
    return prf, table, z


def test_tutorial_cell_counts(tutorial_tensors):
    prf, table, _ = run_cell(*tutorial_tensors)
    rows = {row.key: row for row in prf.key_averages()}
    assert set(rows) == {"aten::div", "aten::mul"}
    assert rows["aten::div"].count == 1000
    assert rows["aten::mul"].count == 1000
    events = prf.events()
    assert len(events) == 2000
    # start order: div, mul, div, mul ...
    assert [e.name for e in events[:4]] == ["aten::div", "aten::mul"] * 2


def test_tutorial_table_shape(tutorial_tensors):
    prf, table, _ = run_cell(*tutorial_tensors)
    lines = table.splitlines()
    header = lines[1]
    for column in (
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ):
        assert column in header
    body = [line for line in lines[3:5]]
    assert {line.split()[0] for line in body} == {"aten::div", "aten::mul"}
    for line in body:
        assert line.split()[-1] == "1000"
        assert re.search(r"\d+\.\d\d%", line)
        assert re.search(r"\d+\.\d{3}(us|ms|s)\b", line)
    # sorted by self CPU time, largest first
    by_key = {r.key: r.self_cpu_time_total for r in prf.key_averages()}
    assert by_key[body[0].split()[0]] >= by_key[body[1].split()[0]]
    assert re.search(r"^Self CPU time total: \d+\.\d{3}(us|ms|s)$", table, re.M)
    assert "Self CPU: time in the event's own code" in table
    assert "CPU total: from the event's start to its end" in table


def test_self_never_exceeds_total(tutorial_tensors):
    prf, _, z = run_cell(*tutorial_tensors)
    for row in prf.key_averages():
        assert 0 <= row.self_cpu_time_total <= row.cpu_time_total
        assert row.self_cpu_time == pytest.approx(row.self_cpu_time_total / row.count)
        assert row.cpu_time == pytest.approx(row.cpu_time_total / row.count)
    for evt in prf.events():
        assert 0 <= evt.self_cpu_time_total <= evt.cpu_time_total


def test_percentages_add_up(tutorial_tensors):
    prf, table, _ = run_cell(*tutorial_tensors)
    shares = [float(m) for m in re.findall(r"(\d+\.\d\d)%", table)[::2]]  # Self CPU %
    assert sum(shares) == pytest.approx(100.0, abs=0.05)
    assert prf.self_cpu_time_total == pytest.approx(
        sum(r.self_cpu_time_total for r in prf.key_averages())
    )


def test_str_is_table(tutorial_tensors):
    prf, _, _ = run_cell(*tutorial_tensors)
    assert str(prf) == prf.table()
    assert prf.table() == prf.key_averages().table()
    events = prf.events()
    assert str(events) == events.table()


def test_use_cuda_warns_and_profiles_the_cpu(tutorial_tensors):
    with pytest.warns(UserWarning, match="CPU only"):
        prf, table, _ = run_cell(*tutorial_tensors, run_on_gpu=True)
    assert {r.key: r.count for r in prf.key_averages()} == {"aten::div": 1000, "aten::mul": 1000}
    with pytest.warns(UserWarning, match="CPU only"):
        profiler.profile(use_device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profiler.profile(use_cuda=False)
        profiler.profile(use_device="cpu")


def test_result_values_unchanged_by_profiling(tutorial_tensors):
    x, y, z = tutorial_tensors
    _, _, profiled = run_cell(x, y, z)
    plain = z
    for _ in range(1000):
        plain = (plain / x) * y
    assert gt.equal(profiled.detach(), plain.detach())
    assert profiled.grad_fn.name() == "MulBackward0"
