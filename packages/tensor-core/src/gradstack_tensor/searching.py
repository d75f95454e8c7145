"""Ops that answer *where* or *which*: nonzero, argwhere, argsort, unique, isin,
searchsorted and bucketize.

Their results are indices, counts or truth values, which no layer differentiates (torch
returns them without a ``grad_fn`` too), so they are computed on the arrays with numpy,
with torch's shapes, dtypes, orderings and errors.  ``argsort`` is torch's composite of
``sort``.  One difference: torch's ``unique`` values of a tensor that requires grad
require grad too, through a node whose backward raises "not implemented"; here they do
not require grad, so a backward through them raises earlier ("does not require grad").

Note [unique keeps every NaN]
torch's ``unique`` counts each NaN as a value of its own, after every number (``[nan,
1, nan]`` gives ``[1, nan, nan]``); numpy's ``unique`` merges NaNs unless told
``equal_nan=False``, which is what is used here.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.nonzero(gt.tensor([[0, 1], [2, 0]])).tolist()
[[0, 1], [1, 0]]
>>> gt.argsort(gt.tensor([3.0, 1.0, 2.0])).tolist()
[1, 2, 0]
>>> values, counts = gt.unique(gt.tensor([3, 1, 3]), return_counts=True)
>>> values.tolist(), counts.tolist()
([1, 3], [1, 2])
>>> gt.searchsorted(gt.tensor([1, 3, 5]), gt.tensor([3, 4])).tolist()
[1, 2]
"""

from __future__ import annotations

import numpy as np

from ._composite_args import _long, _tensor
from ._shapes import _normalize_dim
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap

__all__ = [
    "nonzero",
    "argwhere",
    "argsort",
    "unique",
    "unique_consecutive",
    "isin",
    "searchsorted",
    "bucketize",
]


def nonzero(input, *, as_tuple: bool = False):
    """The indices of the nonzero elements: an int64 tensor of shape ``(n, input.dim())``,
    in row-major order, or with ``as_tuple=True`` one 1-d tensor per dim (a 0-d input
    counts as one element: ``(tensor([0]),)`` when it is nonzero).

    >>> import gradstack_tensor as gt
    >>> [t.tolist() for t in gt.nonzero(gt.tensor([[0, 1], [2, 0]]), as_tuple=True)]
    [[0, 1], [1, 0]]
    """
    a = _data(_tensor(input, "nonzero"))
    if a.ndim == 0:
        n = int(bool(a))
        return (_long(np.zeros(n)),) if as_tuple else _long(np.zeros((n, 0)))
    where = np.nonzero(a)
    if as_tuple:
        return tuple(_long(w) for w in where)
    return _long(np.stack(where, axis=1)) if where else _long(np.zeros((0, 0)))


def argwhere(input) -> Tensor:
    """``nonzero(input)``: the indices of the nonzero elements, one row each."""
    return nonzero(_tensor(input, "argwhere"))


def argsort(input, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (torch's composite: ``sort(...)``'s
    indices; the sort is stable either way, so ``stable`` changes nothing here).

    >>> import gradstack_tensor as gt
    >>> gt.tensor([2, 1, 2, 1, 3]).argsort(descending=True).tolist()
    [4, 0, 2, 1, 3]
    """
    _tensor(input, "argsort")
    _bool_args("argsort", descending=descending, stable=stable)
    return input.sort(dim, descending)[1]


def _unique_flat(a, return_inverse, return_counts):
    flat = a.reshape(-1)
    values, inverse, counts = np.unique(
        flat, return_inverse=True, return_counts=True, equal_nan=False
    )
    return values, inverse.reshape(a.shape), counts


def _unique_dim(a, axis, return_inverse, return_counts):
    if a.shape[axis] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return a, empty, empty
    values, inverse, counts = np.unique(a, axis=axis, return_inverse=True, return_counts=True)
    return values, inverse.reshape(-1), counts


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = [_wrap(np.array(values, order="C"))]
    if return_inverse:
        out.append(_long(inverse))
    if return_counts:
        out.append(_long(counts))
    return out[0] if len(out) == 1 else tuple(out)


def unique(
    input,
    sorted: bool = True,  # noqa: A002 - torch's keyword
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
):
    """The distinct elements of ``input``, sorted (torch's CPU ``unique`` sorts whatever
    ``sorted`` says); with ``return_inverse``, each element's index into them (in
    ``input``'s shape); with ``return_counts``, how often each occurs.  With ``dim``, the
    distinct slices along ``dim``.  Each NaN is distinct (Note [unique keeps every NaN]).

    >>> import gradstack_tensor as gt
    >>> v, inv = gt.unique(gt.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True)
    >>> v.tolist(), inv.tolist()
    ([[0, 5], [1, 2]], [1, 1, 0])
    """
    a = _data(_tensor(input, "unique"))
    _bool_args("unique", sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    if dim is None:
        return _unique_result(*_unique_flat(a, True, True), return_inverse, return_counts)
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = _normalize_dim(dim, a.ndim)
    return _unique_result(*_unique_dim(a, axis, True, True), return_inverse, return_counts)


def unique_consecutive(
    input, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``)
    kept once; ``return_inverse`` gives each element's run, ``return_counts`` each run's
    length.

    >>> import gradstack_tensor as gt
    >>> gt.unique_consecutive(gt.tensor([1, 1, 2, 2, 3, 1])).tolist()
    [1, 2, 3, 1]
    """
    a = _data(_tensor(input, "unique_consecutive"))
    _bool_args("unique_consecutive", return_inverse=return_inverse, return_counts=return_counts)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape[0], dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse = (np.cumsum(starts) - 1).reshape(a.shape)
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = _normalize_dim(dim, a.ndim)
        moved = np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)
        starts = np.ones(moved.shape[0], dtype=bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.compress(starts, a, axis=axis)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.shape[0]))
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def _bool_args(name, **flags):
    """torch's TypeError for a flag that is not a bool (``unique(t, None)``)."""
    for arg, value in flags.items():
        if type(value) is not bool and not isinstance(value, np.bool_):
            raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(value).__name__}")


