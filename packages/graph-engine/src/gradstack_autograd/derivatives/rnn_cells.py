"""Derivatives of the fused recurrent cells ``_thnn_fused_lstm_cell`` and
``_thnn_fused_gru_cell`` (tensor-core's ``_impl_rnn.py``): their backward on arrays by the
cells' kernels and in gradstack ops under create_graph (Note [The fused cells' two backward
paths]), their forward formulas; the recurrent layers' rows (``rnn.py``) build on these."""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor, kernels
from gradstack_tensor.extension import data_of

from .._op_node import run_fused
from ._formulas import (
    _grad_mode,
)
from ._table import jvp, register
from .batching import (
    per_sample,
)

#
# Note [The fused cells' two backward paths]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As torch's derivatives.yaml: without create_graph, the gradients come from the fused
# kernels (``gradstack_tensor.kernels.lstm_cell_backward``/``gru_cell_backward``) on the
# saved workspace, one pass a row; with create_graph (or forward AD active, or arrays
# the kernels do not take: a batched backward's 3-D gradients) from torch's
# ``_thnn_differentiable_lstm_cell_backward``/``_gru_cell_backward``: the gates
# recomputed from the saved inputs and the same formulas in gradstack ops, which
# differentiate again.  Both compute ``sigmoid_backward(g, y) = g * (1 - y) * y`` and
# ``tanh_backward(g, y) = g * (1 - y * y)`` in the same order, so they agree to rounding.
# The workspace output is not differentiable (torch's ``output_differentiability``):
# a gradient reaching it is refused rather than dropped.  Dims are counted from the end,
# so that a batched backward's leading dim passes through.


def _sigmoid_backward(grad, y):
    return grad * (1 - y) * y


def _tanh_backward(grad, y):
    return grad * (1 - y * y)


def _no_workspace_grad(op, grad_workspace):
    if grad_workspace is not None:
        raise RuntimeError(
            f"{op}: its workspace output is not differentiable; compute a loss from hy "
            "(and cy) only"
        )


def _plus(*terms):
    """The sum of the terms that are not None (None when all are)."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def _bias_tangent(t, lead):
    """A bias's tangent ``lead + (G,)`` made to broadcast over the rows: ``lead + (1, G)``."""
    if t is None or not lead:
        return t
    return t.reshape(tuple(lead) + (1, t.shape[-1]))


def _dense(grad):
    """A gradient made C-contiguous for the fused kernels, on the first-order path only
    (``out.sum()``'s gradient reaches the last step as an expanded view)."""
    if grad is None or _grad_mode() or not isinstance(grad, Tensor):
        return grad
    return grad.contiguous()


def _chunks(t, count):
    return (None,) * count if t is None else t.chunk(count, -1)


