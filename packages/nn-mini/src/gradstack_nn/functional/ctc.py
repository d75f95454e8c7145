"""The connectionist temporal classification loss, ``ctc_loss``, as torch's CPU kernel:
the forward-backward recursions in log space over the targets extended with blanks, all
samples at once in numpy, and torch's gradient formula (Note [torch's CTC gradient]).

Note [torch's CTC gradient]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's ``ctc_loss_backward`` returns ``(exp(lp) - exp(log(sum_s alpha_s beta_s) + nll -
lp)) * grad`` for each ``(t, c)`` of the input lengths (zeros past them), which is the
gradient with respect to the logits when ``log_probs`` is a ``log_softmax`` of them, not
the derivative with respect to ``log_probs`` themselves (it adds ``exp(lp)``).  gradstack
returns torch's formula, so the gradients of a program are torch's either way; like
torch's, it cannot be differentiated again.  A sample whose loss is infinite (a target
that does not fit its input length) gets a zero gradient with ``zero_infinity``.

Examples
--------
>>> import gradstack_tensor as gt
>>> lp = gt.tensor([[[0.5, 0.5]], [[0.5, 0.5]]]).log()
>>> round(ctc_loss(lp, gt.tensor([[1]]), [2], [1], reduction="sum").item(), 6)
0.287682
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_autograd import Function, is_grad_enabled
from gradstack_tensor import Tensor

__all__ = ["ctc_loss"]


def _lse(*xs: np.ndarray) -> np.ndarray:
    """torch's three-term log-sum-exp of the recursions (a max of ``-inf`` taken as 0)."""
    m = np.maximum.reduce(xs)
    m = np.where(m == -np.inf, 0, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(sum(np.exp(x - m) for x in xs)) + m


def _shifted(a: np.ndarray, k: int, fill=-np.inf) -> np.ndarray:
    """``a`` moved ``k`` places along its last dim (right for ``k > 0``), ``fill`` in."""
    out = np.full_like(a, fill)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


class _NotTwice(Function):
    """The identity on torch's CTC gradient, whose own derivative raises as torch's does
    (a ``once_differentiable`` backward would not notice: its upstream gradient need not
    require grad while ``log_probs`` does)."""

    @staticmethod
    def forward(ctx, grad, log_probs):
        return grad

    @staticmethod
    def backward(ctx, _):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


class _CTC(Function):
    """Note [torch's CTC gradient].  All samples at once: the targets extended with blanks
    padded to the longest, the states past a sample's ``2 * target_length + 1`` and the
    steps past its input length kept at ``-inf`` (the recursions' sums are elementwise,
    so each sample's numbers are those of its own recursion)."""

    @staticmethod
    def forward(ctx, log_probs, ext, widths, input_lengths, zero_infinity):
        lp = log_probs.detach().numpy()
        steps, n, _ = lp.shape
        il = np.asarray(input_lengths, dtype=np.int64)
        states = np.arange(ext.shape[1])
        valid = states[None, :] < widths[:, None]  # (N, W)
        emit = np.take_along_axis(lp, np.broadcast_to(ext, (steps,) + ext.shape), 2)
        emit = np.where(valid, emit, -np.inf)
        skip = np.zeros(ext.shape, dtype=bool)
        skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
        alpha = np.full(emit.shape, -np.inf, dtype=lp.dtype)
        if steps:
            alpha[0, :, :2] = emit[0, :, :2]
        for t in range(1, steps):
            prev = alpha[t - 1]
            two = np.where(skip, _shifted(prev, 2), -np.inf).astype(lp.dtype)
            alpha[t] = _lse(prev, _shifted(prev, 1), two) + emit[t]
        nll = np.zeros(n, dtype=lp.dtype)
        for b in range(n):
            if il[b] == 0:
                nll[b] = 0.0 if widths[b] == 1 else np.inf
                continue
            last = alpha[il[b] - 1, b, max(widths[b] - 2, 0) : widths[b]]
            nll[b] = -_lse(*[np.array(v) for v in last])
        ctx.save_for_backward(log_probs)
        ctx.args = (ext, widths, il, emit, skip, alpha, nll, zero_infinity)
        return gt.tensor(nll, dtype=log_probs.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (log_probs,) = ctx.saved_tensors
        ext, widths, il, emit, skip, alpha, nll, zero_infinity = ctx.args
        lp = log_probs.detach().numpy()
        steps, n, classes = lp.shape
        g = grad_output.detach().numpy()
        beta = np.full(alpha.shape, -np.inf, dtype=lp.dtype)
        skip_back = _shifted(skip, -2, False)
        rows = np.arange(n)
        for t in range(steps - 1, -1, -1):
            if t + 1 < steps:
                nxt = beta[t + 1]
                two = np.where(skip_back, _shifted(nxt, -2), -np.inf).astype(lp.dtype)
                beta[t] = np.where((t < il - 1)[:, None], _lse(nxt, _shifted(nxt, -1), two)
                                   + emit[t], -np.inf)  # fmt: skip
            start = rows[il - 1 == t]
            for b in start:
                lo = max(widths[b] - 2, 0)
                beta[t, b, lo : widths[b]] = emit[t, b, lo : widths[b]]
        ab = alpha + beta
        top = ab.max(2, keepdims=True)
        top = np.where(top == -np.inf, 0, top)
        total = np.zeros(lp.shape, dtype=lp.dtype)
        index = np.broadcast_to(ext, ab.shape)
        t_idx, b_idx = np.indices(ab.shape[:2])
        np.add.at(total, (t_idx[..., None], b_idx[..., None], index), np.exp(ab - top))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            lcab = np.log(total) + top
            grad = (np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)) * g[None, :, None]
        live = np.arange(steps)[:, None] < il[None, :]
        if zero_infinity:
            live &= nll[None, :] != np.inf
        grad = np.where(live[..., None], grad, 0).astype(lp.dtype)
        result = gt.tensor(grad, dtype=log_probs.dtype)
        if is_grad_enabled() and (log_probs.requires_grad or grad_output.requires_grad):
            result = _NotTwice.apply(result, log_probs)
        return result, None, None, None, None


def _lengths(v) -> list[int]:
    if isinstance(v, Tensor):
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


def ctc_loss(
    log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
    reduction: str = "mean", zero_infinity: bool = False,
) -> Tensor:  # fmt: skip
    """The CTC loss of ``log_probs`` ``(T, N, C)`` (or ``(T, C)``) and ``targets``
    (``(N, S)`` padded, or 1-d concatenated), as torch's: the negative log-likelihood per
    sample; ``mean`` divides each by its target length (at least 1) then averages,
    ``sum`` adds; ``zero_infinity`` makes infinite losses (and their gradients) zero."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.dim() == 1:
            targets = targets.unsqueeze(0)
    ils, tls = _lengths(input_lengths), _lengths(target_lengths)
    n = log_probs.shape[1]
    if len(ils) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tls) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    classes = log_probs.shape[2]
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", ils), ("target_lengths", tls)):
        if min(lengths) < 0:
            raise RuntimeError(
                f"Expected {name} to have value at least 0, but got value {min(lengths)} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )
    tg = targets.detach().numpy().astype(np.int64)
    per_sample = []
    offset = 0
    for b in range(n):
        if ils[b] > log_probs.shape[0]:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got "
                f"value {ils[b]} (while checking arguments for ctc_loss_allocate_outputs)"
            )
        if tg.ndim == 1:
            per_sample.append(tg[offset : offset + tls[b]])
            offset += tls[b]
        else:
            if tls[b] > tg.shape[1]:
                raise RuntimeError(
                    f"Expected tensor to have size at least {tls[b]} at dimension 1, but got "
                    f"size {tg.shape[1]} for argument #2 'targets' (while checking arguments "
                    "for ctc_loss_allocate_outputs)"
                )
            per_sample.append(tg[b, : tls[b]])
    for tgt in per_sample:
        bad = tgt[(tgt < 0) | (tgt >= classes)]
        if bad.size:  # (torch reads out of bounds here)
            raise RuntimeError(
                f"ctc_loss: target label {bad[0]} is out of range for {classes} classes"
            )
    width = 2 * max((len(t) for t in per_sample), default=0) + 1
    ext = np.full((n, width), int(blank), dtype=np.int64)
    for b, tgt in enumerate(per_sample):
        ext[b, 1 : 2 * len(tgt) : 2] = tgt
    widths = np.array([2 * len(t) + 1 for t in per_sample], dtype=np.int64)
    nll = _CTC.apply(log_probs, ext, widths, ils, bool(zero_infinity))
    if zero_infinity:
        nll = gt.where(nll == float("inf"), gt.zeros((), dtype=nll.dtype), nll)
    if reduction == "mean":
        lengths = gt.tensor(tls, dtype=nll.dtype).clamp(min=1)
        return (nll / lengths).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
