"""What a profile registers, when, and that it always takes it back (zero cost when idle)."""

from __future__ import annotations

import gradstack_tensor as gt
import pytest
from gradstack_autograd import _engine
from gradstack_profiler import LAYER_PRIORITY, emit_nvtx, profile, record_function


def test_registered_only_while_active():
    before = gt.registered_layers()  # autograd's, and any registered on first use
    assert 100 in [layer.priority for layer in before]  # autograd's
    prof = profile()
    assert gt.registered_layers() == before and _engine._node_observer is None
    with prof:
        layers = gt.registered_layers()
        assert len(layers) == len(before) + 1
        assert layers[0].priority == LAYER_PRIORITY  # outermost
        assert all(LAYER_PRIORITY > layer.priority for layer in layers[1:])
        assert _engine._node_observer is not None
    assert gt.registered_layers() == before and _engine._node_observer is None


def test_disabled_profile_registers_nothing():
    before = gt.registered_layers()
    with profile(enabled=False) as prof:
        assert gt.registered_layers() == before
        assert _engine._node_observer is None
        gt.ones(2) * 2
    assert len(prof.events()) == 0
    assert prof.key_averages() == []
    assert "no events" in prof.table()
    assert str(prof) == prof.table()


def test_exception_inside_unregisters():
    before = gt.registered_layers()
    with pytest.raises(ZeroDivisionError):
        with profile() as prof:
            gt.ones(2) * 2
            raise ZeroDivisionError("inside the profile")
    assert gt.registered_layers() == before and _engine._node_observer is None
    assert [e.name for e in prof.events()] == ["aten::mul"]


def test_exception_inside_an_op_unregisters():
    with pytest.raises(RuntimeError):
        with profile(record_shapes=True, with_stack=True, profile_memory=True):
            with record_function("fails"):
                gt.ones(2, 3) + gt.ones(4)


def test_exception_in_backward_unregisters():
    a = gt.ones(2, requires_grad=True)
    b = (a * a).sum()

    def bad_hook(grad):
        raise ValueError("hook failed")

    a.register_hook(bad_hook)
    with pytest.raises(ValueError, match="hook failed"):
        with profile() as prof:
            b.backward()
    names = [e.name for e in prof.events()]
    assert "SumBackward0" in names and "MulBackward0" in names


def test_profiles_do_not_nest():
    before = len(gt.registered_layers())  # (autograd's, and any registered on first use)
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
        with pytest.raises(RuntimeError, match="already running"):
            with emit_nvtx():
                pass
        # the outer profile is still recording
        assert len(gt.registered_layers()) == before + 1


def test_results_wait_for_the_end():
    with profile() as prof:
        gt.ones(2) * 2
        with pytest.raises(RuntimeError, match="still running"):
            prof.key_averages()
        with pytest.raises(RuntimeError, match="not reentrant"):
            prof.__enter__()
    assert len(prof.events()) == 1


def test_a_profile_object_can_run_again():
    prof = profile()
    with prof:
        gt.ones(2) * 2
    with prof:
        gt.ones(2) + 2
        gt.ones(2) + 2
    assert [e.name for e in prof.events()] == ["aten::add", "aten::add"]
    acc = profile(acc_events=True)
    with acc:
        gt.ones(2) * 2
    with acc:
        gt.ones(2) + 2
    events = acc.events()
    assert [e.name for e in events] == ["aten::mul", "aten::add"]
    assert [e.id for e in events] == [0, 1]
    assert events[0].time_range.end <= events[1].time_range.start


def test_unsupported_options_warn():
    with pytest.warns(UserWarning, match="with_flops"):
        profile(with_flops=True)
    with pytest.warns(UserWarning, match="with_modules"):
        profile(with_modules=True)


def test_repr():
    prof = profile()
    assert "0 events" in repr(prof)
    with prof:
        assert "running" in repr(prof)
    assert "disabled" in repr(profile(enabled=False))


def test_a_profile_stopped_inside_a_backward_node():
    """The engine ends a node with the observer that began it (no crash, no leak)."""
    a = gt.ones(2, requires_grad=True)
    prof = profile()
    prof.__enter__()
    loss = (a * 2).sum()

    def stop(grads):
        prof.__exit__(None, None, None)

    loss.grad_fn.register_prehook(stop)
    loss.backward()  # the pre-hook stops the profile inside SumBackward0
    assert a.grad is not None
    names = [e.name for e in prof.events()]
    assert names[:3] == ["aten::mul", "aten::sum", "SumBackward0"]
    assert "MulBackward0" not in names
    (sum_backward,) = [e for e in prof.events() if e.name == "SumBackward0"]
    assert sum_backward.time_range.end >= sum_backward.time_range.start
