"""Type stub of ``gradstack_autograd._node``."""

import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Any

from gradstack_tensor import Tensor

NO_EDGE: tuple[None, int, None, int]

class RemovableHandle:
    id: int
    def __init__(self, hooks: dict[int, Any]) -> None: ...
    def remove(self) -> None: ...
    def __enter__(self) -> RemovableHandle: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

class EfficientZero:
    shape: tuple[int, ...]
    dtype_num: int

def efficient_zeros(like: Tensor) -> EfficientZero: ...

class AutogradMeta:
    grad_accumulator: weakref.ref[AccumulateGrad] | None
    hooks: dict[int, Callable[..., Any]] | None
    post_accumulate_hooks: dict[int, Callable[..., Any]] | None
    retains_grad: bool
    view_of: Any
    name: Any
    views: list[Any] | None
    views_prune_at: int
    view_creation: int
    view_op: str | None
    view_stale: bool
    requires_grad_from_base: bool
    base_version: int

class SavedTensor: ...

class Node:
    next_edges: tuple[Any, ...]
    entry: Any
    saved: tuple[Any, ...] | None
    sequence_nr: int
    num_outputs: int
    released: bool
    pre_hooks: dict[int, Callable[..., Any]] | None
    post_hooks: dict[int, Callable[..., Any]] | None
    tensor_pre_hooks: dict[int, dict[int, Callable[..., Any]]] | None
    retained: dict[int, Any] | None
    anomaly_trace: str | None
    extra: Any
    # nodes carry attributes that no class declares: torch's ``_saved_<name>`` properties
    # added per derivative-table entry, and what custom Functions keep on their ctx
    def __getattr__(self, name: str) -> Any: ...
    def name(self) -> str: ...
    @property
    def _saved_tensors(self) -> tuple[Any, ...]: ...
    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]: ...
    @property
    def metadata(self) -> dict[Any, Any]: ...
    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle: ...
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle: ...
    def saved_value(self, key: int | str) -> Any: ...
    def apply(self, grads: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]: ...
    def __call__(self, *grads: Tensor | None) -> tuple[Tensor | None, ...]: ...

class AccumulateGrad(Node):
    @property
    def variable(self) -> Tensor: ...

def _push_saved_tensors_hooks(
    pack: Callable[[Tensor], Any], unpack: Callable[[Any], Tensor]
) -> None: ...
def _pop_saved_tensors_hooks() -> None: ...
def saved_tensors_hooks_active() -> bool: ...
def _add_hook_py(hooks: dict[int, Any], fn: Callable[..., Any]) -> RemovableHandle: ...
def new_sequence_nr() -> int: ...
def current_sequence_nr() -> int: ...
def _take_over_count() -> int: ...

ZEROED_AT: str

def mark_grad_zeroed(grad: Tensor) -> None: ...
def grad_is_zeroed(grad: object) -> bool: ...
