"""Type stub for ``gradstack_tensor._vector_norm_kernels`` (see _vector_norm_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["sum_of_squares"]

def sum_of_squares(x: npt.NDArray[np.float32] | npt.NDArray[np.float64]) -> float: ...
