"""Type stub for ``gradstack_tensor._lu_kernels`` (see _lu_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["getf2_", "getf2_panel_"]

def getf2_(
    a: npt.NDArray[np.floating], pivots: npt.NDArray[np.int32], info: npt.NDArray[np.int32]
) -> None: ...
def getf2_panel_(
    a: npt.NDArray[np.floating],
    j0: int,
    j1: int,
    pivots: npt.NDArray[np.int32],
    perm: npt.NDArray[np.int64],
    info: npt.NDArray[np.int32],
) -> None: ...
