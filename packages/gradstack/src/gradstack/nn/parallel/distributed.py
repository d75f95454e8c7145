"""``gradstack.nn.parallel.distributed``: where torch keeps ``DistributedDataParallel``."""

# through gradstack.distributed, so that `import gradstack` also provides
# `gradstack.distributed` (as `import torch` provides `torch.distributed`)
from gradstack.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
