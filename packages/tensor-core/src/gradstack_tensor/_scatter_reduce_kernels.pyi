"""Type stub for ``gradstack_tensor._scatter_reduce_kernels`` (see
_scatter_reduce_kernels.pyx)."""

from typing import SupportsIndex

import numpy as np
import numpy.typing as npt

__all__ = ["scatter_reduce_"]

_Index = npt.NDArray[np.int32] | npt.NDArray[np.int64]
_Float = npt.NDArray[np.float32] | npt.NDArray[np.float64]

def scatter_reduce_(
    out: _Float,
    dim: SupportsIndex,
    index: _Index,
    src: _Float,
    reduce: str,
    include_self: bool = True,
) -> None: ...
