"""Kernels of the indexed writes: scatter, scatter_add, index_add, index_copy, index_fill,
out of place and in place.

``scatter``/``scatter_add`` write ``src[i][j]`` at ``self[index[i][j]][j]`` (dim 0; the
position of ``index``'s element elsewhere), ``index_*`` whole slices along ``dim`` at the
positions of a 1-d ``index``.  The checks are torch's, in torch's order, before any
memory is touched: the index dtype and rank, the sizes, the dtypes, then the bounds.  A
repeated index adds up in ``*_add`` (in index order: tensor-core's ``scatter_add_`` for
float32/float64, numpy's ``add.at`` for other dtypes) and the last write
wins in the others (torch's CPU loop also writes in order).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.zeros(2, 3).scatter_(1, gt.tensor([[0, 1], [2, 0]]), 1.5).tolist()
[[1.5, 1.5, 0.0], [1.5, 0.0, 1.5]]
>>> gt.zeros(3).index_add(0, gt.tensor([0, 0]), gt.tensor([1.0, 2.0])).tolist()
[3.0, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ._dispatch import OPS
from ._impl_elementwise import SCALAR_TYPE, _check_fits, _check_writable
from ._index_kernels import scatter_ as _scatter_set
from ._index_kernels import scatter_add_ as _scatter_add
from ._shapes import _normalize_dim
from ._tensor import Tensor, _data, _wrap

_INDEX_NAMES = {"int64": "Long", "int32": "Int"}
_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # (dtypes: no conversion per test)


def _scatter_index(index, name: str) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = _data(index)
    if idx.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{name.rstrip('_')}(): Expected dtype int32/int64 for index")
    return idx


def _check_sizes(x: np.ndarray, axis: int, idx: np.ndarray, src_shape) -> None:
    """torch's rank and size checks of scatter's operands."""
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src_shape is not None and len(src_shape) != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d in range(x.ndim):
        too_big_self = d != axis and idx.shape[d] > x.shape[d]
        too_big_src = src_shape is not None and idx.shape[d] > src_shape[d]
        if too_big_self or too_big_src:
            raise RuntimeError(
                f"Expected index {list(idx.shape)} to be no larger than self "
                f"{list(x.shape)} apart from dimension {axis}"
                + (
                    ""
                    if src_shape is None
                    else f" and to be no larger size than src {list(src_shape)}"
                )
            )


def _scatter_key(x: np.ndarray, axis: int, idx: np.ndarray):
    """The numpy key of the positions written, after torch's bound check."""
    n = x.shape[axis]
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise RuntimeError(
            f"index {int(idx[bad].reshape(-1)[0])} is out of bounds for dimension {axis} with "
            f"size {n}"
        )
    key = list(np.indices(idx.shape, sparse=True))
    key[axis] = idx
    return tuple(key)


def _kernel_operands(x, values, index):
    """Whether tensor-core's scatter kernels take these arrays (float32/float64, one dtype,
    native and aligned)."""
    return (
        x.dtype in _KERNEL_DTYPES
        and values.dtype == x.dtype
        and index.dtype.isnative
        and x.flags.aligned
        and values.flags.aligned
        and index.flags.aligned
    )


def _add_at(x, axis, index, values, key):
    """``np.add.at(x, key, values)``, where ``key`` puts ``values[p]`` at ``index[p]`` along
    ``axis``: one C pass for float32/float64 (tensor-core's ``scatter_add_``)."""
    if _kernel_operands(x, values, index):
        _scatter_add(x, axis, index, values)
    else:
        np.add.at(x, key, values)


def _scatter_values(x, src, idx, name):
    """``src`` cut to ``index``'s shape, or the number, in ``x``'s dtype."""
    if isinstance(src, Tensor):
        s = _data(src)
        if s.dtype != x.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        if s.ndim == 0:  # (a 0-d self and index: reshaped to one element by the caller)
            return s, s.shape
        return s[tuple(slice(0, k) for k in idx.shape)], s.shape
    if isinstance(src, (bool, int, float, np.number)):
        _check_fits(src, x.dtype, float_checks=False)
        return np.asarray(src).astype(x.dtype), None
    raise TypeError(
        f"{name}(): argument 'src' (position 3) must be Tensor or Number, not {type(src).__name__}"
    )


def _scatter_into(out, dim, index, src, reduce, name, add):
    x = out if out.ndim else out.reshape(1)
    idx = _scatter_index(index, name)
    if idx.size == 0:
        return
    axis = _normalize_dim(dim, max(x.ndim, 1))
    if idx.ndim == 0:
        idx = idx.reshape((1,) * x.ndim)
    values, src_shape = _scatter_values(x, src, idx, name)
    if src_shape is not None and len(src_shape) == 0:
        src_shape = (1,) * x.ndim
        values = values.reshape((1,) * x.ndim)
    _check_sizes(x, axis, idx, src_shape)
    if values.shape != idx.shape:
        values = np.broadcast_to(values, idx.shape)
    if (add or reduce in ("add", None)) and _kernel_operands(x, values, idx):
        # Note [scatter in one C pass]: the bounds checked by the kernel before any write
        # (its words are torch's; torch's type), then one strided pass in index order
        if np.may_share_memory(x, values):  # (``x.scatter_(d, i, x)``: read before written)
            values = values.copy()
        try:
            (_scatter_add if add or reduce == "add" else _scatter_set)(x, axis, idx, values)
        except IndexError as e:
            raise RuntimeError(str(e)) from None
        return
    key = _scatter_key(x, axis, idx)
    if add or reduce == "add":
        _add_at(x, axis, idx, values, key)
    elif reduce == "multiply":
        np.multiply.at(x, key, values)
    elif reduce is None:
        x[key] = values
    else:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")


