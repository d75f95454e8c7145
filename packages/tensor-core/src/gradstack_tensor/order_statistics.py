"""torch's order statistics: ``median``, ``nanmedian``, ``kthvalue``, ``mode``,
``quantile``, ``nanquantile``, ``cummax`` and ``cummin``.

Each is a composition of differentiable ops: the positions are found with numpy, and the
values are read from the input with ``gather`` (or interpolated between two such reads),
so the gradient reaches the elements the values came from, and second order and forward
mode follow from ``gather``'s.

Note [The median of all elements spreads its gradient]
torch's ``median()`` and ``nanmedian()`` without ``dim`` give every element equal to the
result an equal share of the gradient (its evenly_distribute_backward; NaN elements when
the median is NaN).  Here the value is the element itself (a ``gather``), and the
gradient comes from ``b = where(mask, x, 0).sum() / mask.sum()``, added as
``value.detach() - (b.detach() - b)``: a zero, whatever its sign, that keeps the value's bits
(``-0.0`` included) and carries ``b``'s gradient.  A median of +-inf or NaN is ``b``
itself, which has that value exactly.

Note [Ties in median and kthvalue]
torch's CPU kernels pick the k-th element with ``std::nth_element``, so when several
elements equal the result, which one's index is returned (and, with ``dim``, receives
the gradient) follows that algorithm's partitioning.  Here it is the first of them in the
order of a stable sort (NaN count as equal there).  Values are always equal; the indices
(and the gradient's position) may differ from torch's only on such ties.  ``mode``
returns the last index of its value, and ``cummax``/``cummin`` the last index of the
running extreme, as torch does.

Note [quantile interpolates as torch's lerp, not its fma]
``quantile``'s linear and midpoint modes interpolate with ``lerp``.  torch's CPU lerp
kernel rounds ``end - (end - start) * (1 - weight)`` once (a fused multiply-add), this
``lerp`` twice, so a quantile may differ from torch's in its last bit.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.median(gt.tensor([3.0, 1.0, 2.0, 5.0])).item()
2.0
>>> gt.kthvalue(gt.tensor([3.0, 1.0, 2.0]), 2).indices.item()
2
>>> gt.quantile(gt.tensor([1.0, 2.0, 3.0, 4.0]), 0.25).item()
1.75
>>> gt.cummax(gt.tensor([1.0, 3.0, 2.0, 3.0]), 0).indices.tolist()
[0, 1, 1, 3]
"""

from __future__ import annotations

import numpy as np

from . import return_types as _rt
from ._composite_args import _int, _long, _tensor
from ._shapes import _normalize_dim
from ._signatures import MISSING, checked
from ._tensor import Tensor, _data, _wrap
from .autocast_mode import autocast_function

__all__ = [
    "median",
    "nanmedian",
    "kthvalue",
    "mode",
    "quantile",
    "nanquantile",
    "cummax",
    "cummin",
]


def _no_bool(x: Tensor, fname: str) -> None:
    if x.dtype.name == "bool":
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for 'Bool'")


def _reduced_dim(x: Tensor, dim, fname: str) -> int:
    axis = _normalize_dim(_int(dim, fname, "dim"), x.dim())
    if x.dim() and x.shape[axis] == 0:
        raise IndexError(f"{fname}(): Expected reduction dim {axis} to have non-zero size.")
    return axis


def _pick(x: Tensor, axis: int, positions: np.ndarray, keepdim: bool):
    """``(values, indices)`` of ``x`` at ``positions`` (the reduced shape, keepdims) along
    ``axis``: values by ``gather``, so the gradient reaches those elements."""
    if x.dim() == 0:
        return x.clone(), _long(np.zeros((), np.int64))
    index = _long(positions)
    values = x.gather(axis, index)
    if not keepdim:
        values, index = values.squeeze(axis), index.squeeze(axis)
    return values, index


def _sorted_order(a: np.ndarray, axis: int) -> np.ndarray:
    """Stable ascending order along ``axis``, NaN last (torch's sort)."""
    return np.argsort(a, axis=axis, kind="stable")


