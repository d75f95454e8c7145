"""Type stub for ``gradstack_tensor._scan_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "SCAN_THRESHOLD",
    "cumsum",
]

_Float = TypeVar("_Float", np.float32, np.float64)

SCAN_THRESHOLD: int

def cumsum(x: npt.NDArray[_Float], axis: int, reverse: bool = False) -> npt.NDArray[_Float]: ...
