"""Type stub for ``gradstack_tensor._sgd_update`` (see _sgd_update.pyx)."""

from typing import SupportsFloat

from ._kernel_types import _Array, _Float

__all__ = ["sgd_update_"]

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
