"""torch's indexed writes: ``index_put``, ``index_put_``, ``masked_scatter`` and the method
``Tensor.masked_scatter_``, written with ``setitem``, ``index_add``, ``index_select`` and
``where``, so that autograd sees the write and the gradient reaches the values written
(Note [``index_put_`` writes through an in-place op], Note [masked_scatter reads source by a
running count]).

``masked_scatter_`` is not in ``__all__`` (torch has no ``torch.masked_scatter_``): the
``Tensor`` method calls it.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.index_put(gt.zeros(3), (gt.tensor([1]),), gt.tensor(2.0)).tolist()
[0.0, 2.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ._composite_args import _gt, _long, _name, _tensor, _write_inplace
from ._tensor import Tensor, _data, _wrap

__all__ = ["index_put", "index_put_", "masked_scatter"]


def _index_key(fname: str, x: Tensor, indices):
    """``indices`` as numpy arrays (bool masks kept as masks), after torch's checks."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"{fname}(): argument 'indices' (position 2) must be tuple of Tensors, not "
            f"{type(indices).__name__}"
        )
    if not indices:
        raise RuntimeError(f"{fname}(): expected at least one index tensor")
    key, dim = [], 0
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(t).__name__}"
            )
        a = _data(t)
        if a.dtype.kind == "b" or a.dtype == np.uint8:
            a = a.astype(bool)
            for j, size in enumerate(a.shape):
                if dim + j >= x.dim() or x.shape[dim + j] != size:
                    raise IndexError(
                        f"The shape of the mask {list(a.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(x.shape)} at index {dim + j}"
                    )
            dim += a.ndim
        elif a.dtype.kind in "iu":
            a = a.astype(np.int64)
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        key.append(a)
    if dim > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got {len(indices)})")
    return tuple(key)


def _positions(x: Tensor, key) -> np.ndarray:
    """The flat (row-major) position in ``x`` of each element of ``x[key]``."""
    try:
        return np.arange(x.numel(), dtype=np.int64).reshape(tuple(x.shape))[key]
    except IndexError as e:
        raise IndexError(str(e).replace("for axis", "for dimension")) from None


def _check_values(x: Tensor, values, shape) -> Tensor:
    v = _tensor(values, "index_put", "values")
    if v.dtype is not x.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_name(x.dtype)} for the destination and {_name(v.dtype)} for the source."
        )
    vshape = tuple(v.shape)
    while vshape and vshape[0] == 1 and len(vshape) > len(shape):
        vshape = vshape[1:]  # (torch strips leading 1s of the values)
    try:
        fits = np.broadcast_shapes(vshape, tuple(shape)) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(shape)}"
        )
    return v.reshape(vshape)


def _accumulated(x: Tensor, positions: np.ndarray, values: Tensor) -> Tensor:
    """``x`` with ``values`` (broadcast to ``positions``' shape) added at ``positions``:
    an ``index_add`` into the flattened ``x``, which sums repeated positions in order."""
    flat = (
        values.expand(tuple(positions.shape)).reshape(-1) if positions.ndim else values.reshape(-1)
    )
    return x.reshape(-1).index_add(0, _long(positions.reshape(-1)), flat).reshape(x.shape)


def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    """``input[indices] = values`` in place (``+=``, summing repeated indices, when
    ``accumulate``); ``indices`` is a tuple of index tensors (int or bool), ``values`` of
    ``input``'s dtype broadcasts to the indexed shape.  Returns ``input``.

    Note [``index_put_`` writes through an in-place op]
    Without ``accumulate`` it is ``Tensor.__setitem__`` (the ``setitem_`` op); with it,
    ``input.copy_(...)`` of an ``index_add`` into the flattened input.  Both are recorded
    in-place ops, so autograd sees the write (version counter, leaf checks, the gradient
    of the overwritten elements).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.zeros(3)
    >>> _ = gt.index_put_(x, (gt.tensor([0, 0, 2]),), gt.tensor([1.0, 2.0, 5.0]), True)
    >>> x.tolist()
    [3.0, 0.0, 5.0]
    """
    x = _tensor(input, "index_put_")
    key = _index_key("index_put_", x, indices)
    positions = _positions(x, key)
    v = _check_values(x, values, positions.shape)
    if accumulate:
        return x.copy_(_accumulated(x, positions, v))
    x[tuple(_wrap(np.ascontiguousarray(k)) for k in key)] = v
    return x


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``index_put_``: a new tensor, ``input`` unchanged.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.index_put(gt.zeros(2, 2), (gt.tensor([1]), gt.tensor([0])), gt.tensor(7.0)).tolist()
    [[0.0, 0.0], [7.0, 0.0]]
    """
    x = _tensor(input, "index_put")
    key = _index_key("index_put", x, indices)
    positions = _positions(x, key)
    v = _check_values(x, values, positions.shape)
    if accumulate:
        return _accumulated(x, positions, v)
    out = x.clone()
    out[tuple(_wrap(np.ascontiguousarray(k)) for k in key)] = v
    return out


def masked_scatter(input, mask, source) -> Tensor:
    """``input`` (broadcast with ``mask``) with the positions where ``mask`` is True
    filled, in row-major order, by the first elements of ``source``.

    Note [masked_scatter reads source by a running count]
    Position p takes ``source.flatten()[cumsum(mask)[p] - 1]``: one ``index_select`` of
    the source and a ``where``, so the gradient reaches the source elements used (each
    once) and the unmasked elements of ``input``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> mask = gt.tensor([[True, False, True], [False, True, True]])
    >>> gt.masked_scatter(gt.zeros(2, 3), mask, gt.arange(1.0, 5.0)).tolist()
    [[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]]
    """
    gt = _gt()
    x = _tensor(input, "masked_scatter")
    m = _tensor(mask, "masked_scatter", "mask")
    s = _tensor(source, "masked_scatter", "source")
    if m.dtype.name != "bool":
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_name(m.dtype)}"
        )
    if s.dtype is not x.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_name(x.dtype)} and {_name(s.dtype)}"
        )
    shape = tuple(gt.broadcast_shapes(tuple(x.shape), tuple(m.shape)))
    where = np.broadcast_to(_data(m), shape)
    count = int(where.sum())
    if s.numel() < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count == 0:
        return x.expand(tuple(shape)).clone() if shape else x.clone()
    taken = np.maximum(np.cumsum(where.reshape(-1)) - 1, 0)
    values = s.reshape(-1).index_select(0, _long(taken)).reshape(shape)
    return gt.where(_wrap(np.ascontiguousarray(where)), values, x)


def masked_scatter_(input, mask, source) -> Tensor:
    """In-place ``masked_scatter`` (``Tensor.masked_scatter_``): ``mask`` broadcasts to
    ``input``'s shape."""
    return _write_inplace("masked_scatter_", input, masked_scatter(input, mask, source))
