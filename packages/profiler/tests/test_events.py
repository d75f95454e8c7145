"""Events: nesting (record_function, ops inside ops, backward nodes), links, grouping, purity."""

from __future__ import annotations

import copy
import threading

import gradstack_tensor as gt
import pytest
from gradstack_autograd import no_grad
from gradstack_profiler import FunctionEvent, profile, record_function
from gradstack_tensor import Op


def by_name(events, name):
    return [e for e in events if e.name == name]


def check_tree(events):
    """Parent/child links agree, children lie inside parents, self <= total."""
    for evt in events:
        assert evt.time_range.start <= evt.time_range.end
        assert 0 <= evt.self_cpu_time_total <= evt.cpu_time_total + 1e-9
        assert evt.self_cpu_time_total == pytest.approx(
            evt.cpu_time_total - sum(c.cpu_time_total for c in evt.cpu_children), abs=1e-6
        )
        for child in evt.cpu_children:
            assert child.cpu_parent is evt
            assert child.thread == evt.thread
            assert evt.time_range.start <= child.time_range.start
            assert child.time_range.end <= evt.time_range.end
        if evt.cpu_parent is not None:
            assert evt in evt.cpu_parent.cpu_children


# -- record_function ---------------------------------------------------------------------


def test_record_function_nests():
    a = gt.ones(3)
    with profile() as prof:
        with record_function("outer"):
            b = a * 2
            with record_function("inner"):
                c = b + 1
                with record_function("innermost"):
                    c.sum()
            b - 1
    events = prof.events()
    check_tree(events)
    assert [e.name for e in events] == [
        "outer",
        "aten::mul",
        "inner",
        "aten::add",
        "innermost",
        "aten::sum",
        "aten::sub",
    ]
    outer, inner, innermost = (by_name(events, n)[0] for n in ("outer", "inner", "innermost"))
    assert [c.name for c in outer.cpu_children] == ["aten::mul", "inner", "aten::sub"]
    assert [c.name for c in inner.cpu_children] == ["aten::add", "innermost"]
    assert [c.name for c in innermost.cpu_children] == ["aten::sum"]
    assert outer.cpu_parent is None and inner.cpu_parent is outer
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in outer.cpu_children)
    assert inner.cpu_time_total >= sum(c.cpu_time_total for c in inner.cpu_children)
    assert all(e.is_user_annotation for e in (outer, inner, innermost))
    assert all(e.scope == 7 for e in (outer, inner, innermost))
    assert not by_name(events, "aten::mul")[0].is_user_annotation


def test_record_function_as_decorator():
    @record_function("step")
    def step(t, depth):
        t = t * 2
        return step(t, depth - 1) if depth else t

    assert step.__name__ == "step"
    with profile() as prof:
        step(gt.ones(2), 2)
    events = prof.events()
    check_tree(events)
    steps = by_name(events, "step")
    assert len(steps) == 3
    assert steps[1].cpu_parent is steps[0] and steps[2].cpu_parent is steps[1]
    assert [c.name for c in steps[0].cpu_children] == ["aten::mul", "step"]
    assert {r.key: r.count for r in prof.key_averages()} == {"step": 3, "aten::mul": 3}


def test_record_function_outside_a_profile_does_nothing():
    with record_function("alone") as rf:
        gt.ones(2) * 2
    assert rf.name == "alone"

    @record_function("f")
    def f():
        return 1

    assert f() == 1
    with pytest.raises(TypeError, match="str name"):
        record_function(3)


def test_record_function_exited_after_the_profile_ends_at_the_stop():
    rf = record_function("straddles")
    with profile() as prof:
        rf.__enter__()
        gt.ones(2) * 3
    rf.__exit__(None, None, None)
    (evt,) = by_name(prof.events(), "straddles")
    assert [c.name for c in evt.cpu_children] == ["aten::mul"]
    assert prof.key_averages().table() == prof.key_averages().table()


# -- ops inside ops ---------------------------------------------------------------------


def test_ops_called_inside_a_kernel_are_children():
    composite = Op("composite_for_test")  # not registered: calls go through dispatch

    @composite.set_kernel
    def _kernel(t):
        return (t * 2).sum()

    a = gt.ones(4)
    with profile() as prof:
        composite(a)
        a + 1
    events = prof.events()
    check_tree(events)
    assert [e.name for e in events] == [
        "gradstack::composite_for_test",
        "aten::mul",
        "aten::sum",
        "aten::add",
    ]
    outer = events[0]
    assert [c.name for c in outer.cpu_children] == ["aten::mul", "aten::sum"]
    assert outer.self_cpu_time_total < outer.cpu_time_total
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["gradstack::composite_for_test"].self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children)
    )


def test_an_op_that_raises_is_still_an_event():
    a, b = gt.ones(2, 3), gt.ones(4)
    with profile() as prof:
        with pytest.raises(RuntimeError):
            a + b
        a * 2
    events = prof.events()
    check_tree(events)
    assert [e.name for e in events] == ["aten::add", "aten::mul"]
    assert events[1].cpu_parent is None


