"""Type stub for the Cython module ``gradstack_tensor._kernels`` (see _kernels.pyx)."""

from typing import SupportsFloat, SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "PARALLEL_THRESHOLD",
    "accumulate_",
    "add_scaled_",
    "fusable",
    "get_num_threads",
    "set_num_threads",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

PARALLEL_THRESHOLD: int

def set_num_threads(n: SupportsIndex) -> None: ...
def get_num_threads() -> int: ...
def fusable(*arrays: object) -> bool: ...
def accumulate_(dst: _Array[_Float], src: _Array[_Float]) -> None: ...
def add_scaled_(dst: _Array[_Float], src: _Array[_Float], alpha: SupportsFloat) -> None: ...
def _avx2(enable: bool | None = None) -> bool: ...
def _avx512(enable: bool | None = None) -> bool: ...
def _default_num_threads() -> int: ...
