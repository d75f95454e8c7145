"""Type stub for ``gradstack_tensor._pointwise_kernels`` (see its .pyx)."""

import numpy as np
import numpy.typing as npt

from ._kernel_types import _Float

__all__ = ["EXP2_THRESHOLD", "exp2_f32", "sign"]

def sign(x: npt.NDArray[_Float]) -> npt.NDArray[_Float]: ...
def exp2_f32(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...

EXP2_THRESHOLD: int
