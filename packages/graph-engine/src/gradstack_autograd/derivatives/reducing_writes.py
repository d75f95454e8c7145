"""Reducing writes: ``scatter_reduce`` and ``index_reduce`` (and their in-place
variants), as torch's ``scatter_reduce_backward`` and ``index_reduce_backward``:

- ``sum``: ``self``'s gradient passes through, ``src``'s is the incoming gradient read
  back at the positions (scatter_reduce only);
- ``mean``: both divided by the count of values combined at each position;
- ``prod``: the product of the others, with torch's care for zeros (a position with one
  zero gives that zero the product of the rest; two zeros give nothing);
- ``amax``/``amin``: the gradient shared evenly between the values equal to the result;
- ``include_self=False``: ``self``'s gradient is zero at the positions written.

The formulas are written with gradstack ops, so they differentiate again.
"""

from __future__ import annotations

import gradstack_tensor as gt

from ._formulas import _lead
from ._table import jvp, register
from .batching import per_sample

__all__: list[str] = []

_PER_SAMPLE = per_sample("a reducing write runs once per sample under vmap")
_ALIASES = {"max": "amax", "min": "amin"}


class _Scattered:
    """The positions of a scatter: combine with ``scatter_add``, read with ``gather``."""

    def __init__(self, dim, index):
        self.dim, self.index = dim, index

    def add(self, base, values):
        return base.scatter_add(self.dim, self.index, values)

    def take(self, t):
        return t.gather(self.dim, self.index)

    def forget(self, g):
        return g.scatter(self.dim, self.index, 0.0)

    def again(self, self_, values, reduce, include_self):
        return self_.scatter_reduce(self.dim, self.index, values, reduce, include_self=include_self)


class _Indexed(_Scattered):
    """The slices of an index op: combine with ``index_add``, read with ``index_select``."""

    def add(self, base, values):
        return base.index_add(self.dim, self.index, values)

    def take(self, t):
        return t.index_select(self.dim, self.index)

    def forget(self, g):
        return g.index_fill(self.dim, self.index, 0)

    def again(self, self_, values, reduce, include_self):
        return self_.index_reduce(self.dim, self.index, values, reduce, include_self=include_self)


def _reduced_grads(at, grad, self_, src, reduce, include_self, result, needs):
    """torch's ``*_reduce_backward``: the gradients of ``self`` and of the values."""
    reduce = _ALIASES.get(reduce, reduce)
    need_self, need_src = needs
    g_self = g_src = None
    if reduce == "sum":
        g_self, g_src = grad, (at.take(grad) if need_src else None)
    elif reduce == "mean":
        n = gt.ones_like(grad) if include_self else gt.zeros_like(grad)
        n = at.add(n, gt.ones_like(src))
        n = n.masked_fill(n == 0, 1)
        g_self = grad / n
        if need_src:
            g_src = at.take(grad) / at.take(n)
    elif reduce == "prod":
        if need_self:
            masked_self = self_.masked_fill(self_ == 0, 1)
            masked_self_result = at.again(masked_self, src, reduce, include_self)
            g_self = grad * masked_self_result / masked_self
        if need_src:
            src_zero = src == 0
            src_num_zeros = at.take(at.add(gt.zeros_like(self_), src_zero.to(self_.dtype)))
            src_single_zero = src_zero & (src_num_zeros == 1)
            masked_src = src.masked_fill(src_single_zero, 1)
            masked_src_result = at.again(self_, masked_src, reduce, include_self)
            g_src = gt.where(
                src_single_zero,
                at.take(grad * masked_src_result),
                at.take(grad * result) / src.masked_fill(src_zero, 1),
            )
    else:  # amax, amin: shared evenly between the values equal to the result
        value = at.take(result)
        self_is_result = (self_ == result).to(self_.dtype)
        src_is_result = (src == value).to(self_.dtype)
        distributed = grad / at.add(self_is_result, src_is_result)
        g_self = self_is_result * distributed
        if need_src:
            g_src = src_is_result * at.take(distributed)
    if need_self and not include_self:
        g_self = at.forget(g_self)
    return (g_self if need_self else None), g_src


def _per_row(formula, grad, needs):
    """``formula(grad)``, or in a batched backward (Note [Batched formulas]) the formula of
    each row of the batch, stacked."""
    lead = _lead(grad)
    if not lead:
        return formula(grad)
    rows = [formula(grad[i]) for i in range(lead[0])]
    return tuple(gt.stack([r[j] for r in rows]) if need else None for j, need in enumerate(needs))


def _saved(ctx, *names):
    return tuple(ctx.saved_value(n) for n in names)


@register(
    "scatter_reduce(self, dim, index, src, reduce, include_self)",
    "ScatterReduceBackward0",
    inputs="self, src",
    save="self, dim, index, src, reduce, include_self, result",
    batch=_PER_SAMPLE,
)
def _scatter_reduce(ctx, grad):
    self_, dim, index, src, reduce, include_self, result = _saved(
        ctx, "self", "dim", "index", "src", "reduce", "include_self", "result"
    )
    at, needs = _Scattered(dim, index), ctx.needs_input_grad
    return _per_row(
        lambda g: _reduced_grads(at, g, self_, src, reduce, include_self, result, needs),
        grad,
        needs,
    )


@register(
    "index_reduce(self, dim, index, source, reduce, include_self)",
    "IndexReduceBackward0",
    inputs="self, source",
    save="self, dim, index, source, reduce, include_self, result",
    batch=_PER_SAMPLE,
)
def _index_reduce(ctx, grad):
    self_, dim, index, source, reduce, include_self, result = _saved(
        ctx, "self", "dim", "index", "source", "reduce", "include_self", "result"
    )
    at, needs = _Indexed(dim, index), ctx.needs_input_grad
    return _per_row(
        lambda g: _reduced_grads(at, g, self_, source, reduce, include_self, result, needs),
        grad,
        needs,
    )


def _reduced_jvp(at, args, out, tangents, lead):
    """The forward formula: each tangent times its local derivative (the backward's
    formulas for an incoming gradient of ones), combined at the positions written."""
    self_, src, reduce, include_self = args[0], args[3], args[4], args[5]
    t_self, t_src = tangents
    if lead:  # batched tangents: one sample at a time
        n = 1
        for k in lead:
            n *= k
        flat = [None if t is None else t.reshape((n,) + tuple(t.shape[len(lead):]))
                for t in tangents]  # fmt: skip
        rows = [
            _reduced_jvp(at, args, out, tuple(None if t is None else t[i] for t in flat), ())
            for i in range(n)
        ]
        return gt.stack(rows).reshape(tuple(lead) + tuple(out.shape))
    needs = (t_self is not None, t_src is not None)
    local_self, local_src = _reduced_grads(
        at, gt.ones_like(out), self_, src, reduce, include_self, out, needs
    )
    r = gt.zeros_like(out) if t_self is None else t_self * local_self
    if t_src is not None:
        if isinstance(at, _Indexed):
            cut = t_src
        else:
            cut = t_src[tuple(slice(0, k) for k in at.index.shape)] if t_src.dim() else t_src
        r = at.add(r, cut * local_src)
    return r


@jvp("scatter_reduce")
def _scatter_reduce_jvp(args, out, tangents, lead):
    return _reduced_jvp(_Scattered(args[1], args[2]), args, out, tangents, lead)


@jvp("index_reduce")
def _index_reduce_jvp(args, out, tangents, lead):
    return _reduced_jvp(_Indexed(args[1], args[2]), args, out, tangents, lead)