def _values(x):
    return _data(x) if isinstance(x, Tensor) else np.asarray(x)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number):
    a bool tensor of ``elements``' shape (``invert=True``: whether it is not).

    >>> import gradstack_tensor as gt
    >>> gt.isin(gt.tensor([1, 2, 3]), gt.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    for arg, value in (("elements", elements), ("test_elements", test_elements)):
        if not isinstance(value, (Tensor, bool, int, float)):
            # torch takes a Tensor or a number (numpy would take a list, a str, None)
            raise TypeError(
                f"isin(): argument '{arg}' must be a Tensor or a number, not {type(value).__name__}"
            )
    e, t = _values(elements), _values(test_elements)
    return _wrap(np.isin(e, t, assume_unique=assume_unique, invert=invert))


def _side(right: bool, side: str | None) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(
            f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
        )
    if right and side == "left":
        raise RuntimeError(
            "torch.searchsorted(): side and right can't be set to opposites, got side of left "
            "while right was True"
        )
    return side


@checked("searchsorted")
def searchsorted(
    sorted_sequence,
    input,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter=None,
):
    """For each value of ``input``, the index where it would be inserted into the sorted
    innermost dim of ``sorted_sequence`` to keep it sorted (the first such index, or the
    last with ``right=True``/``side='right'``).  A sequence of more than one dim holds one
    sorted row per leading index, matched with ``input``'s rows.

    >>> import gradstack_tensor as gt
    >>> gt.searchsorted(gt.tensor([1, 3, 5, 7]), gt.tensor([[3, 6], [9, 0]])).tolist()
    [[1, 3], [4, 0]]
    """
    seq = _data(_tensor(sorted_sequence, "searchsorted", "sorted_sequence"))
    how = _side(right, side)
    if sorter is not None:
        order = _data(_tensor(sorter, "searchsorted", "sorter"))
        if order.shape != seq.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq.shape)}and got sorter tensor {list(order.shape)}"
            )
        seq = np.take_along_axis(seq, order.astype(np.int64), axis=-1)
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input) if scalar else _data(input)
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            "boundaries tensor [] and input value tensor " + str(list(values.shape))
        )
    if seq.ndim == 1:
        found = np.searchsorted(seq, values, side=how)
    else:
        if scalar or values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
                "N-1 dimensions of boundaries tensor and input value tensor must match, but "
                f"we got boundaries tensor {list(seq.shape)} and input value tensor "
                f"{list(values.shape)}"
            )
        rows = seq.reshape(-1, seq.shape[-1])
        vals = values.reshape(rows.shape[0], -1)
        found = np.stack([np.searchsorted(r, v, side=how) for r, v in zip(rows, vals)])
        found = found.reshape(values.shape)
    return _wrap(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))


@checked("bucketize", "float input, Tensor boundaries", first=0)
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False):
    """The bucket of each value of ``input`` among the sorted 1-d ``boundaries``: ``i``
    such that ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` and ``<`` swap with
    ``right=True``), as torch.

    >>> import gradstack_tensor as gt
    >>> gt.bucketize(gt.tensor([1, 3, 5, 7]), gt.tensor([1, 5]), right=True).tolist()
    [1, 1, 2, 2]
    """
    b = _tensor(boundaries, "bucketize", "boundaries")
    if b.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.dim()})")
    return searchsorted(b, input, out_int32=out_int32, right=right)
