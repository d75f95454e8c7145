"""Type stub for ``gradstack_tensor._lu_kernels`` (see _lu_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["getf2_"]

def getf2_(
    a: npt.NDArray[np.floating], pivots: npt.NDArray[np.int32], info: npt.NDArray[np.int32]
) -> None: ...
