"""``Conv2d``, and ``Conv1d`` (the same layer with one spatial dim)."""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"expected an int or a tuple of {n} ints, got {value}")
    return value


def _pair(value) -> tuple:
    return _ntuple(value, 2)


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
        ``'zeros'``, or ``'reflect'``, ``'replicate'``, ``'circular'``: the input is padded
        with :func:`~gradstack_nn.functional.pad` first, as torch.
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

    _dims = 2  # spatial dims (Conv1d: 1), with ``_conv`` its functional form

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
            if padding == "same" and _ntuple(stride, self._dims) != (1,) * self._dims:
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        n = self._dims
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
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
        if self.padding_mode == "zeros":
            return self._conv(
                input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                self.groups,
            )  # fmt: skip
        # torch pads with the mode first (F.pad's order: the last dim first), then convolves
        if isinstance(self.padding, str):
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pads = (
                [(t // 2, t - t // 2) for t in total]
                if self.padding == "same"
                else [(0, 0)] * len(total)
            )
        else:
            pads = [(p, p) for p in self.padding]
        flat = tuple(v for pair in reversed(pads) for v in pair)
        return self._conv(
            F.pad(input, flat, mode=self.padding_mode), self.weight, self.bias, self.stride,
            0, self.dilation, self.groups,
        )  # fmt: skip

    def _conv(self, input, weight, bias, stride, padding, dilation, groups):
        return F.conv2d(input, weight, bias, stride, padding, dilation, groups)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"  # (a string unquoted, as torch shows it)
        if self.dilation != (1,) * len(self.kernel_size):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(Conv2d):
    """1-d convolution over ``(N, C, L)`` or ``(C, L)`` inputs, as ``torch.nn.Conv1d``
    (:func:`gradstack_nn.functional.conv1d`: the 2-d convolution on a unit height); the
    parameters are those of :class:`Conv2d` with one spatial dim.

    >>> import gradstack_tensor as gt
    >>> conv = Conv1d(2, 3, 3, padding=1)
    >>> conv(gt.randn(4, 2, 10)).shape, conv
    (gradstack.Size([4, 3, 10]), Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,)))
    """

    _dims = 1

    def _conv(self, input, weight, bias, stride, padding, dilation, groups):
        return F.conv1d(input, weight, bias, stride, padding, dilation, groups)
