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
from ._impl_linalg import _gemm
from ._impl_nn import _scalar_name, _tensor
from ._recurrent_gemm import pack_panels, panel_matmul
from ._recurrent_layers import gru_layer_forward, lstm_layer_forward
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


# -------------------------------------------------------------------------------------
# whole layers: _lstm_layer and _gru_layer
#
# Note [A recurrent layer is one op]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Written as a cell per step, an LSTM layer of T steps records 3 T graph nodes, and its
# backward takes the hidden weight's gradient as T products ``h_{t-1}^T dgates_t`` of
# inner size N (the batch), each added into the gradient: for T = 30, N = 20, H = 256
# that was 5x the time of the one product over all the steps (``dgates^T`` of
# ``(4H, T N)`` times ``(T N, H)``), which is what torch's oneDNN layer computes.  These
# ops run a direction of a layer whole, after its input's product (Note [A recurrent
# layer projects its whole input at once] in nn-mini's rnn.py): per step, the hidden
# product ``h W_hh^T + b_hh`` (float32: from the weight packed once, Note [A packed weight
# for the steps] in _recurrent_gemm.pyx; else ``addmm``'s arithmetic) and the fused cell's
# kernel (Note [One pass over a cell's row]); the steps' results are written into one
# array.  Their backward (graph-engine's derivatives/rnn.py) runs the cells' backward
# kernels step by step, one ``dgates W_hh`` product a step (the recurrence needs it),
# and the weight and bias gradients once over all the steps.  The op's results are
# every step's hidden state (``output``, in time order), every step's cell state (LSTM:
# the backward reads them; the last is ``c_n``), and the cells' workspaces, stacked
# (not differentiable).  ``reverse`` runs the steps from the last to the first (the
# reverse direction of a bidirectional layer).


def _layer_arrays(op, gates, input_gates, states, weight_hh, bias_hh):
    """The layer's arrays checked (torch's words), C-contiguous, in the dtype the kernels
    compute in (float16 as float32); and the dtype of the results."""
    ig = _tensor(input_gates, op, "input_gates")
    dtype = ig.dtype
    if dtype.kind != "f":
        raise RuntimeError(f"\"{op}\" not implemented for '{_scalar_name(ig)}'")
    if ig.ndim != 3 or ig.shape[2] % gates:
        raise RuntimeError(
            f"{op}: input_gates must be 3-D, (steps, batch, {gates} * hidden_size), got "
            f"shape {list(ig.shape)}"
        )
    steps, batch, hidden = ig.shape[0], ig.shape[1], ig.shape[2] // gates
    named = [(name, _tensor(t, op, name)) for name, t in states]
    named.append(("weight_hh", _tensor(weight_hh, op, "weight_hh")))
    if bias_hh is not None:
        named.append(("bias_hh", _tensor(bias_hh, op, "bias_hh")))
    want = {"weight_hh": (gates * hidden, hidden), "bias_hh": (gates * hidden,)}
    for name, a in named:
        if a.dtype != dtype:
            raise RuntimeError(
                f"{op}: expected all arguments to have the dtype of input_gates "
                f"({_scalar_name(ig)}), got {_scalar_name(a)} for {name}"
            )
        shape = want.get(name, (batch, hidden))
        if a.shape != shape:
            raise RuntimeError(f"{op}: {name} must have shape {list(shape)}, got {list(a.shape)}")
    work = dtype if dtype in _KERNEL_DTYPES else np.dtype(np.float32)
    arrays = [np.ascontiguousarray(a, dtype=work) for a in [ig] + [a for _, a in named]]
    if bias_hh is None:
        arrays.append(None)
    return arrays, dtype, (steps, batch, hidden)


# Note [A packed weight for the steps] (_recurrent_gemm.pyx): float32 steps of up to this
# many rows take the weight packed once a layer; larger batches take BLAS's sgemm, whose
# packing is then a small part of each product, and so does a layer of one step (the
# decoder of a sequence-to-sequence model), where packing would be an extra pass.
PANEL_ROWS = 64


