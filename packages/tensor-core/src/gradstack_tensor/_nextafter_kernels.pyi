"""Type stub for ``gradstack_tensor._nextafter_kernels`` (see _nextafter_kernels.pyx)."""

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["nextafter", "nextafter_ufunc"]

_Float = TypeVar("_Float", np.float32, np.float64)

def nextafter(x: npt.NDArray[_Float], y: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def nextafter_ufunc(
    x: Any, y: Any, out: Any = None, casting: str = "same_kind", **kwargs: Any
) -> Any: ...
