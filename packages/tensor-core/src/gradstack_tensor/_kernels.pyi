"""Type stub for the Cython module ``gradstack_tensor._kernels`` (see _kernels.pyx)."""

from typing import SupportsFloat, SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "PARALLEL_THRESHOLD",
    "TRANSCENDENTAL_THRESHOLD",
    "accumulate_",
    "add_scaled_",
    "fusable",
    "get_num_threads",
    "set_num_threads",
    "sgd_update_",
    "sum_to_shape",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

PARALLEL_THRESHOLD: int
TRANSCENDENTAL_THRESHOLD: int

def set_num_threads(n: SupportsIndex) -> None: ...
def get_num_threads() -> int: ...
def fusable(*arrays: object) -> bool: ...
def sum_to_shape(
    grad: _Array[_Float], shape: SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]
) -> _Array[_Float]: ...
def accumulate_(dst: _Array[_Float], src: _Array[_Float]) -> None: ...
def add_scaled_(dst: _Array[_Float], src: _Array[_Float], alpha: SupportsFloat) -> None: ...
def sgd_update_(
    param: _Array[_Float],
    grad: _Array[_Float],
    momentum_buffer: _Array[_Float] | None,
    lr: SupportsFloat,
    *,
    momentum: SupportsFloat = 0.0,
    dampening: SupportsFloat = 0.0,
    weight_decay: SupportsFloat = 0.0,
    nesterov: bool = False,
    maximize: bool = False,
    first_step: bool = False,
) -> None: ...
def _transcendental_f32(name: str, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
def _avx2(enable: bool | None = None) -> bool: ...
def _avx512(enable: bool | None = None) -> bool: ...
def _sincos_f32(
    x: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...
