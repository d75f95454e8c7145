"""export_chrome_trace: Trace Event Format JSON that Perfetto and chrome://tracing load."""

from __future__ import annotations

import json

import gradstack_tensor as gt
import pytest
from gradstack_profiler import profile, record_function

REQUIRED = {
    "name": str,
    "ph": str,
    "ts": (int, float),
    "dur": (int, float),
    "pid": int,
    "tid": int,
    "args": dict,
}


def test_trace_is_valid_json_with_complete_events(tmp_path, tutorial_tensors):
    x, y, z = tutorial_tensors
    with profile(record_shapes=True, with_stack=True, profile_memory=True) as prof:
        with record_function('label "quoted" \\ name'):
            for _ in range(20):
                z = (z / x) * y
        z.sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert len(events) == len(prof.events())
    for evt in events:
        for field, kind in REQUIRED.items():
            assert isinstance(evt[field], kind), (field, evt)
        assert evt["ph"] == "X"
        assert evt["dur"] >= 0 and evt["ts"] >= 0
    names = [e["name"] for e in events]
    assert names.count("aten::mul") >= 20 and names.count("MulBackward0") == 20
    assert 'label "quoted" \\ name' in names
    cats = {e["name"]: e["cat"] for e in events}
    assert cats["aten::div"] == "cpu_op" and cats["DivBackward0"] == "backward"
    assert cats['label "quoted" \\ name'] == "user_annotation"
    # the backward event names its forward op
    backward = next(e for e in events if e["name"] == "DivBackward0")
    forward_id = backward["args"]["Forward event id"]
    forward = next(e for e in events if e["args"]["Event id"] == forward_id)
    assert forward["name"] == "aten::div"
    assert forward["args"]["Sequence number"] == backward["args"]["Sequence number"]
    assert forward["args"]["Input Dims"] == [[2, 3], [2, 3]]
    assert "test_trace.py" in forward["args"]["Call stack"]


def test_children_lie_inside_parents_on_the_timeline(tmp_path):
    with profile() as prof:
        with record_function("outer"):
            gt.ones(3) * 2
    path = tmp_path / "t.json"
    prof.export_chrome_trace(path)
    outer, mul = json.loads(path.read_text())["traceEvents"]
    assert outer["tid"] == mul["tid"]
    assert outer["ts"] <= mul["ts"]
    assert mul["ts"] + mul["dur"] <= outer["ts"] + outer["dur"] + 1e-3


def test_aggregates_have_no_timeline(tmp_path):
    with profile() as prof:
        gt.ones(3) * 2
    with pytest.raises(TypeError, match="events"):
        prof.key_averages().export_chrome_trace(str(tmp_path / "x.json"))


def test_export_stacks(tmp_path):
    a = gt.ones(100_000)  # each op takes well over 1 us

    def hot():
        for _ in range(30):
            a * 2

    with profile(with_stack=True) as prof:
        hot()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines
    for line in lines:
        frames, value = line.rsplit(" ", 1)
        assert int(value) > 0
        assert frames.endswith("aten::mul")
        assert "hot" in frames
    with pytest.raises(ValueError, match="metric"):
        prof.export_stacks(str(path), "bogus")
