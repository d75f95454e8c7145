"""Type stub for ``gradstack_tensor._sum_to_shape`` (see _sum_to_shape.pyx)."""

from typing import SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["sum_to_shape"]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

def sum_to_shape(
    grad: _Array[_Float], shape: SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]
) -> _Array[_Float]: ...
