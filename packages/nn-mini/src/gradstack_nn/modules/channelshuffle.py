"""``ChannelShuffle``: groups of channels interleaved
(:func:`gradstack_nn.functional.channel_shuffle`).

Examples
--------
>>> import gradstack_tensor as gt
>>> ChannelShuffle(2)(gt.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
[0.0, 2.0, 1.0, 3.0]
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave ``groups`` groups of channels (:func:`F.channel_shuffle`)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
