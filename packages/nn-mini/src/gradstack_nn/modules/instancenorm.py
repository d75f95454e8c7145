"""``InstanceNorm1d``, ``InstanceNorm2d`` and ``InstanceNorm3d``: each channel of each
sample normalised over its positions (:func:`gradstack_nn.functional.instance_norm`),
with torch's affine parameters and running statistics; ``LazyInstanceNorm1d`` ... infer
``num_features`` from their first input.

Examples
--------
>>> import gradstack_tensor as gt
>>> norm = InstanceNorm1d(2)
>>> [round(v, 4) for v in norm(gt.tensor([[[1.0, 3.0], [2.0, 2.0]]]))[0, 0].tolist()]
[-1.0, 1.0]
"""

from __future__ import annotations

import warnings

from gradstack_tensor import Tensor

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _InstanceNorm(_NormBase):
    """torch's ``_InstanceNorm``: the parameters and statistics of ``_NormBase`` (affine
    and tracking off by default), each sample's channels normalised over their positions;
    an input without its batch dim (``_dims + 1`` dims) is normalised as a batch of one."""

    _dims = 2

    def __init__(
        self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
        affine: bool = False, track_running_stats: bool = False, device=None, dtype=None,
        *, bias: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _get_no_batch_dim(self) -> int:
        return self._dims + 1

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(
                f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)"
            )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        unbatched = input.dim() == self._get_no_batch_dim()
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            use_input_stats, self.momentum if self.momentum is not None else 0.1, self.eps,
        )  # fmt: skip
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or ``(C, L)`` inputs."""

    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    _dims = 3


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm1d` whose ``num_features`` is inferred from the first input
    (``input.shape[1]``), as ``torch.nn.LazyInstanceNorm1d`` (affine and tracking on by
    default, as torch's lazy norms); it becomes an ``InstanceNorm1d``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> norm = LazyInstanceNorm1d()
    >>> norm.weight
    <UninitializedParameter>
    >>> norm(gt.ones(2, 3, 4)).shape
    gradstack.Size([2, 3, 4])
    >>> norm
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = InstanceNorm1d
    _dims = 1


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm2d` whose ``num_features`` is inferred from the first input
    (``torch.nn.LazyInstanceNorm2d``)."""

    cls_to_become = InstanceNorm2d
    _dims = 2


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm3d` whose ``num_features`` is inferred from the first input
    (``torch.nn.LazyInstanceNorm3d``)."""

    cls_to_become = InstanceNorm3d
    _dims = 3
