"""``linear_cross_entropy``: the cross entropy of a linear layer's logits (torch 2.13's
``F.linear_cross_entropy``), by reference (``options=None``: ``linear`` then
``cross_entropy``, every order of gradient) or chunked over the batch
(``options=LinearCrossEntropyOptions(...)``: the logits of one chunk of rows at a time).

Note [The chunked linear cross entropy].  torch's chunked path never holds the whole
``(N, C)`` logits: for each chunk of ``batch_chunk_size`` rows it computes the logits, their
log-sum-exp and the loss, and for ``"mean"``/``"sum"`` the gradients of the input, the
linear weight and bias at once, in forward; backward only scales those gradients by the
upstream gradient, once (a second backward raises unless the options allow
``retain_graph``).  ``"none"`` keeps its inputs and recomputes the chunks' gradients in
backward, with the per-row upstream gradient.  It is first order only, as torch's.  Here
the chunks are computed with gradstack ops under ``no_grad`` in a :class:`Function`: the
values are the reference path's to rounding (the sums are taken in another order).

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
>>> w = gt.tensor([[0.1, 0.2], [0.3, -0.4], [0.0, 1.0]])
>>> t = gt.tensor([2, 0])
>>> loss = linear_cross_entropy(x, w, t)
>>> round(loss.item(), 4)
0.7511
"""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
from gradstack_autograd import Function, is_grad_enabled, no_grad
from gradstack_tensor import Tensor

