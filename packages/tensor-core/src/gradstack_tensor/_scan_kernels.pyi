"""Type stub for ``gradstack_tensor._scan_kernels`` (see its .pyx)."""

import numpy.typing as npt

from ._kernel_types import _Float

__all__ = [
    "SCAN_THRESHOLD",
    "cumsum",
]

def cumsum(x: npt.NDArray[_Float], axis: int, reverse: bool = False) -> npt.NDArray[_Float]: ...

SCAN_THRESHOLD: int
