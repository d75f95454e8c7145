"""Type stub for ``gradstack_tensor._float32_transcendentals`` (see its .pyx)."""

import numpy as np
import numpy.typing as npt

__all__ = ["TRANSCENDENTAL_THRESHOLD"]

TRANSCENDENTAL_THRESHOLD: int

def _transcendental_f32(name: str, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
def _sincos_f32(
    x: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...
