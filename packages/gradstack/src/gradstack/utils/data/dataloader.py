"""``gradstack.utils.data.dataloader``: torch's module path (``from
torch.utils.data.dataloader import DataLoader``) for gradstack-nn-mini's ``DataLoader``,
with the names torch's module has too (``default_collate``, ``get_worker_info`` ...)."""

from gradstack_nn.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    WorkerInfo,
    default_collate,
    default_convert,
    get_worker_info,
)

__all__ = [
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "Sampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
]
