"""The compiled recorder (_recording.pyx): its records, its clock, its thread idents."""

from __future__ import annotations

import threading
import time

import gradstack_autograd  # noqa: F401  (the autograd layer: ops record backward nodes)
import gradstack_tensor as gt
import pytest
from gradstack_profiler import _recording
from gradstack_profiler._recording import END, NODE, OP, NodeRecorder, OpRecorder


def _recorded(fn, priority=1000):
    records: list = []
    layer = OpRecorder(records, priority)
    gt.register_layer(layer)
    try:
        fn()
    finally:
        gt.unregister_layer(layer)
    return records


def test_each_op_records_a_start_and_an_end_with_the_node_it_made():
    x = gt.ones(2, 3, requires_grad=True)
    out = []
    records = _recorded(lambda: out.append(x * 2))
    assert [r[0] for r in records] == [OP, END]
    (tag, name, t0, tid, shapes, stack), (_, t1, tid_end, seq, nbytes) = records
    assert name == "mul" and shapes is None and stack is None and nbytes == 0
    assert tid == tid_end == threading.get_ident()
    assert 0 <= t1 - t0 < 10**9
    assert seq == out[0].grad_fn.sequence_nr


def test_results_without_a_node_record_minus_one():
    records = _recorded(lambda: gt.ones(3).max(0))  # a tuple result, no grad
    assert records[-1][0] == END and records[-1][3] == -1
    assert _recording.output_sequence_nr((1, "a")) == -1
    assert _recording.output_sequence_nr(None) == -1


def test_a_raising_op_still_ends_its_event():
    def bad():
        with pytest.raises(RuntimeError):
            gt.ones(2) + gt.ones(3)

    records = _recorded(bad)
    assert [r[0] for r in records] == [OP, END]
    assert records[1][3] == -1


def test_the_clock_is_perf_counter_ns():
    """Note [The profiler's clock is perf_counter_ns]: C and Python stamps interleave."""
    for _ in range(100):
        a = time.perf_counter_ns()
        b = _recording.now_ns()
        c = time.perf_counter_ns()
        assert a <= b <= c


def test_node_recorder_records_begin_and_end():
    x = gt.ones(2, requires_grad=True)
    y = (x * 3).sum()
    records: list = []
    rec = NodeRecorder(records)
    token = rec.begin(y.grad_fn)
    rec.end(token)
    assert records[0][:2] == (NODE, "SumBackward0") and records[0][4] == y.grad_fn.sequence_nr
    assert records[1][0] == END and records[1][2] == token == threading.get_ident()


def test_bad_arguments_raise_type_errors():
    with pytest.raises(TypeError):
        OpRecorder(None, 1000)
    with pytest.raises(TypeError):
        NodeRecorder(None)
    with pytest.raises(TypeError):
        OpRecorder([], 1000).handle(None, (), 0)
    with pytest.raises(TypeError):
        OpRecorder([], 1000).handle(gt.OPS["add"], None, 0)
    with pytest.raises(TypeError):
        OpRecorder([], 1000).handle(gt.OPS["add"], (gt.ones(1), 1), -1)


def test_node_recorder_end_takes_only_its_token():
    with pytest.raises(TypeError, match="token"):
        NodeRecorder([]).end([])


def test_records_are_not_watched_by_the_cyclic_gc():
    """Note [Records are untracked at birth]."""
    import gc

    records = _recorded(lambda: gt.ones(2) * 2)
    assert records and not any(gc.is_tracked(r) for r in records)


def test_recorders_are_not_picklable_and_do_not_crash_on_none():
    """Cython's generated pickle methods, called unbound on None, segfaulted (crash-fuzz)."""
    import pickle

    assert not hasattr(NodeRecorder, "__reduce_cython__")
    with pytest.raises(TypeError):
        pickle.dumps(NodeRecorder([]))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: NodeRecorder.end(t, 1),
        lambda t: NodeRecorder.begin(t, t),
        lambda t: OpRecorder.handle(t, gt.OPS["add"], (t, t), 0),
        lambda t: OpRecorder.__init__(t, [], 1),
    ],
)
def test_unbound_methods_check_self(call):
    """Note [Cython methods check self] (tensor-core): a Tensor as ``self`` segfaulted."""
    with pytest.raises(TypeError, match="descriptor|requires"):
        call(gt.ones(2))
