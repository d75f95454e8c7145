"""Type stub of ``gradstack_tensor._promotion``."""

from .dtypes import dtype

def can_cast_inplace(res: dtype, own: dtype) -> bool: ...
