"""``gradstack.nn.parallel``: ``DistributedDataParallel`` (from gradstack-distributed)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
