"""Indexed writes: scatter, scatter_add, index_add, index_copy, index_fill (and their
in-place variants), as torch's derivatives.yaml:

- the written positions take the written values: ``self``'s gradient is zero there
  (scatter, index_copy, index_fill) or passes through (the ``*_add`` ops);
- the values' gradient is the incoming gradient read back at those positions (``gather``
  for scatter, ``index_select`` for the ``index_*`` ops; times ``alpha`` for index_add).

torch's scatter formulas give ``src`` a gradient of ``index``'s shape, so a ``src`` larger
than ``index`` fails in backward with torch's "invalid gradient" error here as there.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from ._formulas import _along_axis_key, _batch_gather, _first_order_arrays, _lead, _sum_all
from ._table import jvp, register
from ._tangents import _pad, _put, _take, _tangent_sum
from .batching import per_sample

__all__: list[str] = []

_PER_SAMPLE = per_sample("an indexed write runs once per sample under vmap")


def _positions(ctx_or_args, shape, dim, index, kind):
    """The numpy key of the positions written into a tensor of ``shape`` (0-d: one)."""
    shape = tuple(shape) or (1,)
    axis = dim % len(shape)
    idx = _data(index)
    if kind == "scatter":
        idx = idx.reshape(idx.shape or (1,) * len(shape))
        return _along_axis_key(idx, axis), shape
    key = [slice(None)] * len(shape)
    key[axis] = idx.reshape(-1).astype(np.int64) % shape[axis]  # (index_fill wraps -1)
    return tuple(key), shape


def _written_mask(key, shape, out_shape):
    mask = np.zeros(shape, dtype=bool)
    mask[key] = True
    return gt.from_numpy(mask.reshape(out_shape))


def _zero_written(grad, key, shape, out_shape):
    return grad.masked_fill(_written_mask(key, shape, out_shape), 0.0)


def _values_grad(grad, key, shape, out_shape):
    lead = _lead(grad)
    g = grad.reshape(tuple(lead) + shape) if tuple(out_shape) != shape else grad
    return _batch_gather(g, key, shape)


def _scatter_name(args):
    return "ScatterBackward0" if isinstance(args[3], Tensor) else "ScatterBackward1"


def _refuse_reduce(reduce):
    if reduce is not None:
        raise RuntimeError(
            f"the derivative for 'scatter' with reduce={reduce!r} is not implemented (as in "
            "torch); scatter without reduce, or scatter_add, is differentiable"
        )


@register(
    "scatter(self, dim, index, src, reduce)",
    _scatter_name,
    inputs="self, src",
    save="dim, index, reduce",
    batch=_PER_SAMPLE,
)
def _scatter(ctx, grad):
    _refuse_reduce(ctx.saved_value("reduce"))
    return _replaced(ctx, grad, "scatter")


def _gathered(grad, dim, index, key, shape, out_shape):
    """The values' gradient of a scatter: torch's ``grad.gather(dim, index)`` (one C pass
    of the gather op) when it applies as it is (not batched, not 0-d), else read back with
    the key."""
    if not _lead(grad) and grad.dim() > 0 and index.dim() == grad.dim():
        return grad.gather(dim, index)
    return _values_grad(grad, key, shape, out_shape)


def _scatter_arrays(grad, index):
    """grad's and index's arrays when scatter's backward may run on them with tensor-core's
    kernels (Note [scatter's backward on arrays]), else None."""
    if not _first_order_arrays(grad):
        return None
    g, idx = _data(grad), _data(index)
    if g.ndim == 0 or idx.ndim != g.ndim or idx.dtype not in _INDEX_DTYPES or idx.size == 0:
        return None
    return g, idx


_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))


# Note [scatter's backward on arrays]
# At first order, ``self``'s gradient of scatter is a copy of the incoming gradient with
# zeros written at the scattered positions (tensor-core's ``scatter_``: one pass, where the
# mask of the differentiable formula took a boolean array, a fancy-index write and a
# masked_fill), and the values' gradient is ``kernels.gather`` of it: torch's
# ``grad.scatter(dim, index, 0)`` and ``grad.gather(dim, index)`` on the arrays.


