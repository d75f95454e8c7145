"""Type stub for ``gradstack_tensor._triangle_kernels`` (see _triangle_kernels.pyx)."""

from typing import SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["triangle"]

_T = TypeVar("_T", bound=np.generic)

def triangle(
    x: npt.NDArray[_T],
    diagonal: SupportsIndex = 0,
    upper: bool = False,
    out: npt.NDArray[_T] | None = None,
) -> npt.NDArray[_T]: ...
