"""Reductions and ops along a dim: sum, mean, prod, max/min, var/std, norm, softmax, cumsum."""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import dispatch
from gradstack_tensor.extension import wrap as _wrap
from gradstack_tensor.kernels import softmax_backward as _softmax_backward_kernel

from .. import _grad_mode as _modes
from ._formulas import (
    _dim_after,
    _expand_reduced,
    _first_order_arrays,
    _grad_mode,
    _keep,
    _kernel_arrays,
    _lead,
    _reduced_count,
    refuse_undifferentiable_result,
    scatter_along,
    var_backward,
)
from ._shown import (
    compose,
    dim_list,
    selection,
    uint_dims,
    vector_norm,
    whole_or_dim,
    whole_or_dim_list,
)
from ._table import jvp, register
from ._tangents import _extreme_jvp, _keepdims, _mask, _reduced, _shift, _sum_over, _var_tangent
from ._wirtinger import holomorphic
from .batching import _arg, _dims_arg, along_dim, front, max_min, reduction, var_std

__all__: list[str] = []


def _sum_name(args):
    return "SumBackward0" if args[1] is None else "SumBackward1"  # sum(x, ()): Backward1


def _differentiable_dtype(name, position):
    """An ``extra=`` check at record time: torch refuses a reduction whose ``dtype=`` (the
    argument at ``position``) makes the result of a tensor that requires grad an integer
    ("Autograd not support dtype")."""

    def check(args, out):
        if len(args) > position and args[position] is not None:
            refuse_undifferentiable_result(out)
        return None

    check.__name__ = f"_{name}_dtype_check"
    return check


@register(
    "sum(self, dim, keepdim, dtype)",
    _sum_name,
    save="dim, keepdim",
    sizes="self",
    extra=_differentiable_dtype("sum", 3),
    batch=reduction,
    shown=whole_or_dim_list(),
    keeps_zero={"SumBackward0": "self"},
)
def _sum(ctx, grad):
    dim, keepdim = ctx.saved_value("dim"), ctx.saved_value("keepdim")
    return (_expand_reduced(grad, ctx.input_shape(0), dim, keepdim, _lead(grad)),)


@jvp("sum")
def _sum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    return _sum_over(tangents[0], _reduced(dim, x, lead), keepdim)


def _mean_name(args):
    return "MeanBackward0" if args[1] is None else "MeanBackward1"


@register(
    "mean(self, dim, keepdim, dtype)",
    _mean_name,
    save="dim, keepdim",
    sizes="self",
    batch=reduction,
    shown=whole_or_dim_list(numel=True),
)
def _mean(ctx, grad):
    dim, keepdim = ctx.saved_value("dim"), ctx.saved_value("keepdim")
    shape = ctx.input_shape(0)
    return (_expand_reduced(grad, shape, dim, keepdim, _lead(grad)) / _reduced_count(shape, dim),)


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


@register(
    "prod(self, dim, keepdim, dtype)",
    lambda a: "ProdBackward0" if a[1] is None else "ProdBackward1",
    save="self, dim, keepdim, result",
    extra=_differentiable_dtype("prod", 3),
    batch=reduction,
    shown=compose(whole_or_dim(), uint_dims("dim")),
)
@holomorphic
def _prod(ctx, grad):
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)
    lead = _lead(grad)
    g = _keep(grad, shape, dim, keepdim, lead)
    zeros = int((x == 0).sum())
    if not zeros:
        return (g * (_keep(out, shape, dim, keepdim) / x),)
    if dim is None and zeros > 1 and not _grad_mode():
        # two zeros: every partial product is 0 (torch returns zeros, not grad * 0)
        return (gt.zeros(lead + tuple(shape), dtype=grad.dtype),)
    if (x.numel() if dim is None else shape[dim % len(shape)]) == 1:
        # torch's prod_safe_zeros_backward: a slice of one element passes grad through
        # (no graph to x under create_graph)
        return (g,)
    # with zeros, no division: d prod / d x_i is the product of the others, in the
    # product's dtype (torch casts the input first: a float16 input of prod(dtype=float32)
    # overflowed to inf * 0 = NaN in half; fuzz seed 8 #6205)
    if x.dtype != out.dtype:
        x = x.to(out.dtype)
    if not _grad_mode() and not _modes.forward_ad_enabled():
        # first order, no tangents through backward: torch's exclusive cumprods, O(n)
        return (g * gt.from_numpy(_prod_of_others_array(_data(x), dim)),)
    others = _prod_of_others(x, dim)
    # where torch's exclusive cumprods overflow (inf, or inf * 0 = NaN) and the product of
    # the others does not, or the reverse, torch's value stands, as a constant (fuzz seed
    # 14 #18785: float16 under create_graph)
    theirs = _prod_of_others_array(_data(x), dim)
    finite = np.isfinite(theirs)
    differ = finite != np.isfinite(_data(others))
    if differ.any():
        others = gt.where(gt.from_numpy(differ), gt.from_numpy(theirs), others)
    return (g * others,)


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