def _scatter(name, add):
    def kernel(input, dim, index, src, reduce=None):
        out = _data(input).copy()
        _scatter_into(out, dim, index, src, reduce, name, add)
        return _wrap(out)

    def kernel_(input, dim, index, src, reduce=None):
        _check_writable(input, name + "_")
        _scatter_into(_data(input), dim, index, src, reduce, name + "_", add)
        input._bump_version(name + "_")
        return input

    OPS[name].set_kernel(kernel)
    OPS[name + "_"].set_kernel(kernel_)


_scatter("scatter", add=False)
_scatter("scatter_add", add=True)


def _index_vector(index, name: str) -> np.ndarray:
    """``index`` as a vector, with torch's errors (each index op words them its own way)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = _data(index)
    op = name.rstrip("_")
    if idx.ndim > 1:
        if op in ("index_add", "index_reduce"):
            raise IndexError(
                f"{op}_(): Index is supposed to be a vector, but got dim: {idx.ndim} with "
                f"type: {_INDEX_NAMES.get(idx.dtype.name, SCALAR_TYPE.get(idx.dtype.name))} and "
                f"size: {list(idx.shape)}"
            )
        if op == "index_copy":
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
        raise RuntimeError("Index has to be a vector/scalar")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            f"{op}_(): Expected dtype int32/int64 for index but got: "
            f"{SCALAR_TYPE.get(idx.dtype.name, idx.dtype.name)}"
        )
    return idx.reshape(-1).astype(np.int64)


def _index_key(x, axis, idx, name):
    """The key of the slices at ``idx`` along ``axis``, after torch's bound check:
    index_fill wraps negative positions, index_add and index_copy refuse them."""
    n = x.shape[axis]
    op = name.rstrip("_")
    low = -n if op == "index_fill" else 0
    bad = (idx < low) | (idx >= n)
    if bad.any():
        first = int(idx[bad][0])
        if op == "index_add":  # (torch: a negative index is an IndexError, a large one not)
            if first < 0:
                raise IndexError("index out of range in self")
            raise RuntimeError(f"index {first} is out of bounds for dimension {axis} with size {n}")
        prefix = "index_copy_(): " if op == "index_copy" else ""
        raise IndexError(
            f"{prefix}index {first} is out of bounds for dimension {axis} with size {n}"
        )
    key = [slice(None)] * x.ndim
    key[axis] = idx % n if op == "index_fill" and n else idx
    return tuple(key)


def _source_slices(x, axis, idx, source, name):
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not {type(source).__name__}")
    s = _data(source)
    if s.dtype != x.dtype:
        raise RuntimeError(
            f"{name}(): self ({SCALAR_TYPE[x.dtype.name]}) and source "
            f"({SCALAR_TYPE[s.dtype.name]}) must have the same scalar type"
        )
    expected = list(x.shape)
    expected[axis] = idx.size
    shaped = s.reshape(expected) if s.ndim == 0 and s.size == idx.size else s
    if list(shaped.shape) != expected:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(x.shape)} source.shape = {list(s.shape)}"
        )
    return shaped


def _index_into(out, dim, index, source, name, how, alpha=1):
    x = out if out.ndim else out.reshape(1)
    axis = _normalize_dim(dim, max(x.ndim, 1))
    idx = _index_vector(index, name)
    if how == "fill":
        if isinstance(source, Tensor):
            if source.dim() != 0:
                raise RuntimeError(
                    f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                    f"{source.dim()} dimension(s)."
                )
            value = _data(source).astype(x.dtype)
        else:
            _check_fits(source, x.dtype, float_checks=False)
            value = np.asarray(source).astype(x.dtype)
        key = _index_key(x, axis, idx, name)
        x[key] = value
        return
    values = _source_slices(x, axis, idx, source, name)
    key = _index_key(x, axis, idx, name)
    if how == "add":
        if alpha != 1:
            values = values * np.asarray(alpha).astype(x.dtype)
        ones = (1,) * (x.ndim - axis - 1)
        along = np.broadcast_to(idx.reshape((1,) * axis + (idx.size,) + ones), values.shape)
        _add_at(x, axis, along, values, key)
    else:
        x[key] = values


def _indexed(name, how):
    def kernel(input, dim, index, source, alpha=1):
        out = _data(input).copy()
        _index_into(out, dim, index, source, name, how, alpha)
        return _wrap(out)

    def kernel_(input, dim, index, source, alpha=1):
        _check_writable(input, name + "_")
        _index_into(_data(input), dim, index, source, name + "_", how, alpha)
        input._bump_version(name + "_")
        return input

    OPS[name].set_kernel(kernel)
    OPS[name + "_"].set_kernel(kernel_)


_indexed("index_add", "add")
_indexed("index_copy", "copy")
_indexed("index_fill", "fill")
