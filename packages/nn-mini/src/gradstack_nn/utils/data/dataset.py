"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``ConcatDataset``,
``Subset`` and ``random_split``, with ``torch.utils.data``'s interface.

Examples
--------
>>> import gradstack_tensor as gt
>>> ds = TensorDataset(gt.arange(10).float(), gt.arange(10) % 2)
>>> len(ds), [t.item() for t in ds[3]]
(10, [3.0, 1])
>>> train, test = random_split(ds, [0.8, 0.2], generator=gt.Generator().manual_seed(0))
>>> len(train), len(test)
(8, 2)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Sequence

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
]


class Dataset:
    """A map-style data set: ``dataset[i]`` is the ``i``-th sample; subclasses implement
    ``__getitem__`` (and ``__len__`` for the default samplers)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A data set read as a stream: subclasses implement ``__iter__``.

    With worker processes, each worker iterates its own copy: use
    :func:`~gradstack_nn.utils.data.get_worker_info` to split the stream between them.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        raise TypeError(
            "IterableDataset does not support +; chain the iterators (itertools.chain) instead"
        )


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of tensors sharing their first dimension.

    ``ds[i]`` is the tuple ``(t[i] for t in tensors)``.
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes tensors, got {type(t).__name__}")
        if any(t.dim() == 0 for t in tensors):
            raise ValueError("TensorDataset's tensors need a first dimension (the samples)")
        if not all(tensors[0].shape[0] == t.shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    """Several map-style data sets one after the other."""

    @staticmethod
    def cumsum(sequence) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        items = getattr(self.dataset, "__getitems__", None)
        if callable(items):
            return items([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths``
    (numbers of samples, or fractions summing to 1: ``floor(n * fraction)`` each, the
    remainder handed out one by one from the first, as torch).

    The permutation comes from ``generator`` (the default generator when None): the same
    seed gives the same split in gradstack, not the same split as torch, whose random
    stream differs (see the package README).
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(n * frac)))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = gt.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]


# -- torch's StackDataset and ChainDataset ---------------------------------------------

__all__ += ["StackDataset", "ChainDataset"]


class StackDataset(Dataset):
    """Several data sets of the same length side by side: sample ``i`` is the tuple of
    their ``i``-th samples (``StackDataset(a, b)``) or a dict (``StackDataset(x=a,
    y=b)``), as ``torch.utils.data.StackDataset``.

    Examples
    --------
    >>> ds = StackDataset([1, 2, 3], ["a", "b", "c"])
    >>> len(ds), ds[1]
    (3, (2, 'b'))
    >>> StackDataset(x=[1, 2], y=[3, 4])[0]
    {'x': 1, 'y': 3}
    """

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                    "like input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: tuple | dict = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(dataset) for dataset in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """A batch of samples, using each data set's ``__getitems__`` where it has one."""
        named = isinstance(self.datasets, dict)
        datasets = self.datasets
        items = datasets.items() if isinstance(datasets, dict) else enumerate(datasets)
        batch: list = [{} if named else [] for _ in indices]
        for key, dataset in items:
            if callable(getattr(dataset, "__getitems__", None)):
                values = dataset.__getitems__(indices)
                if len(values) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch. Expected "
                        f"{len(indices)}, got {len(values)}"
                    )
            else:
                values = [dataset[idx] for idx in indices]
            for value, sample in zip(values, batch, strict=True):
                if named:
                    sample[key] = value
                else:
                    sample.append(value)
        return batch if named else [tuple(sample) for sample in batch]

    def __len__(self) -> int:
        return self._length


class ChainDataset(IterableDataset):
    """Iterable data sets one after the other (``a + b`` for iterable data sets), as
    ``torch.utils.data.ChainDataset``; the chaining happens lazily, on iteration.

    Examples
    --------
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(ChainDataset([Count(2), Count(3)]))
    [0, 1, 0, 1, 2]
    >>> list(Count(2) + Count(1))
    [0, 1, 0]
    """

    def __init__(self, datasets) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]  # (a sized one, or torch's TypeError)
        return total


def _chain(self, other) -> ChainDataset:
    return ChainDataset([self, other])


# Note [IterableDataset + is ChainDataset]: torch's ``IterableDataset.__add__`` returns a
# ChainDataset; it is bound here, after ChainDataset exists, in place of the TypeError
# that stood in for it before.
IterableDataset.__add__ = _chain  # type: ignore[method-assign]
