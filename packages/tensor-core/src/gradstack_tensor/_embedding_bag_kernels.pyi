"""Type stub for ``gradstack_tensor._embedding_bag_kernels`` (see _embedding_bag_kernels.pyx)."""

from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "embedding_bag_backward",
    "embedding_bag_forward",
    "embedding_bag_per_sample_weights_backward",
]

_Floats = npt.NDArray[np.float32] | npt.NDArray[np.float64]
_Ints = npt.NDArray[np.int64]
_Mode = Literal["sum", "mean", "max"]

def embedding_bag_forward(
    weight: _Floats,
    indices: _Ints,
    starts: _Ints,
    ends: _Ints,
    mode: _Mode,
    per_sample_weights: _Floats | None = None,
    padding_idx: int = -1,
) -> tuple[_Floats, _Ints | None]: ...
def embedding_bag_backward(
    grad: _Floats,
    indices: _Ints,
    starts: _Ints,
    ends: _Ints,
    num_weights: int,
    mode: _Mode,
    per_sample_weights: _Floats | None = None,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    max_rows: _Ints | None = None,
) -> _Floats: ...
def embedding_bag_per_sample_weights_backward(
    grad: _Floats,
    weight: _Floats,
    indices: _Ints,
    starts: _Ints,
    ends: _Ints,
    padding_idx: int = -1,
) -> _Floats: ...
