"""Normalisation layers: ``LayerNorm`` (over the last dims of each sample), ``GroupNorm``
(over groups of channels), ``RMSNorm`` (by the root mean square) and
``LocalResponseNorm`` (by neighbouring channels); the batch and instance norms are in
``batchnorm.py`` and ``instancenorm.py``.

Examples
--------
>>> import gradstack_tensor as gt
>>> [round(v, 4) for v in LayerNorm(2)(gt.tensor([[1.0, 3.0]]))[0].tolist()]
[-1.0, 1.0]
>>> LocalResponseNorm(2)
LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..functional.normalization import _cross_map_lrn2d
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _affine_parameters(module: Module, shape, affine: bool, bias: bool, device, dtype) -> None:
    """A normalisation's learnt scale ``weight`` (with ``affine``) and shift ``bias`` (with
    ``affine`` and ``bias``) of ``shape``, uninitialised (``reset_parameters`` fills them);
    None registered in place of each it has not, as torch's norms do."""
    if affine:
        module.weight = Parameter(gt.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(gt.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last
    ``len(normalized_shape)`` dims (biased variance), as torch.

    Parameters
    ----------
    normalized_shape : int or tuple of int
        The trailing shape to normalise over.
    eps : float, default 1e-5
        Added to the variance.
    elementwise_affine : bool, default True
        Learn ``weight`` (ones at first) and ``bias`` (zeros at first) of that shape.
    bias : bool, default True
        Learn the bias (with ``elementwise_affine``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> ln = LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> y = ln(gt.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> round(y.mean().item(), 6), y.grad_fn.name()
    (0.0, 'NativeLayerNormBackward0')
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalise each sample's ``num_groups`` groups of channels (see
    :func:`~gradstack_nn.functional.group_norm`), with a learnt scale and shift per channel.

    >>> GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
        device=None, dtype=None, *, bias: bool = True,
    ) -> None:  # fmt: skip
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.affine:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims (see
    :func:`~gradstack_nn.functional.rms_norm`), with a learnt scale.

    >>> RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(
        self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True,
        device=None, dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(gt.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalisation by the squares of ``size`` neighbouring channels
    (:func:`F.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """torch's legacy cross-map local response normalisation of a 4-d input: not
    :class:`LocalResponseNorm`'s window (Note [torch's legacy cross-map LRN] in
    ``functional/normalization.py``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    >>> CrossMapLRN2d(3, alpha=1.5, beta=1.0)(gt.ones(1, 2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
