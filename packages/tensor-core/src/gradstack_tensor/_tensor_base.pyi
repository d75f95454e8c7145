"""Type stub of ``gradstack_tensor._tensor_base``: the C state of a tensor."""

from typing import Any

class VersionCounter:
    value: int
    last_writer: tuple[str, str | None] | None
    track_writes: bool

class TensorBase:
    _requires_grad: bool
    _grad: Any
    _grad_fn: Any
    _output_nr: int
    _autograd_meta: Any
    _fw_grad: Any
    _is_inference: bool

def set_autograd_extension(ext: Any) -> None: ...
def caller_location() -> str: ...
def library_dirs() -> tuple[str, ...]: ...
def _register_tensor_class(cls: type) -> None: ...
def _python_data_kind(data: Any) -> int: ...
