"""Samples of the fused recurrent cells (``derivatives/nn.py``'s ``_thnn_fused_lstm_cell``
and ``_thnn_fused_gru_cell``) for graph-engine's op database.

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
