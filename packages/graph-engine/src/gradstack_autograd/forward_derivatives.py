"""Forward-mode (JVP) formulas: the tangent of each op's output from its inputs' tangents.

Each ``@jvp(op_name)`` formula sets ``OPS[op_name].derivative.jvp`` (and its in-place
variant's, when the op has one) and is called by ``forward_ad`` as
``formula(args, out, tangents, lead)``:

- ``args``: the op's arguments (for an in-place op, ``args[0]`` is ``self`` *before* the
  write);
- ``out``: the op's result (a tuple for ops with several outputs);
- ``tangents``: one per differentiable input of the derivative-table entry (per element of
  the list for ``cat``/``stack``), None for a zero tangent;
- ``lead``: the batch prefix every tangent carries, ``()`` normally, ``(batch,)`` for
  batched tangents (Note [Batched tangents] in ``forward_ad``).

It returns the output's tangent (broadcastable to ``lead + out.shape``; forward_ad expands
and casts it), None for a zero tangent, or a tuple with one entry per output.

Note [Tangents are computed with gradstack ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As the backward formulas (derivatives.py), so that a tangent computed with grad mode on is
part of the graph and can be differentiated backward again.  Many formulas are the
backward formula's transpose: ``t * cos(x)`` for sin, ``t @ b + a @ t_b`` for matmul.

Note [Aligning a batch of tangents]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tangent has its input's shape, which for broadcasting ops may have fewer dims than the
output: unbatched that broadcasts as numpy does, but with a batch prefix ``(B,) + (3,)``
against ``(2, 3)`` would pair B with 2.  ``_pad`` inserts the missing unit dims after the
prefix first.  Dims given to an op (sum's ``dim``, transpose's ...) are shifted past the
prefix with ``_shift``.

Every differentiable op of the derivative table has a formula here or a reason in
``NO_JVP``; a test fails otherwise.
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from .derivatives import (
    _along_axis_key,
    _detached,
    _getitem_np,
    _positions,
    _prod_of_others,
    _reduced_count,
    _torch_key,
    index_scatter,
    norm_order,
    var_backward,
)

__all__ = ["jvp", "NO_JVP"]

# ops that are differentiable backward but have no forward formula, with the reason
NO_JVP: dict[str, str] = {
    name: "torch has no derivative for floor_divide (Note [floor_divide has no derivative] "
    "in derivatives.py)"
    for name in ("floor_divide", "floor_divide_")
}


def jvp(*op_names, inplace_variant=True):
    """Decorator setting the forward formula of ``op_names`` (and of their ``_`` variants)."""

    def deco(formula):
        for name in op_names:
            op = OPS.get(name)
            if op is None or op.derivative is None:
                continue  # not in this build's registry: the coverage test tells
            op.derivative.jvp = formula
            inplace = OPS.get(name + "_")
            if (
                inplace_variant
                and inplace is not None
                and inplace.inplace
                and inplace.derivative is not None
            ):
                inplace.derivative.jvp = formula
        return formula

    return deco


# -------------------------------------------------------------------------------------
# helpers


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


def _add(a, b):
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


def _zeros(lead, like):
    return gt.zeros(tuple(lead) + tuple(like.shape), dtype=like.dtype)


def _mask(cond, dtype):
    return cond.to(dtype)


# -------------------------------------------------------------------------------------
# arithmetic


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
        r = _add(r, tb if db is None else tb * db(a, b, out))
    return r


@jvp("add")
def _add_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1
    return _binary(args, out, tangents, lead, None, None if alpha == 1 else (lambda a, b, o: alpha))


@jvp("sub")
def _sub_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1
    return _binary(args, out, tangents, lead, None, lambda a, b, o: -alpha)


@jvp("rsub")
def _rsub_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1  # out = other - alpha * input
    return _binary(args, out, tangents, lead, lambda a, b, o: -alpha, None)


@jvp("mul")
def _mul_jvp(args, out, tangents, lead):
    return _binary(args, out, tangents, lead, lambda a, b, o: b, lambda a, b, o: a)


@jvp("div")
def _div_jvp(args, out, tangents, lead):
    # d(a/b) = t_a / b - t_b * (a/b) / b
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        r = _pad(ta, a, out, lead) / b
    if tb is not None:
        r = _add(r, -_pad(tb, b, out, lead) * out / b)
    return r


@jvp("pow")
def _pow_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        ta = _pad(ta, a, out, lead)
        if isinstance(b, Tensor):
            r = gt.where(b == 0, 0.0, ta * (b * a.pow(b - 1)))
        elif b == 0:
            r = gt.zeros_like(ta)  # torch's zeros, not ta * 0 (Note [Masks select, never multiply])
        else:
            r = ta * (b * a.pow(b - 1))
    if tb is not None:
        tb = _pad(tb, b, out, lead)
        base = a if isinstance(a, Tensor) else gt.full((), float(a), dtype=out.dtype)
        # d/db a**b = a**b log(a); torch masks a == 0 (with b >= 0) to 0, then multiplies
        r = _add(r, tb * gt.where((base == 0) & (b >= 0), 0.0, out * base.log()))
    return r


def _unary(coefficient):
    """The formula ``t * coefficient(x, out)`` of an elementwise op of one argument."""

    def formula(args, out, tangents, lead):
        (t,) = tangents
        return t * coefficient(args[0], out)

    formula.__name__ = f"_jvp_{coefficient.__name__}"
    return formula


_UNARY = {
    "abs": lambda x, o: x.sign(),
    "exp": lambda x, o: o,
    "exp2": lambda x, o: o * math.log(2.0),
    "expm1": lambda x, o: o + 1,
    "log": lambda x, o: x.reciprocal(),
    "log2": lambda x, o: (x * math.log(2.0)).reciprocal(),
    "log10": lambda x, o: (x * math.log(10.0)).reciprocal(),
    "log1p": lambda x, o: (x + 1).reciprocal(),
    "sqrt": lambda x, o: (2 * o).reciprocal(),
    "rsqrt": lambda x, o: -0.5 * o * o * o,
    "reciprocal": lambda x, o: -(o * o),
    "sin": lambda x, o: x.cos(),
    "cos": lambda x, o: -x.sin(),
    "tan": lambda x, o: 1 + o * o,
    "asin": lambda x, o: (1 - x * x).rsqrt(),
    "acos": lambda x, o: -(1 - x * x).rsqrt(),
    "atan": lambda x, o: (1 + x * x).reciprocal(),
    "sinh": lambda x, o: x.cosh(),
    "cosh": lambda x, o: x.sinh(),
    "tanh": lambda x, o: 1 - o * o,
    "sigmoid": lambda x, o: o * (1 - o),
}
for _name, _coefficient in _UNARY.items():
    _coefficient.__name__ = _name
    jvp(_name)(_unary(_coefficient))


@jvp("neg")
def _neg_jvp(args, out, tangents, lead):
    return -tangents[0]


@jvp("relu")
def _relu_jvp(args, out, tangents, lead):
    return gt.where(out <= 0, 0.0, tangents[0])  # torch's threshold_backward of the tangent


@jvp("sign", "floor", "ceil", "round", "trunc")
def _zero_jvp(args, out, tangents, lead):
    """Piecewise-constant ops: a tangent of zeros (as torch's zeros_like, not None, so that
    later ops see zeros: derivatives.ZERO_GRADIENT)."""
    return gt.zeros_like(tangents[0])


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


@jvp("maximum")
def _maximum_jvp(args, out, tangents, lead):
    return _extreme_jvp_of(args, out, tangents, lead, lambda a, b: a > b)


@jvp("minimum")
def _minimum_jvp(args, out, tangents, lead):
    return _extreme_jvp_of(args, out, tangents, lead, lambda a, b: a < b)


@jvp("remainder")
def _remainder_jvp(args, out, tangents, lead):
    return _binary(
        args,
        out,
        tangents,
        lead,
        None,
        lambda a, b, o: -gt.floor_divide(_detached(a), _detached(b)),
    )


@jvp("erf")
def _erf_jvp(args, out, tangents, lead):
    x = args[0]
    return tangents[0] * ((2.0 / math.sqrt(math.pi)) * (-(x.pow(2))).exp())


@jvp("erfinv")
def _erfinv_jvp(args, out, tangents, lead):
    return tangents[0] * (0.5 * math.sqrt(math.pi) * out.pow(2).exp())


@jvp("div_rounding")
def _div_rounding_jvp(args, out, tangents, lead):
    """``div(a, b, rounding_mode=...)``: a tangent of zeros, as its zero gradients."""
    return _binary(
        args,
        out,
        tangents,
        lead,
        lambda a, b, o: gt.zeros_like(o),
        lambda a, b, o: gt.zeros_like(o),
    )


@jvp("atan2")
def _atan2_jvp(args, out, tangents, lead):
    return _binary(
        args,
        out,
        tangents,
        lead,
        lambda a, b, o: b / (a * a + b * b),
        lambda a, b, o: -a / (a * a + b * b),
    )


@jvp("clamp")
def _clamp_jvp(args, out, tangents, lead):
    """Number bounds: torch's clamp_backward of the tangent (``where`` on ``[lo, hi]``).
    Tensor bounds: torch's clamp_jvp, which picks one tangent per element (note: at a tie
    ``x == lo`` it picks ``lo``'s, unlike the backward formula; torch does the same)."""
    x = args[0]
    lo = args[1] if len(args) > 1 else None
    hi = args[2] if len(args) > 2 else None
    tx, tlo, thi = (tuple(tangents) + (None, None, None))[:3]
    if not (isinstance(lo, Tensor) or isinstance(hi, Tensor)):
        if tx is None:
            return None
        keep = gt.ones_like(x, dtype=gt.bool)
        if lo is not None:
            keep = keep & (x >= lo)
        if hi is not None:
            keep = keep & (x <= hi)
        return gt.where(keep, _pad(tx, x, out, lead), 0.0)
    if tx is None and tlo is None and thi is None:
        return None

    def tangent(t, primal):
        return _pad(t, primal, out, lead) if t is not None else 0.0

    t_x, t_lo, t_hi = tangent(tx, x), tangent(tlo, lo), tangent(thi, hi)
    if lo is not None and hi is not None:
        inner = gt.where(x < lo, t_lo, gt.where(x > hi, t_hi, t_x))
        return gt.where(lo > hi, t_hi, inner)
    if lo is not None:
        return gt.where(x > lo, t_x, t_lo)
    return gt.where(x < hi, t_x, t_hi)


