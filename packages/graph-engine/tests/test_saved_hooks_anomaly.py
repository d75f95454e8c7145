"""Saved-tensor hooks (saved_tensors_hooks, save_on_cpu, save_on_disk) and anomaly mode."""

from __future__ import annotations

import gc
import os
import threading
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

HERE = os.path.basename(__file__)


def _model(x):
    """A few ops that save inputs (mul, sin) and outputs (exp, tanh)."""
    return ((x.sin() * x).exp().tanh() * x).sum()


def _x(n=4, seed=0):
    return gt.from_numpy(np.random.default_rng(seed).standard_normal((n, n))).requires_grad_()


# ---------------------------------------------------------------------------------------
# saved_tensors_hooks


def test_pack_and_unpack_are_called():
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return ("box", t)

    def unpack(box):
        assert box[0] == "box"
        unpacked.append(tuple(box[1].shape))
        return box[1]

    x = _x()
    with ag.graph.saved_tensors_hooks(pack, unpack):
        y = _model(x)
    # sin saves x; mul saves sin(x) and x; exp, tanh save their outputs; mul saves two more
    assert len(packed) == 7 and unpacked == []
    y.backward()
    assert len(unpacked) == 7
    expected = x.grad.numpy().copy()
    x.grad = None
    _model(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_hooks_apply_only_inside_the_block_and_nest():
    calls = []

    def hooks(tag):
        return ag.graph.saved_tensors_hooks(lambda t: calls.append(tag) or t, lambda t: t)

    x = gt.ones(2, requires_grad=True)
    with hooks("outer"):
        x.sin()
        with hooks("inner"):
            x.sin()  # the innermost pair applies
        x.cos()
    x.exp()
    assert calls == ["outer", "inner", "outer"]


def test_a_pack_hook_that_computes_runs_once_per_saved_tensor_without_grad():
    # the repro (pack = lambda t: t * 4) recursed until RecursionError: the pack
    # hook runs under no_grad, as in torch, so its own ops save nothing
    torch = pytest.importorskip("torch")
    calls, grad_modes = [], []

    def pack(t):
        calls.append(tuple(t.shape))
        grad_modes.append(ag.is_grad_enabled())
        return t * 4

    x = _x()
    with ag.graph.saved_tensors_hooks(pack, lambda t: t / 4):
        y = _model(x)
    y.backward()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
        ty = ((tx.sin() * tx).exp().tanh() * tx).sum()
    ty.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert calls and not any(grad_modes)
    assert ag.is_grad_enabled()


def test_unpack_can_return_a_different_tensor_with_the_same_content():
    x = _x()
    with ag.graph.saved_tensors_hooks(
        lambda t: t.detach().numpy().copy(), lambda a: gt.from_numpy(a)
    ):
        y = _model(x)
    y.backward()
    g = x.grad.numpy().copy()
    x.grad = None
    _model(x).backward()
    np.testing.assert_array_equal(g, x.grad.numpy())


def test_double_backward_through_hooked_saved_outputs():
    x = gt.tensor([0.5, 1.0], dtype=gt.float64, requires_grad=True)
    with ag.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()  # saves its output
    (g,) = ag.grad(y.sum(), x, create_graph=True)
    (h,) = ag.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp([0.5, 1.0]), rtol=1e-15)


def test_unpack_must_return_a_tensor():
    x = gt.ones(2, requires_grad=True)
    with ag.graph.saved_tensors_hooks(lambda t: t, lambda t: "nope"):
        y = x.sin()
    with pytest.raises(
        TypeError, match="the unpack hook of saved_tensors_hooks must return a Tensor, got str"
    ):
        y.sum().backward()


