"""``DataLoader``: batches of a data set, in order or shuffled, with ``torch.utils.data``'s
options and errors.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.utils.data import TensorDataset
>>> ds = TensorDataset(gt.arange(10).float().unsqueeze(1), gt.arange(10))
>>> loader = DataLoader(ds, batch_size=4)
>>> [y.tolist() for _, y in loader]
[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
>>> len(DataLoader(ds, batch_size=4, drop_last=True))
2
>>> g = gt.Generator().manual_seed(0)
>>> shuffled = DataLoader(ds, batch_size=3, shuffle=True, generator=g)
>>> sorted(i for _, y in shuffled for i in y.tolist())
[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import warnings

import gradstack_tensor as gt

from . import _worker
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the data set picks the samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Parameters
    ----------
    dataset : Dataset or IterableDataset
        Where the samples come from.
    batch_size : int or None, default 1
        Samples per batch (None: no batching, samples one by one through
        ``default_convert``).
    shuffle : bool, default False
        A new random order at every pass (a :class:`RandomSampler` over ``generator``).
    sampler, batch_sampler : optional
        The order of the indices, or of lists of indices (exclusive with ``shuffle`` and,
        for ``batch_sampler``, with ``batch_size``/``drop_last``), as torch.
    num_workers : int, default 0
        Worker processes fetching batches in parallel (forked; Note [Tensors cross the
        process boundary as arrays] in ``_worker.py``); 0 loads in the main process.
    collate_fn : callable, optional
        Turns a list of samples into a batch (default :func:`default_collate`).
    pin_memory : bool, default False
        Accepted; there is no accelerator, so it warns as torch does without one.
    drop_last : bool, default False
        Drop the last, incomplete batch.
    timeout : float, default 0
        Seconds to wait for a worker's batch (0: no limit).
    worker_init_fn : callable, optional
        Called with the worker id in each worker, after its seeding.
    multiprocessing_context : optional
        The start method (name or context) of the workers; the default forks.
    generator : Generator, optional
        The source of randomness of ``shuffle`` and of the per-pass base seed.
    prefetch_factor : int, optional
        Batches each worker loads in advance (default 2 with workers).
    persistent_workers : bool, default False
        Keep the workers between passes.

    Notes
    -----
    Like torch's, every pass draws one number from ``generator`` (or the default
    generator) for the workers' base seed before the sampler draws its order, so random
    state advances identically with and without workers.  The orders are gradstack's,
    not torch's, for the same seed (the package README explains why).
    """

    def __init__(
        self,
        dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to "
                "None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = _check_context(multiprocessing_context, num_workers)
        self.in_order = in_order

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._check_worker_number_rationality()

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=2,
            )
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self._check_worker_number_rationality()
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    def _check_worker_number_rationality(self) -> None:
        """torch's warning when more workers than usable CPUs are asked for."""
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is not None:
            note = "" if cpuset_checked else " (`cpuset` is not taken into account)"
            suggestion = (
                f"Our suggested max number of worker in current system is {suggest}{note}, "
                "which is smaller than what this DataLoader is going to create."
            )
        else:
            suggestion = (
                "DataLoader is not able to compute a suggested max number of worker in current "
                "system."
            )
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{suggestion} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.",
            stacklevel=3,
        )

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (
                    length // self.batch_size
                    if self.drop_last
                    else math.ceil(length / self.batch_size)
                )
            return length
        return len(self._index_sampler)


