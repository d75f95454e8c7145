"""The array types of the kernel modules' stubs (a stub only: no module imports it when
running)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

# a float32 or float64 array; a kernel returns its argument's dtype
_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]
