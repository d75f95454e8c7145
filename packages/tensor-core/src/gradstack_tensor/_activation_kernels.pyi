"""Type stub for ``gradstack_tensor._activation_kernels`` (see its .pyx)."""

from typing import Literal

import numpy.typing as npt

from ._kernel_types import _Array, _Float

__all__ = [
    "ACTIVATION_THRESHOLD",
    "erf",
    "erf_backward",
    "erfinv",
    "erfinv_backward",
    "gelu",
    "gelu_backward",
    "leaky_relu",
    "leaky_relu_backward",
    "silu",
    "silu_backward",
    "softplus_backward",
]

def gelu(x: _Array[_Float], approximate: Literal["none", "tanh"] = "none") -> _Array[_Float]: ...
def gelu_backward(
    grad: _Array[_Float], x: _Array[_Float], approximate: Literal["none", "tanh"] = "none"
) -> _Array[_Float]: ...
def erf(x: _Array[_Float]) -> _Array[_Float]: ...
def erfc(x: _Array[_Float]) -> _Array[_Float]: ...
def erf_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def erfinv(x: _Array[_Float]) -> _Array[_Float]: ...
def erfinv_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def silu(x: _Array[_Float]) -> _Array[_Float]: ...
def silu_backward(grad: _Array[_Float], x: _Array[_Float]) -> _Array[_Float]: ...
def leaky_relu(x: _Array[_Float], negative_slope: float = 0.01) -> _Array[_Float]: ...
def leaky_relu_backward(
    grad: _Array[_Float], x: _Array[_Float], negative_slope: float = 0.01
) -> _Array[_Float]: ...
def softplus_backward(
    grad: npt.NDArray[_Float], x: npt.NDArray[_Float], beta: float = 1.0, threshold: float = 20.0
) -> npt.NDArray[_Float]: ...

ACTIVATION_THRESHOLD: int
