"""Type stub for ``gradstack_tensor._special_kernels`` (see its .pyx)."""

import numpy.typing as npt

from ._kernel_types import _Float

__all__ = [
    "SPECIAL_THRESHOLD",
    "digamma",
    "lgamma",
    "polygamma",
    "trigamma",
    "zeta",
]

def lgamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def digamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def trigamma(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def polygamma(x: npt.NDArray[_Float], n: int) -> npt.NDArray[_Float]: ...
def zeta(x: npt.NDArray[_Float], q: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...

SPECIAL_THRESHOLD: int