# torch's cumprod accumulates in its CPU acc_type (float for half, double for float)
_CUMPROD_ACC = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64}


def _prod_of_others_array(x, dim):
    """For each element, the product of the others of its slice along ``dim`` (all of
    ``x`` for None), as torch's ``prod_safe_zeros_backward`` computes it: the product of
    the exclusive cumulative products from the left and from the right.

    Note [prod's first-order gradient with zeros]
    The exclusive cumprods take O(n) memory, where the (n, n) product of
    :func:`_prod_of_others` (kept for ``create_graph``, which needs ops that differentiate
    again) takes O(n^2): a slice of 10^5 elements with a zero asked for 10^10.  The
    order of the products is torch's too, so an overflow lands where torch's does: with
    a float16 slice ``[300] * 300 + [0]`` the elements before the zero see the zero first
    from the right, 0, not inf * 0 (fuzz seed 9 #7329).
    """
    if dim is None:
        return _prod_of_others_array(x.reshape(-1), 0).reshape(x.shape)
    xa = np.moveaxis(x, dim % x.ndim, -1)
    acc = _CUMPROD_ACC.get(xa.dtype, xa.dtype)
    ones = np.ones(xa.shape[:-1] + (1,), dtype=acc)
    left = np.concatenate([ones, xa[..., :-1].astype(acc)], -1)
    right = np.concatenate([ones, xa[..., :0:-1].astype(acc)], -1)
    with np.errstate(over="ignore", invalid="ignore"):
        left = np.cumprod(left, -1).astype(xa.dtype)
        right = np.cumprod(right, -1)[..., ::-1].astype(xa.dtype)
        return np.ascontiguousarray(np.moveaxis(left * right, -1, dim % x.ndim))


def _prod_of_others(x, dim):
    """For each element, the product of the other elements of its slice along ``dim``.

    Note [prod's gradient with zeros]
    ``out / x`` is 0/0 where x is zero.  The product of the others, computed as a product
    over an (n, n) broadcast with ones on the diagonal, is exact and made of ops that
    differentiate again (torch gets the same from exclusive cumprods), so second
    derivatives are right too: d2 prod(a, b, 0)/db dz = a, not 0.
    """
    if dim is None:
        return _prod_of_others(x.reshape(-1), 0).reshape(x.shape)
    if x.dtype in (gt.float16, gt.bfloat16):
        # in float32, as torch's cumprods accumulate: products of the others that pass
        # 65504 on the way are not inf * 0 = NaN at a zero (fuzz seed 14 #18785)
        return _prod_of_others(x.to(gt.float32), dim).to(x.dtype)
    axis = dim % x.dim()
    xt = x.transpose(axis, -1)
    n = xt.shape[-1]
    rows = xt.unsqueeze(-2).expand((*xt.shape[:-1], n, n))
    others = gt.where(gt.eye(n, dtype=gt.bool), 1.0, rows).prod(-1)
    return others.transpose(axis, -1)


