"""Derivatives of the recurrent layers' ops: ``_lstm_layer`` and ``_gru_layer``
(tensor-core's ``_impl_rnn.py``, Note [A recurrent layer is one op]).

Note [A layer's two backward paths]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As the fused cells' (Note [The fused cells' two backward paths] in ``rnn_cells.py``): a
first-order backward of float32/float64 gradients runs on arrays: the cells' backward
kernels step by step, from the last step the forward ran to the first, each step's
hidden-state gradient the next step's output gradient plus ``dgates W_hh`` (one product a
step), and then the weight gradient as ONE product over all the steps, ``dgates^T`` of
``(G H, T N)`` times the steps' input states ``(T N, H)``, the bias gradient one column sum,
the input gates' gradient the stacked gate gradients themselves.  Under create_graph,
forward-mode AD or a batched backward, the same recursion runs in gradstack ops (the
cells' differentiable formulas of ``rnn_cells.py``, the hidden products recomputed from the
saved states), which differentiate again.  The two agree to rounding: the weight
gradient's terms are summed in another order.

Examples
--------
>>> import gradstack_tensor as gt
>>> ig = gt.zeros(2, 1, 4, requires_grad=True)
>>> out, cells, _ = gt.get_op("_lstm_layer")(ig, gt.zeros(1, 1), gt.zeros(1, 1),
...                                         gt.zeros(4, 1), None, False)
>>> out.sum().backward()
>>> ig.grad.shape
gradstack.Size([2, 1, 4])
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from ._formulas import _first_order_arrays
from ._table import jvp, register
from .batching import per_sample
from .rnn_cells import (
    _fused_gru_cell_jvp,
    _fused_lstm_cell_jvp,
    _gru_cell_differentiable,
    _lstm_cell_differentiable,
    _no_workspace_grad,
    _plus,
)

__all__: list[str] = []


def _order(steps, reverse):
    """The steps in the order the forward ran them."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _arrays_path(grads, saved):
    """The saved values and gradients as arrays of one kernel dtype, C-contiguous (None
    for a missing gradient), or None when the formula must run in gradstack ops."""
    known = [g for g in grads if g is not None]
    if not all(isinstance(g, Tensor) for g in known) or not _first_order_arrays(known[0]):
        return None
    dtype = _data(saved[0]).dtype
    arrays = [None if t is None else _data(t) for t in saved]
    grad_arrays = [None if g is None else _data(g) for g in grads]
    if any(a is not None and a.dtype != dtype for a in arrays + grad_arrays):
        return None
    contiguous = [None if a is None else np.ascontiguousarray(a) for a in arrays]
    return contiguous, [None if g is None else np.ascontiguousarray(g) for g in grad_arrays]


def _times(w, steps):
    """``f(g) = g @ w`` for the ``steps`` steps' gradients: float32 from ``w`` packed once
    (Note [A packed weight for the steps] in tensor-core's _recurrent_gemm.pyx), else
    numpy (also for one step: packing would be an extra pass)."""
    if w.dtype != np.float32 or steps < 2:
        return lambda g: g @ w
    panels = None

    def times(g):
        nonlocal panels
        if g.shape[0] > _PANEL_ROWS:
            return g @ w
        if panels is None:
            panels = kernels.pack_panels(np.ascontiguousarray(w))
        return kernels.panel_matmul(np.ascontiguousarray(g), panels, w.shape[1])

    return times


_PANEL_ROWS = 64  # as tensor-core's forward (_impl_rnn.py's PANEL_ROWS)


def _previous(out, h0, reverse):
    """Each step's input state, ``(T, N, H)``: ``h0`` then the outputs, in step order."""
    if reverse:
        return np.concatenate([out[1:], h0[None]], 0)
    return np.concatenate([h0[None], out[:-1]], 0)


