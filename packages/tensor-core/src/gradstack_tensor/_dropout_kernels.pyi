"""Type stub for ``gradstack_tensor._dropout_kernels`` (see _dropout_kernels.pyx)."""

from typing import SupportsFloat

import numpy as np
import numpy.typing as npt

__all__ = ["bernoulli_scalar_draw_", "bernoulli_scalar_fill_"]

def bernoulli_scalar_fill_(
    out: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    raw: npt.NDArray[np.uint64],
    p: SupportsFloat,
) -> None: ...
def bernoulli_scalar_draw_(
    out: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    bit_generator: np.random.BitGenerator,
    p: SupportsFloat,
) -> None: ...
def _mt_blocks(enable: bool | None = None) -> bool: ...
