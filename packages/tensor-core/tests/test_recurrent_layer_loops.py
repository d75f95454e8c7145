"""Note [A layer's steps in one C loop] (_recurrent_layers.pyx): ``lstm_layer_forward``,
``lstm_layer_backward``, ``gru_layer_forward`` and ``gru_layer_backward`` give the bits of
the Python steps they replace (the packed product, the cell kernels, the gradient sums);
LSTMs and GRUs through them against torch are in nn-mini's
test_recurrent_layer_loops_torch.py."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor.kernels import (
    gru_cell_backward,
    gru_cell_forward,
    gru_layer_backward,
    gru_layer_forward,
    lstm_cell_backward,
    lstm_cell_forward,
    lstm_layer_backward,
    lstm_layer_forward,
    pack_panels,
    panel_matmul,
)

RNG = np.random.default_rng(5)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _steps(t_count, reverse):
    return range(t_count - 1, -1, -1) if reverse else range(t_count)


def _forward_steps(ig, h, c, w, b, reverse):
    """The Python steps of _impl_rnn._lstm_layer (float32, packed weight)."""
    panels = pack_panels(w, transposed=True)
    out, cells, work = (
        np.empty(s, np.float32) for s in (ig.shape[:2] + h.shape[1:],) * 2 + (ig.shape,)
    )
    for t in _steps(ig.shape[0], reverse):
        hy, cy, ws = lstm_cell_forward(ig[t], panel_matmul(h, panels, w.shape[0], b), c)
        out[t], cells[t], work[t] = hy, cy, ws
        h, c = hy, cy
    return out, cells, work


def _backward_steps(grad_out, grad_cells, cx, w, cells, work, reverse):
    """The Python steps of graph-engine's _lstm_arrays (float32, packed weight)."""
    steps, batch, hidden = cells.shape
    panels = pack_panels(w)
    dgates = np.empty(work.shape, np.float32)
    gh = gc = None
    for t in _steps(steps, not reverse):
        ghy = grad_out[t] if grad_out is not None else None
        ghy = gh if ghy is None else (ghy if gh is None else ghy + gh)
        gcy = grad_cells[t] if grad_cells is not None else None
        gcy = gc if gcy is None else (gcy if gc is None else gcy + gc)
        if ghy is None and gcy is None:
            dgates[t] = 0
            continue
        if reverse:
            c_prev = cx if t == steps - 1 else cells[t + 1]
        else:
            c_prev = cx if t == 0 else cells[t - 1]
        g, gc, _ = lstm_cell_backward(ghy, gcy, c_prev, cells[t], work[t])
        dgates[t] = g
        gh = panel_matmul(g, panels, hidden)
    zeros = np.zeros((batch, hidden), np.float32)
    return dgates, (zeros if gh is None else gh), (zeros if gc is None else gc)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    ("steps", "batch", "hidden"), [(2, 1, 1), (5, 3, 7), (30, 20, 33), (4, 64, 16)]
)
def test_forward_has_the_bits_of_the_python_steps(steps, batch, hidden, bias, reverse):
    ig = _f32(steps, batch, 4 * hidden)
    h, c = _f32(batch, hidden), _f32(batch, hidden)
    w = _f32(4 * hidden, hidden) * 0.3
    b = _f32(4 * hidden) if bias else None
    got = lstm_layer_forward(ig, h, c, pack_panels(w, transposed=True), b, reverse)
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    want = _forward_steps(ig, h, c, w, b, reverse)
    for g, x in zip(got, want):
        assert g.shape == x.shape and g.dtype == np.float32 and g.flags.c_contiguous
        assert g.tobytes() == x.tobytes()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("grads", ["output", "cells", "both", "last_step_only"])
@pytest.mark.parametrize(("steps", "batch", "hidden"), [(2, 1, 1), (6, 4, 9), (30, 20, 33)])
def test_backward_has_the_bits_of_the_python_steps(steps, batch, hidden, grads, reverse):
    ig = _f32(steps, batch, 4 * hidden)
    h0, c0 = _f32(batch, hidden), _f32(batch, hidden)
    w = _f32(4 * hidden, hidden) * 0.3
    out, cells, work = _forward_steps(ig, h0, c0, w, None, reverse)
    go = _f32(steps, batch, hidden) if grads in ("output", "both") else None
    gcs = _f32(steps, batch, hidden) if grads in ("cells", "both") else None
    if grads == "last_step_only":  # the steps after the forward's last get no gradient
        gcs = np.zeros((steps, batch, hidden), np.float32)
        gcs[0 if reverse else steps - 1] = _f32(batch, hidden)
    got = lstm_layer_backward(go, gcs, c0, cells, work, pack_panels(w), reverse)
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    want = _backward_steps(go, gcs, c0, w, cells, work, reverse)
    for g, x in zip(got, want):
        assert g.shape == x.shape and g.dtype == np.float32
        assert g.tobytes() == x.tobytes()