def _weight_grads(dgates, prev, has_bias):
    """``dgates^T @ prev`` over all the steps (one GEMM), and ``dgates``' column sums."""
    flat = dgates.reshape(-1, dgates.shape[-1])
    gw = flat.T @ prev.reshape(-1, prev.shape[-1])
    return gw, (flat.sum(0) if has_bias else None)


def _previous_tensor(out, h0, t, steps, reverse):
    if reverse:
        return h0 if t == steps - 1 else out[t + 1]
    return h0 if t == 0 else out[t - 1]


def _hidden_gates(h, w, b):
    """``h W^T + b`` as the forward computed it (``addmm``'s arithmetic)."""
    return h.matmul(w.t()) if b is None else gt.addmm(b, h, w.t())


def _stack_grads(per_step):
    """The steps' gradients stacked on dim -3, zeros for the steps none reached."""
    known = [g for g in per_step if g is not None]
    if not known:
        return None
    return gt.stack([gt.zeros_like(known[0]) if g is None else g for g in per_step], -3)


def _weight_grads_ops(dgates, out, hx, reverse, has_bias):
    """:func:`_weight_grads` in gradstack ops, ``dgates`` with a batched backward's lead."""
    steps = out.shape[0]
    prev = gt.stack([_previous_tensor(out, hx, t, steps, reverse) for t in range(steps)], 0)
    lead = tuple(dgates.shape[:-3])
    flat = dgates.reshape(lead + (-1, dgates.shape[-1]))
    gw = flat.transpose(-1, -2).matmul(prev.reshape(-1, prev.shape[-1]))
    return gw, (flat.sum(-2) if has_bias else None)


# Note [A layer op that projects its input] (tensor-core's _impl_rnn.py): with
# ``weight_ih``, the op's first argument is the layer's input ``x`` and its gates' gradient
# goes on through the projection, as a separate Linear's AddmmBackward0 and
# ViewBackward0 would take it: ``dgates W_ih`` for ``x``, ``dgates^T x`` for ``W_ih``, the
# column sums for ``b_ih``.


def _input_grads_arrays(dgates, x, w_ih, has_bias, need_x=True):
    """``(grad x, grad W_ih, grad b_ih)`` from the gates' gradient ``(T, N, G)`` (arrays,
    AddmmBackward0's products: Note [A linear layer's gradients as two GEMMs]); ``grad
    x`` None without ``need_x`` (an input that wants no gradient: its product skipped)."""
    flat = dgates.reshape(-1, dgates.shape[-1])
    gx = np.matmul(flat, w_ih).reshape(x.shape) if need_x else None
    gw = np.matmul(flat.T, np.reshape(x, (-1, x.shape[-1])))
    return gx, gw, (flat.sum(0) if has_bias else None)


def _input_grads_ops(dgates, x, w_ih, has_bias):
    """:func:`_input_grads_arrays` in gradstack ops, ``dgates`` with a batched backward's
    lead dims."""
    lead = tuple(dgates.shape[:-3])
    flat = dgates.reshape(lead + (-1, dgates.shape[-1]))
    gx = flat.matmul(w_ih).reshape(lead + tuple(x.shape))
    gw = flat.transpose(-1, -2).matmul(x.reshape(-1, x.shape[-1]))
    return gx, gw, (flat.sum(-2) if has_bias else None)


def _projected_gates(x, w_ih, b_ih):
    """``x W_ih^T + b_ih`` in gradstack ops, as F.linear computes it (the forward's
    values), for the paths that recompute the cells in ops."""
    flat = x.reshape(-1, x.shape[-1])
    out = flat.matmul(w_ih.t()) if b_ih is None else gt.addmm(b_ih, flat, w_ih.t())
    return out.view(x.shape[0], x.shape[1], w_ih.shape[0])


