"""``gradstack.profiler`` (torch.profiler's interface) against torch 2.13: the schedule's
actions step by step, when ``on_trace_ready`` runs and what each cycle holds
(``ProfilerStep*`` rows, ops, ``record_function`` blocks), ``acc_events``,
``tensorboard_trace_handler``'s files, ``export_chrome_trace``, ``key_averages().table``,
``record_shapes``/``profile_memory``/``with_stack``, warnings and errors.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import warnings

import gradstack
import pytest

torch = pytest.importorskip("torch")

_SCHEDULES = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=1),
    dict(wait=0, warmup=2, active=1, repeat=2),
    dict(wait=2, warmup=1, active=3, skip_first=3),
    dict(wait=3, warmup=1, active=1, skip_first_wait=1),
    dict(wait=1, warmup=0, active=1),
]


@pytest.mark.parametrize("kw", _SCHEDULES)
def test_schedule_actions_are_torch_s(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = gradstack.profiler.schedule(**kw), torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]


def _run(L, schedule_kw, steps=9, acc_events=False, with_block=True):
    L.manual_seed(0)
    model = L.nn.Linear(4, 3)
    opt = L.optim.SGD(model.parameters(), lr=0.1)
    calls = []

    def ready(p):
        rows = {e.key: e.count for e in p.key_averages()}
        calls.append(
            (
                p.step_num,
                rows.get("ProfilerStep*", 0),
                rows.get("aten::addmm", 0),
                rows.get("train_step", 0),
            )
        )

    kw = {}
    if schedule_kw is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw["schedule"] = L.profiler.schedule(**schedule_kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: "Profiler clears events ...")
        with L.profiler.profile(
            activities=[L.profiler.ProfilerActivity.CPU],
            on_trace_ready=ready,
            acc_events=acc_events,
            **kw,
        ) as prof:
            for _ in range(steps):
                with L.profiler.record_function("train_step"):
                    loss = model(L.ones(2, 4)).sum()
                    loss.backward()
                    opt.step()
                    opt.zero_grad()
                prof.step()
    return calls


@pytest.mark.parametrize("kw", [None, *_SCHEDULES])
def test_cycles_and_what_they_hold_are_torch_s(kw):
    assert _run(gradstack, kw) == _run(torch, kw)


def test_acc_events_keeps_the_earlier_cycles():
    kw = dict(wait=1, warmup=1, active=2, repeat=2)
    ours = _run(gradstack, kw, acc_events=True)
    assert ours == _run(torch, kw, acc_events=True)
    assert [c[1] for c in ours] == [2, 4]


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_writes_a_chrome_trace(tmp_path, use_gzip):
    handler = gradstack.profiler.tensorboard_trace_handler(
        str(tmp_path / "log"), worker_name="w0", use_gzip=use_gzip
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = gradstack.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
        with gradstack.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:
            for _ in range(9):
                a = gradstack.ones(3, 3, requires_grad=True)
                (a @ gradstack.ones(3, 3)).sum().backward()
                prof.step()
    files = sorted(glob.glob(str(tmp_path / "log" / "w0.*.pt.trace.json*")))
    assert len(files) == 2
    assert all(f.endswith(".gz") == use_gzip for f in files)
    opener = gzip.open if use_gzip else open
    with opener(files[0], "rt") as f:
        trace = json.load(f)
    names = [e["name"] for e in trace["traceEvents"]]
    assert "ProfilerStep#2" in names and "ProfilerStep#3" in names
    assert "aten::matmul" in names and "MmBackward0" in names
    assert all(
        e["ph"] == "X" and e["dur"] >= 0
        for e in trace["traceEvents"]
        if e["name"].startswith("ProfilerStep")
    )


def test_without_schedule_records_the_whole_block(tmp_path):
    x = gradstack.ones(4, 4, requires_grad=True)
    ready = []
    with gradstack.profiler.profile(
        record_shapes=True, profile_memory=True, with_stack=True, on_trace_ready=ready.append
    ) as prof:
        with gradstack.profiler.record_function("block"):
            y = (x.sin() * 2).sum()
        y.backward()
    assert ready == [prof]
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["block"].count == 1 and rows["aten::sin"].count == 1
    assert "ProfilerStep*" not in rows  # (no schedule: no step blocks, as torch)
    shapes = {(e.key, str(e.input_shapes)) for e in prof.key_averages(group_by_input_shape=True)}
    assert ("aten::sin", "[[4, 4]]") in shapes
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "Self CPU" in table and "CPU Mem" in table
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        assert any(e["name"] == "aten::sin" for e in json.load(f)["traceEvents"])
    assert os.path.getsize(path) > 0


def test_warnings_and_errors_are_torch_s():
    def outcomes(L):
        out = []
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            L.profiler.schedule(wait=1, warmup=0, active=1)
            L.profiler.profile(use_cuda=False)
        out += [(w.category.__name__, str(w.message)) for w in seen]
        for kw in (dict(wait=-1, warmup=1, active=1), dict(wait=1, warmup=1, active=0)):
            with pytest.raises(AssertionError) as info:
                L.profiler.schedule(**kw)
            out.append(str(info.value))
        with pytest.raises(AssertionError) as info:
            L.profiler.profile(activities=[])
        out.append(str(info.value))
        return out

    assert outcomes(gradstack) == outcomes(torch)


def test_a_device_activity_warns_and_profiles_the_cpu():
    with pytest.warns(UserWarning, match="CPU only"):
        prof = gradstack.profiler.profile(
            activities=[
                gradstack.profiler.ProfilerActivity.CPU,
                gradstack.profiler.ProfilerActivity.CUDA,
            ]
        )
    with prof:
        gradstack.ones(2).exp()
    assert [e.key for e in prof.key_averages()] == ["aten::exp"]
    assert gradstack.profiler.supported_activities() == {gradstack.profiler.ProfilerActivity.CPU}
    assert list(gradstack.profiler.ProfilerActivity.__members__) == list(
        torch.profiler.ProfilerActivity.__members__
    )
    assert list(gradstack.profiler.ProfilerAction.__members__) == [
        n for n in torch.profiler.ProfilerAction.__members__ if n != "DEVICE_STOPPED"
    ]
