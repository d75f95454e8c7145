"""``DistributedSampler``: each rank's share of a data set's indices (torch's semantics).

Every rank draws the same permutation (seeded with ``seed + epoch``, so ``set_epoch``
reshuffles identically everywhere) and takes every ``num_replicas``-th index starting at
its rank.  Without ``drop_last`` the index list is padded with its own first indices so
that it divides evenly (some samples are seen twice per epoch); with ``drop_last`` the
tail that does not divide evenly is dropped.  The permutation comes from gradstack's
``randperm`` with a seeded ``Generator``, so its order differs from torch's (gradstack's
generator is not torch's), but the layout rules are torch's line for line.

Examples
--------
>>> from gradstack_distributed import DistributedSampler
>>> data = list(range(10))
>>> [list(DistributedSampler(data, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
[[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
>>> len(DistributedSampler(data, num_replicas=3, rank=0, drop_last=True))
3
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_nn.utils.data import Sampler

from .process_group import get_rank, get_world_size, is_initialized

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Restricts data loading to this rank's subset of ``dataset`` (anything with
    ``len``); a ``gradstack_nn.utils.data.Sampler`` for ``DataLoader(sampler=...)``.

    Parameters
    ----------
    dataset : sized
        The data set; only ``len(dataset)`` is used.
    num_replicas, rank : int, optional
        Default: the world size and this process's rank (the process group must exist).
    shuffle : bool
        Permute the indices each epoch (default True).
    seed : int
        Base seed of the permutation; must be the same on every rank.
    drop_last : bool
        Drop the tail instead of padding (default False).
    """

    def __init__(
        self,
        dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            if not is_initialized():
                raise ValueError(
                    "DistributedSampler: pass num_replicas and rank, or call "
                    "init_process_group first so that they come from the default group"
                )
        if num_replicas is None:
            num_replicas = get_world_size()
        if rank is None:
            rank = get_rank()
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = gt.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = gt.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank : self.total_size : self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch: with ``shuffle``, each epoch gets its own permutation (the same
        on every rank); call it before each epoch's iterator."""
        self.epoch = epoch
