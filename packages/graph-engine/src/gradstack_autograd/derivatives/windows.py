"""Derivatives of the sliding-window ops: im2col (``F.unfold``), col2im (``F.fold``),
max_pool2d_with_indices, avg_pool2d and avg_pool2d_backward.

im2col and col2im are linear and adjoint to each other, so each one's gradient is the
other applied to the incoming gradient; both formulas are ops of the table, so gradients
of any order and vmap come with them.  Max pooling's gradient goes to the element each
window picked (``index_scatter`` of the incoming gradient at the saved indices, summed
where windows overlap), as torch's ``max_pool2d_with_indices_backward``.  Average pooling
is linear, and ``avg_pool2d_backward`` is its adjoint: each is the other's gradient, as
im2col's and col2im's (torch's AvgPool2DBackward0 and AvgPool2DBackwardBackward0).

Note [Window gradients on arrays]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Without ``create_graph`` (grad mode off in the backward pass) and without forward-mode
AD, max pooling's gradient is one C pass over the saved indices
(``gradstack_tensor.kernels.max_pool2d_backward``: torch's loop, torch's order of the
sums) on float32/float64 gradients of the output's shape; im2col's and col2im's gradients
are ops whose kernels are C passes already.  Otherwise (a graph to record, tangents, a
batched backward, another dtype) the formulas compute with gradstack ops as before.

Note [Window ops fold extra leading dims into the batch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every window of every ``(n, c)`` plane is computed alike, so the dims in front of a
sample (``C, H, W`` for im2col and pooling, ``C * kh * kw, L`` for col2im) can all be
folded into one batch dim and unfolded after: a vmap batch, the batch of a batched
backward (Note [Batched formulas]) and the op's own ``N`` alike.  :func:`_folded` does it
for the batching rules, the backward formulas and the forward formulas.
"""

from __future__ import annotations

import math

import numpy as np
from gradstack_tensor import OPS
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import dispatch
from gradstack_tensor.extension import wrap as _wrap
from gradstack_tensor.kernels import conv2d_backward as _conv2d_backward_kernel
from gradstack_tensor.kernels import max_pool2d_backward as _max_pool2d_backward_kernel

from .. import _grad_mode as _modes
from ._formulas import _batch_scatter, _first_order_arrays, _lead
from ._table import jvp, register
from ._tangents import _take
from .batching import front
from .reductions import _selected_indices


def _folded(fn, t, sample_rank):
    """``fn`` applied to ``t`` with every dim in front of its last ``sample_rank`` folded
    into one batch dim, then unfolded (Note [Window ops fold extra leading dims ...])."""
    extra = t.dim() - sample_rank
    if extra <= 0:
        return fn(t)
    lead = tuple(t.shape[:extra])
    out = fn(t.reshape((math.prod(lead),) + tuple(t.shape[extra:])))
    if isinstance(out, tuple):
        return tuple(o.reshape(lead + tuple(o.shape[1:])) for o in out)
    return out.reshape(lead + tuple(out.shape[1:]))