@jvp("where")
def _where_jvp(args, out, tangents, lead):
    cond, a, b = args[0], args[1], args[2]
    ta, tb = tangents
    ta = _pad(ta, a, out, lead) if ta is not None else 0.0
    tb = _pad(tb, b, out, lead) if tb is not None else 0.0
    return gt.where(cond, ta, tb)


@jvp("masked_fill")
def _masked_fill_jvp(args, out, tangents, lead):
    x, mask, value = args[0], args[1], args[2]
    tx, tv = tangents
    r = None
    if tx is not None:
        r = _pad(tx, x, out, lead).masked_fill(mask, 0.0)
    if tv is not None:
        r = _add(r, gt.where(mask, _pad(tv, value, out, lead), 0.0))
    return r


# -------------------------------------------------------------------------------------
# reductions


@jvp("sum")
def _sum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    return _sum_over(tangents[0], _reduced(dim, x, lead), keepdim)


@jvp("mean")
def _mean_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    dims = _reduced(dim, x, lead)
    return (
        _sum_over(tangents[0], dims, keepdim) / max(_reduced_count(tuple(x.shape), dim), 1)
        if dims
        else tangents[0]
    )


@jvp("prod")
def _prod_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    (t,) = tangents
    if x.dim() == 0:
        return t
    if not bool((x == 0).any()):
        partial = _keepdims(out, x, dim, keepdim) / x
    else:
        partial = _prod_of_others(x, dim)  # Note [prod's gradient with zeros]
    return _sum_over(t * partial, _reduced(dim, x, lead), keepdim)


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


