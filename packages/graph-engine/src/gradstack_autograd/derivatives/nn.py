"""The derivative table's rows for the neural-network ops of tensor-core (``_impl_nn``):
losses, normalisation, embedding and activations, backward and forward (JVP) formulas.

Same rules as the other families (read the package's notes first): one ``@register`` row
per op naming torch's node (``NllLossBackward0``, ``NativeLayerNormBackward0`` ...),
formulas written with gradstack ops so that ``create_graph=True`` differentiates them
again, gradients of the broadcast output shape left to the engine to reduce, an extra
leading batch dim in a batched backward (Note [Batched formulas]), the forward formula
(``@jvp``) after the row and vmap's rule (``batch=``) in it: ``loss`` is the kind of rule
the elementwise losses share.

Note [Loss formulas as partial derivatives]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An elementwise loss ``l(x, y)`` reduced by ``none``/``sum``/``mean`` has, per element, the
partial derivatives ``dl/dx`` and ``dl/dy`` (``_loss_partials``).  The backward formula
multiplies them by the incoming gradient (broadcast over the reduced elements and
divided by their count for ``mean``); the forward formula multiplies them by the
tangents and reduces the same way.  The partials are gradstack expressions of the saved
inputs, so both formulas differentiate again: torch's double-backward formulas
(``mse_loss_double_backward`` ...) are their derivatives.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd as ag
>>> x = gt.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
>>> loss = gt.OPS["nll_loss"](x.log_softmax(1), gt.tensor([2]), None, "mean", -100)
>>> loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()
('NllLossBackward0', 'LogSoftmaxBackward0')
>>> (g,) = ag.grad(loss, x)
>>> [round(v, 4) for v in g[0].tolist()]
[0.1753, 0.0391, -0.2144]
"""

from __future__ import annotations

import functools
import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import dispatch, wrap
from gradstack_tensor.extension import wrap as _wrap
from gradstack_tensor.kernels import batch_norm_backward as _bn_backward_kernel
from gradstack_tensor.kernels import (
    batch_norm_backward_batch_stats as _bn_backward_batch_stats_kernel,
)
from gradstack_tensor.kernels import layer_norm_backward as _layer_norm_backward_kernel

from ..grad_mode import no_grad
from ._formulas import (
    _KERNEL_DTYPES,
    _batch_scatter,
    _first_order_arrays,
    _kernel_arrays,
    _lead,
    _sum_all,
)
from ._shown import TotalWeight, loss_enums, nll_enums
from ._table import _not_differentiable, jvp, register
from ._tangents import _take
from .arithmetic import fused_unary_backward
from .batching import (
    _all_batched,
    _arg,
    _rank,
    aligned,
    batch_size,
    front,
    inplace_error,
    kind,
    pad,
    per_sample,
    pointwise,
    unary,
)

__all__: list[str] = []


def _reduce_loss(loss, reduction, rank):
    """Per-sample ``mean``/``sum`` of an elementwise loss (batch first)."""
    if reduction == "none" or rank == 0:
        return loss
    dims = tuple(range(1, rank + 1))
    return loss.mean(dims) if reduction == "mean" else loss.sum(dims)


@kind
def loss(name: str, tensor_positions: tuple, reduction_pos: int):
    """Rule of an elementwise loss with ``reduction``: the loss with ``reduction='none'``
    on the operands aligned and expanded to the batch, then each sample reduced alone."""
    op = OPS[name]

    def rule(args, bdims):
        new = list(args) + [None] * (reduction_pos + 1 - len(args))
        reduction = _arg(args, reduction_pos, "mean")
        if reduction not in ("none", "mean", "sum"):
            return NotImplemented  # the kernel's own error, per sample
        positions = [i for i in tensor_positions if isinstance(_arg(args, i), Tensor)]
        ranks = {i: _rank(args[i], bdims[i]) for i in positions}
        target = max(ranks.values())
        for i in positions:
            if bdims[i] is not None:
                new[i] = pad(front(args[i], bdims[i]), ranks[i], target)
        shape = tuple(np.broadcast_shapes(*(tuple(new[i].shape) for i in positions)))
        for i in tensor_positions[:2]:  # input and target: the full batch, exactly
            if tuple(new[i].shape) != shape:
                new[i] = new[i].expand(shape)
        new[reduction_pos] = "none"
        return _reduce_loss(dispatch(op, tuple(new)), reduction, target), 0

    rule.__name__ = f"loss_{name}"
    return rule


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_COEF = 0.044715
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _const(array, like):
    """A constant tensor (no graph) from ``array``, in ``like``'s dtype."""
    return gt.from_numpy(np.ascontiguousarray(array, dtype=like.dtype.numpy))


def _array(t):
    return t.detach().numpy()


# -------------------------------------------------------------------------------------
# helpers shared by the losses


def _reduced_grad(grad, reduction, ndim, lead):
    """The incoming gradient of a reduced loss, shaped to broadcast over its elements."""
    if reduction == "none":
        return grad
    return grad.reshape(tuple(lead) + (1,) * ndim)


def _mean_scale(reduction, numel):
    return 1.0 / numel if reduction == "mean" and numel else 1.0


def _reduce_tangent(t, reduction, lead, numel):
    """A loss tangent of the elements' shape (after ``lead``) reduced as the loss is."""
    if reduction == "none":
        return t
    total = _sum_all(t, lead)
    return total / numel if reduction == "mean" else total


