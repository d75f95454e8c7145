"""Type stub for ``gradstack_tensor._exp_kernels`` (see _exp_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = [
    "EXP_THRESHOLD",
    "cosh_float32",
    "exp_float32",
    "expm1_float32",
    "log1p_float32",
    "sigmoid_float32",
    "sinh_float32",
]

EXP_THRESHOLD: int

def exp_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
def sigmoid_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
def log1p_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
def expm1_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
def cosh_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
def sinh_float32(
    x: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
) -> npt.NDArray[np.float32]: ...