jvp("max", "min")(_extreme_jvp)


@jvp("amax", "amin")
def _amax_jvp(args, out, tangents, lead):
    """torch's amaxamin_jvp: ``where(mask, t, 0).sum(dim) / mask.sum(dim)``."""
    x, dim = args[0], args[1] if len(args) > 1 else ()
    keepdim = args[2] if len(args) > 2 else False
    mask = x == _keepdims(out, x, dim, keepdim)
    dims = _reduced(dim, x, lead)
    count = mask.sum(_reduced(dim, x, ()), keepdim=keepdim) if dims else mask
    return _sum_over(gt.where(mask, tangents[0], 0.0), dims, keepdim) / count


def _var_tangent(args, t, lead):
    """torch's var_jvp: var's backward formula of the tangent (keepdim), summed over the
    reduced dims (so ``n <= correction`` gives torch's inf/nan, not a Python error)."""
    x, dim, correction, keepdim = args[0], args[1], args[2], args[3]
    per_element = var_backward(t, x, dim, correction, True, lead)
    return _sum_over(per_element, _reduced(dim, x, lead), keepdim)


@jvp("var")
def _var_jvp(args, out, tangents, lead):
    return _var_tangent(args, tangents[0], lead)


@jvp("std")
def _std_jvp(args, out, tangents, lead):
    # torch: var_jvp / (2 std), 0 where std is 0
    return (_var_tangent(args, tangents[0], lead) / (out * 2)).masked_fill(out == 0, 0.0)


