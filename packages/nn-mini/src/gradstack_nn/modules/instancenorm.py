"""``InstanceNorm1d``, ``InstanceNorm2d`` and ``InstanceNorm3d``: each channel of each
sample normalised over its positions (:func:`gradstack_nn.functional.instance_norm`),
with torch's affine parameters and running statistics.

Examples
--------
>>> import gradstack_tensor as gt
>>> norm = InstanceNorm1d(2)
>>> [round(v, 4) for v in norm(gt.tensor([[[1.0, 3.0], [2.0, 2.0]]]))[0, 0].tolist()]
[-1.0, 1.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(Module):
    _dims = 2

    def __init__(
        self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
        affine: bool = False, track_running_stats: bool = False, device=None, dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(gt.empty(num_features, device=device, dtype=dtype))
            self.bias = Parameter(gt.empty(num_features, device=device, dtype=dtype))
            init.ones_(self.weight)
            init.zeros_(self.bias)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", gt.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", gt.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", gt.tensor(0, dtype=gt.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(
                f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)"
            )
        unbatched = input.dim() == self._dims + 1
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            use_input_stats, self.momentum if self.momentum is not None else 0.1, self.eps,
        )  # fmt: skip
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or ``(C, L)`` inputs."""

    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    _dims = 3
