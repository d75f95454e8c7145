"""Type stub for ``gradstack_tensor._outer_kernels`` (see _outer_kernels.pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["outer"]

_Float = TypeVar("_Float", np.float32, np.float64)

def outer(x: npt.NDArray[_Float], y: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