def hidden_product(w, steps):
    """``f(h, b) = h @ w.T [+ b]`` for the ``steps`` steps of a layer: from ``w`` packed
    once (``kernels.pack_panels``) for float32, small batches and more than one step, else
    ``_gemm`` (``addmm``'s arithmetic).  ``w`` is C-contiguous ``(G, H)``."""
    w_t = w.T
    if w.dtype != np.float32 or steps < 2:
        return lambda h, b: _gemm(h, w_t, b)
    panels = None

    def product(h, b):
        nonlocal panels
        if h.shape[0] > PANEL_ROWS:
            return _gemm(h, w_t, b)
        if panels is None:
            panels = pack_panels(w, transposed=True)
        return panel_matmul(np.ascontiguousarray(h), panels, w.shape[0], b)

    return product


# Note [A layer op that projects its input]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Given ``weight_ih`` (and ``bias_ih``), the layer ops take the layer's input ``x``
# ``(T, N, I)`` as their first argument and compute ``x W_ih^T + b_ih`` themselves, with
# F.linear's arithmetic (``_gemm`` of ``x`` viewed as ``(T N, I)``, the bias added in the
# product's pass: the same bits as the separate Linear).  The op then saves ``x`` (which a
# separate Linear's AddmmBackward0 saved too) instead of the projected gates: those were
# kept only for the create_graph path, which recomputes them from ``x``.  That was
# ``(T, N, G)`` held from the forward to the backward beyond torch's CPU layers (which keep
# no projected input): 0.96 MiB of the GRU sequence-to-sequence model's 8.3 MiB peak, 2.3
# MiB of the LSTM LM's.  The backward takes ``x``'s and ``W_ih``'s gradients from the
# gates' gradient with AddmmBackward0's products (derivatives/rnn.py), one node for the
# layer's direction instead of three (view, addmm, the layer).


def _project(op, gates, x, weight_ih, bias_ih):
    """``x W_ih^T [+ b_ih]`` of every step, ``(T, N, gates * H)``, as F.linear computes it
    (Note [A layer op that projects its input])."""
    xa = _tensor(x, op, "input")
    wa = _tensor(weight_ih, op, "weight_ih")
    ba = None if bias_ih is None else _tensor(bias_ih, op, "bias_ih")
    if xa.dtype.kind != "f":
        raise RuntimeError(f"\"{op}\" not implemented for '{_scalar_name(xa)}'")
    for name, a in (("weight_ih", wa), ("bias_ih", ba)):
        if a is not None and a.dtype != xa.dtype:
            raise RuntimeError(
                f"{op}: expected all arguments to have the dtype of input "
                f"({_scalar_name(xa)}), got {_scalar_name(a)} for {name}"
            )
    if xa.ndim != 3:
        raise RuntimeError(
            f"{op}: with weight_ih, input must be 3-D, (steps, batch, input_size), got "
            f"shape {list(xa.shape)}"
        )
    if wa.ndim != 2 or wa.shape[1] != xa.shape[2] or wa.shape[0] % gates:
        raise RuntimeError(
            f"{op}: weight_ih must have shape [{gates} * hidden_size, {xa.shape[2]}], got "
            f"{list(wa.shape)}"
        )
    if ba is not None and ba.shape != (wa.shape[0],):
        raise RuntimeError(f"{op}: bias_ih must have shape {[wa.shape[0]]}, got {list(ba.shape)}")
    flat = np.reshape(xa, (-1, xa.shape[2]))  # F.linear's input.reshape(-1, I)
    product = _gemm(flat, wa.T, ba)
    return _wrap(product.reshape(xa.shape[0], xa.shape[1], wa.shape[0]))


