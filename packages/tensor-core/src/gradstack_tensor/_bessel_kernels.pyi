"""Type stub for ``gradstack_tensor._bessel_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["BINARY", "UNARY", "binary", "unary"]

_Float = TypeVar("_Float", np.float32, np.float64)

UNARY: tuple[str, ...]
BINARY: tuple[str, ...]
BESSEL: tuple[str, ...]

def unary(name: str, x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def binary(name: str, x: npt.NDArray[_Float], y: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
