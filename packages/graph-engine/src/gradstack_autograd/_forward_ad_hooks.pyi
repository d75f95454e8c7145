"""Type stub of ``gradstack_autograd._forward_ad_hooks``."""

from collections.abc import Callable
from typing import Any

from gradstack_tensor import Tensor

def _set_forward_ad_callback(
    fn: Callable[..., Any] | None, inplace_fn: Callable[..., Any] | None = None
) -> None: ...
def _share_tangent_py(t: Tensor) -> None: ...
