"""Type stub for the Cython module ``gradstack_autograd._backward_kernels``."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "TRANSCENDENTAL_THRESHOLD",
    "cos_backward",
    "div_backward",
    "mul_backward",
    "cos_backward_from_sin",
    "relu_backward",
    "sigmoid_backward",
    "sin_backward",
    "sin_backward_from_cos",
    "tanh_backward",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

TRANSCENDENTAL_THRESHOLD: int

def sin_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def cos_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def relu_backward(grad: _Array[_Float], out: _Array[_Float]) -> _Array[_Float]: ...
def sigmoid_backward(grad: _Array[_Float], s: _Array[_Float]) -> _Array[_Float]: ...
def square_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def tanh_backward(grad: _Array[_Float], t: _Array[_Float]) -> _Array[_Float]: ...
def mul_backward(
    grad: _Array[_Float], a: _Array[_Float], b: _Array[_Float]
) -> tuple[_Array[_Float], _Array[_Float]]: ...
def div_backward(
    grad: _Array[_Float], a: _Array[_Float], b: _Array[_Float]
) -> tuple[_Array[_Float], _Array[_Float]]: ...
def is_broadcast_grad(grad: object, v: object) -> bool: ...

BROADCAST_GRAD_KERNELS: tuple[object, ...]

def sin_backward_from_cos(grad: _Array[_Float], cos_x: _Array[_Float]) -> _Array[_Float]: ...
def cos_backward_from_sin(grad: _Array[_Float], sin_x: _Array[_Float]) -> _Array[_Float]: ...
