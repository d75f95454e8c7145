"""Type stub for ``gradstack_tensor._index_kernels`` (see _index_kernels.pyx)."""

from typing import Any, SupportsIndex

import numpy as np
import numpy.typing as npt

__all__ = [
    "embedding_backward",
    "gather",
    "result_empty",
    "result_zeros",
    "scatter_",
    "scatter_add_",
    "take_rows",
]

_Index = npt.NDArray[np.int32] | npt.NDArray[np.int64]
_Float = npt.NDArray[np.float32] | npt.NDArray[np.float64]

def take_rows(weight: npt.NDArray[Any], indices: _Index) -> npt.NDArray[Any]: ...
def embedding_backward(
    grad: _Float,
    indices: _Index,
    num_weights: SupportsIndex,
    padding_idx: SupportsIndex = -1,
    scale_grad_by_freq: bool = False,
) -> _Float: ...
def scatter_add_(
    out: _Float,
    dim: SupportsIndex,
    index: _Index,
    src: _Float,
    *,
    wrap_negative: bool = False,
) -> None: ...
def scatter_(
    out: _Float,
    dim: SupportsIndex,
    index: _Index,
    src: _Float,
    *,
    wrap_negative: bool = False,
) -> None: ...
def gather(x: _Float, dim: SupportsIndex, index: _Index) -> _Float: ...
def result_empty(
    shape: SupportsIndex | tuple[SupportsIndex, ...], dtype: npt.DTypeLike
) -> npt.NDArray[Any]: ...
def result_zeros(
    shape: SupportsIndex | tuple[SupportsIndex, ...], dtype: npt.DTypeLike
) -> npt.NDArray[Any]: ...