def _projected_tangent(x, t_x, w_ih, t_w, t_b, lead):
    """The tangent of :func:`_projected_gates` (None when no tangent reaches it)."""
    if t_x is None and t_w is None and t_b is None:
        return None
    shape = tuple(lead) + (x.shape[0], x.shape[1], w_ih.shape[0])
    terms = []
    if t_x is not None:
        terms.append(t_x.matmul(w_ih.t()))
    if t_w is not None:
        terms.append(x.matmul(t_w.transpose(-1, -2).unsqueeze(-3) if lead else t_w.t()))
    if t_b is not None:
        terms.append(t_b.reshape(tuple(lead) + (1, 1, t_b.shape[-1])))
    return _plus(*terms).expand(shape)


# ------------------------------------------------------------------------------ LSTM


def _lstm_arrays(grad_out, grad_cells, ig, hx, cx, w, b, reverse, out, cells, work,
                 need_hx=True):  # fmt: skip
    steps, batch, hidden = out.shape
    if work.dtype == np.float32 and steps >= 2 and batch <= _PANEL_ROWS:
        # Note [A layer's steps in one C loop] (tensor-core's _recurrent_layers.pyx); Note
        # [The initial state's product only when wanted] (grad_hx None without need_hx)
        panels = kernels.pack_panels(w)
        done = kernels.lstm_layer_backward(
            grad_out, grad_cells, cx, cells, work, panels, reverse, need_hx
        )
        if done is not None:
            dgates, gh, gc = done
            gw, gb = _weight_grads(dgates, _previous(out, hx, reverse), b is not None)
            return dgates, gh, gc, gw, gb
    if steps == 1:  # Note [A layer of one step] (tensor-core's _impl_rnn.py)
        ghy = None if grad_out is None else grad_out[0]
        gcy = None if grad_cells is None else grad_cells[0]
        g, gc, _ = kernels.lstm_cell_backward(ghy, gcy, cx, cells[0], work[0])
        gw, gb = _weight_grads(g, hx, b is not None)
        zeros = np.zeros((batch, hidden), work.dtype)
        return g[None], g @ w, (zeros if gc is None else gc), gw, gb
    dgates = np.empty(work.shape, work.dtype)
    times = _times(w, steps)
    gh = gc = None
    for t in _order(steps, not reverse):  # backward: the forward's steps, last first
        ghy = grad_out[t] if grad_out is not None else None
        ghy = gh if ghy is None else (ghy if gh is None else ghy + gh)
        gcy = grad_cells[t] if grad_cells is not None else None
        gcy = gc if gcy is None else (gcy if gc is None else gcy + gc)
        if ghy is None and gcy is None:
            dgates[t] = 0
            continue
        c_prev = _previous_step(cells, cx, t, steps, reverse)
        g, gc, _ = kernels.lstm_cell_backward(ghy, gcy, c_prev, cells[t], work[t])
        dgates[t] = g
        gh = times(g)
    zeros = np.zeros((batch, hidden), work.dtype)
    gw, gb = _weight_grads(dgates, _previous(out, hx, reverse), b is not None)
    return dgates, (zeros if gh is None else gh), (zeros if gc is None else gc), gw, gb


def _previous_step(states, first, t, steps, reverse):
    if reverse:
        return first if t == steps - 1 else states[t + 1]
    return first if t == 0 else states[t - 1]


