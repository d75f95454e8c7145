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
from gradstack_tensor.kernels import max_pool2d_backward as _max_pool2d_backward_kernel

from .. import _grad_mode as _modes
from ._formulas import _batch_scatter
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
