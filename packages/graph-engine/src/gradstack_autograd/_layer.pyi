"""Type stub of ``gradstack_autograd._layer``."""

from collections.abc import Callable
from typing import Any

import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.extension import DispatchLayer, Op

from ._node import Node

class Derivative:
    op_name: str
    signature: tuple[str, ...]
    inputs: tuple[int, ...]
    list_input: bool
    save: tuple[int, ...]
    save_for: tuple[Any, ...] | None
    save_if: tuple[Any, ...] | None
    output_if: Callable[..., Any] | None
    save_output: bool
    output_for: tuple[int, ...] | None
    slots: dict[str, int]
    sizes: tuple[tuple[str, int], ...]
    backward: Callable[..., Any] | None
    jvp: Callable[..., Any] | None
    batch_rule: Callable[..., Any] | None
    batchable: bool
    differentiable: bool
    extra: Callable[..., Any] | None
    node_name: str | Callable[..., str]
    fused: str | None
    native: int
    shown: Callable[[dict[str, Any]], dict[str, Any]] | None
    shown_names: tuple[str, ...]
    byproduct: bool
    keeps_zero: bool | tuple[bool, ...] | dict[str, bool | tuple[bool, ...]] | None
    def __init__(
        self,
        op_name: str,
        node_name: str | Callable[..., str],
        backward: Callable[..., Any] | None,
        inputs: tuple[int, ...] = ...,
        save: tuple[int, ...] = ...,
        save_output: bool = ...,
        list_input: bool = ...,
        differentiable: bool = ...,
        extra: Callable[..., Any] | None = ...,
        jvp: Callable[..., Any] | None = ...,
        batchable: bool = ...,
        save_for: tuple[Any, ...] | None = ...,
        output_for: tuple[int, ...] | None = ...,
        signature: tuple[str, ...] = ...,
        fused: str | None = ...,
        sizes: tuple[tuple[str, int], ...] = ...,
        batch_rule: Callable[..., Any] | None = ...,
        save_if: tuple[Any, ...] | None = ...,
        output_if: Callable[..., Any] | None = ...,
    ) -> None: ...
    def slot(self, name: str) -> int: ...

class OpNode(Node):
    @property
    def needs_input_grad(self) -> tuple[bool, ...]: ...
    def fused(self, *tensors: Tensor) -> Any: ...
    def input_shape(self, i: int) -> tuple[int, ...] | None: ...

class CopySlices(Node):
    fn: OpNode | None

class AsStridedBackward0(Node): ...

class AutogradLayer(DispatchLayer):
    def handle(self, op: Op, args: tuple[Any, ...], next_index: int) -> Any: ...

def _set_forward_ad_callback(
    fn: Callable[..., Any] | None, inplace_fn: Callable[..., Any] | None = None
) -> None: ...
def _run_inplace(op: Op, args: tuple[Any, ...], next_index: int) -> Any: ...
def _share_tangent_py(t: Tensor) -> None: ...
def _requires_grad_set(t: Tensor) -> None: ...
def _grad_fn_read(t: Tensor) -> None: ...
def _node_class(name: str) -> type[OpNode]: ...
def view_positions(
    base_shape: tuple[int, ...],
    base_strides: tuple[int, ...],
    view_shape: tuple[int, ...],
    view_strides: tuple[int, ...],
    offset: int,
) -> np.ndarray: ...
def edge_of(x: object) -> tuple[Any, ...]: ...
def attach_output(t: Tensor, node: Node, output_nr: int) -> None: ...
def alias_of(t: Tensor) -> Tensor: ...
def save_for_function(t: Tensor, is_output: bool, node: Node) -> Any: ...
def run_fused(kernel: Callable[..., Any], tensors: tuple[Tensor, ...]) -> Any: ...
def native_formula_of(op_name: str) -> int: ...
