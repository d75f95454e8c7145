"""``SyncBatchNorm``: batch normalisation whose statistics are those of the whole batch
across the ranks of a process group (torch 2.13's ``nn.SyncBatchNorm``), and
``convert_sync_batchnorm``, which puts it in the place of a model's batch norms.

Note [SyncBatchNorm and the distributed layer]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The synchronisation needs collectives, which live in gradstack-distributed, a layer above
nn-mini (nn-mini never imports it).  So this module keeps a slot,
:func:`register_synchronizer`, that gradstack-distributed fills when it is imported (its
``sync_batch_norm.py``): an object with ``is_initialized()``, ``get_world_size(group)``
and ``apply(input, weight, bias, running_mean, running_var, eps, momentum, group,
world_size)``.  Without it (distributed never imported, hence no process group), or with
one rank, or in evaluation mode, the layer is ``F.batch_norm``, as torch's falls back.
torch 2.13 refuses to synchronise CPU tensors ("SyncBatchNorm expected input tensor to be
on GPU ..."); gradstack, whose tensors are all on the CPU, synchronises them.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import BatchNorm2d, Conv2d, Sequential
>>> net = SyncBatchNorm.convert_sync_batchnorm(Sequential(Conv2d(1, 2, 1), BatchNorm2d(2)))
>>> net[1]
SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> net(gt.ones(4, 1, 3, 3)).shape
gradstack.Size([4, 2, 3, 3])
"""

from __future__ import annotations

from typing import Any

import gradstack_autograd as ag
from gradstack_tensor import Tensor

from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]

_synchronizer: Any = None


def register_synchronizer(synchronizer) -> None:
    """Install the object that synchronises the statistics across ranks (Note
    [SyncBatchNorm and the distributed layer]); gradstack-distributed calls it at import.
    ``None`` removes it."""
    global _synchronizer
    _synchronizer = synchronizer


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of ``(N, C, ...)`` inputs with the mean and variance of the
    batch of every rank of ``process_group`` (the default group when None) in training;
    torch's arguments, buffers and repr (Note [SyncBatchNorm and the distributed layer]).

    Parameters
    ----------
    num_features : int
        ``C``.
    eps, momentum, affine, track_running_stats, device, dtype, bias
        As :class:`BatchNorm1d`'s.
    process_group : ProcessGroup, optional
        The ranks whose batches make the statistics.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> bn = SyncBatchNorm(2)
    >>> y = bn(gt.tensor([[[1.0], [10.0]], [[3.0], [30.0]]]))
    >>> [round(v, 4) for v in y.flatten().tolist()], y.grad_fn.name()
    ([-1.0, -1.0, 1.0, 1.0], 'NativeBatchNormBackward0')
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any | None = None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device=device,
            dtype=dtype, bias=bias,
        )  # fmt: skip
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is None:
                raise AssertionError("num_batches_tracked must not be None")
            with ag.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        running_mean = self.running_mean if track else None
        running_var = self.running_var if track else None
        sync = _synchronizer
        need_sync = bn_training and self.training and sync is not None and sync.is_initialized()
        world_size = 1
        if need_sync:
            world_size = sync.get_world_size(self.process_group)
            need_sync = world_size > 1
        if not need_sync:
            return F.batch_norm(
                input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                self.eps,
            )  # fmt: skip
        return sync.apply(
            input, self.weight, self.bias, running_mean, running_var, self.eps, factor,
            self.process_group, world_size,
        )  # fmt: skip

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with each ``BatchNorm*d`` (itself included) replaced by a
        ``SyncBatchNorm`` sharing its parameters and buffers (torch's classmethod: a batch
        norm given itself comes back as a new module).

        Examples
        --------
        >>> from gradstack_nn import BatchNorm1d
        >>> bn = BatchNorm1d(3)
        >>> sync = SyncBatchNorm.convert_sync_batchnorm(bn)
        >>> type(sync).__name__, sync.weight is bn.weight
        ('SyncBatchNorm', True)
        """
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(
                module.num_features, module.eps, module.momentum, module.affine,
                module.track_running_stats, process_group, bias=module.bias is not None,
            )  # fmt: skip
            if module.affine:
                with ag.no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
