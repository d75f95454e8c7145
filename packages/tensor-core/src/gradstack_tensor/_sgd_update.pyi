"""Type stub for ``gradstack_tensor._sgd_update`` (see _sgd_update.pyx)."""

from typing import SupportsFloat, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["sgd_update_"]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

def sgd_update_(
    param: _Array[_Float],
    grad: _Array[_Float],
    momentum_buffer: _Array[_Float] | None,
    lr: SupportsFloat,
    *,
    momentum: SupportsFloat = 0.0,
    dampening: SupportsFloat = 0.0,
    weight_decay: SupportsFloat = 0.0,
    nesterov: bool = False,
    maximize: bool = False,
    first_step: bool = False,
) -> None: ...
