"""Type stub for the Cython module ``gradstack_tensor._kernels`` (see _kernels.pyx)."""

from typing import SupportsFloat, SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "PARALLEL_THRESHOLD",
    "TRANSCENDENTAL_THRESHOLD",
    "accumulate_",
    "add_scaled_",
    "cos_backward",
    "div_backward",
    "fusable",
    "get_num_threads",
    "mul_backward",
    "relu_backward",
    "set_num_threads",
    "sgd_update_",
    "sigmoid_backward",
    "sin_backward",
    "sum_to_shape",
    "tanh_backward",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

PARALLEL_THRESHOLD: int
TRANSCENDENTAL_THRESHOLD: int

def set_num_threads(n: SupportsIndex) -> None: ...
def get_num_threads() -> int: ...
def fusable(*arrays: object) -> bool: ...
def sin_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def cos_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def relu_backward(grad: _Array[_Float], out: _Array[_Float]) -> _Array[_Float]: ...
def sigmoid_backward(grad: _Array[_Float], s: _Array[_Float]) -> _Array[_Float]: ...
def tanh_backward(grad: _Array[_Float], t: _Array[_Float]) -> _Array[_Float]: ...
def mul_backward(
    grad: _Array[_Float], a: _Array[_Float], b: _Array[_Float]
) -> tuple[_Array[_Float], _Array[_Float]]: ...
def div_backward(
    grad: _Array[_Float], a: _Array[_Float], b: _Array[_Float]
) -> tuple[_Array[_Float], _Array[_Float]]: ...
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
