"""``gradstack_nn.utils.data`` (``gradstack.utils.data``): data sets, samplers, collation
and the ``DataLoader``, with ``torch.utils.data``'s interface.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.utils.data import DataLoader, TensorDataset
>>> x, y = gt.randn(10, 3), gt.arange(10)
>>> loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
>>> [tuple(xb.shape) for xb, yb in loader]
[(4, 3), (4, 3), (2, 3)]
"""

from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "WorkerInfo",
    "StackDataset",
    "ChainDataset",
    "WeightedRandomSampler",
]
