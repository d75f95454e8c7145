"""Type stub for ``gradstack_tensor._bessel_kernels`` (see its .pyx)."""

import numpy.typing as npt

from ._kernel_types import _Float

__all__ = ["BINARY", "UNARY", "binary", "unary"]

UNARY: tuple[str, ...]
BINARY: tuple[str, ...]
BESSEL: tuple[str, ...]

def unary(name: str, x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def binary(name: str, x: npt.NDArray[_Float], y: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
