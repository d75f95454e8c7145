"""Kernels of the fused recurrent cells: ``_thnn_fused_lstm_cell`` and
``_thnn_fused_gru_cell``, torch's ops of one LSTM/GRU step after its two GEMMs.

A recurrent layer (``gradstack_nn``'s ``LSTM``, ``GRU`` and their cells) computes a step's
gate pre-activations as two products, ``x W_ih^T + b_ih`` and ``h W_hh^T + b_hh``, and
hands them to one of these ops, which does the rest in one pass (Note [One pass over a
cell's row] in ``_rnn_kernels.pyx``): the activations, the new states, and a workspace
of the activated gates for the backward pass (graph-engine's derivative rows run
``gradstack_tensor.kernels.lstm_cell_backward``/``gru_cell_backward`` on it).

=====================================  ===========================================
op                                     torch counterpart
=====================================  ===========================================
``_thnn_fused_lstm_cell``              ``aten::_thnn_fused_lstm_cell`` -> (hy, cy, workspace)
``_thnn_fused_gru_cell``               ``aten::_thnn_fused_gru_cell`` -> (hy, workspace)
=====================================  ===========================================

torch has them for CUDA only; its CPU cells compute the same values with separate ops.
Arguments are 2-D ``(N, G * H)`` gates and ``(N, H)`` states of one floating dtype
(biases ``(G * H,)`` or None); float32 and float64 take the C kernels (made contiguous
first when they are not), float16 computes in float32 and rounds once, as torch's
kernels compute half in float.

Examples
--------
>>> import gradstack_tensor as gt
>>> gates = gt.zeros(1, 4)
>>> hy, cy, workspace = gt.OPS["_thnn_fused_lstm_cell"](gates, gates, gt.ones(1, 1), None, None)
>>> cy.tolist(), workspace.tolist()
([[0.5]], [[0.5, 0.5, 0.0, 0.5]])
"""

from __future__ import annotations

import numpy as np

from ._dispatch import OPS
from ._impl_nn import _scalar_name, _tensor
from ._rnn_kernels import gru_cell_forward, lstm_cell_forward
from ._tensor import Tensor, _data, _wrap

__all__: list[str] = []


def _arrays(op: str, gates: int, input_gates, hidden_gates, state, input_bias, hidden_bias):
    """The arguments' arrays, checked with torch's words, C-contiguous, in the dtype the
    kernel computes in (float16 as float32); and the dtype of the results."""
    names = ("input_gates", "hidden_gates", "cx" if gates == 4 else "hx")
    arrays = [_tensor(t, op, n) for t, n in zip((input_gates, hidden_gates, state), names)]
    biases = [
        None if b is None else _tensor(b, op, n)
        for b, n in ((input_bias, "input_bias"), (hidden_bias, "hidden_bias"))
    ]
    dtype = arrays[0].dtype
    if dtype.kind != "f":
        raise RuntimeError(f"\"{op}\" not implemented for '{_scalar_name(arrays[0])}'")
    for a in arrays[1:] + [b for b in biases if b is not None]:
        if a.dtype != dtype:
            raise RuntimeError(
                f"{op}: expected all arguments to have the dtype of input_gates "
                f"({_scalar_name(arrays[0])}), got {_scalar_name(a)}"
            )
    ig, hg, st = arrays
    if ig.ndim != 2 or ig.shape[1] % gates:
        raise RuntimeError(
            f"{op}: input_gates must be 2-D, (batch, {gates} * hidden_size), got shape "
            f"{list(ig.shape)}"
        )
    hidden = ig.shape[1] // gates
    if hg.shape != ig.shape:
        raise RuntimeError(
            f"{op}: hidden_gates must have the shape of input_gates {list(ig.shape)}, got "
            f"{list(hg.shape)}"
        )
    if st.shape != (ig.shape[0], hidden):
        raise RuntimeError(
            f"{op}: {names[2]} must have shape {[ig.shape[0], hidden]}, got {list(st.shape)}"
        )
    for b, n in zip(biases, ("input_bias", "hidden_bias")):
        if b is not None and b.shape != (gates * hidden,):
            raise RuntimeError(f"{op}: {n} must have shape {[gates * hidden]}, got {list(b.shape)}")
    work = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
    prepared = [None if a is None else np.ascontiguousarray(a, dtype=work) for a in arrays + biases]
    return prepared, dtype


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _ready(gates: int, input_gates, hidden_gates, state, input_bias, hidden_bias):
    """The three arrays when the kernel takes them as they are (the recurrent layers'
    call: no biases, C-contiguous gates and state of one kernel dtype and fitting shapes),
    else None: the checked path, with torch's messages, then runs."""
    if input_bias is not None or hidden_bias is not None:
        return None
    if not (type(input_gates) is Tensor and type(hidden_gates) is Tensor and type(state) is Tensor):
        return None
    a, b, c = _data(input_gates), _data(hidden_gates), _data(state)
    if (
        a.dtype not in _KERNEL_DTYPES
        or b.dtype != a.dtype
        or c.dtype != a.dtype
        or a.ndim != 2
        or a.shape[1] % gates
        or b.shape != a.shape
        or c.shape != (a.shape[0], a.shape[1] // gates)
        or not (a.flags.c_contiguous and b.flags.c_contiguous and c.flags.c_contiguous)
    ):
        return None
    return a, b, c


def _results(arrays, dtype):
    return tuple(_wrap(a if a.dtype == dtype else a.astype(dtype)) for a in arrays)


def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """``(hy, cy, workspace)`` of one LSTM step (``lstm_cell_forward``)."""
    ready = _ready(4, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    if ready is not None:
        hy, cy, ws = lstm_cell_forward(*ready)
        return _wrap(hy), _wrap(cy), _wrap(ws)
    arrays, dtype = _arrays(
        "_thnn_fused_lstm_cell", 4, input_gates, hidden_gates, cx, input_bias, hidden_bias
    )
    return _results(lstm_cell_forward(*arrays), dtype)


def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """``(hy, workspace)`` of one GRU step (``gru_cell_forward``)."""
    ready = _ready(3, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    if ready is not None:
        hy, ws = gru_cell_forward(*ready)
        return _wrap(hy), _wrap(ws)
    arrays, dtype = _arrays(
        "_thnn_fused_gru_cell", 3, input_gates, hidden_gates, hx, input_bias, hidden_bias
    )
    return _results(gru_cell_forward(*arrays), dtype)


OPS["_thnn_fused_lstm_cell"].set_kernel(_thnn_fused_lstm_cell)
OPS["_thnn_fused_gru_cell"].set_kernel(_thnn_fused_gru_cell)