def _aligned(t, x_dim, nd, lead):
    """The tangent ``t`` of an input with ``x_dim`` dims, padded to broadcast against an
    ``nd``-dim elementwise result behind the batch prefix ``lead``."""
    if t is None or not lead or x_dim >= nd:
        return t
    return t.reshape(tuple(lead) + (1,) * (nd - x_dim) + tuple(t.shape[len(lead) :]))


def _loss_backward(partials, *names):
    """The backward formula of an elementwise loss from its partials (Note [Loss formulas
    as partial derivatives]); ``names``: the saved values ``partials`` takes after the
    input and the target (the reduction is read by name too)."""
    saved = ("self", "target") + names

    def backward(ctx, grad):
        values = [ctx.saved_value(k) for k in saved]
        reduction = ctx.saved_value("reduction")
        need_x, need_y = ctx.needs_input_grad
        cx, cy = partials(*values, needs=(need_x, need_y))
        shape = _elementwise_shape(values[0], values[1])
        lead = _lead(grad)
        g = _reduced_grad(grad, reduction, len(shape), lead)
        scale = _mean_scale(reduction, math.prod(shape))
        if scale != 1.0:
            g = g * scale
        return (g * cx if need_x else None), (g * cy if need_y else None)

    return backward


def _loss_jvp(partials):
    def forward(args, out, tangents, lead):
        *values, reduction = args
        tx, ty = tangents
        if tx is None and ty is None:
            return None
        cx, cy = partials(*values, needs=(tx is not None, ty is not None))
        shape = _elementwise_shape(values[0], values[1])
        nd = len(shape)
        r = None
        if tx is not None:
            r = _aligned(tx, values[0].dim(), nd, lead) * cx
        if ty is not None:
            term = _aligned(ty, values[1].dim(), nd, lead) * cy
            r = term if r is None else r + term
        return _reduce_tangent(r, reduction, lead, math.prod(shape))

    return forward


def _elementwise_shape(x, y):
    return tuple(np.broadcast_shapes(tuple(x.shape), tuple(y.shape)))


# -------------------------------------------------------------------------------------
# negative log-likelihood


def _nll_coefficients(shape, target, weight, reduction, ignore_index, dtype, scale=None):
    """``d loss / d input`` of the NLL loss divided by the incoming gradient: ``-w[t]`` at
    each target's class (over the total weight for ``mean``), 0 elsewhere; times `scale`
    (the incoming gradient of a reduced loss, a 0-d array) when given."""
    t = _array(target).astype(np.int64, copy=False)
    nd = len(shape)
    if nd == 1:
        t = t.reshape(())
    if weight is None and nd >= 2 and t.size and not (t == ignore_index).any():
        # every target counts with weight 1: one value, -(g / N) as torch's kernel writes
        # it, scattered (no per-target passes)
        g = np.asarray(1 if scale is None else scale, dtype=dtype)
        with np.errstate(all="ignore"):
            value = -(g / g.dtype.type(t.size)) if reduction == "mean" else -g
        coef = np.empty(shape, dtype=dtype)  # Note [A scattered gradient is zeroed by a fill]
        coef.fill(0)
        coef.reshape(-1)[_nll_flat_indices(shape, t)] = value
        return coef
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t)
    if weight is None:
        w = np.ones(t.shape, dtype=dtype)
    else:
        w = _array(weight).astype(dtype, copy=False)[safe]
    w = np.where(ignored, 0, w).astype(dtype, copy=False)
    vals = -w
    if reduction == "mean":  # divided before the scatter: one pass over the targets only
        with np.errstate(all="ignore"):
            vals = vals / w.sum()
    if scale is not None:
        with np.errstate(all="ignore"):
            vals = vals * scale
    # an ignored target gets 0, as torch's kernel leaves it (even when every target is
    # ignored and the total weight is 0, where dividing afterwards gave NaN everywhere)
    vals = np.where(ignored, 0, vals).astype(dtype, copy=False)
    # Note [A scattered gradient is zeroed by a fill]
    # np.zeros of a large array is calloc's fresh mmap: its pages are zeroed lazily by the
    # kernel on first touch, and a scatter that touches every page (one target a row of
    # (1000, 1000)) took ~1,000 page faults each backward (3-6 ms on the shared host,
    # where torch's whole fwd+bwd takes ~0.2-0.5 ms).  np.empty and a fill write the
    # pages in order, and the freed block is reused from the heap by the next backward:
    # 0.4 ms for that fwd+bwd.
    coef = np.empty(shape, dtype=dtype)
    coef.fill(0)
    if nd == 1:
        coef[safe] = vals
    elif nd == 2:  # (indexing, not put_along_axis: a third of the backward's time)
        coef[np.arange(shape[0]), safe] = vals
    else:  # (flat indices n C S + t S + s: put_along_axis took 3/4 of nll_loss2d's backward)
        coef.reshape(-1)[_nll_flat_indices(shape, safe)] = vals.reshape(-1)
    return coef


def _nll_flat_indices(shape, safe):
    """The flat indices into a C-contiguous ``(N, C, *S)`` array of the target classes
    ``safe`` (shape ``(N, *S)``): ``n C S + safe[n, s] S + s``."""
    n, c = shape[0], shape[1]
    s = math.prod(shape[2:])
    base = np.arange(n, dtype=np.int64)[:, None] * (c * s) + np.arange(s, dtype=np.int64)
    return (base + safe.reshape(n, s) * s).reshape(-1)


