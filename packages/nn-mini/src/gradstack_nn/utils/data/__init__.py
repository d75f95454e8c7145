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

from . import _worker, collate, dataloader, dataset, sampler
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

# each module's public names, written once (in that module)
__all__ = [
    *dataset.__all__,
    *sampler.__all__,
    *dataloader.__all__,
    *collate.__all__,
    *_worker.__all__,
]
