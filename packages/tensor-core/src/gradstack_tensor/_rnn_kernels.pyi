"""Type stub for ``gradstack_tensor._rnn_kernels`` (see _rnn_kernels.pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "RNN_PARALLEL_THRESHOLD",
    "gru_cell_backward",
    "gru_cell_forward",
    "gru_layer_backward",
    "gru_layer_forward",
    "lstm_cell_backward",
    "lstm_cell_forward",
    "lstm_layer_backward",
    "lstm_layer_forward",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

RNN_PARALLEL_THRESHOLD: int

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
def lstm_layer_forward(
    input_gates: npt.NDArray[np.float32],
    hx: npt.NDArray[np.float32],
    cx: npt.NDArray[np.float32],
    panels: npt.NDArray[np.float32],
    hidden_bias: npt.NDArray[np.float32] | None = None,
    reverse: bool = False,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]] | None: ...
def lstm_layer_backward(
    grad_output: npt.NDArray[np.float32] | None,
    grad_cells: npt.NDArray[np.float32] | None,
    cx: npt.NDArray[np.float32],
    cells: npt.NDArray[np.float32],
    workspace: npt.NDArray[np.float32],
    panels: npt.NDArray[np.float32],
    reverse: bool = False,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]] | None: ...
def gru_layer_forward(
    input_gates: npt.NDArray[np.float32],
    hx: npt.NDArray[np.float32],
    panels: npt.NDArray[np.float32],
    hidden_bias: npt.NDArray[np.float32] | None = None,
    reverse: bool = False,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None: ...
def gru_layer_backward(
    grad_output: npt.NDArray[np.float32],
    workspace: npt.NDArray[np.float32],
    panels: npt.NDArray[np.float32],
    reverse: bool = False,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]] | None: ...
