"""The 3-d layers (``Conv3d``, ``ConvTranspose3d``, ``MaxPool3d``, ``AvgPool3d``,
``AdaptiveAvgPool3d``, ``AdaptiveMaxPool3d``) and ``EmbeddingBag``: the functions of
``_spatial.py`` as torch's modules (their 2-d and 1-d relatives in conv.py, pooling.py
and sparse.py give them their arguments, init and reprs)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .conv import Conv2d, ConvTranspose2d
from .module import Module
from .pooling import AvgPool2d, MaxPool2d, _Adaptive, _AdaptiveMax

__all__ = [
    "Conv3d",
    "ConvTranspose3d",
    "MaxPool3d",
    "AvgPool3d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d",
    "EmbeddingBag",
]


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


class AdaptiveAvgPool3d(_Adaptive):
    """Average pooling to ``output_size`` over the last three dims, as
    ``torch.nn.AdaptiveAvgPool3d``.

    >>> import gradstack_tensor as gt
    >>> AdaptiveAvgPool3d((1, 2, 2))(gt.randn(2, 3, 4, 5, 6)).shape
    gradstack.Size([2, 3, 1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMax):
    """Max pooling to ``output_size`` over the last three dims, as
    ``torch.nn.AdaptiveMaxPool3d`` (``return_indices``: also the flat positions).

    >>> import gradstack_tensor as gt
    >>> AdaptiveMaxPool3d(2)(gt.arange(8.0).reshape(1, 2, 2, 2)).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """

    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, as ``torch.nn.EmbeddingBag``
    (:func:`gradstack_nn.functional.embedding_bag`): ``weight`` is ``(num_embeddings,
    embedding_dim)``, initialised ``N(0, 1)`` as torch's (``padding_idx``'s row zero);
    ``forward(input, offsets=None, per_sample_weights=None)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> bag = EmbeddingBag(10, 3, mode="sum")
    >>> bag(gt.tensor([1, 2, 4, 5, 4]), gt.tensor([0, 2])).shape, bag
    (gradstack.Size([2, 3]), EmbeddingBag(10, 3, mode='sum'))
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(
                gt.empty((num_embeddings, embedding_dim), device=device, dtype=dtype)
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """torch's initialisation: ``N(0, 1)``, then ``padding_idx``'s row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with ag.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(
        self, input: Tensor, offsets: Tensor | None = None, per_sample_weights=None
    ) -> Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An ``EmbeddingBag`` holding ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
