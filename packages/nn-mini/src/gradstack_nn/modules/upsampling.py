"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``: ``F.interpolate``
as layers (``functional/sampling.py``).

>>> import gradstack_tensor as gt
>>> Upsample(scale_factor=2)
Upsample(scale_factor=2.0, mode='nearest')
>>> Upsample(scale_factor=2)(gt.ones(1, 1, 2)).shape
gradstack.Size([1, 1, 4])
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from ..functional.sampling import interpolate
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``mode`` (see
    :func:`~gradstack_nn.functional.interpolate`)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:  # fmt: skip
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: tuple[float, ...] | float | None = (
            tuple(float(f) for f in scale_factor)
            if isinstance(scale_factor, tuple)
            else (float(scale_factor) if scale_factor else None)
        )
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """2-d nearest upsampling."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-d bilinear upsampling with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
