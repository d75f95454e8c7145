"""Type stub of ``gradstack_autograd._native``."""

from collections.abc import Sequence

from gradstack_tensor import Tensor

def set_native_formulas_enabled(enabled: bool) -> bool: ...
def sum_to_py(g: Tensor, shape: Sequence[int]) -> Tensor: ...
