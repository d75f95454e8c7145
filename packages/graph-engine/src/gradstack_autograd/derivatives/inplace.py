"""In-place ops without an out-of-place twin: ``zero_``, ``fill_``, ``copy_``, ``setitem_``,
``masked_fill_`` ..."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor
from gradstack_tensor.extension import dispatch
from gradstack_tensor.extension import wrap as _wrap

from .. import _native
from ._formulas import _batch_gather, _is_tensor, _lead, _positions, _sum_all, _zeros
from ._table import jvp, register
from ._tangents import _pad, _put, _tangent_sum
from .arithmetic import (
    _clamp,
    _clamp_jvp,
    _clamp_name,
    _masked_fill,
    _masked_fill_jvp,
    _masked_fill_name,
    _zero_grad_formula,
)
from .batching import (
    _index_items,
    _is_advanced,
    _rank,
    aligned,
    front,
    inplace,
    inplace_error,
    pad,
    random_inplace,
)
from .views import _basic_index, _torch_key, _written_view_key

__all__: list[str] = []


@register("zero_(self)", "ZeroBackward0", inplace_variant=False, batch=inplace)
def _zero_(ctx, grad):
    return (_zeros(grad),)


def _fill_rule(args, bdims):
    if bdims[0] is None:
        raise inplace_error("fill_", args[0].shape)
    x = front(args[0], bdims[0])
    value, vb = args[1], bdims[1]
    if isinstance(value, Tensor) and vb is not None:
        dispatch(OPS["copy_"], (x, pad(front(value, vb), 0, x.dim() - 1)))
    else:
        dispatch(OPS["fill_"], (x, value))
    return args[0], bdims[0]


@register(
    "fill_(self, value)",
    lambda a: "FillBackward3" if _is_tensor(a[1]) else "FillBackward2",
    inputs="self, value",
    inplace_variant=False,
    batch=_fill_rule,
)
def _fill_(ctx, grad):
    return _zeros(grad), (_sum_all(grad, _lead(grad)) if ctx.needs_input_grad[1] else None)


@jvp("fill_", inplace_variant=False)
def _fill_jvp(args, out, tangents, lead):
    tv = tangents[1] if len(tangents) > 1 else None
    return _pad(tv, args[1], out, lead) if tv is not None else None


@register(
    "copy_(self, src)", "CopyBackwards", inputs="self, src", inplace_variant=False, batch=inplace
)
def _copy_(ctx, grad):
    return _zeros(grad), grad


@jvp("copy_", inplace_variant=False)
def _copy_jvp(args, out, tangents, lead):
    ts = tangents[1]
    return _pad(ts, args[1], out, lead) if ts is not None else None


def _setitem_rule(args, bdims):
    x, xb, value, vb = args[0], bdims[0], args[2], bdims[2]
    items, item_bdims = _index_items(args[1], bdims[1])
    if any(b is not None for b in item_bdims):
        return NotImplemented
    if xb is None:
        raise inplace_error("setitem_ (x[index] = value)", x.shape)
    adv = [i for i, it in enumerate(items) if _is_advanced(it)]
    if len(adv) > 1 and adv != list(range(adv[0], adv[-1] + 1)):
        return NotImplemented
    xf = front(x, xb)
    key = (slice(None),) + tuple(items)
    if isinstance(value, Tensor) and vb is not None:
        region = dispatch(OPS["getitem"], (xf, key))
        value = pad(front(value, vb), _rank(value, vb), region.dim() - 1)
    dispatch(OPS["setitem_"], (xf, key, value))
    return x, xb


@register(
    "setitem_(self, indices, values)",
    lambda a: "CopySlices" if _basic_index(a[1]) else "IndexPutBackward0",
    inputs="self, values",
    # (the numpy key, whether it is the whole tensor, the key of the view written into:
    # Note [Backward through a write into overlapping memory] in _views.pyx)
    extra=lambda args, out: (
        _torch_key(args),
        _whole_key(args[1], tuple(args[0].shape)),
        _written_view_key(args[1]),
    ),
    inplace_variant=False,
    batch=_setitem_rule,
)
def _setitem_(ctx, grad):
    key, whole, _ = ctx.extra
    need_self, need_value = ctx.needs_input_grad
    # the written tensor's shape is grad's (input_shape(0) is None when self needs no grad)
    shape = tuple(grad.shape[len(_lead(grad)) :])
    g_self = None
    if need_self and whole:
        # torch's ``x[...] = v``, ``x[:] = v`` is ``x.copy_(v)`` (no view): CopyBackwards'
        # zeros_like, without a graph under create_graph
        g_self = _zeros(grad)
    elif need_self:
        overwritten = np.zeros(shape, dtype=bool)
        overwritten[key] = True
        g_self = gt.where(_wrap(overwritten), 0.0, grad)
    g_value = _batch_gather(grad, key, shape) if need_value else None
    if g_value is not None:
        g_value = _widen_to(g_value, ctx.input_shape(1), _lead(grad))
    return g_self, g_value


@jvp("setitem_", inplace_variant=False)
def _setitem_jvp(args, out, tangents, lead):
    x, value = args[0], args[2]
    t_self, t_value = tangents
    key = _torch_key(args)
    shape = tuple(x.shape)
    overwritten = np.zeros(shape, dtype=bool)
    overwritten[key] = True
    r = gt.where(_wrap(overwritten), 0.0, t_self) if t_self is not None else None
    if t_value is not None:
        pos = _positions(shape, key)
        if lead and value.dim() < pos.ndim:  # Note [Aligning a batch of tangents]
            t_value = t_value.reshape(
                tuple(lead) + (1,) * (pos.ndim - value.dim()) + tuple(value.shape)
            )
        t_value = t_value.expand(tuple(lead) + pos.shape)
        r = _tangent_sum(r, _put(t_value, key, shape, lead))
    return r


def _whole_key(key, shape):
    """Whether torch's indexing of ``key`` makes no view (only Ellipsis and slices of whole
    dims, which torch's applySlicing skips): ``x[key] = v`` is then ``x.copy_(v)``."""
    items = key if isinstance(key, tuple) else (key,)
    if not all(k is Ellipsis or type(k) is slice for k in items):
        return False
    n_ell = sum(k is Ellipsis for k in items)
    if n_ell > 1 or len(items) - n_ell > len(shape):
        return False
    split = next((i for i, k in enumerate(items) if k is Ellipsis), len(items))
    dims = list(range(split)) + list(range(len(shape) - (len(items) - split - 1), len(shape)))
    for k, d in zip((k for k in items if k is not Ellipsis), dims):
        size = shape[d]
        start, stop, step = (
            x if x is None or type(x) is int else "?" for x in (k.start, k.stop, k.step)
        )
        if step not in (None, 1) or start not in (None, 0, -size):
            return False
        if stop is not None and (stop == "?" or stop < size):
            return False
    return True