def _lstm_cell_differentiable(grad_hy, grad_cy, ig, hg, ib, hb, cx, cy):
    """torch's ``_thnn_differentiable_lstm_cell_backward``, in gradstack ops."""
    i, f, c, o = _plus(ig, hg, ib, hb).chunk(4, -1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    gcx = cy.tanh()
    if grad_hy is not None:
        gog = _sigmoid_backward(grad_hy * gcx, o)
        gcx = _tanh_backward(grad_hy * o, gcx)
        if grad_cy is not None:
            gcx = gcx + grad_cy
    else:
        gog = gt.zeros_like(grad_cy)
        gcx = grad_cy
    gig = _sigmoid_backward(gcx * c, i)
    gfg = _sigmoid_backward(gcx * cx, f)
    gcg = _tanh_backward(gcx * i, c)
    return gt.cat([gig, gfg, gcg, gog], -1), gcx * f


@register(
    "_thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias)",
    "ThnnFusedLstmCellBackward0",
    inputs="input_gates, hidden_gates, cx, input_bias, hidden_bias",
    save="input_gates, hidden_gates, cx, input_bias, hidden_bias, result",
    batch=per_sample("a recurrent step of a batch of rows, rare inside vmap"),
)
def _fused_lstm_cell_backward(ctx, grad_hy, grad_cy=None, grad_workspace=None):
    _no_workspace_grad("_thnn_fused_lstm_cell", grad_workspace)
    ig, hg, cx, ib, hb, (_, cy, workspace) = (
        ctx.saved_value(k)
        for k in ("input_gates", "hidden_gates", "cx", "input_bias", "hidden_bias", "result")
    )
    if grad_hy is None and grad_cy is None:
        return (None,) * 5
    has_bias = ib is not None or hb is not None
    grad_hy, grad_cy = _dense(grad_hy), _dense(grad_cy)
    r = None
    if (grad_hy is None or isinstance(grad_hy, Tensor)) and (
        grad_cy is None or isinstance(grad_cy, Tensor)
    ):
        ws = data_of(workspace)
        known = [g for g in (grad_hy, grad_cy) if g is not None]

        def kernel(*arrays):
            gh = arrays[0] if grad_hy is not None else None
            gc = arrays[len(known) - 1] if grad_cy is not None else None
            gates, gcx, gb = kernels.lstm_cell_backward(
                gh, gc, arrays[-2], arrays[-1], ws, has_bias
            )
            return (gates, gcx) if gb is None else (gates, gcx, gb)

        if data_of(cx).shape == data_of(cy).shape and ws.dtype == data_of(cy).dtype:
            r = run_fused(kernel, (*known, cx, cy))
    if r is not None:
        gates, gcx = r[0], r[1]
        gb = r[2] if has_bias else None
    else:
        gates, gcx = _lstm_cell_differentiable(grad_hy, grad_cy, ig, hg, ib, hb, cx, cy)
        gb = gates.sum(-2) if has_bias else None
    return (
        gates,
        gates,
        gcx,
        gb if ib is not None else None,
        gb if hb is not None else None,
    )


@jvp("_thnn_fused_lstm_cell")
def _fused_lstm_cell_jvp(args, out, tangents, lead):
    ig, hg, cx, ib, hb = (tuple(args) + (None, None))[:5]
    t_ig, t_hg, t_cx, t_ib, t_hb = (tuple(tangents) + (None, None))[:5]
    t_ib, t_hb = _bias_tangent(t_ib, lead), _bias_tangent(t_hb, lead)
    t_pre = _plus(t_ig, t_hg, t_ib, t_hb)
    if t_pre is None and t_cx is None:
        return None
    i, f, g, o = _plus(ig, hg, ib, hb).chunk(4, -1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    ti, tf, tg, to = _chunks(t_pre, 4)
    t_cy = _plus(
        None if tf is None else tf * (1 - f) * f * cx,
        None if t_cx is None else f * t_cx,
        None if ti is None else ti * (1 - i) * i * g,
        None if tg is None else i * (tg * (1 - g * g)),
    )
    cy = out[1]
    tanh_cy = cy.tanh()
    t_hy = _plus(
        None if to is None else to * (1 - o) * o * tanh_cy,
        o * (t_cy * (1 - tanh_cy * tanh_cy)),
    )
    return (t_hy, t_cy, None)


def _gru_cell_differentiable(grad_hy, ig, hg, ib, hb, hx):
    """torch's ``_thnn_differentiable_gru_cell_backward``, in gradstack ops."""
    ir, ii, in_ = _plus(ig, ib).chunk(3, -1)
    hr, hi, hn = _plus(hg, hb).chunk(3, -1)
    rg = (ir + hr).sigmoid()
    zg = (ii + hi).sigmoid()
    grad_hx = grad_hy * zg
    ng = (in_ + rg * hn).tanh()
    gig = _sigmoid_backward(grad_hy * (hx - ng), zg)
    gin = _tanh_backward(grad_hy * (1 - zg), ng)
    ghn = gin * rg
    grg = _sigmoid_backward(gin * hn, rg)
    return gt.cat([grg, gig, gin], -1), gt.cat([grg, gig, ghn], -1), grad_hx


@register(
    "_thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias)",
    "ThnnFusedGruCellBackward0",
    inputs="input_gates, hidden_gates, hx, input_bias, hidden_bias",
    save="input_gates, hidden_gates, hx, input_bias, hidden_bias, result",
    batch=per_sample("a recurrent step of a batch of rows, rare inside vmap"),
)
def _fused_gru_cell_backward(ctx, grad_hy, grad_workspace=None):
    _no_workspace_grad("_thnn_fused_gru_cell", grad_workspace)
    ig, hg, hx, ib, hb, (_, workspace) = (
        ctx.saved_value(k)
        for k in ("input_gates", "hidden_gates", "hx", "input_bias", "hidden_bias", "result")
    )
    if grad_hy is None:
        return (None,) * 5
    has_bias = ib is not None or hb is not None
    grad_hy = _dense(grad_hy)
    r = None
    if isinstance(grad_hy, Tensor):
        ws = data_of(workspace)

        def kernel(g, _hx):
            out = kernels.gru_cell_backward(g, ws, has_bias)
            return out if has_bias else out[:3]

        if ws.dtype == data_of(hx).dtype:
            r = run_fused(kernel, (grad_hy, hx))
    if r is not None:
        gi, gh, ghx = r[0], r[1], r[2]
        gbi, gbh = (r[3], r[4]) if has_bias else (None, None)
    else:
        gi, gh, ghx = _gru_cell_differentiable(grad_hy, ig, hg, ib, hb, hx)
        gbi, gbh = (gi.sum(-2), gh.sum(-2)) if has_bias else (None, None)
    return (gi, gh, ghx, gbi if ib is not None else None, gbh if hb is not None else None)


@jvp("_thnn_fused_gru_cell")
def _fused_gru_cell_jvp(args, out, tangents, lead):
    ig, hg, hx, ib, hb = (tuple(args) + (None, None))[:5]
    t_ig, t_hg, t_hx, t_ib, t_hb = (tuple(tangents) + (None, None))[:5]
    t_ib, t_hb = _bias_tangent(t_ib, lead), _bias_tangent(t_hb, lead)
    t_in, t_h = _plus(t_ig, t_ib), _plus(t_hg, t_hb)
    if t_in is None and t_h is None and t_hx is None:
        return None
    ir, iz, in_ = _plus(ig, ib).chunk(3, -1)
    hr, hz, hn = _plus(hg, hb).chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    tir, tiz, tin = _chunks(t_in, 3)
    thr, thz, thn = _chunks(t_h, 3)
    tr = _plus(tir, thr)
    tr = None if tr is None else tr * (1 - r) * r
    tz = _plus(tiz, thz)
    tz = None if tz is None else tz * (1 - z) * z
    tn = _plus(tin, None if tr is None else tr * hn, None if thn is None else r * thn)
    tn = None if tn is None else tn * (1 - n * n)
    t_hy = _plus(
        None if t_hx is None else t_hx * z,
        None if tn is None else tn * (1 - z),
        None if tz is None else (hx - n) * tz,
    )
    return (t_hy, None)
