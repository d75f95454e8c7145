"""Type stub of ``gradstack_autograd._derivative``."""

from collections.abc import Callable
from typing import Any

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

def native_formula_of(op_name: str) -> int: ...