from .linear_layers import linear
from .losses import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """The cross entropy between ``linear(input, linear_weight, linear_bias)`` and
    ``target``: ``cross_entropy(logits, target, weight=weight, reduction=reduction,
    ignore_index=ignore_index, label_smoothing=label_smoothing)``.

    Parameters
    ----------
    input : Tensor
        ``(in_features,)`` or ``(N, in_features)``.
    linear_weight : Tensor
        ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a K-dimensional
        loss (then ``input`` must be batched).
    target : Tensor
        Class indices (int64: ``()``, ``(N,)`` or ``(N, d_1, ..., d_K)``) or class
        probabilities (the logits' shape).
    linear_bias : Tensor, optional
        ``(C, d_1, ..., d_K)``.
    weight, reduction, label_smoothing
        As :func:`cross_entropy`'s.
    ignore_index : int, optional
        As :func:`cross_entropy`'s (``None`` is -100); an error with probabilities.
    options : LinearCrossEntropyOptions, optional
        Compute chunk by chunk over the batch (Note [The chunked linear cross entropy]);
        a configuration the chunks do not take (a K-dimensional loss, label smoothing,
        probabilities, another reduction) warns and takes the reference path, as torch.

    Returns
    -------
    Tensor
        The loss: a scalar, or per sample with ``reduction="none"``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import LinearCrossEntropyOptions
    >>> x = gt.tensor([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]])
    >>> w = gt.tensor([[0.1, 0.2], [0.3, -0.4], [0.0, 1.0]])
    >>> t = gt.tensor([2, 0, 1])
    >>> ref = linear_cross_entropy(x, w, t, reduction="sum")
    >>> opts = LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    >>> chunked = linear_cross_entropy(x, w, t, reduction="sum", options=opts)
    >>> round(ref.item(), 4), round(chunked.item(), 4)
    (5.8027, 5.8027)
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            "expected linear_bias shape "
            f"{(num_classes, *out_features)}, got {tuple(linear_bias.shape)}"
        )
    if len(out_features) > 0 and len(num_batches) == 0:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)}"
            f" requires batched input, (N, {in_features}), got unbatched"
            f" input with shape {tuple(input.shape)}"
        )
    logits_shape = (*num_batches, num_classes, *out_features)
    target_contains_probabilities = tuple(target.shape) == logits_shape
    if target_contains_probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100

    chunkable = (
        not out_features
        and reduction in {"mean", "sum", "none"}
        and label_smoothing == 0.0
        and target.dtype == gt.int64
    )
    if options is not None and not chunkable:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs "
            "reduction in {'mean','sum','none'}, label_smoothing == 0, target.dtype"
            " == int64, out_features == (). Got "
            f"reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={_torch_name(target.dtype)}, out_features={out_features}"
            ", tracing=False"
            ", linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=2,
        )
    if options is not None and chunkable:
        return _chunked(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
            options, in_features, num_classes,
        )  # fmt: skip

    if out_features:
        linear_weight = linear_weight.reshape(
            (math.prod(out_features, start=num_classes), in_features)
        )
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(
        logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )  # fmt: skip


def _torch_name(dtype) -> str:
    return "torch." + str(dtype).rsplit(".", 1)[-1]


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
             options, in_features, num_classes):  # fmt: skip
    has_batches = input.dim() == 2
    if not has_batches:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    options = options._adjust(
        num_batches=input.shape[0], in_features=in_features, num_classes=num_classes,
        dtype=input.dtype, device=input.device,
    )  # fmt: skip
    _check_acc_dtype(input.dtype, options.acc_dtype)
    bias = linear_bias if linear_bias is not None else gt.zeros(0, dtype=input.dtype)
    grad_on = is_grad_enabled()
    # (which gradients to compute is decided here, as torch's ``compute_*_grad`` arguments)
    wanted = (
        grad_on and input.requires_grad,
        grad_on and linear_weight.requires_grad,
        grad_on and linear_bias is not None and linear_bias.requires_grad,
    )
    plan = (reduction, ignore_index, options.batch_chunk_size, options.acc_dtype,
            options.allow_retain_graph, wanted)  # fmt: skip
    cls = _ChunkedNoReduction if reduction == "none" else _ChunkedReduced
    result = cls.apply(input, linear_weight, bias, target, weight, plan)
    return result if has_batches else result.squeeze(0)


def _check_acc_dtype(dtype, acc_dtype) -> None:
    if dtype != acc_dtype and not (dtype in (gt.float16, gt.bfloat16) and acc_dtype == gt.float32):
        raise RuntimeError(
            "linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs,"
            f" but got {_torch_name(acc_dtype)} acc_dtype and {_torch_name(dtype)} inputs."
        )


def _chunks_of(input, linear_weight, bias, target, weight, ignore_index, chunk, acc):
    """Per chunk of rows: ``(rows, x, t, coef, lse_loss, softmax)`` in ``acc`` dtype, where
    ``coef`` is each row's class weight (0 for an ignored row), ``lse_loss`` the row's
    unweighted ``-log_softmax`` at its target and ``softmax`` the chunk's probabilities
    with 1 subtracted at the targets."""
    n = input.shape[0]
    w = linear_weight.to(acc)
    b = bias.to(acc) if bias.numel() else None
    cw = weight.to(acc) if weight is not None else None
    for start in range(0, n, chunk):
        rows = slice(start, min(start + chunk, n))
        x = input[rows].to(acc)
        t = target[rows]
        keep = t != ignore_index
        safe = gt.where(keep, t, gt.zeros_like(t))
        if bool(((safe < 0) | (safe >= w.shape[0])).any()):
            bad = int(safe[(safe < 0) | (safe >= w.shape[0])][0])
            raise IndexError(f"Target {bad} is out of bounds.")
        logits = x.matmul(w.t())
        if b is not None:
            logits = logits + b
        shifted = logits - logits.amax(1, keepdim=True)
        lse = shifted.exp().sum(1).log()
        picked = shifted.gather(1, safe.unsqueeze(1)).squeeze(1)
        coef = keep.to(acc) if cw is None else gt.where(keep, cw[safe], gt.zeros_like(lse))
        probs = (shifted - lse.unsqueeze(1)).exp()
        probs.scatter_add_(1, safe.unsqueeze(1), -gt.ones_like(picked).unsqueeze(1))
        yield rows, x, coef, lse - picked, probs


def _gradients(input, linear_weight, bias, target, weight, plan, row_scale):
    """The gradients of ``sum(row_scale * coef * loss_row)`` for the inputs ``wanted`` (a
    triple of flags: input, weight, bias), chunk by chunk."""
    reduction, ignore_index, chunk, acc, _, wanted = plan
    gx = gt.zeros(input.shape, dtype=acc) if wanted[0] else None
    gw = gt.zeros(linear_weight.shape, dtype=acc) if wanted[1] else None
    gb = gt.zeros(linear_weight.shape[0], dtype=acc) if wanted[2] else None
    w = linear_weight.to(acc)
    for rows, x, coef, _, probs in _chunks_of(
        input, linear_weight, bias, target, weight, ignore_index, chunk, acc
    ):
        scale = coef * (row_scale if row_scale.dim() == 0 else row_scale[rows].to(acc))
        g = probs * scale.unsqueeze(1)
        if gx is not None:
            gx[rows] = g.matmul(w)
        if gw is not None:
            gw += g.t().matmul(x)
        if gb is not None:
            gb += g.sum(0)
    dtype = input.dtype
    return (
        gx.to(dtype) if gx is not None else None,
        gw.to(linear_weight.dtype) if gw is not None else None,
        gb.to(bias.dtype) if gb is not None else None,
    )


class _ChunkedReduced(Function):
    """``"mean"``/``"sum"``: the loss and the gradients in forward, scaled in backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, bias, target, weight, plan):
        reduction, ignore_index, chunk, acc, allow_retain, _ = plan
        with no_grad():
            total = gt.zeros((), dtype=acc)
            weights = gt.zeros((), dtype=acc)
            for _, _, coef, loss, _ in _chunks_of(
                input, linear_weight, bias, target, weight, ignore_index, chunk, acc
            ):
                total = total + (coef * loss).sum()
                weights = weights + coef.sum()
            scale = 1.0 / weights if reduction == "mean" else gt.ones((), dtype=acc)
            grads = _gradients(input, linear_weight, bias, target, weight, plan, scale)
        ctx.grads, ctx.allow_retain = grads, allow_retain
        loss = total / weights if reduction == "mean" else total
        return loss.to(acc if input.dtype == gt.float16 else input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grads = ctx.grads
        if grads is None:
            raise RuntimeError(
                "linear_cross_entropy chunked backward called twice; "
                "retain_graph=True / double backward are not supported."
            )
        if not ctx.allow_retain:
            ctx.grads = None
        g = grad_output.detach()
        gx, gw, gb = (None if t is None else t * g.to(t.dtype) for t in grads)
        return gx, gw, gb, None, None, None


class _ChunkedNoReduction(Function):
    """``"none"``: the rows' losses in forward; backward recomputes the chunks."""

    @staticmethod
    def forward(ctx, input, linear_weight, bias, target, weight, plan):
        _, ignore_index, chunk, acc, _, _ = plan
        out = gt.zeros(input.shape[0], dtype=acc)
        with no_grad():
            for rows, _, coef, loss, _ in _chunks_of(
                input, linear_weight, bias, target, weight, ignore_index, chunk, acc
            ):
                out[rows] = coef * loss
        ctx.save_for_backward(input.detach(), linear_weight.detach(), bias.detach())
        ctx.rest = (target, weight, plan)
        return out.to(acc if input.dtype == gt.float16 else input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        input, linear_weight, bias = ctx.saved_tensors
        target, weight, plan = ctx.rest
        with no_grad():
            gx, gw, gb = _gradients(input, linear_weight, bias, target, weight, plan,
                                    grad_output.detach())  # fmt: skip
        return gx, gw, gb, None, None, None