def _kth_positions(a: np.ndarray, axis: int, rank: np.ndarray) -> np.ndarray:
    """The index along ``axis`` of the element of rank ``rank`` (0-based, keepdims)."""
    order = _sorted_order(a, axis)
    return np.take_along_axis(order, rank, axis)


def _spread_median(x: Tensor, value: Tensor) -> Tensor:
    """Note [The median of all elements spreads its gradient]."""
    v = _data(value)
    a = _data(x)
    mask = np.isnan(a) if np.isnan(v) else a == v
    gt = _gt()
    spread = gt.where(_wrap(mask), x, gt.zeros((), dtype=x.dtype)).sum() / int(mask.sum())
    if not np.isfinite(v):
        return spread
    return value.detach() - (spread.detach() - spread)


def _gt():
    import gradstack_tensor as gt

    return gt


def _all_median(x: Tensor, fname: str, skip_nan: bool) -> Tensor:
    a = _data(x).reshape(-1)
    if a.size == 0:
        return _wrap(np.array(np.nan, dtype=a.dtype))
    valid = a.size - int(np.isnan(a).sum()) if skip_nan else a.size
    rank = (valid - 1) // 2
    if (not skip_nan and np.isnan(a).any()) or valid == 0:
        position = int(np.flatnonzero(np.isnan(a))[0])
    else:
        position = int(_sorted_order(a, 0)[rank])
    value = x.reshape(-1).gather(0, _long([position])).reshape(())
    if not x.requires_grad:
        return value
    return _spread_median(x, value)


def _median_along(x: Tensor, dim, keepdim: bool, fname: str, skip_nan: bool):
    result = _rt.median if fname == "median" else _rt.nanmedian
    axis = _reduced_dim(x, dim, fname) if x.dim() else 0
    a = _data(x)
    if x.dim() == 0:
        return result(*_pick(x, 0, None, keepdim))
    nans = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    count = a.shape[axis] - nans.sum(axis, keepdims=True) if skip_nan else a.shape[axis]
    # (a row of NaN only: torch's position is median's, (n - 1) // 2 of the stable order)
    count = np.where(np.asarray(count) == 0, a.shape[axis], count)
    rank = (np.asarray(count) - 1) // 2
    rank = np.broadcast_to(rank, nans.sum(axis, keepdims=True).shape)
    positions = _kth_positions(a, axis, rank)
    if not skip_nan:
        # a row with a NaN has the NaN as its median (torch: the first NaN's index)
        has_nan = nans.any(axis, keepdims=True)
        first_nan = np.expand_dims(np.argmax(nans, axis=axis), axis)
        positions = np.where(has_nan, first_nan, positions)
    return result(*_pick(x, axis, positions, keepdim))


@checked("median")
def median(input, dim=MISSING, keepdim: bool = False):
    """The lower median of all elements (a 0-d tensor), or ``(values, indices)`` along
    ``dim``.  NaN propagates: a row with a NaN has NaN as its median.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.median(gt.tensor([[1.0, 4.0, 2.0], [0.0, 9.0, 8.0]]), 1).values.tolist()
    [2.0, 8.0]
    """
    x = _tensor(input, "median")
    _no_bool(x, "median")
    if dim is MISSING:
        return _all_median(x, "median", skip_nan=False)
    return _median_along(x, dim, keepdim, "median", skip_nan=False)


@checked("nanmedian")
def nanmedian(input, dim=MISSING, keepdim: bool = False):
    """``median`` ignoring NaN: the lower median of the other elements (NaN where there
    are none).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.nanmedian(gt.tensor([1.0, float("nan"), 3.0, 2.0])).item()
    2.0
    """
    x = _tensor(input, "nanmedian")
    _no_bool(x, "nanmedian")
    if dim is MISSING:
        return _all_median(x, "nanmedian", skip_nan=True)
    return _median_along(x, dim, keepdim, "nanmedian", skip_nan=True)