def test_saved_tensors_hooks_are_thread_local():
    inside, release = threading.Event(), threading.Event()
    packed_by = []

    def holder():
        with ag.graph.saved_tensors_hooks(
            lambda t: packed_by.append(threading.current_thread().name) or t, lambda t: t
        ):
            inside.set()
            release.wait(5)

    def other():
        inside.wait(5)
        x = gt.ones(3, requires_grad=True)
        (x * x).sum().backward()
        release.set()

    threads = [
        threading.Thread(target=holder, name="holder"),
        threading.Thread(target=other, name="other"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert packed_by == []  # the other thread's saves did not go through the hooks


def test_disable_saved_tensors_hooks():
    with ag.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with ag.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with ag.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


# ---------------------------------------------------------------------------------------
# save_on_cpu and save_on_disk


def test_save_on_cpu_gives_identical_gradients_and_decouples_the_data():
    x = _x()
    with ag.graph.save_on_cpu(pin_memory=True):
        y = _model(x)
    y.backward()
    g = x.grad.numpy().copy()
    x.grad = None
    _model(x).backward()
    np.testing.assert_array_equal(g, x.grad.numpy())


def test_save_on_disk(tmp_path):
    x = _x(64)
    with ag.graph.save_on_disk(str(tmp_path), min_bytes=0):
        y = _model(x)
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 7 and all(f.endswith(".npy") for f in files)
    assert sum(os.path.getsize(tmp_path / f) for f in files) >= 7 * 64 * 64 * 8

    # unpacking reads the files through memory maps
    node = y.grad_fn.next_functions[0][0]  # MulBackward0: tanh(.), x
    saved = (node._saved_self, node._saved_other)
    assert any(
        isinstance(t.numpy(), np.memmap) or isinstance(t.numpy().base, np.memmap)
        for t in saved
        if not t.requires_grad
    )
    y.backward()
    gc.collect()
    assert os.listdir(tmp_path) == []  # freed with the saved tensors
    g = x.grad.numpy().copy()
    x.grad = None
    _model(x).backward()
    np.testing.assert_array_equal(g, x.grad.numpy())


def test_save_on_disk_files_go_when_the_graph_is_dropped(tmp_path):
    x = _x(64)
    with ag.graph.save_on_disk(str(tmp_path), min_bytes=0):
        y = _model(x)
    assert len(os.listdir(tmp_path)) == 7
    del y
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_save_on_disk_keeps_small_tensors_in_memory(tmp_path):
    x = _x(4)  # 128 bytes per tensor
    with ag.graph.save_on_disk(str(tmp_path)):  # default min_bytes = 64 KiB
        y = _model(x)
    assert os.listdir(tmp_path) == []
    y.backward()


def test_save_on_disk_with_retain_graph(tmp_path):
    x = _x(64)
    with ag.graph.save_on_disk(str(tmp_path), min_bytes=0):
        y = _model(x)
    y.backward(retain_graph=True)
    assert len(os.listdir(tmp_path)) == 7  # still needed
    y.backward()
    gc.collect()
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------
# anomaly mode


@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _nan_graph():
    x = gt.tensor([0.0, 1.0], requires_grad=True)
    return x.sqrt() * 0  # d sqrt(x)/dx at 0 is inf; times 0 is nan


def test_nan_raises_naming_node_and_output_with_the_trace_inside(quiet):
    with ag.detect_anomaly():
        y = _nan_graph()
        line = _line() - 1  # the line above
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    msg = str(info.value)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    # the forward trace is part of the message itself (not a separate warning)
    assert "Traceback of forward call that caused the error" in msg
    assert HERE in msg and "x.sqrt()" in msg and "_nan_graph" in msg
    assert f'{HERE}", line {line}' in msg


def _line():
    import inspect

    return inspect.currentframe().f_back.f_lineno


def test_without_anomaly_mode_nan_passes_silently():
    y = _nan_graph()
    y.sum().backward()  # as torch: no check
    assert not ag.is_anomaly_enabled()


def test_check_nan_false(quiet):
    with ag.detect_anomaly(check_nan=False):
        y = _nan_graph()
        y.sum().backward()
        assert ag.is_anomaly_enabled()


def test_errors_inside_a_node_carry_the_trace_as_a_note(quiet):
    class Boom(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = gt.ones(2, requires_grad=True)
    with ag.detect_anomaly():
        y = Boom.apply(x)
        line = _line() - 1  # the line above
        with pytest.raises(ValueError, match="boom") as info:
            y.sum().backward()
    notes = "\n".join(info.value.__notes__)
    assert "Traceback of forward call that caused the error" in notes
    assert f'{HERE}", line {line}' in notes and "Boom.apply(x)" in notes


def test_set_detect_anomaly_function_and_context(quiet):
    assert not ag.is_anomaly_enabled()
    ag.set_detect_anomaly(True)
    try:
        assert ag.is_anomaly_enabled()
        y = _nan_graph()
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            y.sum().backward()
    finally:
        ag.set_detect_anomaly(False)
    assert not ag.is_anomaly_enabled()
    with ag.set_detect_anomaly(True):
        assert ag.is_anomaly_enabled()
    assert not ag.is_anomaly_enabled()

    @ag.detect_anomaly()
    def decorated():
        return ag.is_anomaly_enabled()

    assert decorated() and not ag.is_anomaly_enabled()


def test_detect_anomaly_warns_that_it_is_slow():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ag.detect_anomaly():
            pass


def test_nodes_record_no_trace_outside_anomaly_mode():
    y = gt.ones(2, requires_grad=True).exp()
    assert not y.grad_fn.anomaly_trace