def _replaced(ctx, grad, kind):
    """The gradients of a write that replaces: none for ``self`` where it was written,
    the incoming gradient read back there for the values."""
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    arrays = _scatter_arrays(grad, index) if kind == "scatter" else None
    if arrays is not None:
        g, idx = arrays
        axis = dim % g.ndim
        need_self, need_values = ctx.needs_input_grad
        g_self = g_values = None
        if need_self:
            out = np.copy(g, order="K")
            kernels.scatter_(out, axis, idx, np.broadcast_to(np.zeros((), g.dtype), idx.shape))
            g_self = _wrap(out)
        if need_values:
            g_values = _wrap(kernels.gather(g, axis, idx))
        return g_self, g_values
    out_shape = tuple(grad.shape[len(_lead(grad)) :])  # (self's shape)
    key, shape = _positions(ctx, out_shape, dim, index, kind)
    need_self, need_values = ctx.needs_input_grad
    g_self = _zero_written(grad, key, shape, out_shape) if need_self else None
    g_values = None
    if need_values:
        g_values = (
            _gathered(grad, dim, index, key, shape, out_shape)
            if kind == "scatter"
            else _values_grad(grad, key, shape, out_shape)
        )
    return g_self, g_values


def _scattered_tangent(t_src, src, index, key, shape, x, lead):
    """``src``'s tangent cut to ``index``'s shape and added at the written positions of
    zeros of ``x``'s shape (batched under ``lead``)."""
    cut = tuple(slice(0, k) for k in _data(index).shape or (1,) * len(shape))
    src_shape = tuple(src.shape) or (1,) * len(shape)
    values = _take(t_src.reshape(tuple(lead) + src_shape), cut, src_shape, lead)
    return _put(values, key, shape, lead).reshape(tuple(lead) + tuple(x.shape))


@jvp("scatter")
def _scatter_jvp(args, out, tangents, lead):
    x, dim, index, src = args[0], args[1], args[2], args[3]
    _refuse_reduce(args[4] if len(args) > 4 else None)
    key, shape = _positions(None, tuple(x.shape), dim, index, "scatter")
    t_self, t_src = tangents
    r = None
    if t_self is not None:
        r = _zero_written(_pad(t_self, x, out, lead), key, shape, tuple(x.shape))
    if t_src is not None:
        if not lead:  # a repeated index: the last write wins, as in the primal
            base = r if r is not None else gt.zeros(tuple(x.shape), dtype=t_src.dtype)
            return base.scatter(dim, index, t_src)
        r = _tangent_sum(r, _scattered_tangent(t_src, src, index, key, shape, x, lead))
    return r


