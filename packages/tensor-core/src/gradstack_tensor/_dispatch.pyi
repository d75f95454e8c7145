"""Type stub of ``gradstack_tensor._dispatch``: the op registry and the dispatch point."""

from collections.abc import Callable
from typing import Any

KIND_OTHER: int
KIND_BINARY: int
KIND_BINARY_FLOAT: int
KIND_COMPARE: int
KIND_UNARY: int
KIND_UNARY_FLOAT: int

OPS: dict[str, Op]

class Op:
    name: str
    kind: int
    inplace: bool
    is_view: bool
    ufunc: Any
    aten: str | None
    derivative: Any
    def __init__(
        self,
        name: str,
        kind: int = ...,
        ufunc: Any = ...,
        *,
        inplace: bool = ...,
        view: bool = ...,
        aten: str | None = ...,
    ) -> None: ...
    @property
    def kernel(self) -> Callable[..., Any] | None: ...
    def set_kernel(self, fn: Callable[..., Any]) -> Callable[..., Any]: ...
    @property
    def has_kernel(self) -> bool: ...
    def run_kernel(self, *args: Any) -> Any: ...
    def run_own_kernel(self, *args: Any) -> Any: ...
    def __call__(self, *args: Any) -> Any: ...

class DispatchLayer:
    priority: int
    def __init__(self, priority: int = ...) -> None: ...
    def handle(self, op: Op, args: tuple[Any, ...], next_index: int) -> Any: ...
    def call_next(self, op: Op, args: tuple[Any, ...], next_index: int) -> Any: ...

def get_op(name: str) -> Op: ...
def declare_op(
    name: str, kind: int, ufunc: Any, inplace: bool, view: bool, aten: str | None
) -> Op: ...
def register_op(
    name: str,
    kernel: Callable[..., Any] | None = ...,
    *,
    inplace: bool = ...,
    view: bool = ...,
    aten: str | None = ...,
) -> Op: ...
def register_layer(layer: DispatchLayer) -> None: ...
def unregister_layer(layer: DispatchLayer) -> None: ...
def registered_layers() -> tuple[DispatchLayer, ...]: ...
def dispatch(op: Op, args: tuple[Any, ...]) -> Any: ...
def note_meta_storage(
    has_meta: Callable[[tuple[Any, ...]], bool], run: Callable[[Op, tuple[Any, ...]], Any]
) -> None: ...
def note_bfloat16_storage(
    has_bfloat16: Callable[[tuple[Any, ...]], bool], run: Callable[[Op, tuple[Any, ...]], Any]
) -> None: ...