def _selected_indices(args, out):
    """The indices a selecting op chose (a copy, kept by the node).

    Note [Selections keep their indices, not their values]
    As torch's MaxBackward0/SortBackward0/TopkBackward0, the node needs the indices only:
    saving the values (the op's output) would make an in-place write to them, legal in
    torch, fail backward's version check.
    """
    return _data(out[1]).copy() if isinstance(out, tuple) else None


def _over_everything(args):
    """max/min without ``dim`` (torch's MaxBackward1 saves ``self``; with a dim, the node
    keeps the indices only, so writing the input in place afterwards is fine)."""
    return len(args) < 2 or args[1] is None


def _extreme(ctx, grad, grad_indices=None):
    return _extreme_backward(ctx, grad)


for _name, _node in (("max", "Max"), ("min", "Min")):
    register(
        f"{_name}(self, dim, keepdim)",
        lambda a, node=_node: f"{node}Backward1" if a[1] is None else f"{node}Backward0",
        save="self, dim, keepdim, result",
        sizes="self",
        shown=selection,
        save_if={"self": _over_everything, "result": _over_everything},  # Note [Selections ...]
        extra=_selected_indices,
        batch=max_min,
    )(_extreme)


jvp("max", "min")(_extreme_jvp)


def _extreme_backward(ctx, grad):
    """max/min: over everything, the gradient is shared evenly by the elements equal to the
    result (by the NaNs when the result is NaN: torch's evenly_distribute_backward); along
    a dim, it goes to the selected index (a scatter, not a one-hot product)."""
    x, dim, keepdim = (ctx.saved_value(k) for k in ("self", "dim", "keepdim"))
    if grad is None:
        return (None,)
    lead = _lead(grad)
    if dim is None:
        # torch's evenly_distribute_backward(grad, self, result) reads the saved result:
        # writing it in place before backward raises the version error there too
        result = ctx.saved_value("result")
        nan = x != x
        mask = nan if bool(nan.any()) else (x == result.detach())
        g = _keep(grad, tuple(x.shape), None, False, lead) if lead else grad
        return (gt.where(mask, g / mask.sum(), 0.0),)
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)
    axis = dim % len(shape)
    idx = ctx.extra
    g = grad
    if not keepdim:
        idx = np.expand_dims(idx, axis)
        g = (
            _wrap(np.expand_dims(_data(g), axis))
            if _first_order_arrays(g)
            else g.unsqueeze(axis + len(lead))
        )
    return (scatter_along(g, idx, axis, shape),)


def _amax_backward(ctx, grad):
    """torch's scale_grad_by_count: ``(grad / count) * mask``; a mask product, as torch's
    (a NaN result leaves an empty mask and a NaN gradient there, as in torch)."""
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    o = _keep(out, shape, dim, keepdim)
    mask = x == o
    count = mask.sum() if dim is None or dim == () else mask.sum(dim, keepdim=True)
    return ((_keep(grad, shape, dim, keepdim, _lead(grad)) / count) * mask,)


register(
    "amax(self, dim, keepdim)",
    "AmaxBackward0",
    save="self, dim, keepdim, result",
    batch=reduction,
    shown=dim_list,
    keeps_zero={"AmaxBackward0": "self"},
)(
    _amax_backward,
)
register(
    "amin(self, dim, keepdim)",
    "AminBackward0",
    save="self, dim, keepdim, result",
    batch=reduction,
    shown=dim_list,
)(_amax_backward)


@jvp("amax", "amin")
def _amax_jvp(args, out, tangents, lead):
    """torch's amaxamin_jvp: ``where(mask, t, 0).sum(dim) / mask.sum(dim)``."""
    x, dim = args[0], args[1] if len(args) > 1 else ()
    keepdim = args[2] if len(args) > 2 else False
    mask = x == _keepdims(out, x, dim, keepdim)
    dims = _reduced(dim, x, lead)
    count = mask.sum(_reduced(dim, x, ()), keepdim=keepdim) if dims else mask
    return _sum_over(gt.where(mask, tangents[0], 0.0), dims, keepdim) / count


