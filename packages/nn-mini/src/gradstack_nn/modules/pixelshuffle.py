"""``PixelShuffle`` and ``PixelUnshuffle``: channels traded for resolution, and back
(:func:`gradstack_nn.functional.pixel_shuffle`, :func:`~gradstack_nn.functional.pixel_unshuffle`).

Examples
--------
>>> import gradstack_tensor as gt
>>> PixelShuffle(2)(gt.ones(1, 8, 3, 4)).shape
gradstack.Size([1, 2, 6, 8])
>>> PixelUnshuffle(2)(gt.ones(1, 2, 6, 8)).shape
gradstack.Size([1, 8, 3, 4])
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
