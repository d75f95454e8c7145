"""Type stub for ``gradstack_tensor._norm_kernels`` (see _norm_kernels.pyx)."""

from typing import SupportsFloat

from ._kernel_types import _Array, _Float

__all__ = ["layer_norm", "layer_norm_backward", "softmax", "softmax_backward"]

def softmax(x: _Array[_Float], dim: int, log: bool = False) -> _Array[_Float]: ...
def softmax_backward(
    grad: _Array[_Float], output: _Array[_Float], dim: int, log: bool = False
) -> _Array[_Float]: ...
def layer_norm(
    x: _Array[_Float],
    normalized: int,
    weight: _Array[_Float] | None = None,
    bias: _Array[_Float] | None = None,
    eps: SupportsFloat = 1e-5,
) -> _Array[_Float]: ...
def layer_norm_backward(
    grad: _Array[_Float],
    x: _Array[_Float],
    normalized: int,
    weight: _Array[_Float] | None = None,
    eps: SupportsFloat = 1e-5,
    *,
    input_grad: bool = True,
    weight_grad: bool = True,
    bias_grad: bool = True,
) -> tuple[_Array[_Float] | None, _Array[_Float] | None, _Array[_Float] | None]: ...

ROW_THRESHOLD: int
