"""Type stub for ``gradstack_tensor._order_kernels`` (see its .pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["topk_rows"]

def topk_rows(
    rows: npt.NDArray[np.generic], k: int, largest: bool = True, sorted: bool = True
) -> tuple[npt.NDArray[np.generic], npt.NDArray[np.int64]]: ...
