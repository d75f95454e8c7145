"""Type stub of ``gradstack_autograd._engine``."""

from typing import Any

from gradstack_tensor import Tensor

from ._node import Node

_node_observer: Any

def set_node_observer(observer: Any) -> None: ...
def run_backward(
    roots: tuple[Tensor, ...],
    grad_roots: tuple[Tensor | None, ...] | None,
    keep_graph: bool,
    create_graph: bool,
    inputs: tuple[Tensor, ...] | None = None,
    accumulate: bool = True,
    allow_unused: bool = False,
    batch_size: int = -1,
) -> Any: ...  # the gradients reaching ``inputs`` (a tuple) without ``accumulate``, else None
def current_graph_task_id() -> int: ...
def will_engine_execute_node(node: Node) -> bool: ...
def unbatchable_reason(roots: tuple[Tensor, ...], inputs: tuple[Tensor, ...]) -> str | None: ...