@register(
    "var(self, dim, correction, keepdim)",
    "VarBackward0",
    save="self, dim, correction, keepdim",
    batch=var_std,
    shown=dim_list,
    keeps_zero="self",
)
def _var(ctx, grad):
    x, dim, correction, keepdim = (
        ctx.saved_value(k) for k in ("self", "dim", "correction", "keepdim")
    )
    return (var_backward(grad, x, dim, correction, keepdim, _lead(grad)),)


@jvp("var")
def _var_jvp(args, out, tangents, lead):
    return _var_tangent(args, tangents[0], lead)


@register(
    "std(self, dim, correction, keepdim)",
    "StdBackward0",
    save="self, dim, correction, keepdim, result",
    batch=var_std,
    shown=dim_list,
)
def _std(ctx, grad):
    """torch's std_backward: var's gradient of ``grad / (2 std)``, 0 where std is 0 (a
    constant input has a zero gradient, not 0/0)."""
    x, dim, correction, keepdim, out = (
        ctx.saved_value(k) for k in ("self", "dim", "correction", "keepdim", "result")
    )
    grad_var = (grad / (out * 2)).masked_fill(out == 0, 0.0)
    return (var_backward(grad_var, x, dim, correction, keepdim, _lead(grad)),)


@jvp("std")
def _std_jvp(args, out, tangents, lead):
    # torch: var_jvp / (2 std), 0 where std is 0
    return (_var_tangent(args, tangents[0], lead) / (out * 2)).masked_fill(out == 0, 0.0)


def norm_order(p):
    """The norm's order as a float (``"fro"`` is 2)."""
    return 2.0 if p == "fro" else float(p)


def _norm_rule(args, bdims):
    """``norm(input, p, dim, keepdim)``: "all dims" is the sample's dims."""
    if bdims[0] is None or any(b is not None for b in bdims[1:]):
        return NotImplemented
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    p = _arg(args, 1, "fro")
    dims = _dims_arg(_arg(args, 2), rank)
    if rank == 0:
        return NotImplemented
    if dims is None:
        if p == "fro":
            p = 2  # torch's Frobenius norm over all dims is the 2-norm of the flat sample
        x = x.reshape(x.shape[0], -1)
        out = dispatch(OPS["norm"], (x, p, 1, False))
        if _arg(args, 3, False):
            out = out.reshape((x.shape[0],) + (1,) * rank)
        return out, 0
    return dispatch(OPS["norm"], (x, p, dims, _arg(args, 3, False))), 0


@register(
    "norm(self, ord, dim, keepdim)",
    "LinalgVectorNormBackward0",
    save="self, ord, dim, keepdim, result",
    batch=_norm_rule,
    shown=vector_norm,
    keeps_zero="self",
)
def _norm(ctx, grad):
    """torch's norm_backward, case by case (its masks select, Note [Masks select, never
    multiply]); order 0 has no gradient at all (None, as torch's undefined gradient)."""
    x, p, dim, keepdim, out = (
        ctx.saved_value(k) for k in ("self", "ord", "dim", "keepdim", "result")
    )
    shape = ctx.input_shape(0)
    p = norm_order(p)
    if p == 0:
        return (None,)
    g = _keep(grad, shape, dim, keepdim, _lead(grad))
    o = _keep(out, shape, dim, keepdim)
    if p == 1:
        return (x.sgn() * g,)
    if p == 2:
        return (g * gt.where(o == 0, 0.0, x / o),)
    if math.isinf(p):
        a = x.abs()
        mask = (a == o) | (a != a)  # the elements at the norm, and NaNs
        count = mask.sum() if dim is None or dim == () else mask.sum(dim, keepdim=True)
        return (x.sgn() * ((g / count) * mask),)
    if p < 1:
        scaled = x.sgn() * x.abs().pow(p - 1).masked_fill(x == 0, 0.0)
        return (scaled * g * o.pow(1 - p),)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return (scaled * (g / o.pow(p - 1)).masked_fill(o == 0, 0.0),)


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


@register(
    "logsumexp(self, dim, keepdim)",
    "LogsumexpBackward0",
    save="self, dim, keepdim, result",
    batch=reduction,
    shown=dim_list,
    keeps_zero="self",
)
def _logsumexp(ctx, grad):
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    return (
        _keep(grad, shape, dim, keepdim, _lead(grad)) * (x - _keep(out, shape, dim, keepdim)).exp(),
    )