def _window_rule(name, sample_rank):
    """vmap's rule of a window op: the batch goes in front and is folded into ``N``."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(b is not None for b in bdims[1:]):
            return NotImplemented
        x = front(args[0], bdims[0])
        return _folded(lambda t: dispatch(op, (t,) + tuple(args[1:])), x, sample_rank), 0

    rule.__name__ = f"window_rule_{name}"
    return rule


# -------------------------------------------------------------------------------------
# im2col / col2im


def _im2col(t, kernel_size, dilation, padding, stride):
    return _folded(
        lambda x: dispatch(OPS["im2col"], (x, kernel_size, dilation, padding, stride)), t, 3
    )


def _col2im(t, output_size, kernel_size, dilation, padding, stride):
    return _folded(
        lambda x: dispatch(OPS["col2im"], (x, output_size, kernel_size, dilation, padding, stride)),
        t,
        2,
    )


@register(
    "im2col(self, kernel_size, dilation, padding, stride)",
    "Im2ColBackward0",
    save="kernel_size, dilation, padding, stride",
    batch=_window_rule("im2col", 3),
)
def _im2col_backward(ctx, grad):
    k, d, p, s = (ctx.saved_value(n) for n in ("kernel_size", "dilation", "padding", "stride"))
    size = tuple(ctx.input_shape(0))[-2:]
    return (_col2im(grad, size, k, d, p, s),)


@jvp("im2col")
def _im2col_jvp(args, out, tangents, lead):
    return _im2col(tangents[0], *args[1:5])


@register(
    "col2im(self, output_size, kernel_size, dilation, padding, stride)",
    "Col2ImBackward0",
    save="kernel_size, dilation, padding, stride",
    batch=_window_rule("col2im", 2),
)
def _col2im_backward(ctx, grad):
    k, d, p, s = (ctx.saved_value(n) for n in ("kernel_size", "dilation", "padding", "stride"))
    return (_im2col(grad, k, d, p, s),)


@jvp("col2im")
def _col2im_jvp(args, out, tangents, lead):
    return _col2im(tangents[0], *args[1:6])


# -------------------------------------------------------------------------------------
# max pooling


def _picked_key(indices, shape):
    """The numpy key of the input elements that max pooling picked (``indices`` are flat
    positions in each ``H * W`` plane), and the mask of those inside the input."""
    h, w = shape[-2], shape[-1]
    inside = (indices >= 0) & (indices < h * w)
    idx = np.where(inside, indices, 0)
    planes: tuple = np.indices(idx.shape[:-2], sparse=True) if idx.ndim > 2 else ()
    key: tuple = tuple(np.broadcast_to(g[..., None, None], idx.shape) for g in planes)
    return key + (idx // w, idx % w), inside


@register(
    "max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)",
    "MaxPool2DWithIndicesBackward0",
    save="self",  # as torch's node: writing the input in place fails backward
    extra=_selected_indices,
    batch=_window_rule("max_pool2d_with_indices", 3),
)
def _max_pool2d_backward(ctx, grad, grad_indices=None):
    ctx.saved_value("self")  # unpacked as torch's formula does: its version check
    if grad is None:
        return (None,)
    shape = tuple(ctx.input_shape(0))
    fast = _max_pool2d_backward_on_arrays(grad, ctx.extra, shape)
    if fast is not None:
        return (fast,)
    key, inside = _picked_key(ctx.extra, shape)
    if not inside.all():  # a window with no element inside the input picked nothing
        grad = grad * grad.new_tensor(inside.astype(_data(grad).dtype))
    return (_batch_scatter(grad, key, shape),)


_C_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _max_pool2d_backward_on_arrays(grad, indices, shape):
    """The gradient by the C kernel (Note [Window gradients on arrays]), or None."""
    if _modes.is_grad_enabled() or _modes.forward_ad_enabled():
        return None
    g = _data(grad)
    if g.dtype not in _C_DTYPES or g.shape != indices.shape or indices.dtype != np.int64:
        return None
    out = _max_pool2d_backward_kernel(
        np.ascontiguousarray(g), np.ascontiguousarray(indices), shape[-2:]
    )
    return _wrap(out.reshape(shape))


@jvp("max_pool2d_with_indices")
def _max_pool2d_jvp(args, out, tangents, lead):
    (t,) = tangents
    shape = tuple(args[0].shape)
    key, inside = _picked_key(_data(out[1]), shape)
    picked = _take(t, key, shape, lead)
    if not inside.all():
        picked = picked * picked.new_tensor(inside.astype(_data(picked).dtype))
    return (picked, None)


# -------------------------------------------------------------------------------------
# average pooling

_AVG_ARGS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
             "divisor_override")  # fmt: skip


def _avg_pool2d(t, args):
    return _folded(lambda x: dispatch(OPS["avg_pool2d"], (x,) + tuple(args)), t, 3)


def _avg_pool2d_adjoint(t, input, args):
    return _folded(lambda g: dispatch(OPS["avg_pool2d_backward"], (g, input) + tuple(args)), t, 3)


def _avg_backward_rule(args, bdims):
    """vmap's rule of ``avg_pool2d_backward``: a batched gradient folded into ``N`` (the
    input is read for its plane's size only)."""
    if bdims[0] is None or any(b is not None for b in bdims[1:]):
        return NotImplemented
    return _avg_pool2d_adjoint(front(args[0], bdims[0]), args[1], args[2:]), 0


