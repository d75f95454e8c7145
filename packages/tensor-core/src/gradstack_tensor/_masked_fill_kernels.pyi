"""Type stub for ``gradstack_tensor._masked_fill_kernels`` (see _masked_fill_kernels.pyx)."""

from typing import SupportsFloat, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["masked_fill_block"]

_Float = TypeVar("_Float", np.float32, np.float64)

def masked_fill_block(
    x: npt.NDArray[_Float], mask: npt.NDArray[np.bool_], value: SupportsFloat
) -> npt.NDArray[_Float]: ...
