"""Kernels of the reducing writes: ``scatter_reduce`` and ``index_reduce``, out of place
and in place.

``scatter_reduce(dim, index, src, reduce, include_self=True)`` combines ``src[i][j]``
into ``self[index[i][j]][j]`` (dim 0) with ``reduce`` (``"sum"``, ``"prod"``, ``"mean"``,
``"amax"``, ``"amin"``); ``index_reduce(dim, index, source, reduce, include_self=True)``
combines whole slices of ``source`` into the slices of ``self`` at the positions of a
1-d ``index`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``).  With
``include_self=False`` the positions written forget ``self``'s values first.  The checks
are torch's (its words), before any memory is written; values combine in index order
(torch's CPU loop), a NaN wins ``amax``/``amin``, and an integer ``mean`` rounds down.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([1.0, 2.0, 3.0])
>>> x.scatter_reduce(0, gt.tensor([0, 0, 2]), gt.tensor([5.0, 7.0, 1.0]), "amax").tolist()
[7.0, 2.0, 3.0]
>>> x.index_reduce(0, gt.tensor([1, 1]), gt.tensor([4.0, 6.0]), "mean").tolist()
[1.0, 4.0, 3.0]
"""

from __future__ import annotations

import warnings

import numpy as np

from ._dispatch import OPS
from ._impl_elementwise import _check_writable
from ._impl_scatter import (
    _check_sizes,
    _index_key,
    _index_vector,
    _scatter_index,
)
from ._scatter_reduce_kernels import scatter_reduce_
from ._shapes import _normalize_dim
from ._tensor import Tensor, _data, _wrap

_SCATTER_REDUCES = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax",
                    "amin": "amin", "max": "amax", "min": "amin"}  # fmt: skip
_INDEX_REDUCES = ("prod", "mean", "amax", "amin")
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # (the others: ufunc.at)
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
          "amin": np.minimum}  # fmt: skip