# -- backward ---------------------------------------------------------------------------


def test_backward_events_match_the_nodes_run(tutorial_tensors):
    x, y, z = tutorial_tensors
    with profile() as prof:
        for _ in range(1000):
            z = (z / x) * y
        z.sum().backward()
    counts = {r.key: r.count for r in prof.key_averages()}
    assert counts["SumBackward0"] == 1
    assert counts["MulBackward0"] == 1000
    assert counts["DivBackward0"] == 1000
    assert counts["AccumulateGrad"] == 3  # x, y and the first z
    assert counts["aten::div"] == 1000 and counts["aten::sum"] == 1
    events = prof.events()
    check_tree(events)
    for evt in events:
        if evt.scope == 1 and evt.name != "AccumulateGrad":
            fwd = evt.forward_event
            assert fwd is not None, evt
            assert (
                fwd.name
                == {
                    "MulBackward0": "aten::mul",
                    "DivBackward0": "aten::div",
                    "SumBackward0": "aten::sum",
                }[evt.name]
            )
            assert fwd.sequence_nr == evt.sequence_nr >= 0
            assert evt.fwd_thread == fwd.thread
            assert fwd.time_range.end <= evt.time_range.start
    accumulate = by_name(events, "AccumulateGrad")
    assert all(e.forward_event is None and e.sequence_nr == -1 for e in accumulate)
    # every forward op created one node, and each node is linked to exactly one op
    forward = [
        e
        for e in events
        if e.scope == 0 and e.cpu_parent is None and e.name in ("aten::mul", "aten::div")
    ]
    linked = [e.forward_event for e in events if e.scope == 1 and e.forward_event]
    assert len({id(e) for e in linked}) == len(linked) == 2001
    assert {id(e) for e in forward} <= {id(e) for e in linked}


def test_ops_run_by_a_backward_node_are_its_children():
    a = gt.ones(2, 3, requires_grad=True)
    with profile() as prof:
        (a * 3).sum().backward()
    events = prof.events()
    check_tree(events)
    (mul_backward,) = by_name(events, "MulBackward0")
    assert mul_backward.cpu_children, "the formula's ops belong to the node"
    assert all(c.scope == 0 for c in mul_backward.cpu_children)
    assert mul_backward.self_cpu_time_total <= mul_backward.cpu_time_total


def test_backward_counts_agree_with_torch():
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler as tprof

    def program(lib):
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(2, 3, requires_grad=True)
        c = (a * b + a).exp()
        return (c / b).sum()

    with profile() as prof:
        program(gt).backward()
    ours = {r.key: r.count for r in prof.key_averages() if r.scope == 1}
    with tprof.profile() as tp:
        program(torch).backward()
    theirs = {}
    for row in tp.key_averages():
        if row.key.startswith("autograd::engine::evaluate_function: "):
            name = row.key.split(": ", 1)[1].replace("torch::autograd::", "")
            theirs[name] = row.count
    assert ours == theirs


def test_nodes_from_before_the_profile_are_not_linked():
    identity = Op("identity_for_test")
    identity.set_kernel(lambda t: t)
    a = gt.ones(2, requires_grad=True)
    b = a * 2  # its node exists before the profile
    with profile() as prof:
        with no_grad():
            c = identity(b)  # returns b itself: must not claim b's node
        assert c is b
        (c * 1).sum().backward()
    events = prof.events()
    (early,) = [e for e in by_name(events, "MulBackward0") if e.forward_event is None]
    assert early.sequence_nr == b.grad_fn._sequence_nr
    assert by_name(events, "gradstack::identity_for_test")[0].sequence_nr == -1
    (late,) = [e for e in by_name(events, "MulBackward0") if e.forward_event is not None]
    assert late.forward_event.name == "aten::mul"


# -- grouping ---------------------------------------------------------------------------


def test_group_by_input_shape_splits_rows():
    a, b = gt.ones(2, 3), gt.ones(4)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            a * 2
        for _ in range(5):
            b * 2
        a + a
    assert {r.key: r.count for r in prof.key_averages()} == {"aten::mul": 8, "aten::add": 1}
    for row in prof.key_averages():
        assert row.input_shapes == []
    grouped = {
        (r.key, str(r.input_shapes)): r.count for r in prof.key_averages(group_by_input_shape=True)
    }
    assert grouped == {
        ("aten::mul", "[[2, 3], []]"): 3,
        ("aten::mul", "[[4], []]"): 5,
        ("aten::add", "[[2, 3], [2, 3], []]"): 1,
    }
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in table and "[[4], []]" in table
    assert "Input Shapes" not in prof.key_averages().table()
    assert prof.events()[0].input_shapes == [[2, 3], []]