def kthvalue(input, k, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest element (``k`` from 1) along ``dim``;
    NaN counts as the largest value.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.kthvalue(gt.tensor([[5.0, 1.0, 3.0]]), 3, 1).values.tolist()
    [5.0]
    """
    x = _tensor(input, "kthvalue")
    _no_bool(x, "kthvalue")
    k = _int(k, "kthvalue", "k")
    axis = _normalize_dim(_int(dim, "kthvalue", "dim"), x.dim())
    n = x.shape[axis] if x.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if x.dim() == 0:
        return _rt.kthvalue(*_pick(x, 0, None, keepdim))
    a = _data(x)
    rank = np.full(a.shape[:axis] + (1,) + a.shape[axis + 1 :], k - 1, np.int64)
    return _rt.kthvalue(*_pick(x, axis, _kth_positions(a, axis, rank), keepdim))


def _mode_row(row: np.ndarray) -> int:
    """The index of ``row``'s most frequent value (the smallest of equally frequent ones;
    every NaN is a value of its own), its last occurrence, as torch."""
    order = np.argsort(row, kind="stable")
    s = row[order]
    if s.dtype.kind == "f":
        new = np.ones(s.size, bool)
        new[1:] = ~(s[1:] == s[:-1])  # NaN != NaN: each starts a run
    else:
        new = np.concatenate(([True], s[1:] != s[:-1]))
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, s.size))
    best = int(np.argmax(lengths))  # the first longest run: the smallest value
    return int(order[starts[best] : starts[best] + lengths[best]].max())


def mode(input, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the most frequent value along ``dim`` (the smallest of
    equally frequent ones) and the index of its last occurrence.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> r = gt.mode(gt.tensor([3.0, 1.0, 3.0, 1.0, 1.0]))
    >>> (r.values.item(), r.indices.item())
    (1.0, 4)
    """
    x = _tensor(input, "mode")
    _no_bool(x, "mode")
    axis = _normalize_dim(_int(dim, "mode", "dim"), x.dim())
    if x.dim() == 0:
        return _rt.mode(*_pick(x, 0, None, keepdim))
    a = _data(x)
    if a.shape[axis] == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size.")
    moved = np.moveaxis(a, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    idx = np.array([_mode_row(r) for r in flat], np.int64).reshape(moved.shape[:-1])
    return _rt.mode(*_pick(x, axis, np.expand_dims(idx, axis), keepdim))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fname, input, q, dim, keepdim, interpolation, skip_nan):
    x = _tensor(input, fname)
    gt = _gt()
    if x.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{fname}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{fname}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)):
            raise TypeError(f"{fname}(): argument 'q' must be float or Tensor")
        qs = np.array([q], dtype=_data(x).dtype)
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{fname}() q must be a scalar or 1D tensor")
        if q.dtype != x.dtype:
            raise RuntimeError(f"{fname}() q tensor must be same dtype as the input tensor")
        qs = _data(q).reshape(-1)
    if x.numel() == 0:
        raise RuntimeError(f"{fname}() input tensor must be non-empty")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{fname}() q values must be in the range [0, 1]")
    if dim is None:
        src = x.reshape(-1)
        axis = 0
        out_shape = (1,) * x.dim() if keepdim else ()
    else:
        axis = _normalize_dim(_int(dim, fname, "dim"), x.dim())
        src = x if x.dim() else x.reshape(1)
        shape = list(x.shape)
        if shape:
            if keepdim:
                shape[axis] = 1
            else:
                del shape[axis]
        out_shape = tuple(shape)
    # the reduced dim last, sorted (NaN last): gather reads the ranks from it
    moved = src.movedim(axis, -1) if src.dim() else src.reshape(1)
    a = _data(moved)
    order = _sorted_order(a, -1)
    ordered = moved.gather(-1, _long(order))
    n = a.shape[-1]
    nans = np.isnan(a).sum(-1, keepdims=True)
    count = (n - nans) if skip_nan else np.full(nans.shape, n)
    ranks = qs.reshape((1,) * (a.ndim - 1) + (-1,)) * (count - 1).astype(a.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    below = np.clip(np.floor(ranks), 0, n - 1).astype(np.int64)
    above = np.clip(np.ceil(ranks), 0, n - 1).astype(np.int64)
    if not skip_nan:
        # a row with a NaN: every quantile is NaN (its first NaN, at the end of the order)
        has_nan = nans > 0
        below = np.where(has_nan, n - 1, below)
        above = np.where(has_nan, n - 1, above)
    else:
        empty = count == 0  # all NaN: NaN, read (as torch) from the first of the order
        below = np.where(empty, 0, below)
        above = np.where(empty, 0, above)
    lo = ordered.gather(-1, _long(below))
    hi = ordered.gather(-1, _long(above))
    if interpolation == "midpoint":
        weights = np.full(ranks.shape, 0.5, a.dtype)
    else:
        weights = (ranks - np.floor(ranks)).astype(a.dtype)
    if interpolation in ("linear", "midpoint"):
        value = gt.lerp(lo, hi, _wrap(np.ascontiguousarray(weights)))
    else:
        value = lo  # lower, higher, nearest: the rank is already whole (below == above)
    # (..., q) -> (q, out_shape)
    value = value.movedim(-1, 0).reshape((len(qs),) + out_shape)
    return value[0] if scalar_q else value


@autocast_function("quantile")
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor in [0, 1]) of ``input``'s
    elements, or along ``dim``; a tensor ``q`` adds its dim first.  NaN propagates.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([[0.0, 1.0, 2.0, 3.0]])
    >>> gt.quantile(x, gt.tensor([0.5, 1.0]), dim=1).tolist()
    [[1.5], [3.0]]
    >>> gt.quantile(x, 0.5, interpolation="lower").item()
    1.0
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, skip_nan=False)