@jvp("logsumexp")
def _logsumexp_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    keepdim = args[2] if len(args) > 2 else False
    weights = (x - _keepdims(out, x, dim, keepdim)).exp()
    return _sum_over(tangents[0] * weights, _reduced(dim, x, lead), keepdim)


def _in_float32(grad, out, formula):
    """``formula(grad, out)``, in float32 for float16 tensors and rounded once, as torch's
    CPU softmax kernels compute half precision (their "opmath" type)."""
    if grad.dtype is not gt.float16 and grad.dtype is not gt.bfloat16:
        return formula(grad, out)
    return formula(grad.float(), out.float()).to(grad.dtype)


@register(
    "softmax(self, dim, dtype)",
    "SoftmaxBackward0",
    save="dim, result",
    batch=along_dim,
    shown=uint_dims("dim"),
)
def _softmax(ctx, grad):
    dim, out = ctx.saved_value("dim"), ctx.saved_value("result")
    fused = _fused_softmax_backward(grad, out, dim, False)
    if fused is not None:
        return (fused,)
    return (_in_float32(grad, out, lambda g, o: _softmax_formula(g, o, dim)),)


def _fused_softmax_backward(grad, out, dim, log):
    """The first-order gradient by ``kernels.softmax_backward`` (one call, no temporaries),
    or None where the formula runs with gradstack ops (create_graph, a batched backward,
    a 0-d output, float16: ``_kernel_arrays``)."""
    if out.dim() == 0 or grad.shape != out.shape:
        return None
    arrays = _kernel_arrays(grad, out)
    if arrays is None:
        return None
    return _wrap(_softmax_backward_kernel(arrays[0], arrays[1], dim % out.dim(), log))


@jvp("softmax")
def _softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return out * (t - (t * out).sum(d, keepdim=True))


def _softmax_formula(grad, out, dim):
    if out.dim() == 0:  # the sum over the one element is the element (torch's formula,
        return out * (grad - grad * out)  # which stays attached to out: create_graph)
    d = _dim_after(dim, grad, _lead(grad))
    return out * (grad - (grad * out).sum(d, keepdim=True))


@register(
    "log_softmax(self, dim, dtype)",
    "LogSoftmaxBackward0",
    save="dim, result",
    batch=along_dim,
    shown=uint_dims("dim"),
)
def _log_softmax(ctx, grad):
    dim, out = ctx.saved_value("dim"), ctx.saved_value("result")
    fused = _fused_softmax_backward(grad, out, dim, True)
    if fused is not None:
        return (fused,)
    return (_in_float32(grad, out, lambda g, o: _log_softmax_formula(g, o, dim)),)


@jvp("log_softmax")
def _log_softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return t - (t * out.exp()).sum(d, keepdim=True)


def _log_softmax_formula(grad, out, dim):
    if out.dim() == 0:  # as softmax's: torch's formula with the sum over one element
        return grad - out.exp() * grad
    return grad - out.exp() * grad.sum(_dim_after(dim, grad, _lead(grad)), keepdim=True)


@register(
    "cumsum(self, dim, dtype)",
    "CumsumBackward0",
    save="dim",
    extra=_differentiable_dtype("cumsum", 2),
    batch=along_dim,
    shown=uint_dims("dim"),
)
def _cumsum(ctx, grad):
    dim = ctx.saved_value("dim")
    lead = _lead(grad)
    if grad.dim() == len(lead):
        return (grad,)
    d = _dim_after(dim, grad, lead)
    if not lead and _first_order_arrays(grad):
        # the reversed running sum in one C pass (Note [cumsum accumulates in double])
        g = np.ascontiguousarray(_data(grad))
        return (_wrap(kernels.cumsum(g, d, reverse=True)),)
    return (grad.flip(d).cumsum(d).flip(d),)


@jvp("cumsum")
def _cumsum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    return t if x.dim() == 0 else t.cumsum(_shift(dim, x, lead))