@jvp("norm")
def _norm_jvp(args, out, tangents, lead):
    x, p = args[0], args[1] if len(args) > 1 else "fro"
    dim = args[2] if len(args) > 2 else None
    keepdim = args[3] if len(args) > 3 else False
    (t,) = tangents
    p = norm_order(p)
    dims = _reduced(dim, x, lead)
    if p == 0:
        return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)  # torch's zeros
    if p == 1:
        return _sum_over(x.sign() * t, dims, keepdim)
    if p == 2:
        return (_sum_over(x * t, dims, keepdim) / out).masked_fill(out == 0, 0.0)
    if math.isinf(p):
        # torch's norm_jvp: the elements at the norm share the tangent (NaNs with a NaN norm)
        o = _keepdims(out, x, dim, keepdim)
        a = x.abs()
        at_norm = _mask((a == o) | ((x != x) & (o != o)), out.dtype)
        count = at_norm.sum(_reduced(dim, x, ()), keepdim=True) if dims else at_norm
        return _sum_over(x.sign() * t * at_norm / count, dims, keepdim)
    if p < 1:
        weight = x.abs().pow(p - 1).masked_fill(x == 0, 0.0)
        return _sum_over(weight * (x.sign() * t), dims, keepdim) * out.pow(1 - p)
    weight = x.abs().pow(p - 1) * x.sign() if p < 2 else x.abs().pow(p - 2) * x
    return (_sum_over(weight * t, dims, keepdim) / out.pow(p - 1)).masked_fill(out == 0, 0.0)


@jvp("logsumexp")
def _logsumexp_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    keepdim = args[2] if len(args) > 2 else False
    weights = (x - _keepdims(out, x, dim, keepdim)).exp()
    return _sum_over(tangents[0] * weights, _reduced(dim, x, lead), keepdim)


@jvp("softmax")
def _softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return out * (t - (t * out).sum(d, keepdim=True))


@jvp("log_softmax")
def _log_softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return t - (t * out.exp()).sum(d, keepdim=True)


@jvp("cumsum")
def _cumsum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    return t if x.dim() == 0 else t.cumsum(_shift(dim, x, lead))


# -------------------------------------------------------------------------------------
# linear algebra


def _matmul_left(ta, a, b, lead):
    """``ta @ b`` where ``ta`` is the (batched) tangent of ``a``: torch's matmul shapes."""
    if not lead:
        return ta @ b
    row = a.dim() == 1
    col = b.dim() == 1
    ta = ta.unsqueeze(-2) if row else ta
    bb = b.unsqueeze(-1) if col else b
    a_batch, b_batch = max(a.dim(), 2) - 2, bb.dim() - 2
    if b_batch > a_batch:
        shape = tuple(ta.shape)
        ta = ta.reshape(shape[: len(lead)] + (1,) * (b_batch - a_batch) + shape[len(lead) :])
    r = ta @ bb
    if row:
        r = r.squeeze(-2)
    return r.squeeze(-1) if col else r