def _nll_kernel_backward(shape, target, weight, reduction, ignore_index, g):
    """The input's gradient from tensor-core's NLL kernel (Note [The NLL kernels follow
    torch's loops] in _nll_kernels.pyx), or None when it does not take the arrays (a 1-d
    input, a weight of another dtype or layout): first order, ``g`` the gradient's array."""
    if len(shape) < 2 or g.dtype not in _KERNEL_DTYPES:
        return None
    w = None
    if weight is not None:
        w = _data(weight)
        if w.dtype != g.dtype or not (w.flags.c_contiguous and w.flags.aligned):
            return None
    t = _data(target)
    if t.dtype != np.int64 or not (t.flags.c_contiguous and t.flags.aligned):
        t = np.ascontiguousarray(t, dtype=np.int64)
    if not (g.flags.c_contiguous and g.flags.aligned):
        g = np.ascontiguousarray(g)
    return kernels.nll_loss_backward(g, shape, t, w, reduction, ignore_index)


def _nll_backward(ctx, grad):
    ctx.saved_value("self")  # (read as torch's formula does: the version check)
    target, weight, reduction, ignore_index = (
        ctx.saved_value(k) for k in ("target", "weight", "reduction", "ignore_index")
    )
    shape = tuple(ctx.input_shape(0))
    lead = _lead(grad)
    if not lead and _first_order_arrays(grad):
        # one pass over the targets, torch's values (a reduced or an unreduced loss)
        out = _nll_kernel_backward(shape, target, weight, reduction, ignore_index, _data(grad))
        if out is not None:
            return (_wrap(out),)
    if reduction != "none" and grad.dim() == 0 and _kernel_arrays(grad) is not None:
        # first order, a reduced loss: the gradient folded into the scattered values, no
        # pass of ``g * coef`` over the whole input (the same products, (-w / total) * g)
        return (
            _wrap(
                _nll_coefficients(
                    shape,
                    target,
                    weight,
                    reduction,
                    ignore_index,
                    grad.dtype.numpy,
                    scale=_data(grad),
                )
            ),
        )
    coef = gt.from_numpy(
        _nll_coefficients(shape, target, weight, reduction, ignore_index, grad.dtype.numpy)
    )
    if reduction == "none":
        # the output has the target's shape: put the class dim back in
        g = grad.unsqueeze(len(lead) + 1) if len(shape) >= 2 else grad.reshape(tuple(lead) + (1,))
    else:
        g = grad.reshape(tuple(lead) + (1,) * len(shape))
    return (g * coef,)


def _nll_loss_rule(args, bdims):
    """``nll_loss(input, target, weight, reduction, ignore_index)``: the batch folded into
    the loss's own batch dim N, then each sample reduced with torch's weighted mean."""
    inp, ib, target, tb = args[0], bdims[0], args[1], bdims[1]
    weight, wb = _arg(args, 2), _arg(bdims, 2)
    reduction = _arg(args, 3, "mean")
    ignore_index = _arg(args, 4, -100)
    if wb is not None or reduction not in ("none", "mean", "sum"):
        return NotImplemented
    size = batch_size(args, bdims)
    rank = _rank(inp, ib)
    if rank not in (1, 2):
        return NotImplemented  # K-dim losses run per sample
    x, t = _all_batched((inp, target), (ib, tb), size)
    if rank == 1:  # input (C,), target (): one row per sample
        n = 1
        x2, t2 = x, t.reshape(size)
    else:
        n = x.shape[1]
        x2, t2 = x.reshape(size * n, x.shape[2]), t.reshape(size * n)
    per = dispatch(OPS["nll_loss"], (x2, t2, weight, "none", ignore_index)).reshape(size, n)
    if reduction == "none":
        return per.reshape(size) if rank == 1 else per, 0
    if reduction == "sum":
        return per.sum(1), 0
    keep = (t2 != ignore_index).reshape(size, n)
    if weight is None:
        w = keep.to(per.dtype)
    else:
        safe = t2.masked_fill(t2 == ignore_index, 0)
        w = weight.index_select(0, safe).reshape(size, n) * keep.to(per.dtype)
    return per.sum(1) / w.sum(1), 0


# (torch's formula reads ``self`` and ``total_weight`` too: both are saved and shown, and
# writing ``self`` in place before backward fails it, as in torch)
register(
    "nll_loss(self, target, weight, reduction, ignore_index)",
    "NllLossBackward0",
    save="self, target, weight, reduction, ignore_index",
    shown=nll_enums,
    extra=lambda args, out: TotalWeight(args),
    batch=_nll_loss_rule,
)(_nll_backward)
register(
    "nll_loss2d(self, target, weight, reduction, ignore_index)",
    "NllLoss2DBackward0",
    save="self, target, weight, reduction, ignore_index",
    shown=nll_enums,
    extra=lambda args, out: TotalWeight(args),
    batch=per_sample("the K-dim loss's weighted mean per sample; rare inside vmap"),
)(_nll_backward)


