"""Type stub for ``gradstack_tensor._pointwise_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["EXP2_THRESHOLD", "exp2_f32", "sign"]

_Float = TypeVar("_Float", np.float32, np.float64)

EXP2_THRESHOLD: int

def sign(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def exp2_f32(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