@register(
    "_lstm_layer(input_gates, hx, cx, weight_hh, bias_hh, reverse, weight_ih, bias_ih)",
    "LstmLayerBackward0",
    inputs="input_gates, hx, cx, weight_hh, bias_hh, weight_ih, bias_ih",
    save="input_gates, hx, cx, weight_hh, bias_hh, reverse, weight_ih, bias_ih, result",
    batch=per_sample("a recurrent layer over a batch of sequences, rare inside vmap"),
)
def _lstm_layer_backward(ctx, grad_output, grad_cells=None, grad_workspace=None):
    _no_workspace_grad("_lstm_layer", grad_workspace)
    ig, hx, cx, w, b, reverse, w_ih, b_ih, (out, cells, work) = (
        ctx.saved_value(k)
        for k in ("input_gates", "hx", "cx", "weight_hh", "bias_hh", "reverse", "weight_ih",
                  "bias_ih", "result")
    )  # fmt: skip
    if grad_output is None and grad_cells is None:
        return (None,) * 7
    steps = out.shape[0]
    ready = _arrays_path((grad_output, grad_cells), (ig, hx, cx, w, b, out, cells, work, w_ih))
    if ready is not None and steps:
        (ig_a, hx_a, cx_a, w_a, b_a, out_a, cells_a, work_a, w_ih_a), (go, gcs) = ready
        need = ctx.needs_input_grad
        r = _lstm_arrays(go, gcs, None, hx_a, cx_a, w_a, b_a, reverse, out_a, cells_a, work_a,
                         need[1])  # fmt: skip
        dgates, ghx, gcx, gw, gb = r
        gw_ih = gb_ih = None
        if w_ih is not None:  # Note [A layer op that projects its input]
            # the gates' gradient is both products': b_ih's gradient is b_hh's column sums
            same = b_ih is not None and gb is not None
            dgates, gw_ih, gb_ih = _input_grads_arrays(
                dgates, ig_a, w_ih_a, b_ih is not None and not same, need[0]
            )
            gb_ih = gb.copy() if same else gb_ih
        return tuple(
            None if a is None else _wrap(a)
            for a in (dgates, ghx, gcx, gw, gb if b is not None else None, gw_ih, gb_ih)
        )
    # Note [A layer's two backward paths]: in gradstack ops
    x = None
    if w_ih is not None:
        x, ig = ig, _projected_gates(ig, w_ih, b_ih)
    per_step = [None] * steps
    gh = gc = None
    for t in _order(steps, not reverse):
        ghy = _plus(_step_tangent(grad_output, t), gh)
        gcy = _plus(_step_tangent(grad_cells, t), gc)
        if ghy is None and gcy is None:
            continue
        h_prev = _previous_tensor(out, hx, t, steps, reverse)
        c_prev = _previous_tensor(cells, cx, t, steps, reverse)
        gates, gc = _lstm_cell_differentiable(
            ghy, gcy, ig[t], _hidden_gates(h_prev, w, b), None, None, c_prev, cells[t]
        )
        per_step[t] = gates
        gh = gates.matmul(w)
    dgates = _stack_grads(per_step)
    if dgates is None:
        return (None,) * 7
    gw, gb = _weight_grads_ops(dgates, out, hx, reverse, b is not None)
    if x is None:
        return dgates, gh, gc, gw, gb, None, None
    gx, gw_ih, gb_ih = _input_grads_ops(dgates, x, w_ih, b_ih is not None)
    return gx, gh, gc, gw, gb, gw_ih, gb_ih


def _step_tangent(tangent, t):
    """Step ``t`` of a ``lead + (T, N, G)`` tangent (dims from the end)."""
    return None if tangent is None else tangent.select(-3, t)


def _hidden_tangent(h_prev, t_h, w, t_w, t_b, lead):
    """The tangent of ``h W^T + b``."""
    return _plus(
        None if t_h is None else t_h.matmul(w.t()),
        None if t_w is None else h_prev.matmul(t_w.transpose(-1, -2)),
        None if t_b is None or not lead else t_b.reshape(tuple(lead) + (1, t_b.shape[-1])),
        None if t_b is None or lead else t_b,
    )


def _stack_tangents(per_step, like, lead):
    if all(t is None for t in per_step):
        return None
    shape = tuple(lead) + tuple(like.shape[1:])
    zeros = gt.zeros(shape, dtype=like.dtype)
    return gt.stack([zeros if t is None else t for t in per_step], -3)