def _matmul_right(a, tb, b, lead):
    """``a @ tb`` where ``tb`` is the (batched) tangent of ``b``: torch's matmul shapes."""
    if not lead:
        return a @ tb
    row = a.dim() == 1
    col = b.dim() == 1
    aa = a.unsqueeze(-2) if row else a
    tb = tb.unsqueeze(-1) if col else tb
    a_batch, b_batch = aa.dim() - 2, max(b.dim(), 2) - 2
    if a_batch > b_batch:
        shape = tuple(tb.shape)
        tb = tb.reshape(shape[: len(lead)] + (1,) * (a_batch - b_batch) + shape[len(lead) :])
    r = aa @ tb
    if row:
        r = r.squeeze(-2)
    return r.squeeze(-1) if col else r


@jvp("matmul", "mm", "bmm")
def _matmul_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = _matmul_left(ta, a, b, lead) if ta is not None else None
    return _add(r, _matmul_right(a, tb, b, lead) if tb is not None else None)


@jvp("mv")
def _mv_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta @ b if ta is not None else None
    if tb is not None:
        r = _add(r, tb @ a.t() if lead else a.mv(tb))
    return r


@jvp("dot")
def _dot_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = (ta * b).sum(-1) if ta is not None else None
    return _add(r, (a * tb).sum(-1) if tb is not None else None)


@jvp("outer")
def _outer_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta.unsqueeze(-1) * b if ta is not None else None
    return _add(r, a.unsqueeze(-1) * tb.unsqueeze(-2) if tb is not None else None)


@jvp("addmm")
def _addmm_jvp(args, out, tangents, lead):
    inp, m1, m2 = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    t_in, t1, t2 = tangents
    r = None
    if t_in is not None:
        t_in = _pad(t_in, inp, out, lead)
        r = t_in if beta == 1 else t_in * beta
    prod = _add(t1 @ m2 if t1 is not None else None, m1 @ t2 if t2 is not None else None)
    if prod is not None:
        r = _add(r, prod if alpha == 1 else prod * alpha)
    return r


@jvp("trace")
def _trace_jvp(args, out, tangents, lead):
    x = args[0]
    rows = np.arange(min(x.shape))
    return _take(tangents[0], (rows, rows), tuple(x.shape), lead).sum(-1)  # the diagonal


@jvp("tril")
def _tril_jvp(args, out, tangents, lead):
    return tangents[0].tril(args[1] if len(args) > 1 else 0)


@jvp("triu")
def _triu_jvp(args, out, tangents, lead):
    return tangents[0].triu(args[1] if len(args) > 1 else 0)


@jvp("diag")
def _diag_jvp(args, out, tangents, lead):
    x, k = args[0], args[1] if len(args) > 1 else 0
    (t,) = tangents
    if x.dim() == 1:
        if not lead:
            return t.diag(k)
        rows = np.arange(x.shape[0]) + max(0, -k)
        return _put(t, (rows, rows + k), tuple(out.shape), lead)
    rows = np.arange(out.shape[0]) + max(0, -k)
    return _take(t, (rows, rows + k), tuple(x.shape), lead)


# -------------------------------------------------------------------------------------
# indexing, views and shape


@jvp("getitem")
def _getitem_jvp(args, out, tangents, lead):
    (t,) = tangents
    if not lead:
        return gt.dispatch(OPS["getitem"], (t, args[1]))
    return _take(t, _torch_key(args), tuple(args[0].shape), lead)


@jvp("_index_scatter")
def _index_scatter_jvp(args, out, tangents, lead):
    return _put(tangents[0], args[1], args[2], lead)


@jvp("view", "reshape", "flatten", "squeeze", "unsqueeze")
def _reshape_jvp(args, out, tangents, lead):
    return tangents[0].reshape(tuple(lead) + tuple(out.shape))


@jvp("transpose")
def _transpose_jvp(args, out, tangents, lead):
    x, (t,) = args[0], tangents
    if x.dim() == 0:
        return t
    return t.transpose(_shift(args[1], x, lead), _shift(args[2], x, lead))


@jvp("t")
def _t_jvp(args, out, tangents, lead):
    (t,) = tangents
    return t.transpose(-1, -2) if args[0].dim() == 2 else t


@jvp("permute")
def _permute_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    nl = len(lead)
    return tangents[0].permute((*range(nl), *(d % x.dim() + nl for d in dims)))


@jvp("expand", "expand_as")
def _expand_jvp(args, out, tangents, lead):
    return _pad(tangents[0], args[0], out, lead).expand(tuple(lead) + tuple(out.shape))


@jvp("alias", "clone", "contiguous", "to_dtype")
def _identity_jvp(args, out, tangents, lead):
    return tangents[0]  # to_dtype: forward_ad casts the tangent to the output's dtype


@jvp("narrow")
def _narrow_jvp(args, out, tangents, lead):
    x, dim, start, length = args[0], args[1], args[2], args[3]
    return tangents[0].narrow(_shift(dim, x, lead), start, length)


@jvp("select")
def _select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    return tangents[0].select(_shift(dim, x, lead), index)


@jvp("index_select")
def _index_select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        return tangents[0]
    return tangents[0].index_select(_shift(dim, x, lead), index)


@jvp("gather")
def _gather_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        t = tangents[0].reshape(tuple(lead) + (1,) * index.dim())
        return t.expand(tuple(lead) + tuple(index.shape))
    if not lead:
        return tangents[0].gather(dim, index)
    return _take(tangents[0], _along_axis_key(_data(index), dim % x.dim()), tuple(x.shape), lead)


def _sorted_jvp(dim_position):
    def formula(args, out, tangents, lead):
        x = args[0]
        dim = args[dim_position] if len(args) > dim_position else -1
        (t,) = tangents
        if x.dim() == 0:
            return (t, None)
        return (_along(t, x, out[1], dim, True, lead), None)

    return formula


jvp("sort")(_sorted_jvp(1))
jvp("topk")(_sorted_jvp(2))


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


jvp("split", "chunk")(_pieces_jvp)


@jvp("unbind")
def _unbind_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else 0
    return tuple(tangents[0].unbind(_shift(dim, x, lead)))


@jvp("cat")
def _cat_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = []
    for x, t in zip(seq, tangents):
        if x.dim() == 1 and x.shape[0] == 0 and out.dim() > 1:
            continue  # cat skips legacy empty 1-D tensors
        parts.append(t if t is not None else _zeros(lead, x).to(out.dtype))
    return gt.cat(parts, dim % out.dim() + len(lead))


@jvp("stack")
def _stack_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = [t if t is not None else _zeros(lead, x).to(out.dtype) for x, t in zip(seq, tangents)]
    return gt.stack(parts, dim % out.dim() + len(lead))


@jvp("repeat")
def _repeat_jvp(args, out, tangents, lead):
    x, sizes = args[0], tuple(args[1])
    t = tangents[0]
    if lead:
        t = t.reshape(tuple(lead) + (1,) * (len(sizes) - x.dim()) + tuple(x.shape))
    return t.repeat(*((1,) * len(lead) + sizes))


@jvp("flip")
def _flip_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    return tangents[0].flip(*(_shift(d, x, lead) for d in dims))


# -------------------------------------------------------------------------------------
# in-place ops without an out-of-place twin (args[0] is self before the write)


@jvp("zero_", "uniform_", "normal_", inplace_variant=False)
def _overwritten_jvp(args, out, tangents, lead):
    """The result does not depend on any input: a tangent of zeros (torch's ``self_t.zero_()``)."""
    return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)


@jvp("fill_", inplace_variant=False)
def _fill_jvp(args, out, tangents, lead):
    tv = tangents[1] if len(tangents) > 1 else None
    return _pad(tv, args[1], out, lead) if tv is not None else None


@jvp("copy_", inplace_variant=False)
def _copy_jvp(args, out, tangents, lead):
    ts = tangents[1]
    return _pad(ts, args[1], out, lead) if ts is not None else None


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
        r = _add(r, _put(t_value, key, shape, lead))
    return r


jvp("masked_fill_", inplace_variant=False)(_masked_fill_jvp)
jvp("clamp_", inplace_variant=False)(_clamp_jvp)
