"""``gradstack.utils.data.distributed``: ``DistributedSampler`` (from
gradstack-distributed), where torch keeps it."""

from gradstack_distributed import DistributedSampler

__all__ = ["DistributedSampler"]
