"""Entries of the fused recurrent cells (``_impl_rnn.py``) for tensor-core's op database.

``op_db.py`` calls :func:`extend` with itself at import.  torch has
``_thnn_fused_lstm_cell``/``_thnn_fused_gru_cell`` for CUDA only, so its side of the
comparison is the CPU cells' ops (aten/src/ATen/native/RNN.cpp), in their order; the
numpy references compute the same in float64.

Examples
--------
>>> import numpy as np
>>> hy, cy, ws = _lstm_ref(np.zeros((1, 4)), np.zeros((1, 4)), np.ones((1, 1)))
>>> cy.tolist(), ws.tolist()
([[0.5]], [[0.5, 0.5, 0.0, 0.5]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["extend"]


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _gates(ig, hg, ib, hb):
    g = np.asarray(ig, np.float64) + np.asarray(hg, np.float64)
    for b in (ib, hb):
        if b is not None:
            g = g + np.asarray(b, np.float64)
    return g


def _lstm_ref(ig, hg, cx, ib=None, hb=None):
    dtype = np.asarray(ig).dtype
    i, f, g, o = np.split(_gates(ig, hg, ib, hb), 4, axis=1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    cy = f * np.asarray(cx, np.float64) + i * g
    hy = o * np.tanh(cy)
    return tuple(a.astype(dtype) for a in (hy, cy, np.concatenate([i, f, g, o], axis=1)))


def _gru_ref(ig, hg, hx, ib=None, hb=None):
    dtype = np.asarray(ig).dtype
    ig = np.asarray(ig, np.float64) + (0 if ib is None else np.asarray(ib, np.float64))
    hg = np.asarray(hg, np.float64) + (0 if hb is None else np.asarray(hb, np.float64))
    ir, iz, in_ = np.split(ig, 3, axis=1)
    hr, hz, hn = np.split(hg, 3, axis=1)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    hx = np.asarray(hx, np.float64)
    hy = (hx - n) * z + n
    return tuple(a.astype(dtype) for a in (hy, np.concatenate([r, z, n, hx, hn], axis=1)))


def _floats_only(ig, op):
    """torch's kernels of these ops dispatch on floating types only (its CPU ops would
    promote integers to float instead)."""
    if not ig.is_floating_point():
        raise RuntimeError(f'"{op}" not implemented for {ig.dtype}')


def _torch_lstm(torch, ig, hg, cx, ib=None, hb=None):
    _floats_only(ig, "_thnn_fused_lstm_cell")
    gates = hg + ig
    for b in (ib, hb):
        if b is not None:
            gates = gates + b
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def _torch_gru(torch, ig, hg, hx, ib=None, hb=None):
    _floats_only(ig, "_thnn_fused_gru_cell")
    ig = ig if ib is None else ig + ib
    hg = hg if hb is None else hg + hb
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (hr + ir).sigmoid(), (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (hx - n) * z + n, torch.cat([r, z, n, hx, hn], 1)


def _steps(count, reverse):
    return range(count - 1, -1, -1) if reverse else range(count)


def _hidden_ref(h, w, b):
    return h @ np.asarray(w, np.float64).T + (0 if b is None else np.asarray(b, np.float64))


def _projected_ref(x, w_ih, b_ih):
    """``x W_ih^T + b_ih`` in float64 (the layer ops given ``weight_ih``)."""
    x, w_ih = np.asarray(x, np.float64), np.asarray(w_ih, np.float64)
    return x @ w_ih.T + (0 if b_ih is None else np.asarray(b_ih, np.float64))


def _lstm_layer_ref(ig, hx, cx, w, b=None, reverse=False, w_ih=None, b_ih=None):
    dtype = np.asarray(ig).dtype
    ig = np.asarray(ig, np.float64) if w_ih is None else _projected_ref(ig, w_ih, b_ih)
    h, c = np.asarray(hx, np.float64), np.asarray(cx, np.float64)
    out, cells, work = (np.zeros(ig.shape[:2] + (n,)) for n in (h.shape[1],) * 2 + (ig.shape[2],))
    for t in _steps(ig.shape[0], reverse):
        h, c, work[t] = _lstm_ref(ig[t], _hidden_ref(h, w, b), c)
        out[t], cells[t] = h, c
    return tuple(a.astype(dtype) for a in (out, cells, work))


def _gru_layer_ref(ig, hx, w, b=None, reverse=False, w_ih=None, b_ih=None):
    dtype = np.asarray(ig).dtype
    ig = np.asarray(ig, np.float64) if w_ih is None else _projected_ref(ig, w_ih, b_ih)
    h = np.asarray(hx, np.float64)
    out = np.zeros(ig.shape[:2] + (h.shape[1],))
    work = np.zeros(ig.shape[:2] + (5 * h.shape[1],))
    for t in _steps(ig.shape[0], reverse):
        h, work[t] = _gru_ref(ig[t], _hidden_ref(h, w, b), h)
        out[t] = h
    return out.astype(dtype), work.astype(dtype)


def _torch_lstm_layer(torch, ig, hx, cx, w, b=None, reverse=False, w_ih=None, b_ih=None):
    _floats_only(ig, "_lstm_layer")
    if w_ih is not None:
        ig = torch.nn.functional.linear(ig, w_ih, b_ih)
    h, c = hx, cx
    out, cells, work = [None] * ig.shape[0], [None] * ig.shape[0], [None] * ig.shape[0]
    for t in _steps(ig.shape[0], reverse):
        hg = h @ w.t() if b is None else torch.addmm(b, h, w.t())
        h, c, work[t] = _torch_lstm(torch, ig[t], hg, c)
        out[t], cells[t] = h, c
    if not out:
        return ig[:, :, : hx.shape[1]], ig[:, :, : hx.shape[1]], ig
    return torch.stack(out), torch.stack(cells), torch.stack(work)


def _torch_gru_layer(torch, ig, hx, w, b=None, reverse=False, w_ih=None, b_ih=None):
    _floats_only(ig, "_gru_layer")
    if w_ih is not None:
        ig = torch.nn.functional.linear(ig, w_ih, b_ih)
    h = hx
    out, work = [None] * ig.shape[0], [None] * ig.shape[0]
    for t in _steps(ig.shape[0], reverse):
        hg = h @ w.t() if b is None else torch.addmm(b, h, w.t())
        h, work[t] = _torch_gru(torch, ig[t], hg, h)
        out[t] = h
    if not out:
        return ig[:, :, : hx.shape[1]], ig.new_zeros(ig.shape[:2] + (5 * hx.shape[1],))
    return torch.stack(out), torch.stack(work)


def extend(db) -> None:
    """Add the fused cells' entries to the op database module ``db`` (``op_db.py``)."""
    make, S = db.make_array, db.SampleInput

    def samples(gates):
        def gen(info, dtype, rng):
            for n, h, layout, bias in (
                (3, 2, "c", False),
                (4, 5, "T", True),
                (2, 3, "sliced", False),
                (0, 2, "c", True),
                (1, 0, "c", False),
            ):
                ig = make((n, gates * h), dtype, rng, layout=layout)
                hg = make((n, gates * h), dtype, rng)
                state = make((n, h), dtype, rng, layout=layout)
                biases = (
                    (make((gates * h,), dtype, rng), make((gates * h,), dtype, rng))
                    if bias
                    else (None, None)
                )
                yield S(ig, (hg, state) + biases, desc=f"N={n} H={h} {layout} bias={bias}")

        return gen

    def add(name, ref, gen, torch_call):
        db._add(
            db.OpInfo(
                name,
                ref,
                gen,
                db.FLOATS,
                call=lambda gt, x, *args: gt.OPS[name](x, *args),
                torch_call=torch_call,
            ),
            function=False,
            method=False,
        )

    add("_thnn_fused_lstm_cell", _lstm_ref, samples(4), _torch_lstm)
    add("_thnn_fused_gru_cell", _gru_ref, samples(3), _torch_gru)

    def layer_samples(gates):
        def gen(info, dtype, rng):
            for t, n, h, layout, bias, reverse in (
                (3, 2, 2, "c", True, False),
                (4, 3, 5, "T", False, True),
                (2, 2, 3, "sliced", True, True),
                (0, 2, 2, "c", True, False),
                (2, 0, 2, "c", False, False),
                (1, 2, 0, "c", True, True),
            ):
                ig = make((t, n, gates * h), dtype, rng, layout=layout)
                states = [make((n, h), dtype, rng, layout=layout)]
                if gates == 4:
                    states.append(make((n, h), dtype, rng))
                w = make((gates * h, h), dtype, rng, (-0.5, 0.5), layout=layout)
                b = make((gates * h,), dtype, rng) if bias else None
                yield S(
                    ig,
                    tuple(states) + (w, b, reverse),
                    desc=f"T={t} N={n} H={h} {layout} bias={bias} reverse={reverse}",
                )
                # Note [A layer op that projects its input]: the layer's input and W_ih
                x = make((t, n, 3), dtype, rng, layout=layout)
                w_ih = make((gates * h, 3), dtype, rng, (-0.5, 0.5), layout=layout)
                b_ih = make((gates * h,), dtype, rng) if bias else None
                yield S(
                    x,
                    tuple(states) + (w, b, reverse, w_ih, b_ih),
                    desc=f"projected T={t} N={n} H={h} {layout} bias={bias} reverse={reverse}",
                )

        return gen

    add("_lstm_layer", _lstm_layer_ref, layer_samples(4), _torch_lstm_layer)
    add("_gru_layer", _gru_layer_ref, layer_samples(3), _torch_gru_layer)