@register(
    "avg_pool2d(self, " + ", ".join(_AVG_ARGS) + ")",
    "AvgPool2DBackward0",
    save=("self",) + _AVG_ARGS,
    batch=_window_rule("avg_pool2d", 3),
)
def _avg_pool2d_backward(ctx, grad):
    x = ctx.saved_value("self")
    return (_avg_pool2d_adjoint(grad, x, [ctx.saved_value(n) for n in _AVG_ARGS]),)


@jvp("avg_pool2d")
def _avg_pool2d_jvp(args, out, tangents, lead):
    return _avg_pool2d(tangents[0], args[1:7])


@register(
    "avg_pool2d_backward(grad_output, self, " + ", ".join(_AVG_ARGS) + ")",
    "AvgPool2DBackwardBackward0",
    inputs="grad_output",
    save=_AVG_ARGS,
    batch=_avg_backward_rule,
)
def _avg_pool2d_backward_backward(ctx, grad):
    return (_avg_pool2d(grad, [ctx.saved_value(n) for n in _AVG_ARGS]),)


@jvp("avg_pool2d_backward")
def _avg_pool2d_backward_jvp(args, out, tangents, lead):
    return _avg_pool2d_adjoint(tangents[0], args[1], args[2:8])


# -------------------------------------------------------------------------------------
# the 2-d convolution
#
# Note [A convolution's gradient on arrays or in ops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A first-order backward of float32/float64 (no create_graph, no forward-mode AD, not
# batched: _first_order_arrays) runs ``gradstack_tensor.kernels.conv2d_backward``: the
# columns made again from the saved input a chunk of the batch at a time, the weight's
# gradient in the product orientation that is fastest (Note [The orientation of a
# convolution's products] in tensor-core's _conv_arrays.py), col2im in C, and only the
# gradients the node is asked for (the first convolution of a network, whose input
# needs none, makes no input gradient).  Otherwise the same formula is written in
# gradstack ops (im2col, matmul, col2im, sum), so its gradients of every order, forward
# mode and vmap come from theirs.


_CONV_ARGS = ("stride", "padding", "dilation", "groups")


def _conv2d(x, w, b, stride, padding, dilation, groups):
    return dispatch(OPS["conv2d"], (x, w, b, stride, padding, dilation, groups))


def _conv_geometry(x_shape, w_shape, stride, padding, dilation):
    kh, kw = w_shape[2], w_shape[3]
    out = tuple(
        (x_shape[-2 + i] + 2 * padding[i] - dilation[i] * ((kh, kw)[i] - 1) - 1) // stride[i] + 1
        for i in (0, 1)
    )
    return (kh, kw), out


