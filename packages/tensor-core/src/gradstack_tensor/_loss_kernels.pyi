"""Type stub for ``gradstack_tensor._loss_kernels`` (see its .pyx)."""

from ._kernel_types import _Array, _Float

__all__ = [
    "LOSS_THRESHOLD",
    "huber",
    "huber_backward",
    "smooth_l1",
    "smooth_l1_backward",
]

def smooth_l1(x: _Array[_Float], y: _Array[_Float], beta: float) -> _Array[_Float]: ...
def huber(x: _Array[_Float], y: _Array[_Float], delta: float) -> _Array[_Float]: ...
def smooth_l1_backward(
    grad: _Array[_Float], x: _Array[_Float], y: _Array[_Float], beta: float, norm: float = 1.0
) -> _Array[_Float]: ...
def huber_backward(
    grad: _Array[_Float], x: _Array[_Float], y: _Array[_Float], delta: float, norm: float = 1.0
) -> _Array[_Float]: ...

LOSS_THRESHOLD: int
