"""Type stub for ``gradstack_tensor._nll_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["nll_loss_backward", "nll_loss_forward"]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

def nll_loss_forward(
    x: _Array[_Float],
    target: npt.NDArray[np.int64],
    weight: _Array[_Float] | None,
    reduction: str,
    ignore_index: int,
) -> tuple[_Array[_Float], _Array[_Float]]: ...
def nll_loss_backward(
    grad: _Array[_Float],
    x_shape: tuple[int, ...],
    target: npt.NDArray[np.int64],
    weight: _Array[_Float] | None,
    reduction: str,
    ignore_index: int,
) -> _Array[_Float]: ...
