"""Type stub for ``gradstack_tensor._special_kernels`` (see its .pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "SPECIAL_THRESHOLD",
    "digamma",
    "lgamma",
    "polygamma",
    "trigamma",
    "zeta",
]

_Float = TypeVar("_Float", np.float32, np.float64)

SPECIAL_THRESHOLD: int

def lgamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def digamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def trigamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def polygamma(x: npt.NDArray[_Float], n: int) -> npt.NDArray[_Float]: ...
def zeta(x: npt.NDArray[_Float], q: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