def test_backward_without_any_gradient_is_zeros():
    w = _f32(8, 2)
    out, cells, work = _forward_steps(_f32(3, 2, 8), _f32(2, 2), _f32(2, 2), w, None, False)
    got = lstm_layer_backward(None, None, _f32(2, 2), cells, work, pack_panels(w))
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    assert all(not a.any() for a in got)


def test_zero_rows():
    w = _f32(8, 2)
    ig, h = np.zeros((3, 0, 8), np.float32), np.zeros((0, 2), np.float32)
    got = lstm_layer_forward(ig, h, h, pack_panels(w, transposed=True))
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    assert [a.shape for a in got] == [(3, 0, 2), (3, 0, 2), (3, 0, 8)]
    back = lstm_layer_backward(got[0], None, h, got[1], got[2], pack_panels(w))
    assert [a.shape for a in back] == [(3, 0, 8), (0, 2), (0, 2)]


def test_arguments_are_checked_before_memory_is_touched():
    w = _f32(8, 2)
    ig, h = _f32(3, 2, 8), _f32(2, 2)
    panels = pack_panels(w, transposed=True)
    with pytest.raises(TypeError, match="float32"):
        lstm_layer_forward(ig.astype(np.float64), h, h, panels)
    with pytest.raises(ValueError, match="hx"):
        lstm_layer_forward(ig, _f32(3, 2), h, panels)
    with pytest.raises(ValueError, match="panels"):
        lstm_layer_forward(ig, h, h, pack_panels(w))  # not transposed: (1, 8, 16)
    with pytest.raises(ValueError, match="contiguous"):
        lstm_layer_forward(np.asfortranarray(ig), h, h, panels)
    with pytest.raises(ValueError, match="hidden_bias"):
        lstm_layer_forward(ig, h, h, panels, _f32(7))
    out, cells, work = _forward_steps(ig, h, h, w, None, False)
    with pytest.raises(ValueError, match="grad_output"):
        lstm_layer_backward(_f32(3, 2, 3), None, h, cells, work, pack_panels(w))
    with pytest.raises(ValueError, match="panels"):
        lstm_layer_backward(out, None, h, cells, work, panels)
    with pytest.raises(TypeError, match="float32"):
        lstm_layer_backward(out, None, h, cells, work.astype(np.float64), pack_panels(w))


# ------------------------------------------------------------------------------ GRU


def _gru_forward_steps(ig, h, w, b, reverse):
    """The Python steps of _impl_rnn._gru_layer (float32, packed weight)."""
    panels = pack_panels(w, transposed=True)
    steps, batch, hidden = ig.shape[0], ig.shape[1], h.shape[1]
    out = np.empty((steps, batch, hidden), np.float32)
    work = np.empty((steps, batch, 5 * hidden), np.float32)
    for t in _steps(steps, reverse):
        hy, ws = gru_cell_forward(ig[t], panel_matmul(h, panels, w.shape[0], b), h)
        out[t], work[t] = hy, ws
        h = hy
    return out, work


def _gru_backward_steps(grad_out, w, work, reverse):
    """The Python steps of graph-engine's _gru_arrays (float32, packed weight)."""
    steps, batch, hidden = grad_out.shape
    panels = pack_panels(w)
    dig = np.empty((steps, batch, 3 * hidden), np.float32)
    dhg = np.empty((steps, batch, 3 * hidden), np.float32)
    gh = None
    for t in _steps(steps, not reverse):
        ghy = grad_out[t] if gh is None else grad_out[t] + gh
        gi, ghg, ghx, _, _ = gru_cell_backward(ghy, work[t])
        dig[t], dhg[t] = gi, ghg
        gh = ghx + panel_matmul(ghg, panels, hidden)
    return dig, dhg, gh


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    ("steps", "batch", "hidden"), [(2, 1, 1), (5, 3, 7), (10, 32, 128), (3, 64, 17)]
)
def test_gru_forward_has_the_bits_of_the_python_steps(steps, batch, hidden, bias, reverse):
    ig = _f32(steps, batch, 3 * hidden)
    h = _f32(batch, hidden)
    w = _f32(3 * hidden, hidden) * 0.3
    b = _f32(3 * hidden) if bias else None
    got = gru_layer_forward(ig, h, pack_panels(w, transposed=True), b, reverse)
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    for g, x in zip(got, _gru_forward_steps(ig, h, w, b, reverse)):
        assert g.shape == x.shape and g.dtype == np.float32 and g.flags.c_contiguous
        assert g.tobytes() == x.tobytes()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    ("steps", "batch", "hidden"), [(1, 2, 3), (2, 1, 1), (6, 4, 9), (10, 32, 128)]
)
def test_gru_backward_has_the_bits_of_the_python_steps(steps, batch, hidden, reverse):
    ig = _f32(steps, batch, 3 * hidden)
    w = _f32(3 * hidden, hidden) * 0.3
    out, work = _gru_forward_steps(ig, _f32(batch, hidden), w, _f32(3 * hidden), reverse)
    go = _f32(steps, batch, hidden)
    got = gru_layer_backward(go, work, pack_panels(w), reverse)
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    for g, x in zip(got, _gru_backward_steps(go, w, work, reverse)):
        assert g.shape == x.shape and g.dtype == np.float32
        assert g.tobytes() == x.tobytes()