def test_without_record_shapes_there_are_no_shapes():
    with profile() as prof:
        gt.ones(2) * 2
    assert prof.events()[0].input_shapes == []


def test_group_by_stack_n():
    a = gt.ones(2)

    def site_one():
        return a * 2

    def site_two():
        return a * 2

    with profile(with_stack=True) as prof:
        site_one()
        site_one()
        site_two()
    rows = prof.key_averages(group_by_stack_n=1)
    assert sorted(r.count for r in rows) == [1, 2]
    for row in rows:
        assert len(row.stack) == 1
        assert row.stack[0].endswith(("site_one", "site_two"))
        assert "test_events.py(" in row.stack[0]
    evt = prof.events()[0]
    assert evt.stack[0].endswith("site_one")
    assert evt.stack[1].endswith("test_group_by_stack_n")
    assert not any("gradstack_profiler" in s or "gradstack_tensor" in s for s in evt.stack)
    assert [r.count for r in prof.key_averages()] == [3]
    assert "Source Location" in rows.table()


def test_backward_events_carry_the_forward_stack():
    a = gt.ones(2, requires_grad=True)

    def forward():
        return (a * 2).sum()

    with profile(with_stack=True) as prof:
        loss = forward()
        loss.backward()
    events = prof.events()
    (mul_backward,) = by_name(events, "MulBackward0")
    assert mul_backward.stack == mul_backward.forward_event.stack
    assert mul_backward.stack[0].endswith("forward")
    for child in mul_backward.cpu_children:
        assert child.stack == mul_backward.stack


# -- purity -----------------------------------------------------------------------------


def snapshot(events):
    return [
        (
            e.id,
            e.name,
            e.count,
            e.time_range.start,
            e.time_range.end,
            e.self_cpu_time_total,
            tuple(map(str, e.input_shapes)),
            tuple(e.stack),
            e.cpu_memory_usage,
            tuple(c.id for c in e.cpu_children),
        )
        for e in events
    ]


def rows_of(avgs):
    return [
        (
            r.key,
            r.count,
            r.cpu_time_total,
            r.self_cpu_time_total,
            r.cpu_memory_usage,
            r.self_cpu_memory_usage,
            str(r.input_shapes),
            tuple(r.stack),
        )
        for r in avgs
    ]


def test_aggregation_is_pure(tutorial_tensors):
    x, y, z = tutorial_tensors
    with profile(record_shapes=True, with_stack=True, profile_memory=True) as prof:
        with record_function("loop"):
            for _ in range(50):
                z = (z / x) * y
        z.sum().backward()
    before = snapshot(prof.events())
    first = rows_of(prof.key_averages())
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    grouped = rows_of(prof.key_averages(group_by_input_shape=True, group_by_stack_n=2))
    prof.events().table(sort_by="cpu_time_total", row_limit=3)
    prof.total_average()
    events = prof.events()
    events.sort(key=lambda e: -e.id)  # mutate the returned list
    events.key_averages()
    assert rows_of(prof.key_averages()) == first
    assert prof.key_averages().table(sort_by="self_cpu_time_total") == table
    assert rows_of(prof.key_averages(group_by_input_shape=True, group_by_stack_n=2)) == grouped
    assert snapshot(prof.events()) == before
    assert str(prof) == str(prof) == prof.table()


def test_total_average():
    a = gt.ones(3)
    with profile() as prof:
        a * 2
        a + 1
    total = prof.total_average()
    assert total.key == "Total"
    assert total.count == 2
    assert total.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)
    assert total.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in prof.events()))


def test_function_event_objects():
    a = gt.ones(3)
    with profile() as prof:
        a * 2
    (evt,) = prof.events()
    assert isinstance(evt, FunctionEvent)
    assert evt.key == evt.name == evt.trace_name == "aten::mul"
    assert evt.id == 0 and evt.thread == 1 and evt.count == 1
    assert evt.time_range.elapsed_us() == evt.cpu_time_total > 0
    assert evt.cuda_time_total == 0 and evt.device_time_total == 0
    assert evt.cpu_time_str.endswith("s")
    assert "aten::mul" in repr(evt) and "aten::mul" in repr(prof.key_averages()[0])
    assert prof.function_events == prof.events()
    assert copy.copy(prof.events()) == prof.events()


# -- threads ----------------------------------------------------------------------------


def test_each_thread_nests_on_its_own():
    barrier = threading.Barrier(2)

    def work(label):
        barrier.wait()
        with record_function(label):
            t = gt.ones(8)
            for _ in range(50):
                t = t * 1
        return t

    with profile() as prof:
        threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    events = prof.events()
    check_tree(events)
    labels = [e for e in events if e.name.startswith("w")]
    assert sorted(e.thread for e in labels) == [1, 2]
    for label in labels:
        assert len(label.cpu_children) == 50
        assert {c.thread for c in label.cpu_children} == {label.thread}
