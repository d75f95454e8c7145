"""Type stub for ``gradstack_tensor._division_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "DIVISION_THRESHOLD",
    "floor_divide",
    "fmod",
    "remainder",
]

_Float = TypeVar("_Float", np.float32, np.float64)

DIVISION_THRESHOLD: int

def fmod(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def remainder(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def floor_divide(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
