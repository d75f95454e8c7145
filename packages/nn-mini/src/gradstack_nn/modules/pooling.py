"""``MaxPool2d``, and the window modules ``Unfold`` and ``Fold``."""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = ["MaxPool2d", "Unfold", "Fold"]


class MaxPool2d(Module):
    """2-d max pooling, as ``torch.nn.MaxPool2d`` (``stride`` defaults to ``kernel_size``).

    >>> import gradstack_tensor as gt
    >>> MaxPool2d(2)(gt.arange(16.).reshape(1, 1, 4, 4)).flatten().tolist()
    [5.0, 7.0, 13.0, 15.0]
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


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