@jvp("_lstm_layer")
def _lstm_layer_jvp(args, out, tangents, lead):
    ig, hx, cx, w, b = (tuple(args) + (None,) * 8)[:5]
    reverse = bool((tuple(args) + (False,) * 8)[5])
    w_ih, b_ih = (tuple(args) + (None,) * 8)[6:8]
    t_ig, t_hx, t_cx, t_w, t_b, t_wih, t_bih = (tuple(tangents) + (None,) * 7)[:7]
    if all(t is None for t in (t_ig, t_hx, t_cx, t_w, t_b, t_wih, t_bih)):
        return None
    if w_ih is not None:  # Note [A layer op that projects its input]
        x = ig
        ig = _projected_gates(x, w_ih, b_ih)
        t_ig = _projected_tangent(x, t_ig, w_ih, t_wih, t_bih, lead)
    output, cells = out[0], out[1]
    steps = output.shape[0]
    t_out, t_cells = [None] * steps, [None] * steps
    t_h, t_c = t_hx, t_cx
    for t in _order(steps, reverse):
        h_prev = _previous_tensor(output, hx, t, steps, reverse)
        c_prev = _previous_tensor(cells, cx, t, steps, reverse)
        hg = _hidden_gates(h_prev, w, b)
        t_hg = _hidden_tangent(h_prev, t_h, w, t_w, t_b, lead)
        r = _fused_lstm_cell_jvp(
            (ig[t], hg, c_prev, None, None),
            (output[t], cells[t], None),
            (_step_tangent(t_ig, t), t_hg, t_c, None, None),
            lead,
        )
        t_h, t_c = (None, None) if r is None else (r[0], r[1])
        t_out[t], t_cells[t] = t_h, t_c
    return (_stack_tangents(t_out, output, lead), _stack_tangents(t_cells, cells, lead), None)


# ------------------------------------------------------------------------------- GRU


def _gru_arrays(grad_out, hx, w, b, reverse, out, work, need_hx=True):
    steps, batch, hidden = out.shape
    if work.dtype == np.float32 and steps >= 2 and batch <= _PANEL_ROWS:
        # Note [A layer's steps in one C loop] (tensor-core's _recurrent_layers.pyx); Note
        # [The initial state's product only when wanted] (grad_hx None without need_hx)
        panels = kernels.pack_panels(w)
        done = kernels.gru_layer_backward(grad_out, work, panels, reverse, need_hx)
        if done is not None:
            dig, dhg, gh = done
            gw, gb = _weight_grads(dhg, _previous(out, hx, reverse), b is not None)
            return dig, gh, gw, gb
    if steps == 1:  # Note [A layer of one step] (tensor-core's _impl_rnn.py)
        gi, ghg, ghx, _, _ = kernels.gru_cell_backward(grad_out[0], work[0])
        gw, gb = _weight_grads(ghg, hx, b is not None)
        return gi[None], ghx + ghg @ w, gw, gb
    dig = np.empty((steps, batch, 3 * hidden), work.dtype)
    dhg = np.empty((steps, batch, 3 * hidden), work.dtype)
    times = _times(w, steps)
    gh = None
    for t in _order(steps, not reverse):
        ghy = grad_out[t] if gh is None else grad_out[t] + gh
        gi, ghg, ghx, _, _ = kernels.gru_cell_backward(ghy, work[t])
        dig[t], dhg[t] = gi, ghg
        gh = ghx + times(ghg)
    gw, gb = _weight_grads(dhg, _previous(out, hx, reverse), b is not None)
    zeros = np.zeros((batch, hidden), work.dtype)
    return dig, (zeros if gh is None else gh), gw, gb