def _lstm_layer(input_gates, hx, cx, weight_hh, bias_hh=None, reverse=False, weight_ih=None,
                bias_ih=None):  # fmt: skip
    """``(output, cell_states, workspace)`` of an LSTM layer's direction (Note [A
    recurrent layer is one op]): ``input_gates`` ``(T, N, 4H)`` (``x W_ih^T + b_ih`` of
    every step), the initial states ``hx``, ``cx`` ``(N, H)``, ``weight_hh`` ``(4H, H)``
    and ``bias_hh`` ``(4H,)`` or None; ``(T, N, H)``, ``(T, N, H)``, ``(T, N, 4H)``.
    With ``weight_ih`` ``(4H, I)`` (and ``bias_ih``), the first argument is the layer's
    input ``x`` ``(T, N, I)``, projected here (Note [A layer op that projects its
    input])."""
    if weight_ih is not None:
        input_gates = _project("_lstm_layer", 4, input_gates, weight_ih, bias_ih)
    (ig, h, c, w, b), dtype, (steps, batch, hidden) = _layer_arrays(
        "_lstm_layer", 4, input_gates, (("hx", hx), ("cx", cx)), weight_hh, bias_hh
    )
    if ig.dtype == np.float32 and steps >= 2 and batch <= PANEL_ROWS:
        # Note [A layer's steps in one C loop] (_recurrent_layers.pyx)
        done = lstm_layer_forward(ig, h, c, pack_panels(w, transposed=True), b, reverse)
        if done is not None:
            return _results(done, dtype)
    if steps == 1:
        # Note [A layer of one step]
        # A sequence-to-sequence decoder runs its layer one step at a time: the cell's
        # results are the layer's, viewed with a leading step dim (no arrays to copy them
        # into); the hidden product is hidden_product's for one step (_gemm).
        hy, cy, ws = lstm_cell_forward(ig[0], _gemm(h, w.T, b), c)
        return _results((hy[None], cy[None], ws[None]), dtype)
    out = np.empty((steps, batch, hidden), ig.dtype)
    cells = np.empty((steps, batch, hidden), ig.dtype)
    work = np.empty((steps, batch, 4 * hidden), ig.dtype)
    product = hidden_product(w, steps)
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        hy, cy, ws = lstm_cell_forward(ig[t], product(h, b), c)
        out[t], cells[t], work[t] = hy, cy, ws
        h, c = hy, cy
    return _results((out, cells, work), dtype)


def _gru_layer(input_gates, hx, weight_hh, bias_hh=None, reverse=False, weight_ih=None,
               bias_ih=None):  # fmt: skip
    """``(output, workspace)`` of a GRU layer's direction (Note [A recurrent layer is one
    op]): ``input_gates`` ``(T, N, 3H)``, ``hx`` ``(N, H)``, ``weight_hh`` ``(3H, H)``,
    ``bias_hh`` ``(3H,)`` or None; ``(T, N, H)`` and ``(T, N, 5H)``.  With ``weight_ih``
    ``(3H, I)`` (and ``bias_ih``), the first argument is the layer's input ``x`` ``(T, N,
    I)`` (Note [A layer op that projects its input])."""
    if weight_ih is not None:
        input_gates = _project("_gru_layer", 3, input_gates, weight_ih, bias_ih)
    (ig, h, w, b), dtype, (steps, batch, hidden) = _layer_arrays(
        "_gru_layer", 3, input_gates, (("hx", hx),), weight_hh, bias_hh
    )
    if ig.dtype == np.float32 and steps >= 2 and batch <= PANEL_ROWS:
        # Note [A layer's steps in one C loop] (_recurrent_layers.pyx)
        done = gru_layer_forward(ig, h, pack_panels(w, transposed=True), b, reverse)
        if done is not None:
            return _results(done, dtype)
    if steps == 1:  # Note [A layer of one step]
        hy, ws = gru_cell_forward(ig[0], _gemm(h, w.T, b), h)
        return _results((hy[None], ws[None]), dtype)
    out = np.empty((steps, batch, hidden), ig.dtype)
    work = np.empty((steps, batch, 5 * hidden), ig.dtype)
    product = hidden_product(w, steps)
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        hy, ws = gru_cell_forward(ig[t], product(h, b), h)
        out[t], work[t] = hy, ws
        h = hy
    return _results((out, work), dtype)


OPS["_lstm_layer"].set_kernel(_lstm_layer)
OPS["_gru_layer"].set_kernel(_gru_layer)
