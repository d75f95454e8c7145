"""Pooling layers, as torch's: ``MaxPool1d``/``2d``/``3d``, ``AvgPool1d``/``2d``/``3d``,
``AdaptiveAvgPool1d``/``2d``/``3d``, ``AdaptiveMaxPool1d``/``2d``/``3d`` and
``LPPool1d``/``2d``, over the functions of :mod:`gradstack_nn.functional.pooling` (the
3-d and 1-d classes take the arguments of their 2-d relative).

Examples
--------
>>> import gradstack_tensor as gt
>>> AvgPool2d(2)(gt.arange(16.0).reshape(1, 1, 4, 4)).flatten().tolist()
[2.5, 4.5, 10.5, 12.5]
>>> LPPool2d(2, 3, stride=2)
LPPool2d(norm_type=2, kernel_size=3, stride=2, ceil_mode=False)
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .. import functional as F
from .conv import _ntuple
from .module import Module

__all__ = [
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


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


class MaxPool1d(MaxPool2d):
    """1-d max pooling over the last dim (``stride`` defaults to ``kernel_size``); the
    arguments of :class:`MaxPool2d`."""

    def forward(self, input: Tensor):
        return F.max_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            self.ceil_mode, self.return_indices,
        )  # fmt: skip


class MaxPool3d(MaxPool2d):
    """3-d max pooling, as ``torch.nn.MaxPool3d`` (``stride`` defaults to
    ``kernel_size``); the arguments of :class:`MaxPool2d`, as :class:`MaxPool1d`.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pool = MaxPool3d(2)
    >>> pool(gt.arange(8.0).reshape(1, 1, 2, 2, 2)).flatten().tolist(), pool
    ([7.0], MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False))
    """

    def forward(self, input: Tensor):
        return F.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class AvgPool2d(Module):
    """2-d average pooling (``stride`` defaults to ``kernel_size``)."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """1-d average pooling over the last dim."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = _one(kernel_size)
        self.stride = _one(stride if stride is not None else kernel_size)
        self.padding = _one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """3-d average pooling, as ``torch.nn.AvgPool3d`` (``stride`` defaults to
    ``kernel_size``); the arguments of :class:`AvgPool2d`.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pool = AvgPool3d(2)
    >>> pool(gt.arange(8.0).reshape(1, 1, 2, 2, 2)).flatten().tolist(), pool
    ([3.5], AvgPool3d(kernel_size=2, stride=2, padding=0))
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


def _one(v):
    """torch's 1-d pooling modules keep their sizes as 1-tuples."""
    return (v,) if isinstance(v, int) else tuple(v)


class _Adaptive(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMax(_Adaptive):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveAvgPool2d(_Adaptive):
    """Average pooling to ``output_size`` over the last two dims."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool1d(_Adaptive):
    """Average pooling to ``output_size`` over the last dim."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """Average pooling to ``output_size`` over the last three dims, as
    ``torch.nn.AdaptiveAvgPool3d``.

    >>> import gradstack_tensor as gt
    >>> AdaptiveAvgPool3d((1, 2, 2))(gt.randn(2, 3, 4, 5, 6)).shape
    gradstack.Size([2, 3, 1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """Max pooling to ``output_size`` over the last two dims."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMax):
    """Max pooling to ``output_size`` over the last dim."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMax):
    """Max pooling to ``output_size`` over the last three dims, as
    ``torch.nn.AdaptiveMaxPool3d`` (``return_indices``: also the flat positions).

    >>> import gradstack_tensor as gt
    >>> AdaptiveMaxPool3d(2)(gt.arange(8.0).reshape(1, 2, 2, 2)).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """

    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over the last dim (:func:`F.lp_pool1d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool2d(_LPPoolNd):
    """Power-average pooling over the last two dims (:func:`F.lp_pool2d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool3d(_LPPoolNd):
    """Power-average pooling over the last three dims (:func:`F.lp_pool3d`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> LPPool3d(2, 2)(gt.ones(1, 1, 2, 4, 4)).shape
    gradstack.Size([1, 1, 1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool3d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class _MaxUnpoolNd(Module):
    """The max unpooling layers: ``kernel_size``, ``stride`` (by default the kernel size)
    and ``padding`` as tuples of the layer's dimension, as torch's."""

    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool1d` (:func:`F.max_unpool1d`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> MaxUnpool1d(2)(gt.tensor([[5.0, 7.0]]), gt.tensor([[1, 2]])).tolist()
    [[0.0, 5.0, 7.0, 0.0]]
    """

    _dims = 1

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return F.max_unpool1d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool2d` (:func:`F.max_unpool2d`)."""

    _dims = 2

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return F.max_unpool2d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool3d` (:func:`F.max_unpool3d`)."""

    _dims = 3

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return F.max_unpool3d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


def _repeat(v, n: int) -> tuple:
    """torch's ``_pair``/``_triple``: an iterable as a tuple, anything else ``n`` times."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    """The fractional max pooling layers (:func:`F.fractional_max_pool2d`/``3d``), with
    torch's argument checks; ``_random_samples`` (fixed window starts) is a buffer."""

    _dims = 0

    def __init__(
        self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
        _random_samples=None,
    ) -> None:  # fmt: skip
        super().__init__()
        n = self._dims
        if n == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))
        ):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _repeat(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _repeat(output_size, n) if output_size is not None else None
        self.output_ratio = _repeat(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a "
                "pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        pool = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return pool(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-random windows of ``kernel_size`` to ``output_size`` (or
    ``output_ratio``) of an ``(N, C, H, W)`` input (:func:`F.fractional_max_pool2d`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pool = FractionalMaxPool2d(2, output_size=2)
    >>> pool(gt.randn(1, 3, 5, 5)).shape
    gradstack.Size([1, 3, 2, 2])
    """

    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """The 3-d :class:`FractionalMaxPool2d` over ``(N, C, T, H, W)``
    (:func:`F.fractional_max_pool3d`)."""

    _dims = 3