def _conv2d_backward_in_ops(grad, x, w, stride, padding, dilation, groups, need, lead):
    """Note [A convolution's gradient on arrays or in ops]: the formula in gradstack ops;
    ``grad`` is ``lead + (N, O, oh, ow)`` (``lead`` a batched backward's batch)."""
    unbatched = x.dim() == 3
    x4 = x.unsqueeze(0) if unbatched else x
    if unbatched:
        grad = grad.unsqueeze(len(lead))
    n, c, h, width = x4.shape
    o = w.shape[0]
    k, out = _conv_geometry(x4.shape, w.shape, stride, padding, dilation)
    length = out[0] * out[1]
    gflat = grad.reshape(tuple(lead) + (n, groups, o // groups, length))
    gx = gw = gb = None
    if need[0]:
        wt = w.reshape(groups, o // groups, -1).mT
        gcols = wt.matmul(gflat).reshape((math.prod(lead) * n, -1, length))
        gx = dispatch(OPS["col2im"], (gcols, (h, width), k, dilation, padding, stride))
        gx = gx.reshape(tuple(lead) + tuple(x.shape))
    if need[1]:
        cols = dispatch(OPS["im2col"], (x4, k, dilation, padding, stride))
        cols = cols.reshape(n, groups, -1, length)
        gw = gflat.matmul(cols.mT).sum(len(lead)).reshape(tuple(lead) + tuple(w.shape))
    if need[2]:
        d = len(lead)
        gb = grad.sum((d, d + 2, d + 3))
    return gx, gw, gb


def _conv2d_backward_on_arrays(grad, x, w, stride, padding, dilation, groups, need):
    """Note [A convolution's gradient on arrays or in ops]: the C/BLAS path, or None."""
    if not _first_order_arrays(grad):
        return None
    g, a, wa = _data(grad), _data(x), _data(w)
    if a.dtype != g.dtype or wa.dtype != g.dtype:
        return None
    unbatched = a.ndim == 3
    if unbatched:
        a, g = a[None], g[None]
    gx, gw, gb = _conv2d_backward_kernel(g, a, wa, stride, padding, dilation, groups, need)
    if gx is not None and unbatched:
        gx = gx[0]
    return tuple(None if t is None else _wrap(t) for t in (gx, gw, gb))


def _conv2d_rule(args, bdims):
    """vmap's rule of ``conv2d``: a batched input (weight and bias shared) is folded into
    ``N``; a batched weight or bias (an ensemble) runs once per sample."""
    if bdims[0] is None or any(b is not None for b in bdims[1:3]):
        return NotImplemented
    x = front(args[0], bdims[0])
    return _folded(lambda t: _conv2d(t, *args[1:]), x, 3), 0


@register(
    "conv2d(input, weight, bias, stride, padding, dilation, groups)",
    "ConvolutionBackward0",
    inputs="input, weight, bias",
    save=("input", "weight") + _CONV_ARGS,
    batch=_conv2d_rule,
)
def _conv2d_backward(ctx, grad):
    x, w = ctx.saved_value("input"), ctx.saved_value("weight")
    stride, padding, dilation, groups = (ctx.saved_value(n) for n in _CONV_ARGS)
    need = tuple(bool(v) for v in ctx.needs_input_grad)
    lead = _lead(grad)
    if not lead:
        fast = _conv2d_backward_on_arrays(grad, x, w, stride, padding, dilation, groups, need)
        if fast is not None:
            return fast
    return _conv2d_backward_in_ops(grad, x, w, stride, padding, dilation, groups, need, lead)


def _conv_weight_tangent(x, tw, stride, padding, dilation, groups, lead):
    """``conv2d(x, tw)`` for a weight tangent ``lead + w.shape``: the ``lead`` batch folded
    into the output channels of each group, unfolded after."""
    if not lead:
        return _conv2d(x, tw, None, stride, padding, dilation, groups)
    b = math.prod(lead)
    o = tw.shape[-4]
    per = o // groups
    w = tw.reshape((b, groups, per) + tuple(tw.shape[-3:])).transpose(0, 1)
    out = _conv2d(x, w.reshape((groups * b * per,) + tuple(tw.shape[-3:])), None, stride,
                  padding, dilation, groups)  # fmt: skip
    spatial = tuple(out.shape[-2:])
    front_dims = tuple(out.shape[:-3])  # (N,) or ()
    out = out.reshape(front_dims + (groups, b, per) + spatial)
    out = out.movedim(len(front_dims) + 1, 0).reshape((b,) + front_dims + (o,) + spatial)
    return out.reshape(tuple(lead) + tuple(out.shape[1:]))


@jvp("conv2d")
def _conv2d_jvp(args, out, tangents, lead):
    x, w, _, stride, padding, dilation, groups = args
    tx, tw, tb = tangents
    r = None
    if tx is not None:
        # every dim in front of (C, H, W) is a batch: N, and the tangents' lead
        r = _folded(lambda t: _conv2d(t, w, None, stride, padding, dilation, groups), tx, 3)
    if tw is not None:
        term = _conv_weight_tangent(x, tw, stride, padding, dilation, groups, lead)
        r = term if r is None else r + term
    if tb is not None:
        shape = tuple(lead) + (1,) * (out.dim() - 3) + (tb.shape[-1], 1, 1)
        term = tb.reshape(shape)
        r = term if r is None else r + term
    if r is None:
        return None
    return r.expand(tuple(lead) + tuple(out.shape))
