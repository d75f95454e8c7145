"""Samplers: the order in which a ``DataLoader`` visits a map-style data set.

``SequentialSampler`` (0, 1, 2 ...), ``RandomSampler`` (a permutation, or draws with
replacement), ``SubsetRandomSampler`` and ``BatchSampler`` (lists of indices), as in
``torch.utils.data``.  Random orders come from gradstack's generators: the same seed gives
the same order in gradstack, not torch's order (see the package README).

Examples
--------
>>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
[[0, 1, 2], [3, 4, 5], [6]]
>>> import gradstack_tensor as gt
>>> order = list(RandomSampler(range(5), generator=gt.Generator().manual_seed(1)))
>>> sorted(order)
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence

import gradstack_tensor as gt

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "BatchSampler",
]


class Sampler:
    """Base class of samplers: ``__iter__`` yields indices (or lists of indices)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded from the default one (torch's RandomSampler without a generator
    draws a seed from the global generator at each pass)."""
    seed = int(gt.empty((), dtype=gt.int64).random_().item())  # torch's draw, bit for bit
    return gt.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """A random permutation of the indices (``num_samples`` of them, cycling through fresh
    permutations), or ``num_samples`` draws with replacement.

    Parameters
    ----------
    data_source : sized
        The data set.
    replacement : bool, default False
        Draw with replacement.
    num_samples : int, optional
        How many indices per pass (default ``len(data_source)``).
    generator : Generator, optional
        The source of randomness; by default a generator seeded from the default one at
        the start of each pass.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from gt.randint(0, n, (32,), generator=generator).tolist()
            yield from gt.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from gt.randperm(n, generator=generator).tolist()
            yield from gt.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new one at each pass)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in gt.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter,
    or dropped with ``drop_last``)."""

    def __init__(self, sampler: Iterable | Sampler, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch in zip(*args):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# -- torch's WeightedRandomSampler -----------------------------------------------------

__all__ += ["WeightedRandomSampler"]


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))``, index ``i`` drawn with probability
    proportional to ``weights[i]`` (with replacement by default).

    The draw is ``multinomial(weights, num_samples, replacement, generator=generator)``
    over float64 weights, as torch's, so the same seed gives torch's indices; without a
    ``generator`` each pass draws from the default generator.

    Parameters
    ----------
    weights : sequence of float
        One non-negative weight per index (they need not sum to 1).
    num_samples : int
    replacement : bool, default True
    generator : Generator, optional

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> sampler = WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], num_samples=3)
    >>> list(sampler)
    [2, 2, 2]
    >>> sorted(WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False))
    [0, 1, 2]
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = gt.as_tensor(weights, dtype=gt.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rand_tensor = gt.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples
