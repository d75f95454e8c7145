"""``Unfold`` and ``Fold``: :func:`gradstack_nn.functional.unfold` (im2col) and
:func:`gradstack_nn.functional.fold` (col2im) as modules.

Examples
--------
>>> import gradstack_tensor as gt
>>> Unfold(2)(gt.ones(1, 1, 3, 3)).shape
gradstack.Size([1, 4, 4])
>>> Fold((3, 3), 2)(gt.ones(1, 4, 4))[0, 0].tolist()
[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Unfold", "Fold"]


class Unfold(Module):
    """:func:`gradstack_nn.functional.unfold` as a module (torch's ``nn.Unfold``)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )


class Fold(Module):
    """:func:`gradstack_nn.functional.fold` as a module (torch's ``nn.Fold``)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )
