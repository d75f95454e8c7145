"""``Conv2d``."""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    first, second = value
    return first, second


class Conv2d(Module):
    """2-d convolution (cross-correlation) over ``(N, C, H, W)`` or ``(C, H, W)`` inputs,
    as ``torch.nn.Conv2d`` (computed by :func:`gradstack_nn.functional.conv2d`).

    Parameters
    ----------
    in_channels, out_channels : int
        Channels of the input and of the output.
    kernel_size, stride, padding, dilation : int or pair of ints
        As torch's; ``padding`` may also be ``'valid'`` or ``'same'``.
    groups : int, default 1
        Blocked connections: each group of ``in_channels / groups`` input channels feeds
        ``out_channels / groups`` output channels.
    bias : bool, default True
    padding_mode : str, default ``'zeros'``
        Only ``'zeros'``: the other modes of torch raise NotImplementedError.
    device, dtype : optional

    Attributes
    ----------
    weight : Parameter
        ``(out_channels, in_channels / groups, kH, kW)``, initialised as torch's,
        ``kaiming_uniform_(a=sqrt(5))``: uniform in ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``
        with ``fan_in = in_channels / groups * kH * kW``.
    bias : Parameter or None
        ``(out_channels,)``, uniform in the same interval.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> conv = Conv2d(1, 4, 3)
    >>> conv(gt.randn(2, 1, 8, 8)).shape
    gradstack.Size([2, 4, 6, 6])
    >>> conv
    Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and _pair(stride) != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"Conv2d(padding_mode={padding_mode!r}): gradstack pads convolutions with zeros "
                "only; pad the input yourself and use padding=0"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(gt.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(gt.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight and bias with torch's default initialisation (Note [Linear's
        default init] in ``linear.py``)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"  # (a string unquoted, as torch shows it)
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
