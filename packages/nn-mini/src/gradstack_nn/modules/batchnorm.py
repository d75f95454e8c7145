"""``BatchNorm1d``: batch normalisation with running statistics; ``LazyBatchNorm1d`` ...
infer ``num_features`` from their first input."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import _affine_parameters

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
]


class _NormBase(Module):
    """Parameters, buffers and repr shared by the batch norms (torch's ``_NormBase``)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", gt.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", gt.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", gt.tensor(0, dtype=gt.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to zeros, running variance to ones, the batch count to 0."""
        if self.track_running_stats:
            with ag.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight to ones and bias to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with ag.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs over the batch (and ``L``).

    In training mode the batch mean and (biased) variance normalise each channel and the
    running statistics are updated: ``running = (1 - momentum) * running + momentum *
    batch`` with the unbiased variance (``momentum=None``: a cumulative average over the
    batches seen).  In evaluation mode the running statistics normalise.
    ``track_running_stats=False`` keeps no statistics (batch statistics in both modes).

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float, default 1e-5
        Added to the variance.
    momentum : float or None, default 0.1
        The weight of each new batch in the running statistics.
    affine : bool, default True
        Learn ``weight`` (ones) and ``bias`` (zeros) per channel.
    track_running_stats : bool, default True
        Keep ``running_mean``, ``running_var`` and ``num_batches_tracked`` buffers.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> bn = BatchNorm1d(2)
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> y = bn(gt.tensor([[1.0, 10.0], [3.0, 30.0]]))
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> [round(v, 4) for v in bn.running_mean.tolist()], y.grad_fn.name()
    ([0.2, 2.0], 'NativeBatchNormBackward0')
    >>> sorted(bn.state_dict())
    ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """:class:`BatchNorm1d` for ``(N, C, H, W)`` inputs: statistics per channel over the
    batch and both spatial dims."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """:class:`BatchNorm1d` for ``(N, C, D, H, W)`` inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """torch's ``_LazyNormBase``: ``num_features`` is 0, the weight and bias are
    :class:`~gradstack_nn.parameter.UninitializedParameter` objects and the running
    statistics :class:`~gradstack_nn.parameter.UninitializedBuffer` objects until the first
    call, which reads ``num_features`` off ``input.shape[1]``."""

    def __init__(
        self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
        track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True,
    ) -> None:  # fmt: skip
        # affine and track_running_stats False: no tensors that would be replaced at once
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = gt.tensor(0, dtype=gt.int64, device=device)

    def reset_parameters(self) -> None:
        """Reset as the plain layer does, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Materialise the parameters and statistics ``(input.shape[1],)``, then reset."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm1d` whose ``num_features`` is inferred from the first input
    (``input.shape[1]``), as ``torch.nn.LazyBatchNorm1d``; it becomes a ``BatchNorm1d``.

    >>> import gradstack_tensor as gt
    >>> bn = LazyBatchNorm1d()
    >>> bn.running_mean
    <UninitializedBuffer>
    >>> bn(gt.tensor([[1.0, 10.0], [3.0, 30.0]])).shape, bn.running_mean.tolist()
    (gradstack.Size([2, 2]), [0.20000000298023224, 2.0])
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm2d` whose ``num_features`` is inferred from the first input
    (``torch.nn.LazyBatchNorm2d``)."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm3d` whose ``num_features`` is inferred from the first input
    (``torch.nn.LazyBatchNorm3d``)."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim
