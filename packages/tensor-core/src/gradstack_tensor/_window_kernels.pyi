"""Type stub for ``gradstack_tensor._window_kernels`` (see _window_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

from ._kernel_types import _Array, _Float

__all__ = [
    "im2col",
    "col2im",
    "max_pool2d_forward",
    "max_pool2d_backward",
    "avg_pool2d_forward",
    "avg_pool2d_backward",
]

_Pair = tuple[int, int]

def im2col(
    x: _Array[_Float],
    kernel_size: _Pair,
    dilation: _Pair,
    padding: _Pair,
    stride: _Pair,
    out: _Array[_Float] | None = None,
    max_threads: int | None = None,
) -> _Array[_Float]: ...
def col2im(
    cols: _Array[_Float],
    output_size: _Pair,
    kernel_size: _Pair,
    dilation: _Pair,
    padding: _Pair,
    stride: _Pair,
    out: _Array[_Float] | None = None,
    max_threads: int | None = None,
) -> _Array[_Float]: ...
def max_pool2d_forward(
    x: _Array[_Float],
    kernel_size: _Pair,
    stride: _Pair,
    padding: _Pair,
    dilation: _Pair,
    ceil_mode: bool,
) -> tuple[_Array[_Float], npt.NDArray[np.int64]]: ...
def max_pool2d_backward(
    grad: _Array[_Float], indices: npt.NDArray[np.int64], input_size: _Pair
) -> _Array[_Float]: ...
def avg_pool2d_forward(
    x: _Array[_Float],
    kernel_size: _Pair,
    stride: _Pair,
    padding: _Pair,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> _Array[_Float]: ...
def avg_pool2d_backward(
    grad: _Array[_Float],
    input_size: _Pair,
    kernel_size: _Pair,
    stride: _Pair,
    padding: _Pair,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> _Array[_Float]: ...
def _pair_arg(func: str, name: str, value: object) -> tuple[int, int]: ...
