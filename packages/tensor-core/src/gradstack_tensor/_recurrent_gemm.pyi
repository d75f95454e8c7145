"""Type stub for ``gradstack_tensor._recurrent_gemm`` (see _recurrent_gemm.pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["PANEL_WIDTH", "pack_panels", "panel_matmul"]

PANEL_WIDTH: int

def pack_panels(
    b: npt.NDArray[np.float32], transposed: bool = False
) -> npt.NDArray[np.float32]: ...
def panel_matmul(
    a: npt.NDArray[np.float32],
    panels: npt.NDArray[np.float32],
    n: int,
    bias: npt.NDArray[np.float32] | None = None,
) -> npt.NDArray[np.float32]: ...