@jvp("nll_loss", "nll_loss2d")
def _nll_jvp(args, out, tangents, lead):
    (t,) = tangents
    if t is None:
        return None
    x, target, weight, reduction, ignore_index = args
    shape = tuple(x.shape)
    coef = gt.from_numpy(
        _nll_coefficients(shape, target, weight, reduction, ignore_index, x.dtype.numpy)
    )
    prod = t * coef
    class_dim = len(lead) + (1 if len(shape) >= 2 else 0)
    r = prod.sum(class_dim)
    return r if reduction == "none" else _sum_all(r, lead)


# -------------------------------------------------------------------------------------
# regression losses (Note [Loss formulas as partial derivatives])


def _mse_partials(x, y, needs):
    d = x - y
    return d * 2.0, d * -2.0


def _smooth_l1_partials(x, y, beta, needs):
    d = x - y
    if beta == 0:
        cx = d.sign()
    else:
        cx = gt.where(d.abs() < beta, d / beta, d.sign())
    return cx, -cx


def _huber_partials(x, y, delta, needs):
    d = x - y
    cx = gt.where(d.abs() < delta, d, d.sign() * delta)
    return cx, -cx


register(
    "mse_loss(self, target, reduction)",
    "MseLossBackward0",
    inputs="self, target",
    save="self, target, reduction",
    shown=loss_enums,
    batch=loss(tensor_positions=(0, 1), reduction_pos=2),
)(_loss_backward(_mse_partials))


def _kernel_loss_backward(kernel, partials, name):
    """:func:`_loss_backward` of smooth L1 or Huber, whose first-order gradients of
    operands of one float32/float64 dtype and shape come from one C pass of ``kernel``
    (``kernels.smooth_l1_backward``/``huber_backward``, torch's loops: Note [Loss kernels
    follow torch's formulas] in tensor-core's ``_loss_kernels.pyx``); the target's is the
    negated input's, as torch's swapped call gives exactly."""
    formula = _loss_backward(partials, name)

    def backward(ctx, grad):
        x, y = ctx.saved_value("self"), ctx.saved_value("target")
        p, reduction = ctx.saved_value(name), ctx.saved_value("reduction")
        if p > 0 and _first_order_arrays(grad):
            a, b, g = _data(x), _data(y), _data(grad)
            if (
                a.dtype in _C_FLOATS
                and b.dtype == a.dtype == g.dtype
                and a.shape == b.shape
                and (g.shape == a.shape if reduction == "none" else g.size == 1)
            ):
                a, b, g = (np.ascontiguousarray(t) for t in (a, b, g))
                with np.errstate(all="ignore"):
                    gx = kernel(g, a, b, p, _mean_scale(reduction, a.size))
                need_x, need_y = ctx.needs_input_grad
                return (_wrap(gx) if need_x else None), (_wrap(-gx) if need_y else None)
        return formula(ctx, grad)

    return backward


register(
    "smooth_l1_loss(self, target, reduction, beta)",
    "SmoothL1LossBackward0",
    inputs="self, target",
    save="self, target, beta, reduction",
    shown=loss_enums,
    batch=loss(tensor_positions=(0, 1), reduction_pos=2),
)(_kernel_loss_backward(kernels.smooth_l1_backward, _smooth_l1_partials, "beta"))
register(
    "huber_loss(self, target, reduction, delta)",
    "HuberLossBackward0",
    inputs="self, target",
    save="self, target, delta, reduction",
    shown=loss_enums,
    batch=loss(tensor_positions=(0, 1), reduction_pos=2),
)(_kernel_loss_backward(kernels.huber_backward, _huber_partials, "delta"))


def _reorder(forward, order):
    """A jvp formula whose partials take the op's arguments in ``order``."""

    def reordered(args, out, tangents, lead):
        return forward(tuple(args[i] for i in order), out, tangents, lead)

    return reordered


jvp("mse_loss")(_loss_jvp(_mse_partials))
jvp("smooth_l1_loss")(_reorder(_loss_jvp(_smooth_l1_partials), (0, 1, 3, 2)))
jvp("huber_loss")(_reorder(_loss_jvp(_huber_partials), (0, 1, 3, 2)))


# -------------------------------------------------------------------------------------
# binary classification losses

_BCE_EPSILON = 1e-12  # torch's EPSILON in binary_cross_entropy_backward


def _bce_partials(x, y, weight, needs):
    need_x, need_y = needs
    cx = cy = None
    if need_x:
        cx = (x - y) / ((1 - x) * x).clamp(min=_BCE_EPSILON)
        if weight is not None:
            cx = cx * weight
    if need_y:
        cy = (1 - x).log() - x.log()  # -logit(x)
        if weight is not None:
            cy = cy * weight
    return cx, cy


def _log_sigmoid(x):
    return gt.dispatch(OPS["log_sigmoid"], (x,))


def _bce_logits_partials(x, y, weight, pos_weight, needs):
    need_x, need_y = needs
    cx = cy = None
    if need_x:
        if pos_weight is not None:
            t = pos_weight * y
            cx = (t + 1 - y) * x.sigmoid() - t
        else:
            cx = x.sigmoid() - y
        if weight is not None:
            cx = cx * weight
    if need_y:
        if pos_weight is not None:
            cy = _log_sigmoid(-x) - _log_sigmoid(x) * pos_weight
        else:
            cy = -x
        if weight is not None:
            cy = cy * weight
    return cx, cy


