"""Type stub for ``gradstack_tensor._adam_update`` (see _adam_update.pyx)."""

from typing import SupportsFloat, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["adam_update_"]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

def adam_update_(
    param: _Array[_Float],
    grad: _Array[_Float],
    exp_avg: _Array[_Float],
    exp_avg_sq: _Array[_Float],
    max_exp_avg_sq: _Array[_Float] | None,
    *,
    lr: SupportsFloat,
    beta1: SupportsFloat,
    beta2: SupportsFloat,
    eps: SupportsFloat,
    weight_decay: SupportsFloat,
    step: SupportsFloat,
    amsgrad: bool = False,
    maximize: bool = False,
    decoupled: bool = False,
) -> None: ...
