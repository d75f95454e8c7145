"""The worker processes of a ``DataLoader`` with ``num_workers > 0``.

Note [Tensors cross the process boundary as arrays]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
gradstack tensors refuse to be pickled (a pickle can run code when loaded), so a worker
sends its batch with every tensor replaced by a :class:`_TensorPayload` holding the numpy
array (inside dicts, lists, tuples and namedtuples, the structures ``default_collate``
builds), and the main process turns them back into tensors.  A ``collate_fn`` returning
other objects that hold tensors fails to send, with an error naming the worker.  The
workers are forked (the default on Linux), so the data set itself is never pickled; with
another start method it must be picklable.
"""

from __future__ import annotations

import collections.abc
import copy
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo` in a ``DataLoader`` worker process (use it
    to split an ``IterableDataset`` between workers), None in the main process."""
    return _worker_info


class _TensorPayload:
    """A tensor's array in transit from a worker (Note [Tensors cross the process boundary
    as arrays])."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _map(fn, data, leaf_type):
    """``data`` with ``fn`` applied to each ``leaf_type`` object inside dicts (mappings),
    lists, tuples and namedtuples."""
    if isinstance(data, leaf_type):
        return fn(data)
    if isinstance(data, collections.abc.Mapping):
        items = {k: _map(fn, v, leaf_type) for k, v in data.items()}
        if isinstance(data, collections.abc.MutableMapping):
            try:
                clone = copy.copy(data)
                clone.update(items)
                return clone
            except TypeError:
                pass
        return items
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map(fn, v, leaf_type) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map(fn, v, leaf_type) for v in data)
    return data


def pack(data):
    """``data`` with its tensors replaced by picklable payloads."""
    return _map(lambda t: _TensorPayload(np.asarray(t.detach().numpy(), order="C")), data, Tensor)


def unpack(data):
    """The inverse of :func:`pack`, in the main process."""
    return _map(lambda p: gt.from_numpy(p.array), data, _TensorPayload)


class WorkerError:
    """An exception raised in a worker, re-raised in the main process with its traceback."""

    def __init__(self, worker_id: int, exc: BaseException) -> None:
        self.exc_type = type(exc)
        self.message = (
            f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n"
            "Original " + "".join(traceback.format_exception(exc))
        )

    def reraise(self):
        try:
            err = self.exc_type(self.message)
        except Exception:  # noqa: BLE001 - exception types with other signatures
            err = RuntimeError(self.message)
        raise err


class IterableExhausted:
    """A worker's message that its copy of an IterableDataset has no more samples."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def worker_loop(
    dataset,
    is_iterable,
    auto_collation,
    collate_fn,
    drop_last,
    index_queue,
    result_queue,
    seed,
    worker_id,
    num_workers,
    init_fn,
):
    """The body of a worker process: fetch and collate the batches whose indices arrive on
    ``index_queue``, until a None arrives."""
    global _worker_info
    gt.manual_seed(seed)
    random.seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
        dataset_iter = iter(dataset) if is_iterable else None
        init_error = None
    except Exception as e:  # noqa: BLE001 - reported to the main process
        init_error = WorkerError(worker_id, e)
    exhausted = False
    current_epoch = 0
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if task is None:
            break
        epoch, task_idx, indices = task
        if epoch != current_epoch:  # a new pass over persistent workers
            current_epoch = epoch
            if is_iterable and init_error is None:
                dataset_iter = iter(dataset)
                exhausted = False
        if init_error is not None:
            result_queue.put((epoch, task_idx, init_error))
            init_error = None
            continue
        try:
            if is_iterable:
                if exhausted:
                    result = IterableExhausted(worker_id)
                else:
                    batch = _next_iterable(dataset_iter, auto_collation, indices, drop_last)
                    if batch is _END:
                        exhausted = True
                        result = IterableExhausted(worker_id)
                    else:
                        result = pack(collate_fn(batch))
            elif auto_collation:
                items = getattr(dataset, "__getitems__", None)
                samples = items(indices) if callable(items) else [dataset[i] for i in indices]
                result = pack(collate_fn(samples))
            else:
                result = pack(collate_fn(dataset[indices]))
        except Exception as e:  # noqa: BLE001 - reported to the main process
            result = WorkerError(worker_id, e)
        try:
            result_queue.put((epoch, task_idx, result))
        except Exception as e:  # noqa: BLE001 - an unpicklable batch
            result_queue.put((epoch, task_idx, WorkerError(worker_id, e)))
    sys.stdout.flush()


_END = object()  # the end of an IterableDataset's stream


def _next_iterable(dataset_iter, auto_collation, indices, drop_last):
    """The next sample (or list of samples) of an iterable data set, or ``_END``."""
    if not auto_collation:
        return next(dataset_iter, _END)
    data = []
    for _ in indices:
        item = next(dataset_iter, _END)
        if item is _END:
            break
        data.append(item)
    if len(data) == 0 or (drop_last and len(data) < len(indices)):
        return _END
    return data
