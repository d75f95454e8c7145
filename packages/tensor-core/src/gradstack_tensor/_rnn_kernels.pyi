"""Type stub for ``gradstack_tensor._rnn_kernels`` (see _rnn_kernels.pyx)."""

from ._kernel_types import _Array, _Float

__all__ = [
    "RNN_PARALLEL_THRESHOLD",
    "gru_cell_backward",
    "gru_cell_forward",
    "lstm_cell_backward",
    "lstm_cell_forward",
]

def lstm_cell_forward(
    input_gates: _Array[_Float],
    hidden_gates: _Array[_Float],
    cx: _Array[_Float],
    input_bias: _Array[_Float] | None = None,
    hidden_bias: _Array[_Float] | None = None,
) -> tuple[_Array[_Float], _Array[_Float], _Array[_Float]]: ...
def lstm_cell_backward(
    grad_hy: _Array[_Float] | None,
    grad_cy: _Array[_Float] | None,
    cx: _Array[_Float],
    cy: _Array[_Float],
    workspace: _Array[_Float],
    has_bias: bool = False,
) -> tuple[_Array[_Float], _Array[_Float], _Array[_Float] | None]: ...
def gru_cell_forward(
    input_gates: _Array[_Float],
    hidden_gates: _Array[_Float],
    hx: _Array[_Float],
    input_bias: _Array[_Float] | None = None,
    hidden_bias: _Array[_Float] | None = None,
) -> tuple[_Array[_Float], _Array[_Float]]: ...
def gru_cell_backward(
    grad_hy: _Array[_Float], workspace: _Array[_Float], has_bias: bool = False
) -> tuple[
    _Array[_Float], _Array[_Float], _Array[_Float], _Array[_Float] | None, _Array[_Float] | None
]: ...

RNN_PARALLEL_THRESHOLD: int
