"""Type stub for ``gradstack_tensor._adam_update`` (see _adam_update.pyx)."""

from typing import SupportsFloat

from ._kernel_types import _Array, _Float

__all__ = ["adam_update_"]

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
