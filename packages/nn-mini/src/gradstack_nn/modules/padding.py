"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dims, each ``F.pad`` with its mode (``functional/padding.py``).

>>> import gradstack_tensor as gt
>>> ZeroPad2d((1, 0, 0, 1))(gt.ones(1, 1, 1, 1)).tolist()
[[[[0.0, 1.0], [0.0, 0.0]]]]
>>> ReflectionPad1d(2)
ReflectionPad1d((2, 2))
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from ..functional.padding import pad
from .module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
]  # fmt: skip


def _padding(padding, dims: int) -> tuple:
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    padding = tuple(padding)
    if len(padding) != 2 * dims:
        raise ValueError(
            f"expected padding to be an int or a tuple of {2 * dims} ints, got {len(padding)}"
        )
    return padding


class _Pad(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding(padding, self.dims)
        self.value = 0.0

    def forward(self, input: Tensor) -> Tensor:
        if self.mode == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _Zeros:
    """A constant pad of zeros, shown as the plain pads (by its padding alone)."""

    padding: tuple

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with ``value``."""

    dims = 1


class ConstantPad2d(_ConstantPad):
    """Pad the last two dims with ``value``."""

    dims = 2


class ConstantPad3d(_ConstantPad):
    """Pad the last three dims with ``value``."""

    dims = 3


class ZeroPad1d(_Zeros, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_Zeros, ConstantPad2d):
    """Pad the last two dims with zeros."""


class ZeroPad3d(_Zeros, ConstantPad3d):
    """Pad the last three dims with zeros."""


class ReflectionPad1d(_Pad):
    """Pad the last dim with its reflection (the edge not repeated)."""

    mode, dims = "reflect", 1


class ReflectionPad2d(_Pad):
    """Pad the last two dims with their reflection."""

    mode, dims = "reflect", 2


class ReflectionPad3d(_Pad):
    """Pad the last three dims with their reflection."""

    mode, dims = "reflect", 3


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge."""

    mode, dims = "replicate", 1


class ReplicationPad2d(_Pad):
    """Pad the last two dims by repeating their edges."""

    mode, dims = "replicate", 2


class ReplicationPad3d(_Pad):
    """Pad the last three dims by repeating their edges."""

    mode, dims = "replicate", 3


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around."""

    mode, dims = "circular", 1


class CircularPad2d(_Pad):
    """Pad the last two dims by wrapping around."""

    mode, dims = "circular", 2


class CircularPad3d(_Pad):
    """Pad the last three dims by wrapping around."""

    mode, dims = "circular", 3
