"""Type stub for ``gradstack_tensor._sum_to_shape`` (see _sum_to_shape.pyx)."""

from typing import SupportsIndex

from ._kernel_types import _Array, _Float

__all__ = ["sum_to_shape"]

def sum_to_shape(
    grad: _Array[_Float], shape: SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]
) -> _Array[_Float]: ...
