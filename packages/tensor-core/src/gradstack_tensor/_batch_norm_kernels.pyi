"""Type stub for ``gradstack_tensor._batch_norm_kernels`` (see _batch_norm_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

from ._kernel_types import _Array, _Float

__all__ = [
    "batch_norm_stats",
    "batch_norm_apply",
    "batch_norm_backward",
    "batch_norm_backward_batch_stats",
]

_F64 = npt.NDArray[np.float64]

def batch_norm_stats(x: _Array[_Float]) -> tuple[_F64, _F64]: ...
def batch_norm_apply(
    x: _Array[_Float], alpha: _Array[_Float], beta: _Array[_Float]
) -> _Array[_Float]: ...
def batch_norm_backward(
    grad: _Array[_Float],
    x: _Array[_Float],
    mean: _Array[_Float],
    invstd: _Array[_Float],
    weight: _Array[_Float] | None,
    train: bool,
    need_input: bool,
) -> tuple[_Array[_Float] | None, _F64, _F64]: ...
def batch_norm_backward_batch_stats(
    grad: _Array[_Float],
    x: _Array[_Float],
    eps: float,
    weight: _Array[_Float] | None,
    need_input: bool,
) -> tuple[_Array[_Float] | None, _F64, _F64]: ...