def _identity(reduce: str, dtype: np.dtype):
    """The value a position starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return np.zeros((), dtype)
    if reduce == "prod":
        return np.ones((), dtype)
    if dtype == np.bool_:
        return np.asarray(reduce == "amin")
    if dtype.kind == "f":
        return np.asarray(-np.inf if reduce == "amax" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.min if reduce == "amax" else info.max, dtype)


def _not_for_bool(x: np.ndarray, kernel: str) -> None:
    if x.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _combine(x, key, values, reduce, include_self, counts_shape_key):
    """Combine ``values`` into ``x`` at ``key`` with ``reduce`` (in index order)."""
    if not include_self:
        x[key] = _identity(reduce, x.dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # (a NaN wins, as in torch)
        _UFUNC[reduce].at(x, key, values)
    if reduce == "mean":
        count = np.ones(x.shape, np.int64) if include_self else np.zeros(x.shape, np.int64)
        counts_shape_key(count)
        count[count == 0] = 1
        if x.dtype.kind in "fc":
            x /= count.astype(x.dtype)
        else:
            x[...] = np.floor_divide(x, count.astype(x.dtype))


def _in_one_pass(x, axis, idx, values, reduce, include_self):
    """The C pass of ``kernels.scatter_reduce_`` (Note [One pass of a reducing scatter] in
    ``_scatter_reduce_kernels.pyx``) into ``x``, through a C-contiguous copy when ``x`` is
    not one; an index out of range raises IndexError before anything is written."""
    if x.flags.c_contiguous and x.flags.aligned:
        scatter_reduce_(x, axis, idx, values, reduce, bool(include_self))
        return
    work = np.ascontiguousarray(x)
    scatter_reduce_(work, axis, idx, values, reduce, bool(include_self))
    x[...] = work


def _check_scatter_reduce(reduce) -> str:
    if not isinstance(reduce, str) or reduce not in _SCATTER_REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    return _SCATTER_REDUCES[reduce]


def _scatter_reduce_into(out, dim, index, src, reduce, include_self, name):
    reduce = _check_scatter_reduce(reduce)
    x = out if out.ndim else out.reshape(1)
    idx = _scatter_index(index, "scatter")
    if not isinstance(src, Tensor):
        raise TypeError(
            f"{name}(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}"
        )
    s = _data(src)
    axis = _normalize_dim(dim, max(x.ndim, 1))
    if idx.ndim == 0:
        idx = idx.reshape((1,) * x.ndim)
    if s.ndim == 0:
        s = s.reshape((1,) * x.ndim)
    if s.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if idx.size == 0:
        return
    _check_sizes(x, axis, idx, s.shape)
    if reduce == "mean":
        _not_for_bool(x, "scatter_gather_tensor_cpu_reduce_mean")
    if x.dtype in _KERNEL_DTYPES:
        if np.may_share_memory(x, s):
            s = s.copy()
        try:
            _in_one_pass(x, axis, idx, s, reduce, include_self)
        except IndexError as e:  # (torch's words: a RuntimeError)
            raise RuntimeError(str(e)) from None
        return
    n = x.shape[axis]
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise RuntimeError(
            f"index {int(idx[bad].reshape(-1)[0])} is out of bounds for dimension {axis} with "
            f"size {n}"
        )
    key = list(np.indices(idx.shape, sparse=True))
    key[axis] = idx
    key = tuple(key)
    values = s[tuple(slice(0, k) for k in idx.shape)]
    if np.may_share_memory(x, values):
        values = values.copy()
    _combine(x, key, values, reduce, include_self, lambda count: np.add.at(count, key, 1))


_WARNED = []


def _index_reduce_into(out, dim, index, source, reduce, include_self, name):
    if not _WARNED:  # (torch's TORCH_WARN_ONCE)
        _WARNED.append(True)
        warnings.warn(
            "index_reduce() is in beta and the API may change at any time.",
            UserWarning,
            stacklevel=4,
        )
    if not isinstance(reduce, str) or reduce not in _INDEX_REDUCES:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    x = out if out.ndim else out.reshape(1)
    axis = _normalize_dim(dim, max(x.ndim, 1))
    idx = _index_vector(index, "index_reduce_")
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not {type(source).__name__}")
    s = _data(source)
    if s.dtype != x.dtype:
        from ._impl_elementwise import SCALAR_TYPE

        raise RuntimeError(
            f"index_reduce_(): self ({SCALAR_TYPE[x.dtype.name]}) and source "
            f"({SCALAR_TYPE[s.dtype.name]}) must have the same scalar type"
        )
    if s.ndim != out.ndim or (out.ndim and [k for d, k in enumerate(s.shape) if d != axis]
                              != [k for d, k in enumerate(out.shape) if d != axis]):  # fmt: skip
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(out.shape)} source.shape = {list(s.shape)}"
        )
    values = s if s.ndim else s.reshape(1)
    if values.shape[axis] != idx.size:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
            f"source.size(dim): ({values.shape[axis]}), for dim: {axis}"
        )
    _not_for_bool(x, "index_func_")
    if x.dtype in _KERNEL_DTYPES:
        if np.may_share_memory(x, values):
            values = values.copy()
        # the index along ``axis``, broadcast along the other dims (stride 0)
        shape = [1] * values.ndim
        shape[axis] = idx.size
        wide = np.broadcast_to(idx.reshape(shape), values.shape)
        try:
            _in_one_pass(x, axis, wide, values, reduce, include_self)
        except IndexError:
            raise IndexError("index out of range in self") from None
        return
    if ((idx < 0) | (idx >= x.shape[axis])).any():
        raise IndexError("index out of range in self")
    if idx.size == 0:
        return
    key = _index_key(x, axis, idx, "index_add")
    if np.may_share_memory(x, values):
        values = values.copy()

    def count_at(count):
        np.add.at(count, key, 1)

    _combine(x, key, values, reduce, include_self, count_at)


def _check_include_self(include_self, name):
    if not isinstance(include_self, (bool, np.bool_)):
        raise TypeError(
            f"{name}(): argument 'include_self' must be bool, not {type(include_self).__name__}"
        )


def _reducing(name, into):
    def kernel(input, dim, index, src, reduce, include_self=True):
        _check_include_self(include_self, name)
        out = _data(input).copy()
        into(out, dim, index, src, reduce, include_self, name)
        return _wrap(out)

    def kernel_(input, dim, index, src, reduce, include_self=True):
        _check_include_self(include_self, name + "_")
        _check_writable(input, name + "_")
        into(_data(input), dim, index, src, reduce, include_self, name + "_")
        input._bump_version(name + "_")
        return input

    OPS[name].set_kernel(kernel)
    OPS[name + "_"].set_kernel(kernel_)


_reducing("scatter_reduce", _scatter_reduce_into)
_reducing("index_reduce", _index_reduce_into)
