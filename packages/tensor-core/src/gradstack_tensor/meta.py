"""Meta tensors: tensors with a shape and a dtype and no data (``device='meta'``).

Note [Meta tensors carry no data]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's meta device holds tensors without storage; a model moved there
(``model.to('meta')``) keeps its structure, the shapes and dtypes of its parameters, and
no memory, ready to be called with other parameters (``torch.func.functional_call``) or
given real ones.  gradstack marks the storage, not the tensor: a meta tensor's array is a
:class:`MetaStorage`, a read-only view of one element broadcast to the shape (so "a
tensor always has storage" holds and shapes, dtypes and strides read as usual), and every
tensor sharing it (a view, a ``Parameter`` whose ``.data`` was set to it) is meta too.

What gradstack does not do is torch's shape inference: an op with a meta tensor among its
arguments raises NotImplementedError at the dispatch point (``dispatch`` checks once the
first meta tensor exists, so programs without one pay nothing), numpy refuses to compute
with a :class:`MetaStorage` (a second guard), and the values cannot be read
(``tolist``, ``item``, ``numpy``) or copied out (``.to('cpu')``), as in torch.  Since no
op runs, ``t.to('meta')`` of a tensor that requires grad is a leaf that requires grad
(torch records a ``ToCopyBackward0``).

Examples
--------
>>> import gradstack_tensor as gt
>>> m = gt.ones(2, 3).to("meta")
>>> m.device, m.shape, m.is_meta
(device(type='meta'), gradstack.Size([2, 3]), True)
>>> m
tensor(..., device='meta', size=(2, 3))
"""

from __future__ import annotations

import numpy as np

from ._dispatch import note_meta_storage
from ._tensor import Tensor, _set_meta_storage
from ._tensor import _data as data_of

__all__ = ["MetaStorage", "meta_array", "is_meta_array"]

_NO_DATA = (
    "meta tensors have no data: gradstack creates, moves and inspects them (shape, dtype) "
    "but does not compute with them; swap in real tensors (torch.func.functional_call) first"
)


class MetaStorage(np.ndarray):
    """The array behind a meta tensor: one element broadcast to the shape, and numpy
    refuses to compute with it (Note [Meta tensors carry no data])."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(f"numpy's {ufunc.__name__} on a meta tensor: {_NO_DATA}")

    def __array_function__(self, func, types, args, kwargs):
        raise NotImplementedError(f"numpy's {func.__name__} on a meta tensor: {_NO_DATA}")


def _refuse_meta(op, args) -> None:
    """The dispatch point's check once meta tensors exist: no op runs on one."""
    for a in args:
        for t in a if type(a) in (tuple, list) else (a,):
            if isinstance(t, Tensor) and type(data_of(t)) is MetaStorage:
                raise NotImplementedError(
                    f"{op.name}() on a meta tensor: {_NO_DATA} (gradstack has no shape "
                    "inference on the meta device)"
                )


def meta_array(shape, dtype) -> MetaStorage:
    """A :class:`MetaStorage` of ``shape`` and ``dtype`` (one element of memory)."""
    note_meta_storage(_refuse_meta)
    base = np.broadcast_to(np.zeros((), dtype=dtype), tuple(shape))
    return base.view(MetaStorage)


_set_meta_storage(MetaStorage)


def is_meta_array(a) -> bool:
    """Whether the array ``a`` is a meta tensor's storage."""
    return type(a) is MetaStorage


def no_data_error(what: str) -> NotImplementedError:
    """The error of reading a meta tensor's values (``what``: the method)."""
    return NotImplementedError(f"{what}: {_NO_DATA}")
