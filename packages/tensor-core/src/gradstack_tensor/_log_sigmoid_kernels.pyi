"""Type stub for ``gradstack_tensor._log_sigmoid_kernels`` (see _log_sigmoid_kernels.pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["LOG_SIGMOID_THRESHOLD", "log_sigmoid", "log_sigmoid_backward", "softplus"]

_Float = TypeVar("_Float", np.float32, np.float64)

LOG_SIGMOID_THRESHOLD: int

def log_sigmoid(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def log_sigmoid_backward(
    grad: npt.NDArray[_Float], x: npt.NDArray[_Float]
) -> npt.NDArray[_Float]: ...
def softplus(
    x: npt.NDArray[_Float], beta: float = 1.0, threshold: float = 20.0
) -> npt.NDArray[_Float]: ...