def _check_context(context, num_workers):
    """torch's checks of ``multiprocessing_context``; returns a context object or None."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError(
            "multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}"
        )
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                "multiprocessing_context option should specify a valid start method in "
                f"{methods!r}, but got multiprocessing_context={context!r}"
            )
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={context}"
        )
    return context


def _base_seed(generator) -> int:
    """One int64 draw per pass, as torch's ``_BaseDataLoaderIter`` (the workers' seeds)."""
    return int(gt.empty((), dtype=gt.int64).random_(generator=generator).item())


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _base_seed(loader.generator)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _next_index(self):
        return next(self._sampler_iter)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._dataset_iter = iter(self._dataset) if self._is_iterable else None

    def __next__(self):
        index = self._next_index()
        if self._is_iterable:
            data = _worker._next_iterable(
                self._dataset_iter, self._auto_collation, index, self._drop_last
            )
            if data is _worker._END:
                raise StopIteration
        elif self._auto_collation:
            items = getattr(self._dataset, "__getitems__", None)
            data = items(index) if callable(items) else [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        self._num_yielded += 1
        return self._collate_fn(data)


class _MultiProcessIter(_BaseIter):
    """Batches fetched by worker processes, returned in the sampler's order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        context = loader.multiprocessing_context
        if context is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._result_queue = context.Queue()
        self._index_queues: list = []
        self._workers: list = []
        self._epoch = 0
        try:
            for i in range(self._num_workers):
                index_queue = context.Queue()
                w = context.Process(
                    target=_worker.worker_loop,
                    args=(
                        self._dataset,
                        self._is_iterable,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        index_queue,
                        self._result_queue,
                        self._base_seed + i,
                        i,
                        self._num_workers,
                        loader.worker_init_fn,
                    ),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except Exception as e:  # noqa: BLE001 - the start method could not send the data set
            self._shutdown()
            raise RuntimeError(
                f"DataLoader could not start its worker processes ({type(e).__name__}: {e}). "
                "With a start method other than 'fork' the data set, collate_fn and "
                "worker_init_fn must be picklable, and gradstack tensors are not: use the "
                "default 'fork' start method or num_workers=0."
            ) from e
        self._start_epoch()

    def _start_epoch(self) -> None:
        self._send_idx = 0
        self._rcvd_idx = 0
        self._cache: dict[int, object] = {}
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def _reset(self, loader: DataLoader) -> None:
        """A new pass over persistent workers (results of an unfinished pass are dropped)."""
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _base_seed(loader.generator)
        self._num_yielded = 0
        self._epoch += 1
        self._start_epoch()

    def _try_put_index(self) -> None:
        if not any(self._active):
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._active[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._epoch, self._send_idx, index))
        self._send_idx += 1

    def _get_result(self):
        waited = 0.0
        while True:
            try:
                return self._result_queue.get(timeout=1.0)
            except queue.Empty:
                waited += 1.0
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(
                        f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited "
                        "unexpectedly"
                    ) from None
                if self._timeout and waited >= self._timeout:
                    self._shutdown()
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds"
                    ) from None

    def __next__(self):
        while True:
            if self._rcvd_idx >= self._send_idx:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            while self._rcvd_idx not in self._cache:
                epoch, idx, data = self._get_result()
                if epoch == self._epoch:  # else a result of an abandoned pass: dropped
                    self._cache[idx] = data
            data = self._cache.pop(self._rcvd_idx)
            self._rcvd_idx += 1
            if isinstance(data, _worker.IterableExhausted):
                self._active[data.worker_id] = False
                continue
            self._try_put_index()
            if isinstance(data, _worker.WorkerError):
                self._shutdown()
                data.reraise()
            self._num_yielded += 1
            return _worker.unpack(data)

    def _shutdown(self) -> None:
        result_queue = self._result_queue
        if result_queue is None:
            return
        self._result_queue = None
        workers, index_queues = self._workers, self._index_queues
        self._workers, self._index_queues = [], []
        for q in index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        # a worker exits once its queued results are flushed: keep reading them
        for w in workers:
            for _ in range(50):
                w.join(timeout=0.1)
                if not w.is_alive():
                    break
                try:
                    while True:
                        result_queue.get_nowait()
                except (queue.Empty, OSError, ValueError, EOFError):
                    pass
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in [*index_queues, result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            if getattr(self, "_result_queue", None) is not None:
                self._shutdown()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
