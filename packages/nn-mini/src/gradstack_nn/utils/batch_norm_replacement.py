"""``replace_all_batch_norm_modules_``: batch norms that keep no running statistics
(``torch.func.replace_all_batch_norm_modules_``), for ``vmap`` over a model whose batch
norms would otherwise write one running mean for many samples.

Examples
--------
>>> from gradstack_nn import BatchNorm1d, Sequential
>>> net = replace_all_batch_norm_modules_(Sequential(BatchNorm1d(3)))
>>> net[0].track_running_stats, net[0].running_mean
(False, None)
"""

from __future__ import annotations

from ..modules.batchnorm import _BatchNorm
from ..modules.module import Module

__all__ = ["replace_all_batch_norm_modules_"]


def _without_running_stats(module: Module) -> None:
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """In place: every batch norm in ``root`` (``root`` included) drops its running mean,
    variance and batch count and normalises by the batch's statistics in both modes;
    returns ``root``."""
    _without_running_stats(root)
    for module in root.modules():
        _without_running_stats(module)
    return root
