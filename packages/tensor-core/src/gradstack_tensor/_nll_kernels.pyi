"""Type stub for ``gradstack_tensor._nll_kernels`` (see its .pyx)."""

import numpy as np
import numpy.typing as npt

from ._kernel_types import _Array, _Float

__all__ = ["nll_loss_backward", "nll_loss_forward"]

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