def _widen_to(g, shape, lead):
    """``g`` (a gradient in the written slice's shape) in ``shape`` when ``shape`` only adds
    leading size-1 dims (``v[None, None, :] = x`` with ``x`` of shape (1, 1, 1, 3)): the
    engine reduces broadcast gradients but cannot add dims back."""
    if shape is None:
        return g
    k = len(shape) - (g.dim() - len(lead))
    if k <= 0 or any(s != 1 for s in shape[:k]):
        return g
    inner = tuple(shape[k:])
    if tuple(g.shape[len(lead) :]) != inner:
        g = _native.sum_to_py(g, inner)
    return g.reshape(tuple(lead) + tuple(shape))


def _masked_fill_inplace_rule(args, bdims):
    if bdims[0] is None:
        raise inplace_error("masked_fill_", args[0].shape)
    value, vb = args[2], bdims[2]
    if isinstance(value, Tensor) and vb is not None:
        rank = _rank(args[0], bdims[0])
        xf = front(args[0], bdims[0])
        mask = aligned(args[1], bdims[1], _rank(args[1], bdims[1]), rank)
        dispatch(
            OPS["copy_"], (xf, dispatch(OPS["where"], (mask, pad(front(value, vb), 0, rank), xf)))
        )
        return args[0], bdims[0]
    return inplace("masked_fill_")(args, bdims)


@register(
    "masked_fill_(self, mask, value)",
    _masked_fill_name,
    inputs="self, value",
    save="mask",
    inplace_variant=False,
    batch=_masked_fill_inplace_rule,
)
def _masked_fill_(ctx, grad):
    return _masked_fill(ctx, grad)


jvp("masked_fill_", inplace_variant=False)(_masked_fill_jvp)


@register(
    "clamp_(self, min, max)",
    _clamp_name,
    inputs="self, min, max",
    save="self, min, max",
    inplace_variant=False,
    batch=inplace,
)
def _clamp_(ctx, grad):
    return _clamp(ctx, grad)


jvp("clamp_", inplace_variant=False)(_clamp_jvp)


for _name in ("uniform_", "normal_"):
    register(
        _name,
        _name.rstrip("_").capitalize() + "Backward0",
        inplace_variant=False,
        batch=random_inplace,
    )(_zero_grad_formula)


@jvp("zero_", "uniform_", "normal_", inplace_variant=False)
def _overwritten_jvp(args, out, tangents, lead):
    """The result does not depend on any input: a tangent of zeros (torch's ``self_t.zero_()``)."""
    return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)
