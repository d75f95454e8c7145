"""Type stub of ``gradstack_autograd._op_node``."""

from collections.abc import Callable
from typing import Any

from gradstack_tensor import Tensor

from ._node import Node

class OpNode(Node):
    @property
    def needs_input_grad(self) -> tuple[bool, ...]: ...
    def fused(self, *tensors: Tensor) -> Any: ...
    def input_shape(self, i: int) -> tuple[int, ...] | None: ...

def _node_class(name: str) -> type[OpNode]: ...
def run_fused(kernel: Callable[..., Any], tensors: tuple[Tensor, ...]) -> Any: ...
