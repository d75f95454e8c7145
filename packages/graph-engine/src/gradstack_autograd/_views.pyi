"""Type stub of ``gradstack_autograd._views``."""

import numpy as np
from gradstack_tensor import Tensor

from ._node import Node
from ._op_node import OpNode

class CopySlices(Node):
    fn: OpNode | None

class AsStridedBackward0(Node): ...

def _requires_grad_set(t: Tensor) -> None: ...
def _grad_fn_read(t: Tensor) -> None: ...
def view_positions(
    base_shape: tuple[int, ...],
    base_strides: tuple[int, ...],
    view_shape: tuple[int, ...],
    view_strides: tuple[int, ...],
    offset: int,
) -> np.ndarray: ...