def test_gru_zero_rows_and_checks():
    w = _f32(6, 2)
    ig, h = np.zeros((3, 0, 6), np.float32), np.zeros((0, 2), np.float32)
    got = gru_layer_forward(ig, h, pack_panels(w, transposed=True))
    if got is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    assert [a.shape for a in got] == [(3, 0, 2), (3, 0, 10)]
    back = gru_layer_backward(got[0], got[1], pack_panels(w))
    assert [a.shape for a in back] == [(3, 0, 6), (3, 0, 6), (0, 2)]
    ig, h = _f32(3, 2, 6), _f32(2, 2)
    with pytest.raises(TypeError, match="float32"):
        gru_layer_forward(ig.astype(np.float64), h, pack_panels(w, transposed=True))
    with pytest.raises(ValueError, match="panels"):
        gru_layer_forward(ig, h, pack_panels(w))
    with pytest.raises(ValueError, match="hx"):
        gru_layer_forward(ig, _f32(2, 3), pack_panels(w, transposed=True))
    out, work = _gru_forward_steps(ig, h, w, None, False)
    with pytest.raises(ValueError, match="grad_output"):
        gru_layer_backward(_f32(2, 2, 2), work, pack_panels(w))
    with pytest.raises(ValueError, match="workspace"):
        gru_layer_backward(out, work[..., :9], pack_panels(w))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("grads", ["output", "cells", "last_step_only"])
@pytest.mark.parametrize(("steps", "batch", "hidden"), [(2, 1, 1), (30, 20, 33)])
def test_backward_without_the_initial_state_s_gradient(steps, batch, hidden, grads, reverse):
    # Note [The initial state's product only when wanted]: grad_hx None, the rest the bits
    ig = _f32(steps, batch, 4 * hidden)
    h0, c0 = _f32(batch, hidden), _f32(batch, hidden)
    w = _f32(4 * hidden, hidden) * 0.3
    out, cells, work = _forward_steps(ig, h0, c0, w, None, reverse)
    go = _f32(steps, batch, hidden) if grads == "output" else None
    gcs = _f32(steps, batch, hidden) if grads == "cells" else None
    if grads == "last_step_only":
        gcs = np.zeros((steps, batch, hidden), np.float32)
        gcs[0 if reverse else steps - 1] = _f32(batch, hidden)
    panels = pack_panels(w)
    full = lstm_layer_backward(go, gcs, c0, cells, work, panels, reverse)
    if full is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    got = lstm_layer_backward(go, gcs, c0, cells, work, panels, reverse, need_hx=False)
    assert got[1] is None
    for i in (0, 2):
        assert got[i].tobytes() == full[i].tobytes()
    back = lstm_layer_backward(None, None, c0, cells, work, panels, reverse, need_hx=False)
    assert back[1] is None and not back[0].any() and not back[2].any()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("steps", "batch", "hidden"), [(1, 2, 3), (2, 1, 1), (10, 32, 128)])
def test_gru_backward_without_the_initial_state_s_gradient(steps, batch, hidden, reverse):
    ig = _f32(steps, batch, 3 * hidden)
    w = _f32(3 * hidden, hidden) * 0.3
    out, work = _gru_forward_steps(ig, _f32(batch, hidden), w, _f32(3 * hidden), reverse)
    go = _f32(steps, batch, hidden)
    full = gru_layer_backward(go, work, pack_panels(w), reverse)
    if full is None:
        pytest.skip("no AVX2 panel kernel on this CPU")
    got = gru_layer_backward(go, work, pack_panels(w), reverse, need_hx=False)
    assert got[2] is None
    assert got[0].tobytes() == full[0].tobytes() and got[1].tobytes() == full[1].tobytes()
    empty = np.zeros((steps, 0, 3 * hidden), np.float32)
    back = gru_layer_backward(np.zeros((steps, 0, hidden), np.float32),
                              np.zeros((steps, 0, 5 * hidden), np.float32), pack_panels(w),
                              reverse, need_hx=False)  # fmt: skip
    assert back[2] is None and back[0].shape == empty.shape
