"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells, as torch's (parameter
names and shapes, initialisation, input and state layouts, ``batch_first``,
``num_layers``, ``bidirectional``, inter-layer ``dropout``), written with gradstack ops so
that they differentiate to any order.

Note [A recurrent layer projects its whole input at once]
Each layer multiplies the whole input sequence by ``weight_ih`` in one product before the
time loop (one GEMM of ``(L * N, H_in)``), and only the hidden state's product runs per
step: the same sums as torch's cells (``linear(x, w_ih, b_ih) + linear(h, w_hh, b_hh)``),
in fewer, larger products.  Where a direction of a layer is one op (below), that op makes
the product itself, with F.linear's arithmetic, and saves ``x`` rather than the projected
gates (Note [A layer op that projects its input] in tensor-core's _impl_rnn.py).

Note [A recurrent step is two GEMMs and one fused cell]
After its input's product, a step of an LSTM or GRU layer is the hidden state's product,
``h W_hh^T + b_hh`` (one ``addmm``: the four or three gates at once), and one op for the
rest, tensor-core's ``_thnn_fused_lstm_cell``/``_thnn_fused_gru_cell`` (the activations,
the new states, and a workspace that their backward reads in one pass: Note [One pass
over a cell's row] in tensor-core's ``_rnn_kernels.pyx``).  The gates' sum is torch's,
``(h W_hh^T + b_hh) + (x W_ih^T + b_ih)``, so the biases are in the products and the
cell takes none.  ``W_hh^T`` is taken once a layer and the projected input is unbound
once (one ``UnbindBackward0``, where indexing it each step made a backward that wrote a
whole-sequence gradient per step), and the steps' outputs are stacked once.  That loop
is what runs for ``proj_size``, packed sequences and dtypes other than float32/float64;
otherwise a direction of a layer is ONE op, tensor-core's ``_lstm_layer``/``_gru_layer``,
the same steps with no graph node per step and a backward that takes the hidden
weight's gradient as one product over all the steps (Note [A recurrent layer is one op]
in tensor-core's ``_impl_rnn.py``).

Examples
--------
>>> import gradstack_tensor as gt
>>> lstm = LSTM(3, 5, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(gt.randn(4, 7, 3))
>>> out.shape, h.shape, c.shape
(gradstack.Size([4, 7, 5]), gradstack.Size([2, 4, 5]), gradstack.Size([2, 4, 5]))
>>> [name for name, _ in lstm.named_parameters()][:4]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
"""

from __future__ import annotations

import math
from typing import Any

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import is_autocast_enabled

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


_LSTM_CELL = gt.get_op("_thnn_fused_lstm_cell")
_GRU_CELL = gt.get_op("_thnn_fused_gru_cell")
_LSTM_LAYER = gt.get_op("_lstm_layer")
_GRU_LAYER = gt.get_op("_gru_layer")
_LAYER_DTYPES = (gt.float32, gt.float64)


def _hidden_gates(h: Tensor, w_hh_t: Tensor, b_hh) -> Tensor:
    """``h W_hh^T + b_hh`` (``F.linear``'s ops, with ``W_hh^T`` taken once a layer)."""
    return h.matmul(w_hh_t) if b_hh is None else gt.addmm(b_hh, h, w_hh_t)


def _rnn_step(x_proj: Tensor, h: Tensor, w_hh_t: Tensor, b_hh, relu: bool) -> Tensor:
    pre = x_proj + _hidden_gates(h, w_hh_t, b_hh)
    return pre.relu() if relu else pre.tanh()


def _lstm_step(x_proj: Tensor, state, w_hh_t: Tensor, b_hh, w_hr_t=None):
    """Note [A recurrent step is two GEMMs and one fused cell]; with ``proj_size``, the
    hidden state is projected by ``W_hr^T`` (torch's ``matmul(hy, w_hr.t())``)."""
    h, c = state
    hy, cy, _ = _LSTM_CELL(x_proj, _hidden_gates(h, w_hh_t, b_hh), c, None, None)
    return (hy if w_hr_t is None else hy.matmul(w_hr_t)), cy


def _gru_step(x_proj: Tensor, h: Tensor, w_hh_t: Tensor, b_hh) -> Tensor:
    hy, _ = _GRU_CELL(x_proj, _hidden_gates(h, w_hh_t, b_hh), h, None, None)
    return hy


class RNNBase(Module):
    """The shared parameters, checks and loop of ``RNN``, ``LSTM`` and ``GRU``."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, (int, float))
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    (f"weight_ih_l{layer}{suffix}", (gate_size, layer_input)),
                    (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [
                        (f"bias_ih_l{layer}{suffix}", (gate_size,)),
                        (f"bias_hh_l{layer}{suffix}", (gate_size,)),
                    ]
                if proj_size:
                    shapes.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name, Parameter(gt.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]``
        (torch's draws, in registration order)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list:
        """The parameters of each layer and direction, as torch's ``all_weights``."""
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i : i + per]] for i in range(0, len(names), per)]

    def _weights(self, layer: int, direction: int):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda kind: getattr(self, f"{kind}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _projection_t(self, layer: int, direction: int):
        """``W_hr^T`` of a layer with ``proj_size``, else None."""
        if not self.proj_size:
            return None
        return getattr(self, f"weight_hr_l{layer}{'_reverse' if direction == 1 else ''}").t()

    def _state_size(self, name: str = "hidden") -> int:
        return self.proj_size if self.proj_size and name == "hidden" else self.hidden_size

    def _zeros_state(self, batch: int, like: Tensor, name: str = "hidden"):
        directions = 2 if self.bidirectional else 1
        size = self._state_size(name)
        return gt.zeros(self.num_layers * directions, batch, size, dtype=like.dtype)

    def _check_input(self, input: Tensor) -> None:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{type(self).__name__}: expected a Tensor or a PackedSequence input, got "
                f"{type(input).__name__}"
            )
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D "
                "tensor instead"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{input.shape[-1]}"
            )

    def _check_state(self, state: Tensor, batch: int, name: str = "hidden") -> None:
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, self._state_size(name))
        if tuple(state.shape) != expected:
            raise RuntimeError(f"Expected {name} size {expected}, got {list(state.shape)}")

    def _step(self, x_proj, state, w_hh_t, b_hh, w_hr_t=None):
        """One step of the cell: the new state (a pair for LSTM); ``w_hh_t`` is ``W_hh^T``."""
        if self.mode == "LSTM":
            return _lstm_step(x_proj, state, w_hh_t, b_hh, w_hr_t)
        if self.mode == "GRU":
            return _gru_step(x_proj, state, w_hh_t, b_hh)
        return _rnn_step(x_proj, state, w_hh_t, b_hh, self.mode == "RNN_RELU")

    def _run_packed(self, packed: PackedSequence, hx):
        """Note [A packed sequence is the steps' rows, longest first] (utils/rnn.py): at
        step ``t`` the cell runs on the ``batch_sizes[t]`` sequences still running, the
        others keep their state; the output is packed as the input was, the final states
        are in the batch's original order."""
        data = packed.data
        self._check_input(data.unsqueeze(0) if data.dim() == 2 else data)
        sizes = [int(b) for b in packed.batch_sizes.tolist()]
        batch = sizes[0] if sizes else 0
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = self._zeros_state(batch, data)
            c0 = self._zeros_state(batch, data, "cell") if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            self._check_state(h0, batch)
            if c0 is not None:
                self._check_state(c0, batch, "cell")
            if packed.sorted_indices is not None:  # the states follow the sorted batch
                h0 = h0.index_select(1, packed.sorted_indices)
                c0 = c0.index_select(1, packed.sorted_indices) if c0 is not None else None
        directions = 2 if self.bidirectional else 1
        h_last, c_last = [], []
        layer_data = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                index = layer * directions + direction
                # one SplitBackward0 for the steps' rows, not a getitem's per step
                projected = F.linear(layer_data, w_ih, b_ih).split(sizes, 0)
                w_hh_t = w_hh.t()
                w_hr_t = self._projection_t(layer, direction)
                state: Any = (h0[index], c0[index]) if c0 is not None else h0[index]
                per_step = [None] * len(sizes)
                steps = range(len(sizes) - 1, -1, -1) if direction == 1 else range(len(sizes))
                for t in steps:
                    running = sizes[t]
                    x_t = projected[t]
                    if lstm:
                        h, c = state
                        if running == h.shape[0]:
                            state = self._step(x_t, state, w_hh_t, b_hh, w_hr_t)
                        else:
                            nh, nc = self._step(x_t, (h[:running], c[:running]), w_hh_t,
                                                b_hh, w_hr_t)  # fmt: skip
                            state = (gt.cat([nh, h[running:]], 0), gt.cat([nc, c[running:]], 0))
                        per_step[t] = state[0][:running]
                    else:
                        h = state
                        new = self._step(x_t, h if running == h.shape[0] else h[:running],
                                         w_hh_t, b_hh)  # fmt: skip
                        state = new if running == h.shape[0] else gt.cat([new, h[running:]], 0)
                        per_step[t] = new
                outputs.append(gt.cat(per_step, 0))
                h_last.append(state[0] if lstm else state)
                if lstm:
                    c_last.append(state[1])
            layer_data = outputs[0] if directions == 1 else gt.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_data = F.dropout(layer_data, self.dropout, True)
        h_n = gt.stack(h_last, 0)
        c_n = gt.stack(c_last, 0) if lstm else None
        if packed.unsorted_indices is not None:
            h_n = h_n.index_select(1, packed.unsorted_indices)
            c_n = c_n.index_select(1, packed.unsorted_indices) if c_n is not None else None
        output = PackedSequence(layer_data, packed.batch_sizes, packed.sorted_indices,
                                packed.unsorted_indices)  # fmt: skip
        return output, (h_n, c_n)

    def _whole_layer(self, layer_input: Tensor) -> bool:
        """Whether a direction of a layer runs as one op (Note [A recurrent layer is one
        op]): LSTM without ``proj_size`` and GRU, float32/float64, at least one step."""
        return (
            self.mode in ("LSTM", "GRU")
            and not self.proj_size
            and layer_input.dtype in _LAYER_DTYPES
            and layer_input.shape[0] > 0
        )

    def _layer_op(self, x: Tensor, h0: Tensor, c0: Any, weights, reverse: bool):
        """``(output, h_n, c_n)`` of a direction of a layer, by one op (Note [A recurrent
        layer is one op] in tensor-core's _impl_rnn.py); ``c_n`` is None for GRU.  The op
        projects ``x`` itself (Note [A layer op that projects its input]) unless autocast
        is on (F.linear then casts) or the layer has no bias (F.linear is then a
        ``matmul``, whose sums the op's product does not repeat)."""
        w_ih, w_hh, b_ih, b_hh = weights
        last = 0 if reverse else x.shape[0] - 1
        if b_ih is not None and not is_autocast_enabled("cpu"):
            args: tuple = (x, h0) + ((c0,) if c0 is not None else ()) + (w_hh, b_hh, reverse,
                                                                          w_ih, b_ih)  # fmt: skip
        else:
            projected = F.linear(x, w_ih, b_ih)
            args = (projected, h0) + ((c0,) if c0 is not None else ()) + (w_hh, b_hh, reverse)
        if self.mode == "LSTM":
            out, cells, _ = _LSTM_LAYER(*args)
            return out, out[last], cells[last]
        out, _ = _GRU_LAYER(*args)
        return out, out[last], None

    def _run(self, input: Tensor, hx):
        """The layers over the sequence: ``(output, states)`` with ``states`` one per layer
        and direction (a pair for LSTM)."""
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx)
        self._check_input(input)
        unbatched = input.dim() == 2
        x = (
            input.unsqueeze(1)
            if unbatched
            else (input.transpose(0, 1) if self.batch_first else input)
        )
        length, batch = x.shape[0], x.shape[1]
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = self._zeros_state(batch, x)
            c0 = self._zeros_state(batch, x, "cell") if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if unbatched:
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            self._check_state(h0, batch)
            if c0 is not None:
                self._check_state(c0, batch, "cell")
        directions = 2 if self.bidirectional else 1
        h_last, c_last = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                index = layer * directions + direction
                # Note [A recurrent layer projects its whole input at once]; Note [A
                # recurrent step is two GEMMs and one fused cell]
                if self._whole_layer(layer_input):
                    out, h, c = self._layer_op(
                        layer_input, h0[index], None if c0 is None else c0[index],
                        (w_ih, w_hh, b_ih, b_hh), direction == 1,
                    )  # fmt: skip
                    outputs.append(out)
                    h_last.append(h)
                    if lstm:
                        c_last.append(c)
                    continue
                projected = F.linear(layer_input, w_ih, b_ih).unbind(0)
                w_hh_t = w_hh.t()
                w_hr_t = self._projection_t(layer, direction)
                steps = range(length - 1, -1, -1) if direction == 1 else range(length)
                h = h0[index]
                c = c0[index] if c0 is not None else None
                per_step = [None] * length
                for t in steps:
                    if lstm:
                        h, c = _lstm_step(projected[t], (h, c), w_hh_t, b_hh, w_hr_t)
                    elif self.mode == "GRU":
                        h = _gru_step(projected[t], h, w_hh_t, b_hh)
                    else:
                        h = _rnn_step(projected[t], h, w_hh_t, b_hh, self.mode == "RNN_RELU")
                    per_step[t] = h
                outputs.append(gt.stack(per_step, 0))
                h_last.append(h)
                if lstm:
                    c_last.append(c)
            layer_input = outputs[0] if directions == 1 else gt.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        h_n = gt.stack(h_last, 0)
        c_n = gt.stack(c_last, 0) if lstm else None
        if unbatched:
            output = output.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, (h_n, c_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def flatten_parameters(self) -> None:
        """Nothing to do without cuDNN (torch's method, kept for programs that call it)."""


class RNN(RNNBase):
    """An Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or
    ``relu`` with ``nonlinearity="relu"``); returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.nonlinearity = nonlinearity
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
            num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor, hx: Tensor | None = None):
        output, (h_n, _) = self._run(input, hx)
        return output, h_n


class LSTM(RNNBase):
    """A long short-term memory layer; returns ``(output, (h_n, c_n))``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:  # fmt: skip
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor, hx=None):
        output, (h_n, c_n) = self._run(input, hx)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """A gated recurrent unit layer; returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:  # fmt: skip
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor, hx: Tensor | None = None):
        output, (h_n, _) = self._run(input, hx)
        return output, h_n


class RNNCellBase(Module):
    """The parameters, init and checks of the cells."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, gates: int,
                 device=None, dtype=None) -> None:  # fmt: skip
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            gt.empty(gates * hidden_size, input_size, device=device, dtype=dtype)
        )
        self.weight_hh = Parameter(
            gt.empty(gates * hidden_size, hidden_size, device=device, dtype=dtype)
        )
        if bias:
            self.bias_ih = Parameter(gt.empty(gates * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(gt.empty(gates * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform in ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]``, as torch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input: Tensor, hx):
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[-1]} expected "
                f"{self.input_size}"
            )
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        return x, unbatched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One step of :class:`RNN`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, unbatched = self._prepare(input, hx)
        h = gt.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else hx
        h = h.unsqueeze(0) if unbatched and hx is not None else h
        out = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh.t(),
                        self.bias_hh, self.nonlinearity == "relu")  # fmt: skip
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    """One step of :class:`LSTM`; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None):
        x, unbatched = self._prepare(input, hx)
        if hx is None:
            zeros = gt.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            h, c = zeros, zeros
        else:
            h, c = hx
            if unbatched:
                h, c = h.unsqueeze(0), c.unsqueeze(0)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), (h, c),
                          self.weight_hh.t(), self.bias_hh)  # fmt: skip
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One step of :class:`GRU`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, unbatched = self._prepare(input, hx)
        h = gt.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else hx
        h = h.unsqueeze(0) if unbatched and hx is not None else h
        out = _gru_step(
            F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh.t(), self.bias_hh
        )
        return out.squeeze(0) if unbatched else out
