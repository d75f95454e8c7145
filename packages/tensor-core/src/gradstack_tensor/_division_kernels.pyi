"""Type stub for ``gradstack_tensor._division_kernels`` (see its .pyx)."""

import numpy.typing as npt

from ._kernel_types import _Float

__all__ = [
    "DIVISION_THRESHOLD",
    "floor_divide",
    "fmod",
    "remainder",
]

def fmod(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def remainder(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def floor_divide(a: npt.NDArray[_Float], b: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...

DIVISION_THRESHOLD: int
