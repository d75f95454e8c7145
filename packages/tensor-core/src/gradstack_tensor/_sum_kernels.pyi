"""Type stub for ``gradstack_tensor._sum_kernels`` (see its .pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["SUM_THRESHOLD", "sum_all"]

SUM_THRESHOLD: int

def sum_all(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
