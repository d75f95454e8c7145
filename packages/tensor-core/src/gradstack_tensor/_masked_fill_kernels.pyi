"""Type stub for ``gradstack_tensor._masked_fill_kernels`` (see _masked_fill_kernels.pyx)."""

from typing import SupportsFloat

import numpy as np
import numpy.typing as npt

from ._kernel_types import _Float

__all__ = ["masked_fill_block"]

def masked_fill_block(
    x: npt.NDArray[_Float], mask: npt.NDArray[np.bool_], value: SupportsFloat
) -> npt.NDArray[_Float]: ...