@register(
    "scatter_add(self, dim, index, src)",
    "ScatterAddBackward0",
    inputs="self, src",
    save="dim, index",
    batch=_PER_SAMPLE,
)
def _scatter_add(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    need_self, need_src = ctx.needs_input_grad
    arrays = _scatter_arrays(grad, index) if need_src else None
    if arrays is not None:  # Note [scatter's backward on arrays]
        g, idx = arrays
        return (grad if need_self else None), _wrap(kernels.gather(g, dim % g.ndim, idx))
    out_shape = tuple(grad.shape[len(_lead(grad)) :])  # (self's shape)
    key, shape = _positions(ctx, out_shape, dim, index, "scatter")
    return (grad if need_self else None), (
        _gathered(grad, dim, index, key, shape, out_shape) if need_src else None
    )


@jvp("scatter_add")
def _scatter_add_jvp(args, out, tangents, lead):
    x, dim, index, src = args[0], args[1], args[2], args[3]
    key, shape = _positions(None, tuple(x.shape), dim, index, "scatter")
    t_self, t_src = tangents
    r = _pad(t_self, x, out, lead)
    if t_src is not None:
        r = _tangent_sum(r, _scattered_tangent(t_src, src, index, key, shape, x, lead))
    return r


@register(
    "index_add(self, dim, index, source, alpha)",
    "IndexAddBackward0",
    inputs="self, source",
    save="dim, index, alpha",
    batch=_PER_SAMPLE,
)
def _index_add(ctx, grad):
    dim, index, alpha = (ctx.saved_value(k) for k in ("dim", "index", "alpha"))
    out_shape = tuple(grad.shape[len(_lead(grad)) :])  # (self's shape)
    key, shape = _positions(ctx, out_shape, dim, index, "index")
    need_self, need_source = ctx.needs_input_grad
    g_source = None
    if need_source:
        g_source = _values_grad(grad, key, shape, out_shape)
        g_source = g_source if alpha == 1 else g_source * alpha
    return (grad if need_self else None), g_source


def _index_values_tangent(t, source, key, shape, x, lead):
    source_shape = list(shape)
    axis = next(i for i, k in enumerate(key) if not isinstance(k, slice))
    source_shape[axis] = key[axis].size
    t = t.reshape(tuple(lead) + tuple(source_shape))
    return _put(t, key, shape, lead).reshape(tuple(lead) + tuple(x.shape))


@jvp("index_add")
def _index_add_jvp(args, out, tangents, lead):
    x, dim, index, source = args[0], args[1], args[2], args[3]
    alpha = args[4] if len(args) > 4 else 1
    key, shape = _positions(None, tuple(x.shape), dim, index, "index")
    t_self, t_source = tangents
    r = _pad(t_self, x, out, lead)
    if t_source is not None:
        t = _index_values_tangent(t_source, source, key, shape, x, lead)
        r = _tangent_sum(r, t if alpha == 1 else t * alpha)
    return r


@register(
    "index_copy(self, dim, index, source)",
    "IndexCopyBackward0",
    inputs="self, source",
    save="dim, index",
    batch=_PER_SAMPLE,
)
def _index_copy(ctx, grad):
    return _replaced(ctx, grad, "index")


@jvp("index_copy")
def _index_copy_jvp(args, out, tangents, lead):
    x, dim, index, source = args[0], args[1], args[2], args[3]
    key, shape = _positions(None, tuple(x.shape), dim, index, "index")
    t_self, t_source = tangents
    r = None
    if t_self is not None:
        r = _zero_written(_pad(t_self, x, out, lead), key, shape, tuple(x.shape))
    if t_source is not None:
        if not lead:  # a repeated index: the last write wins, as in the primal
            base = r if r is not None else gt.zeros(tuple(x.shape), dtype=t_source.dtype)
            return base.index_copy(dim, index, t_source)
        r = _tangent_sum(r, _index_values_tangent(t_source, source, key, shape, x, lead))
    return r


def _index_fill_name(args):
    return "IndexFillBackward1" if isinstance(args[3], Tensor) else "IndexFillBackward0"


@register(
    "index_fill(self, dim, index, value)",
    _index_fill_name,
    inputs="self, value",
    save="dim, index",
    batch=_PER_SAMPLE,
)
def _index_fill(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    out_shape = tuple(grad.shape[len(_lead(grad)) :])  # (self's shape)
    key, shape = _positions(ctx, out_shape, dim, index, "index")
    need_self, need_value = ctx.needs_input_grad
    g_self = _zero_written(grad, key, shape, out_shape) if need_self else None
    g_value = None
    if need_value:
        mask = _written_mask(key, shape, out_shape)
        g_value = _sum_all(gt.where(mask, grad, 0.0), _lead(grad))
    return g_self, g_value


@jvp("index_fill")
def _index_fill_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    key, shape = _positions(None, tuple(x.shape), dim, index, "index")
    t_self, t_value = tangents
    r = None
    if t_self is not None:
        r = _zero_written(_pad(t_self, x, out, lead), key, shape, tuple(x.shape))
    if t_value is not None:
        mask = _written_mask(key, shape, tuple(x.shape))
        tv = t_value.reshape(tuple(lead) + (1,) * x.dim())
        r = _tangent_sum(r, gt.where(mask, tv, 0.0))
    return r
