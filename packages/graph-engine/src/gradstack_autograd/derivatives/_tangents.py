"""Helpers of the forward (JVP) formulas (Note [Aligning a batch of tangents])."""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor.extension import data_of as _data

from ._formulas import _along_axis_key, _getitem_np, _positions, index_scatter, var_backward

__all__: list[str] = []


def _pad(t, x, out, lead):
    """Tangent ``t`` of ``x`` aligned against ``out`` (Note [Aligning a batch of tangents])."""
    if t is None or not lead:
        return t
    missing = out.dim() - x.dim()
    if missing <= 0:
        return t
    return t.reshape(tuple(lead) + (1,) * missing + tuple(x.shape))


def _shift(dim, x, lead):
    """Dim ``dim`` of ``x`` as a dim of its (batched) tangent."""
    return dim % max(x.dim(), 1) + len(lead)


def _tangent_sum(a, b):
    """``a + b`` where None is a zero tangent."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _reduced(dim, x, lead):
    """The dims of the tangent that a reduction of ``x`` over ``dim`` sums over."""
    n = x.dim()
    if dim is None or dim == ():
        return tuple(range(len(lead), len(lead) + n))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted(d % n + len(lead) for d in dims)) if n else ()


def _sum_over(t, dims, keepdim):
    return t.sum(dims, keepdim=keepdim) if dims else t


def _keepdims(r, x, dim, keepdim):
    """A reduction's result of ``x`` (no batch) in keepdim form, to broadcast against ``x``."""
    if x.dim() == 0 or keepdim:
        return r
    if dim is None or dim == ():
        return r.reshape((1,) * x.dim())
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    for d in sorted(d % x.dim() for d in dims):
        r = r.unsqueeze(d)
    return r


def _take(t, key, shape, lead):
    """``t[key]`` for the tangent ``t`` of a tensor of ``shape`` (numpy-style ``key``)."""
    if not lead:
        return _getitem_np(t, key)
    b = math.prod(lead)
    pos = _positions(tuple(shape), key)
    r = _getitem_np(t.reshape(b, -1), (slice(None), pos.reshape(-1)))
    return r.reshape(tuple(lead) + pos.shape)


def _put(t, key, shape, lead):
    """zeros(lead + shape) with the tangent ``t`` added at ``key`` (getitem's adjoint)."""
    if not lead:
        return index_scatter(t, key, tuple(shape))
    b = math.prod(lead)
    pos = _positions(tuple(shape), key).reshape(-1)
    flat = index_scatter(t.reshape(b, -1), (slice(None), pos), (b, math.prod(shape)))
    return flat.reshape(tuple(lead) + tuple(shape))


def _zero_tangents(lead, like):
    return gt.zeros(tuple(lead) + tuple(like.shape), dtype=like.dtype)


def _mask(cond, dtype):
    return cond.to(dtype)


def _binary(args, out, tangents, lead, da, db):
    """``t_a * da + t_b * db`` for an elementwise op of two (broadcast) arguments."""
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        ta = _pad(ta, a, out, lead)
        r = ta if da is None else ta * da(a, b, out)
    if tb is not None:
        tb = _pad(tb, b, out, lead)
        r = _tangent_sum(r, tb if db is None else tb * db(a, b, out))
    return r


def _extreme_jvp_of(args, out, tangents, lead, wins):
    """torch's ``other_t + where(a == b, 0.5, wins(a, b)) * (self_t - other_t)``, with a
    missing tangent as torch's zero tensor (it contributes exactly nothing)."""
    a, b = args[0], args[1]
    ta, tb = tangents
    w = gt.where(a == b, 0.5, _mask(wins(a, b), out.dtype))
    ta = _pad(ta, a, out, lead) if ta is not None else None
    tb = _pad(tb, b, out, lead) if tb is not None else None
    if tb is None:
        return w * ta
    return tb + w * (-tb if ta is None else ta - tb)


def _along(t, x, indices, dim, keepdim, lead):
    """The tangent at ``indices`` along ``dim`` (max/min/sort/topk's selected elements)."""
    axis = dim % x.dim()
    idx = _data(indices)
    if not keepdim and idx.ndim < x.dim():
        idx = np.expand_dims(idx, axis)
    r = _take(t, _along_axis_key(idx, axis), tuple(x.shape), lead)
    if not keepdim and _data(indices).ndim < x.dim():
        r = r.squeeze(axis + len(lead))
    return r


def _extreme_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    (t,) = tangents
    if dim is None:
        # ties share the tangent evenly, as the backward formula shares the gradient
        mask = _mask(x == out, out.dtype)
        return _sum_over(t * mask, _reduced(None, x, lead), False) / mask.sum()
    if x.dim() == 0:
        return (t, None)
    return (_along(t, x, out[1], dim, keepdim, lead), None)


def _var_tangent(args, t, lead):
    """torch's var_jvp: var's backward formula of the tangent (keepdim), summed over the
    reduced dims (so ``n <= correction`` gives torch's inf/nan, not a Python error)."""
    x, dim, correction, keepdim = args[0], args[1], args[2], args[3]
    per_element = var_backward(t, x, dim, correction, True, lead)
    return _sum_over(per_element, _reduced(dim, x, lead), keepdim)


def _matmul_tangent(t, a, b, lead, left):
    """``t @ b`` where ``t`` is the (batched) tangent of ``a`` (`left`), else ``a @ t``
    where it is ``b``'s: torch's matmul shapes."""
    if not lead:
        return t @ b if left else a @ t
    row = a.dim() == 1
    col = b.dim() == 1
    if left:
        t, other = (t.unsqueeze(-2) if row else t), (b.unsqueeze(-1) if col else b)
        t_batch, other_batch = max(a.dim(), 2) - 2, other.dim() - 2
    else:
        t, other = (t.unsqueeze(-1) if col else t), (a.unsqueeze(-2) if row else a)
        t_batch, other_batch = max(b.dim(), 2) - 2, other.dim() - 2
    if other_batch > t_batch:
        shape = tuple(t.shape)
        t = t.reshape(shape[: len(lead)] + (1,) * (other_batch - t_batch) + shape[len(lead) :])
    r = t @ other if left else other @ t
    if row:
        r = r.squeeze(-2)
    return r.squeeze(-1) if col else r


def _sorted_jvp(dim_position):
    def formula(args, out, tangents, lead):
        x = args[0]
        dim = args[dim_position] if len(args) > dim_position else -1
        (t,) = tangents
        if x.dim() == 0:
            return (t, None)
        return (_along(t, x, out[1], dim, True, lead), None)

    return formula


def _pieces_jvp(args, out, tangents, lead):
    x, dim = args[0], args[2] if len(args) > 2 else 0
    (t,) = tangents
    d = _shift(dim, x, lead)
    pieces, start = [], 0
    for o in out:
        size = o.shape[dim % x.dim()]
        pieces.append(t.narrow(d, start, size))
        start += size
    return tuple(pieces)
