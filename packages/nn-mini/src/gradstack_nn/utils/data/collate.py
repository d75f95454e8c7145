"""``default_collate`` and ``default_convert``: how a ``DataLoader`` turns a list of samples
into a batch, with ``torch.utils.data``'s rules.

- tensors are stacked along a new first dim; numpy arrays become tensors and are stacked;
- Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor;
  numpy scalars a tensor of their dtype;
- strings and bytes stay a list;
- a dict (mapping) is collated key by key, a namedtuple field by field, a tuple into a
  *list* of collated fields (torch's backwards-compatible choice), other sequences into
  the same sequence type (their elements must all have the same length).

Examples
--------
>>> import gradstack_tensor as gt
>>> batch = default_collate([(gt.tensor([1.0, 2.0]), 0), (gt.tensor([3.0, 4.0]), 1)])
>>> batch[0].tolist(), batch[1].tolist(), batch[1].dtype
([[1.0, 2.0], [3.0, 4.0]], [0, 1], gradstack.int64)
>>> default_collate([{"x": 1.5, "name": "a"}, {"x": 2.5, "name": "b"}])
{'x': tensor([1.5000, 2.5000], dtype=gradstack.float64), 'name': ['a', 'b']}
"""

from __future__ import annotations

import collections.abc
import copy
import re

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = ["default_collate", "default_convert"]

# numpy arrays of strings or objects are not turned into tensors
_STR_OBJ_ARRAY = re.compile(r"[SaUO]")

_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _as_tensor(data):
    if isinstance(data, np.ndarray):
        return gt.from_numpy(np.asarray(data, order="C"))  # shares memory, as torch.as_tensor
    return gt.tensor(data)


def default_convert(data):
    """Convert numpy arrays (and numpy scalars) in ``data`` into tensors, leaving the
    structure as it is (the ``collate_fn`` used when automatic batching is off)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _STR_OBJ_ARRAY.search(data.dtype.str) is not None:
            return data
        return _as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _like_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _like_sequence(data, [default_convert(d) for d in data])
    return data


def _like_mapping(like, values: dict):
    """``values`` in a mapping of ``like``'s type, as torch builds it: a copy of a mutable
    mapping updated with them, else ``type(like)(values)``, else (a TypeError) a dict."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _like_sequence(like, values: list):
    """``values`` in a sequence of ``like``'s type, as torch builds it: a copy of a mutable
    sequence with its items replaced, else ``type(like)(values)``, else (a TypeError) a
    list."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(like)(values)
    except TypeError:
        return values


def default_collate(batch):
    """Collate a list of samples into a batch (rules in the module docstring)."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return gt.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _STR_OBJ_ARRAY.search(elem.dtype.str) is not None:
            raise TypeError(_ERROR.format(elem.dtype))
        return default_collate([_as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return _as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return gt.tensor(batch, dtype=gt.float64)
    if isinstance(elem, int):  # bool is an int: a bool tensor, as torch
        return gt.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _like_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _like_sequence(elem, [default_collate(samples) for samples in transposed])
    raise TypeError(_ERROR.format(elem_type))
