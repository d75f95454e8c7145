"""Type stub for ``gradstack_tensor._erfc_kernels`` (see _erfc_kernels.pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["ERFC_THRESHOLD", "erfc_backward", "erfc_float32"]

_Float = TypeVar("_Float", np.float32, np.float64)

ERFC_THRESHOLD: int

def erfc_float32(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
def erfc_backward(grad: npt.NDArray[_Float], x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