register(
    "binary_cross_entropy(self, target, weight, reduction)",
    "BinaryCrossEntropyBackward0",
    inputs="self, target",
    save="self, target, weight, reduction",
    shown=loss_enums,
    batch=loss(tensor_positions=(0, 1, 2), reduction_pos=3),
)(_loss_backward(_bce_partials, "weight"))
register(
    "binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction)",
    "BinaryCrossEntropyWithLogitsBackward0",
    inputs="self, target",
    save="self, target, weight, pos_weight, reduction",
    shown=loss_enums,
    batch=loss(tensor_positions=(0, 1, 2, 3), reduction_pos=4),
)(_loss_backward(_bce_logits_partials, "weight", "pos_weight"))
jvp("binary_cross_entropy")(_loss_jvp(_bce_partials))
jvp("binary_cross_entropy_with_logits")(_loss_jvp(_bce_logits_partials))


# -------------------------------------------------------------------------------------
# normalisation


def _normalize(x, axes, eps):
    """``(x - mean) * rstd`` over ``axes`` (biased variance) and ``rstd``, in gradstack ops."""
    mean = x.mean(axes, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(axes, keepdim=True)
    rstd = (var + eps).rsqrt()
    return centered * rstd, rstd


def _norm_input_grad(gy_hat, xhat, rstd, axes):
    """``d loss / d x`` through ``xhat = (x - mean) * rstd`` given ``d loss / d xhat``
    (``axes`` are the normalised dims of ``gy_hat``).

    The map is symmetric, so the same expression turns an input's tangent into the
    tangent of ``xhat`` (the forward formulas below use it so).
    """
    return rstd * (
        gy_hat - gy_hat.mean(axes, keepdim=True) - xhat * (gy_hat * xhat).mean(axes, keepdim=True)
    )


def _ln_axes(x, normalized_shape):
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return tuple(range(x.dim() - k, x.dim()))


def _shifted(axes, lead):
    return tuple(a + len(lead) for a in axes)


def _layer_norm_rule(args, bdims):
    inp, ib = args[0], bdims[0]
    shape = args[1]
    weight, wb, bias, bb = _arg(args, 2), _arg(bdims, 2), _arg(args, 3), _arg(bdims, 3)
    eps = _arg(args, 4, 1e-5)
    if ib is None:
        return NotImplemented
    x = front(inp, ib)
    rank = x.dim() - 1
    if wb is None and bb is None:
        return dispatch(OPS["layer_norm"], (x, shape, weight, bias, eps)), 0
    out = dispatch(OPS["layer_norm"], (x, shape, None, None, eps))
    if weight is not None:
        out = out * aligned(weight, wb, _rank(weight, wb), rank)
    if bias is not None:
        out = out + aligned(bias, bb, _rank(bias, bb), rank)
    return out, 0


@register(
    "layer_norm(input, normalized_shape, weight, bias, eps)",
    "NativeLayerNormBackward0",
    inputs="input, weight, bias",
    save="input, normalized_shape, weight, eps",
    batch=_layer_norm_rule,
)
def _layer_norm_backward(ctx, grad):
    x, normalized_shape, weight, eps = (
        ctx.saved_value(k) for k in ("input", "normalized_shape", "weight", "eps")
    )
    need_x, need_w, need_b = ctx.needs_input_grad
    fused = _fused_layer_norm_backward(
        grad, x, weight, normalized_shape, eps, need_x, need_w, need_b
    )
    if fused is not None:
        return fused
    lead = _lead(grad)
    axes = _ln_axes(x, normalized_shape)
    outer = _shifted(tuple(range(x.dim() - len(axes))), lead)
    xhat, rstd = _normalize(x, axes, eps)
    gx = gw = gb = None
    if need_x:
        gy_hat = grad * weight if weight is not None else grad
        gx = _norm_input_grad(gy_hat, xhat, rstd, _shifted(axes, lead))
    if need_w:
        gw = (grad * xhat).sum(outer) if outer else grad * xhat
    if need_b:
        gb = grad.sum(outer) if outer else grad
    return gx, gw, gb


def _fused_layer_norm_backward(grad, x, weight, normalized_shape, eps, need_x, need_w, need_b):
    """The three gradients by ``kernels.layer_norm_backward`` (one pass over the rows), or
    None where the formula runs with gradstack ops (create_graph, a batched backward,
    float16, an empty row: ``_kernel_arrays``)."""
    k = len(_ln_axes(x, normalized_shape))
    shape = tuple(x.shape[x.dim() - k :])
    n = math.prod(shape)
    if grad.shape != x.shape or n == 0:
        return None
    arrays = _kernel_arrays(grad, x) if weight is None else _kernel_arrays(grad, x, weight)
    if arrays is None:
        return None
    w = arrays[2] if weight is not None else None
    gx, gw, gb = _layer_norm_backward_kernel(
        arrays[0],
        arrays[1],
        n,
        w,
        eps,
        input_grad=bool(need_x),
        weight_grad=bool(need_w),
        bias_grad=bool(need_b),
    )
    return (
        None if gx is None else _wrap(gx),
        None if gw is None else _wrap(gw.reshape(shape)),
        None if gb is None else _wrap(gb.reshape(shape)),
    )


@jvp("layer_norm")
def _layer_norm_jvp(args, out, tangents, lead):
    x, normalized_shape, weight, bias, eps = args
    tx, tw, tb = tangents
    axes = _ln_axes(x, normalized_shape)
    xhat, rstd = _normalize(x, axes, eps)
    r = None
    if tx is not None:
        r = _norm_input_grad(tx, xhat, rstd, _shifted(axes, lead))
        if weight is not None:
            r = r * weight
    if tw is not None:
        term = xhat * _aligned(tw, len(axes), x.dim(), lead)
        r = term if r is None else r + term
    if tb is not None:
        term = _aligned(tb, len(axes), x.dim(), lead)
        r = term if r is None else r + term
    return r


def _channel_shape(x):
    shape = [1] * x.dim()
    shape[1] = x.shape[1]
    return tuple(shape)


def _bn_stats_axes(x):
    return (0,) + tuple(range(2, x.dim()))


def _bn_running(args, out):
    """What an evaluation-mode backward needs: copies of the running statistics used."""
    _, _, _, running_mean, running_var, training, _, _ = args
    if training or running_mean is None:
        return None
    return running_mean.detach().clone(), running_var.detach().clone()


def _bn_eval_normalize(x, running, eps):
    shape = _channel_shape(x)
    mean, var = running
    rstd = (var + eps).rsqrt().reshape(shape)
    return (x - mean.reshape(shape)) * rstd, rstd


def _batch_norm_rule(args, bdims):
    """``batch_norm`` of a batched sample ``(N, C, *S)``: statistics per sample (over N and
    S), running statistics updated in place per sample when they are batched (ensembles);
    unbatched running statistics cannot take per-sample updates (torch's in-place error)."""
    inp, ib = args[0], bdims[0]
    weight, bias, rmean, rvar = args[1], args[2], args[3], args[4]
    wb, bb, mb, vb = bdims[1], bdims[2], bdims[3], bdims[4]
    training, momentum, eps = args[5], args[6], args[7]
    if ib is None:
        return NotImplemented
    x = front(inp, ib)
    rank = x.dim() - 1
    if rank < 2:
        return NotImplemented

    def per_channel(t, b):  # a (C,) statistic or parameter, aligned with (B, N, C, *S)
        if t is None:
            return None
        if b is None:
            return t.reshape((t.shape[0],) + (1,) * (rank - 2))
        return front(t, b).reshape((t.shape[b], 1, t.shape[1 - b]) + (1,) * (rank - 2))

    if training or rmean is None:
        if training and rmean is not None and (mb is None or vb is None):
            raise inplace_error("batch_norm (running_mean/running_var update)", rmean.shape)
        dims = (1,) + tuple(range(3, rank + 1))
        mean = x.mean(dims, keepdim=True)
        var = dispatch(OPS["var"], (x, dims, 0, True))
        if training and rmean is not None:
            count = math.prod(x.shape[i] for i in dims)
            size = x.shape[0]
            with no_grad():
                m = mean.reshape(size, -1)
                v = var.reshape(size, -1) * (count / max(count - 1, 1))
                rm, rv = front(rmean, mb), front(rvar, vb)
                rm.mul_(1 - momentum).add_(m * momentum)
                rv.mul_(1 - momentum).add_(v * momentum)
    else:
        mean, var = per_channel(rmean, mb), per_channel(rvar, vb)
    out = (x - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * per_channel(weight, wb)
    if bias is not None:
        out = out + per_channel(bias, bb)
    return out, 0


@register(
    "batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)",
    "NativeBatchNormBackward0",
    inputs="input, weight, bias",
    save="input, weight, eps",
    extra=_bn_running,
    batch=_batch_norm_rule,
)
def _batch_norm_backward(ctx, grad):
    x, weight, eps = (ctx.saved_value(k) for k in ("input", "weight", "eps"))
    need_x, need_w, need_b = ctx.needs_input_grad
    lead = _lead(grad)
    axes = _bn_stats_axes(x)
    shape = _channel_shape(x)
    reduce_axes = _shifted(axes, lead)
    running = ctx.extra
    if not lead:
        fast = _batch_norm_backward_on_arrays(grad, x, weight, eps, running, ctx.needs_input_grad)
        if fast is not None:
            return fast
    if running is None:
        xhat, rstd = _normalize(x, axes, eps)
    else:
        xhat, rstd = _bn_eval_normalize(x, running, eps)
    gx = gw = gb = None
    if need_x:
        gy_hat = grad * weight.reshape(shape) if weight is not None else grad
        if running is None:
            gx = _norm_input_grad(gy_hat, xhat, rstd, reduce_axes)
        else:
            gx = gy_hat * rstd
    if need_w:
        gw = (grad * xhat).sum(reduce_axes)
    if need_b:
        gb = grad.sum(reduce_axes)
    return gx, gw, gb


_C_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _batch_norm_backward_on_arrays(grad, x, weight, eps, running, need):
    """Batch norm's first-order gradients by the C passes of
    ``gradstack_tensor.kernels.batch_norm_backward`` (torch's CPU kernel), or None where the
    formula must run in gradstack ops (create_graph, forward AD, other dtypes)."""
    if not _first_order_arrays(grad):
        return None
    g, a = _data(grad), _data(x)
    w = None if weight is None else _data(weight)
    if (
        a.dtype not in _C_FLOATS
        or g.shape != a.shape
        or g.dtype != a.dtype
        or a.ndim < 2
        or not a.size
        or (w is not None and w.dtype != a.dtype)
    ):
        return None
    a, g = np.ascontiguousarray(a), np.ascontiguousarray(g)
    dtype = a.dtype
    wa = None if w is None else np.ascontiguousarray(w)
    with np.errstate(all="ignore"):
        if running is None:  # Note [Batch norm's backward makes its statistics channel by
            # channel] in tensor-core's _batch_norm_kernels.pyx
            dx, gw, gb = _bn_backward_batch_stats_kernel(g, a, float(eps), wa, need[0])
        else:
            rm, rv = (_data(t).astype(dtype) for t in running)
            mean, invstd = rm, (dtype.type(1) / np.sqrt(rv + dtype.type(eps))).astype(dtype)
            dx, gw, gb = _bn_backward_kernel(g, a, mean, invstd, wa, False, need[0])
    return (
        _wrap(dx) if need[0] else None,
        _wrap(gw.astype(dtype)) if need[1] else None,
        _wrap(gb.astype(dtype)) if need[2] else None,
    )


@jvp("batch_norm")
def _batch_norm_jvp(args, out, tangents, lead):
    x, weight, bias, running_mean, running_var, training, _, eps = args
    tx, tw, tb = tangents
    shape = _channel_shape(x)
    axes = _bn_stats_axes(x)
    if training or running_mean is None:
        xhat, rstd = _normalize(x, axes, eps)
        t_hat = _norm_input_grad(tx, xhat, rstd, _shifted(axes, lead)) if tx is not None else None
    else:
        xhat, rstd = _bn_eval_normalize(x, (running_mean, running_var), eps)
        t_hat = tx * rstd if tx is not None else None
    r = None
    if t_hat is not None:
        r = t_hat * weight.reshape(shape) if weight is not None else t_hat
    if tw is not None:
        term = xhat * tw.reshape(tuple(lead) + shape)
        r = term if r is None else r + term
    if tb is not None:
        term = tb.reshape(tuple(lead) + shape)
        r = term if r is None else r + term
    return r


# -------------------------------------------------------------------------------------
# embedding


def _embedding_rule(args, bdims):
    if bdims[0] is not None:
        return NotImplemented  # a batched table: per sample
    return dispatch(OPS["embedding"], (args[0], front(args[1], bdims[1])) + tuple(args[2:])), 0


@register(
    "embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)",
    "EmbeddingBackward0",
    inputs="weight",
    save="indices, padding_idx, scale_grad_by_freq",
    batch=_embedding_rule,
)
def _embedding_backward(ctx, grad):
    indices, padding_idx, scale_grad_by_freq = (
        ctx.saved_value(k) for k in ("indices", "padding_idx", "scale_grad_by_freq")
    )
    shape = tuple(ctx.input_shape(0))
    if _first_order_arrays(grad):  # one pass, no temporary (Note [Embedding's backward is
        # a scatter-add of rows] in tensor-core's _index_kernels.pyx)
        pad = padding_idx if padding_idx is not None and padding_idx >= 0 else -1
        g = kernels.embedding_backward(
            _data(grad), _data(indices), shape[0], pad, bool(scale_grad_by_freq)
        )
        return (wrap(g),)
    idx = _array(indices).astype(np.intp, copy=False)
    scale = None
    if scale_grad_by_freq:
        counts = np.bincount(idx.reshape(-1), minlength=shape[0])
        scale = 1.0 / counts[idx]
    if padding_idx is not None and padding_idx >= 0:
        keep = (idx != padding_idx).astype(np.float64)
        scale = keep if scale is None else scale * keep
    g = grad
    if scale is not None:
        g = g * _const(scale[..., None], grad)
    return (_batch_scatter(g, (idx,), shape),)


@jvp("embedding")
def _embedding_jvp(args, out, tangents, lead):
    (t,) = tangents
    if t is None:
        return None
    weight, indices = args[0], args[1]
    idx = _array(indices).astype(np.intp, copy=False)
    return _take(t, (idx,), tuple(weight.shape), lead)


# rescaling the rows of an embedding's weight is an update, not a function to differentiate
_not_differentiable(
    "embedding_renorm_", batch=per_sample("it rewrites rows of the table in place, per sample")
)


# -------------------------------------------------------------------------------------
# activations


def _gelu_second(x, approximate):
    """``d2 gelu(x) / dx2`` in gradstack ops (so that it differentiates again)."""
    if approximate == "tanh":
        x2 = x * x
        t = (_SQRT_2_OVER_PI * (x + _GELU_TANH_COEF * x2 * x)).tanh()
        s = 1 - t * t
        du = _SQRT_2_OVER_PI * (1 + 3 * _GELU_TANH_COEF * x2)
        ddu = (6 * _SQRT_2_OVER_PI * _GELU_TANH_COEF) * x
        return s * du - x * t * s * du * du + 0.5 * x * s * ddu
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return pdf * (2 - x * x)


def _gelu_backward_op(grad, x, approximate):
    return gt.dispatch(OPS["gelu_backward"], (grad, x, approximate))


@register("gelu(self, approximate)", "GeluBackward0", save="self, approximate", batch=unary)
def _gelu(ctx, grad):
    x, approximate = ctx.saved_value("self"), ctx.saved_value("approximate")
    return (_gelu_backward_op(grad, x, approximate),)


@jvp("gelu")
def _gelu_jvp(args, out, tangents, lead):
    (t,) = tangents
    return None if t is None else _gelu_backward_op(t, args[0], args[1])


@register(
    "gelu_backward(grad_output, self, approximate)",
    "GeluBackwardBackward0",
    inputs="grad_output, self",
    save="grad_output, self, approximate",
    batch=pointwise,
)
def _gelu_backward_backward(ctx, grad):
    g, x, approximate = (ctx.saved_value(k) for k in ("grad_output", "self", "approximate"))
    need_g, need_x = ctx.needs_input_grad
    return (
        _gelu_backward_op(grad, x, approximate) if need_g else None,
        grad * g * _gelu_second(x, approximate) if need_x else None,
    )


@jvp("gelu_backward")
def _gelu_backward_jvp(args, out, tangents, lead):
    g, x, approximate = args
    tg, tx = tangents
    r = None
    if tg is not None:
        r = _gelu_backward_op(tg, x, approximate)
    if tx is not None:
        term = tx * g * _gelu_second(x, approximate)
        r = term if r is None else r + term
    return r


def _silu_derivative(x):
    s = x.sigmoid()
    return s * (1 + x * (1 - s))


@register("silu(self)", "SiluBackward0", save="self", batch=unary)
def _silu(ctx, grad):
    x = ctx.saved_value("self")
    # one pass of tensor-core's kernel when no graph is built (Note [Fused erf and erfinv
    # backward] in arithmetic.py); gradstack ops otherwise
    fused = fused_unary_backward(kernels.silu_backward, grad, x)
    return (grad * _silu_derivative(x) if fused is None else fused,)


@jvp("silu")
def _silu_jvp(args, out, tangents, lead):
    (t,) = tangents
    return None if t is None else t * _silu_derivative(args[0])


@register("log_sigmoid(self)", "LogSigmoidBackward0", save="self", batch=unary)
def _log_sigmoid_backward(ctx, grad):
    x = ctx.saved_value("self")
    # torch's log_sigmoid_backward in one pass when no graph is built (Note [log_sigmoid in
    # one pass] in tensor-core's _log_sigmoid_kernels.pyx); gradstack ops otherwise
    fused = fused_unary_backward(kernels.log_sigmoid_backward, grad, x)
    return (grad * (-x).sigmoid() if fused is None else fused,)


@jvp("log_sigmoid")
def _log_sigmoid_jvp(args, out, tangents, lead):
    (t,) = tangents
    return None if t is None else t * (-args[0]).sigmoid()


@register(
    "softplus(self, beta, threshold)",
    "SoftplusBackward0",
    save="self, beta, threshold",
    batch=unary,
)
def _softplus(ctx, grad):
    """torch's ``softplus_backward``: ``grad * z / (z + 1)`` with ``z = exp(beta * x)``, and
    ``grad`` where ``beta * x > threshold``."""
    x = ctx.saved_value("self")
    beta, threshold = ctx.saved_value("beta"), ctx.saved_value("threshold")
    if _first_order_arrays(grad):
        a, g = _data(x), _data(grad)
        if kernels.fusable(g, a):  # one C pass (tensor-core's kernels.softplus_backward)
            return (_wrap(kernels.softplus_backward(g, a, float(beta), float(threshold))),)
        if a.dtype == g.dtype and a.shape == g.shape:  # the formula in four numpy passes
            z = np.multiply(a, float(beta), out=np.empty(a.shape, a.dtype))
            above = z > threshold
            with np.errstate(over="ignore", invalid="ignore"):
                np.exp(z, out=z)
                gx = np.multiply(g, z, out=np.empty(a.shape, a.dtype))  # (0-d: an array)
                np.add(z, 1, out=z)
                np.divide(gx, z, out=gx)
            np.copyto(gx, g, where=above)
            return (_wrap(gx),)
    return (_softplus_derivative(x, beta, threshold, grad),)


def _softplus_derivative(x, beta, threshold, t):
    scaled = x * beta
    z = scaled.exp()
    return gt.where(scaled > threshold, t, t * z / (z + 1))


@jvp("softplus")
def _softplus_jvp(args, out, tangents, lead):
    (t,) = tangents
    beta = args[1] if len(args) > 1 else 1.0
    threshold = args[2] if len(args) > 2 else 20.0
    return None if t is None else _softplus_derivative(args[0], beta, threshold, t)


# torch names the in-place variant's node LeakyReluBackward1; the registry's rule is one
# node name per op and its in-place twin (test_inplace_variants_have_the_node_name_of_their_twin)
@register(
    "leaky_relu(self, negative_slope)",
    "LeakyReluBackward0",
    save="self, negative_slope",
    batch=unary,
)
def _leaky_relu(ctx, grad):
    x, slope = ctx.saved_value("self"), ctx.saved_value("negative_slope")
    if math.isfinite(slope):  # one pass of tensor-core's kernel without create_graph
        kernel = functools.partial(kernels.leaky_relu_backward, negative_slope=slope)
        fused = fused_unary_backward(kernel, grad, x)
        if fused is not None:
            return (fused,)
    return (gt.where(x > 0, grad, grad * slope),)


@jvp("leaky_relu")
def _leaky_relu_jvp(args, out, tangents, lead):
    (t,) = tangents
    return None if t is None else gt.where(args[0] > 0, t, t * args[1])