@autocast_function("nanquantile")
def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """``quantile`` ignoring NaN (NaN where a row has only NaN).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.nanquantile(gt.tensor([1.0, float("nan"), 3.0]), 0.5).item()
    2.0
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, skip_nan=True)


def _cumulative_extreme(fname, input, dim, better):
    x = _tensor(input, fname)
    _no_bool(x, fname)
    axis = _normalize_dim(_int(dim, fname, "dim"), x.dim())
    result = _rt.cummax if fname == "cummax" else _rt.cummin
    if x.dim() == 0:
        return result(x.clone(), _long(np.zeros((), np.int64)))
    a = np.moveaxis(_data(x), axis, -1)
    idx = np.zeros(a.shape, np.int64)
    if a.shape[-1]:
        best = a[..., 0].copy()
        at = np.zeros(a.shape[:-1], np.int64)
        is_float = a.dtype.kind == "f"
        for i in range(a.shape[-1]):
            v = a[..., i]
            # torch: a NaN takes over (and stays), otherwise the last equal one wins
            take = better(v, best) | (v == best)
            if is_float:
                take = (take & ~np.isnan(best)) | np.isnan(v)
            best = np.where(take, v, best)
            at = np.where(take, i, at)
            idx[..., i] = at
    indices = _long(np.moveaxis(idx, -1, axis))
    return result(x.gather(axis, indices), indices)


def cummax(input, dim: int):
    """``(values, indices)``: the running maximum along ``dim`` and where it was found
    (the last of equal ones; a NaN, once seen, stays).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cummax(gt.tensor([1.0, 0.0, 2.0]), 0).values.tolist()
    [1.0, 1.0, 2.0]
    """
    return _cumulative_extreme("cummax", input, dim, np.greater)


def cummin(input, dim: int):
    """``(values, indices)``: the running minimum along ``dim`` and where it was found.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cummin(gt.tensor([1.0, 0.0, 2.0]), 0).indices.tolist()
    [0, 1, 1]
    """
    return _cumulative_extreme("cummin", input, dim, np.less)
