"""The convolution layers, as torch's (arguments, ``padding_mode``, initial draws, reprs):
``Conv1d``, ``Conv2d``, ``Conv3d`` and ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``.  The 1-d and 3-d classes are the 2-d ones with another number of
spatial dims (``_dims``) and their function of :mod:`gradstack_nn.functional.conv`.  The
``Lazy`` forms (``LazyConv2d`` ...) infer ``in_channels`` from their first input.
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"expected an int or a tuple of {n} ints, got {value}")
    return value


def _check_groups(in_channels: int, out_channels: int, groups: int) -> None:
    """torch's checks of a convolution's ``groups`` (ValueError, torch's words)."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")


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
        _check_groups(in_channels, out_channels, groups)
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


class Conv3d(Conv2d):
    """3-d convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs, as
    ``torch.nn.Conv3d`` (:func:`gradstack_nn.functional.conv3d`); the arguments,
    ``padding_mode`` and torch's initialisation of :class:`Conv2d` with three spatial
    dims.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> conv = Conv3d(2, 4, 3, padding=1)
    >>> conv(gt.randn(1, 2, 4, 5, 6)).shape
    gradstack.Size([1, 4, 4, 5, 6])
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    """

    _dims = 3

    def _conv(self, input, weight, bias, stride, padding, dilation, groups):
        return F.conv3d(input, weight, bias, stride, padding, dilation, groups)


class ConvTranspose2d(Module):
    """2-d transposed convolution, as ``torch.nn.ConvTranspose2d``
    (:func:`gradstack_nn.functional.conv_transpose2d`): ``weight`` is ``(in_channels,
    out_channels / groups, kH, kW)``, initialised as torch's; ``forward(input,
    output_size=None)`` picks ``output_padding`` from a requested ``output_size``.

    >>> import gradstack_tensor as gt
    >>> up = ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
    >>> up(gt.randn(1, 4, 5, 5)).shape
    gradstack.Size([1, 2, 10, 10])
    >>> up.weight.shape
    gradstack.Size([4, 2, 3, 3])
    """

    _dims = 2

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
        output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
        padding_mode: str = "zeros", device=None, dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        _check_groups(in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._dims
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = _ntuple(padding, n)
        self.output_padding = _ntuple(output_padding, n)
        self.dilation = _ntuple(dilation, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) + self.kernel_size
        self.weight = Parameter(gt.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(gt.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default initialisation (as :class:`Conv2d`, with the transposed
        weight's fan)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        size = tuple(output_size)[-self._dims :]
        extra = []
        for d in range(self._dims):
            n = input.shape[input.dim() - self._dims + d]
            smallest = ((n - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)  # fmt: skip
            if not smallest <= size[d] < smallest + self.stride[d]:
                raise ValueError(
                    f"requested an output size of {list(size)}, but valid sizes range from "
                    f"{smallest} to {smallest + self.stride[d] - 1} (for an input of "
                    f"{list(input.shape[2:])})"
                )
            extra.append(size[d] - smallest)
        return tuple(extra)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        return self._conv(
            input, self.weight, self.bias, self.stride, self.padding,
            self._output_padding(input, output_size), self.groups, self.dilation,
        )  # fmt: skip

    def _conv(self, input, weight, bias, stride, padding, output_padding, groups, dilation):
        return F.conv_transpose2d(
            input, weight, bias, stride, padding, output_padding, groups, dilation
        )

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        n = self._dims
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose1d(ConvTranspose2d):
    """1-d transposed convolution (:class:`ConvTranspose2d` with one spatial dim)."""

    _dims = 1

    def _conv(self, input, weight, bias, stride, padding, output_padding, groups, dilation):
        return F.conv_transpose1d(
            input, weight, bias, stride, padding, output_padding, groups, dilation
        )


class ConvTranspose3d(ConvTranspose2d):
    """3-d transposed convolution, as ``torch.nn.ConvTranspose3d``
    (:func:`gradstack_nn.functional.conv_transpose3d`); the arguments of
    :class:`ConvTranspose2d` (``forward(input, output_size=None)``) with three spatial
    dims.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> up = ConvTranspose3d(2, 3, 2, stride=2)
    >>> up(gt.randn(1, 2, 2, 3, 4)).shape, up.weight.shape
    (gradstack.Size([1, 3, 4, 6, 8]), gradstack.Size([2, 3, 2, 2, 2]))
    """

    _dims = 3

    def _conv(self, input, weight, bias, stride, padding, output_padding, groups, dilation):
        return F.conv_transpose3d(
            input, weight, bias, stride, padding, output_padding, groups, dilation
        )


class _LazyConvMixin(LazyModuleMixin):
    """torch's ``_LazyConvXdMixin``: ``in_channels`` is 0 and the weight and bias are
    :class:`~gradstack_nn.parameter.UninitializedParameter` objects until the first call,
    which reads ``in_channels`` off the input (dim 1 of a batched input, dim 0 of an
    unbatched one), materialises them and initialises them as the plain layer does."""

    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple
    _dims: int
    _transposed = False

    def _lazy_parameters(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initialise as the plain layer does, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Materialise the weight and bias from ``input``'s channels, then initialise."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        self.weight.materialize(shape + tuple(self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class LazyConv2d(_LazyConvMixin, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` is inferred from the first input, as
    ``torch.nn.LazyConv2d``; it becomes a ``Conv2d`` at its first call.

    >>> import gradstack_tensor as gt
    >>> conv = LazyConv2d(4, 3)
    >>> conv
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
    >>> conv(gt.ones(2, 3, 5, 5)).shape, conv
    (gradstack.Size([2, 4, 3, 3]), Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d

    def __init__(
        self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
        groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
        dtype=None,
    ) -> None:  # fmt: skip
        super().__init__(
            0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
            device, dtype,
        )  # fmt: skip
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv1d(LazyConv2d, Conv1d):
    """A :class:`Conv1d` whose ``in_channels`` is inferred from the first input
    (``torch.nn.LazyConv1d``)."""

    cls_to_become = Conv1d


class LazyConv3d(LazyConv2d, Conv3d):
    """A :class:`Conv3d` whose ``in_channels`` is inferred from the first input
    (``torch.nn.LazyConv3d``)."""

    cls_to_become = Conv3d


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    """A :class:`ConvTranspose2d` whose ``in_channels`` is inferred from the first input,
    as ``torch.nn.LazyConvTranspose2d``; the weight becomes ``(in_channels, out_channels /
    groups, kH, kW)``.

    >>> import gradstack_tensor as gt
    >>> up = LazyConvTranspose2d(2, 3, stride=2)
    >>> up(gt.ones(1, 4, 5, 5)).shape, tuple(up.weight.shape)
    (gradstack.Size([1, 2, 11, 11]), (4, 2, 3, 3))
    """

    cls_to_become = ConvTranspose2d
    _transposed = True

    def __init__(
        self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
        groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
        device=None, dtype=None,
    ) -> None:  # fmt: skip
        super().__init__(
            0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
            padding_mode, device, dtype,
        )  # fmt: skip
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConvTranspose1d(LazyConvTranspose2d, ConvTranspose1d):
    """A :class:`ConvTranspose1d` whose ``in_channels`` is inferred from the first input
    (``torch.nn.LazyConvTranspose1d``)."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose3d(LazyConvTranspose2d, ConvTranspose3d):
    """A :class:`ConvTranspose3d` whose ``in_channels`` is inferred from the first input
    (``torch.nn.LazyConvTranspose3d``)."""

    cls_to_become = ConvTranspose3d
