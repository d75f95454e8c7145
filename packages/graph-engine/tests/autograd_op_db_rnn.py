"""Samples of the fused recurrent cells (``derivatives/nn.py``'s ``_thnn_fused_lstm_cell``
and ``_thnn_fused_gru_cell``) and layers (``derivatives/rnn.py``'s ``_lstm_layer`` and
``_gru_layer``) for graph-engine's op database.

``autograd_op_db.py`` calls :func:`extend` with itself at import: gradcheck and
gradgradcheck in float64, forward mode against reverse mode and the batched backward.
torch has these ops for CUDA only (its CPU cells record other nodes), so they are not
compared with torch here; nn-mini's ``test_fused_rnn_cells.py`` compares the layers.

Examples
--------
>>> _OUTPUTS
{'_thnn_fused_lstm_cell': 2, '_thnn_fused_gru_cell': 1}
"""

from __future__ import annotations

__all__ = ["extend"]

_OUTPUTS = {"_thnn_fused_lstm_cell": 2, "_thnn_fused_gru_cell": 1}


def extend(db) -> None:
    """Add the fused cells' samples to the autograd op database module ``db``."""
    GradOp, arr, add = db.GradOp, db.arr, db._add

    def samples(name, gates):
        count = _OUTPUTS[name]

        def call(L, *tensors):
            args = tensors + (None,) * (5 - len(tensors))
            out = L.OPS[name](*args)
            return out[:count] if count > 1 else out[0]

        def gen(rng):
            out = []
            for n, h, bias in ((3, 2, True), (2, 3, False)):
                inputs = [arr(rng, (n, gates * h)), arr(rng, (n, gates * h)), arr(rng, (n, h))]
                if bias:
                    inputs += [arr(rng, (gates * h,)), arr(rng, (gates * h,))]
                out.append(db.GradSample(tuple(inputs), call, f"{name} N={n} H={h} bias={bias}"))
            return out

        return gen

    for name, gates in (("_thnn_fused_lstm_cell", 4), ("_thnn_fused_gru_cell", 3)):
        add(GradOp(name, samples(name, gates), torch=False))

    def layer_samples(name, gates):
        def gen(rng):
            out = []
            for t, n, h, bias, reverse in ((3, 2, 2, True, False), (2, 3, 2, False, True)):
                states = [arr(rng, (n, h)) for _ in range(2 if gates == 4 else 1)]
                inputs = [arr(rng, (t, n, gates * h)), *states, arr(rng, (gates * h, h))]
                if bias:
                    inputs.append(arr(rng, (gates * h,)))

                def call(L, *tensors, _bias=bias, _reverse=reverse):
                    args = tensors if _bias else tensors + (None,)
                    out = L.OPS[name](*args, _reverse)
                    return out[:2] if gates == 4 else out[0]

                desc = f"{name} T={t} N={n} H={h} bias={bias} reverse={reverse}"
                out.append(db.GradSample(tuple(inputs), call, desc))
            # Note [A layer op that projects its input]: x, the states, W_hh, b_hh, W_ih,
            # b_ih (and without b_ih)
            for t, n, h, i, bias, reverse in ((3, 2, 2, 3, True, False), (2, 3, 2, 2, False, True)):
                states = [arr(rng, (n, h)) for _ in range(2 if gates == 4 else 1)]
                inputs = [arr(rng, (t, n, i)), *states, arr(rng, (gates * h, h)),
                          arr(rng, (gates * h,)), arr(rng, (gates * h, i))]  # fmt: skip
                if bias:
                    inputs.append(arr(rng, (gates * h,)))

                n_states = len(states)

                def call_x(L, *tensors, _bias=bias, _reverse=reverse, _states=n_states):
                    head = tensors[: 3 + _states]
                    tail = tensors[3 + _states :] + (() if _bias else (None,))
                    out = L.OPS[name](*head, _reverse, *tail)
                    return out[:2] if gates == 4 else out[0]

                desc = f"{name} projected T={t} N={n} H={h} I={i} bias={bias} reverse={reverse}"
                out.append(db.GradSample(tuple(inputs), call_x, desc))
            return out

        return gen

    for name, gates in (("_lstm_layer", 4), ("_gru_layer", 3)):
        add(GradOp(name, layer_samples(name, gates), torch=False))