@register(
    "_gru_layer(input_gates, hx, weight_hh, bias_hh, reverse, weight_ih, bias_ih)",
    "GruLayerBackward0",
    inputs="input_gates, hx, weight_hh, bias_hh, weight_ih, bias_ih",
    save="input_gates, hx, weight_hh, bias_hh, reverse, weight_ih, bias_ih, result",
    batch=per_sample("a recurrent layer over a batch of sequences, rare inside vmap"),
)
def _gru_layer_backward(ctx, grad_output, grad_workspace=None):
    _no_workspace_grad("_gru_layer", grad_workspace)
    ig, hx, w, b, reverse, w_ih, b_ih, (out, work) = (
        ctx.saved_value(k)
        for k in ("input_gates", "hx", "weight_hh", "bias_hh", "reverse", "weight_ih",
                  "bias_ih", "result")
    )  # fmt: skip
    if grad_output is None:
        return (None,) * 6
    steps = out.shape[0]
    ready = _arrays_path((grad_output,), (ig, hx, w, b, out, work, w_ih))
    if ready is not None and steps:
        (ig_a, hx_a, w_a, b_a, out_a, work_a, w_ih_a), (go,) = ready
        need = ctx.needs_input_grad
        dig, ghx, gw, gb = _gru_arrays(go, hx_a, w_a, b_a, reverse, out_a, work_a, need[1])
        gw_ih = gb_ih = None
        if w_ih is not None:  # Note [A layer op that projects its input]
            dig, gw_ih, gb_ih = _input_grads_arrays(dig, ig_a, w_ih_a, b_ih is not None, need[0])
        return tuple(
            None if a is None else _wrap(a)
            for a in (dig, ghx, gw, gb if b is not None else None, gw_ih, gb_ih)
        )
    # Note [A layer's two backward paths]: in gradstack ops
    x = None
    if w_ih is not None:
        x, ig = ig, _projected_gates(ig, w_ih, b_ih)
    gi_steps, gh_steps = [None] * steps, [None] * steps
    gh = None
    for t in _order(steps, not reverse):
        ghy = _plus(_step_tangent(grad_output, t), gh)
        h_prev = _previous_tensor(out, hx, t, steps, reverse)
        gi, ghg, ghx = _gru_cell_differentiable(
            ghy, ig[t], _hidden_gates(h_prev, w, b), None, None, h_prev
        )
        gi_steps[t], gh_steps[t] = gi, ghg
        gh = ghx + ghg.matmul(w)
    dig = _stack_grads(gi_steps)
    if dig is None:
        return (None,) * 6
    gw, gb = _weight_grads_ops(_stack_grads(gh_steps), out, hx, reverse, b is not None)
    if x is None:
        return dig, gh, gw, gb, None, None
    gx, gw_ih, gb_ih = _input_grads_ops(dig, x, w_ih, b_ih is not None)
    return gx, gh, gw, gb, gw_ih, gb_ih


@jvp("_gru_layer")
def _gru_layer_jvp(args, out, tangents, lead):
    ig, hx, w, b = (tuple(args) + (None,) * 7)[:4]
    reverse = bool((tuple(args) + (False,) * 7)[4])
    w_ih, b_ih = (tuple(args) + (None,) * 7)[5:7]
    t_ig, t_hx, t_w, t_b, t_wih, t_bih = (tuple(tangents) + (None,) * 6)[:6]
    if all(t is None for t in (t_ig, t_hx, t_w, t_b, t_wih, t_bih)):
        return None
    if w_ih is not None:  # Note [A layer op that projects its input]
        x = ig
        ig = _projected_gates(x, w_ih, b_ih)
        t_ig = _projected_tangent(x, t_ig, w_ih, t_wih, t_bih, lead)
    output = out[0]
    steps = output.shape[0]
    t_out = [None] * steps
    t_h = t_hx
    for t in _order(steps, reverse):
        h_prev = _previous_tensor(output, hx, t, steps, reverse)
        hg = _hidden_gates(h_prev, w, b)
        t_hg = _hidden_tangent(h_prev, t_h, w, t_w, t_b, lead)
        r = _fused_gru_cell_jvp(
            (ig[t], hg, h_prev, None, None),
            (output[t], None),
            (_step_tangent(t_ig, t), t_hg, t_h, None, None),
            lead,
        )
        t_h = None if r is None else r[0]
        t_out[t] = t_h
    return (_stack_tangents(t_out, output, lead), None)
