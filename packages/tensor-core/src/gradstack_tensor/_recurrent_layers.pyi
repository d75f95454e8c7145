"""Type stub for ``gradstack_tensor._recurrent_layers`` (see _recurrent_layers.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = [
    "gru_layer_backward",
    "gru_layer_forward",
    "lstm_layer_backward",
    "lstm_layer_forward",
]

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
    need_hx: bool = True,
) -> (
    tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None, npt.NDArray[np.float32]] | None
): ...
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
    need_hx: bool = True,
) -> (
    tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32] | None] | None
): ...
