"""The connectionist temporal classification loss, ``ctc_loss``, as torch's CPU kernel:
the forward-backward recursions in log space over the targets extended with blanks, per
sample, in numpy, and torch's gradient formula (Note [torch's CTC gradient]).

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


def _extended(target: np.ndarray, blank: int) -> np.ndarray:
    ext = np.full(2 * len(target) + 1, blank, dtype=np.int64)
    ext[1::2] = target
    return ext


def _alpha_beta(lp: np.ndarray, ext: np.ndarray, backward: bool) -> np.ndarray:
    """``log_alpha`` (or ``log_beta``) ``(T, S')`` of one sample: ``lp`` its ``(T, C)``
    log-probabilities over its input length."""
    steps, width = lp.shape[0], len(ext)
    if backward:
        lp, ext = lp[::-1], ext[::-1]
    skip = np.zeros(width, dtype=bool)
    skip[2:] = ext[2:] != ext[:-2]
    emit = lp[:, ext]
    a = np.full((steps, width), -np.inf, dtype=lp.dtype)
    a[0, : min(2, width)] = emit[0, : min(2, width)]
    neg = np.array([-np.inf], dtype=lp.dtype)
    for t in range(1, steps):
        prev = a[t - 1]
        one = np.concatenate([neg, prev[:-1]])
        two = np.where(skip, np.concatenate([neg, neg, prev[:-2]])[:width], -np.inf)
        a[t] = _lse(prev, one, two.astype(lp.dtype)) + emit[t]
    return a[::-1, ::-1] if backward else a


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
    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        lp = log_probs.detach().numpy()
        nll = np.zeros(lp.shape[1], dtype=lp.dtype)
        saved: list[tuple[np.ndarray, np.ndarray] | None] = []
        for b, (tgt, il) in enumerate(zip(targets, input_lengths)):
            ext = _extended(tgt, blank)
            if il == 0:
                nll[b] = 0.0 if len(tgt) == 0 else np.inf
                saved.append(None)
                continue
            alpha = _alpha_beta(lp[:il, b], ext, backward=False)
            last = alpha[il - 1, len(ext) - 2 :]
            nll[b] = -_lse(*[np.array(v) for v in last]) if len(last) else np.inf
            saved.append((ext, alpha))
        ctx.save_for_backward(log_probs)
        ctx.args = (saved, list(input_lengths), nll, zero_infinity)
        return gt.tensor(nll, dtype=log_probs.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (log_probs,) = ctx.saved_tensors
        saved, input_lengths, nll, zero_infinity = ctx.args
        lp = log_probs.detach().numpy()
        g = grad_output.detach().numpy()
        grad = np.zeros_like(lp)
        for b, (item, il) in enumerate(zip(saved, input_lengths)):
            if item is None or (zero_infinity and nll[b] == np.inf):
                continue
            ext, alpha = item
            beta = _alpha_beta(lp[:il, b], ext, backward=True)
            ab = alpha + beta
            lcab = np.full((il, lp.shape[2]), -np.inf, dtype=lp.dtype)
            for c in np.unique(ext):
                cols = ab[:, ext == c]
                lcab[:, c] = _lse(*[cols[:, i] for i in range(cols.shape[1])])
            with np.errstate(over="ignore", invalid="ignore"):
                grad[:il, b] = (np.exp(lp[:il, b]) - np.exp(lcab + nll[b] - lp[:il, b])) * g[b]
        result = gt.tensor(grad, dtype=log_probs.dtype)
        if is_grad_enabled() and (log_probs.requires_grad or grad_output.requires_grad):
            result = _NotTwice.apply(result, log_probs)
        return result, None, None, None, None, None


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
    nll = _CTC.apply(log_probs, per_sample, ils, tls, int(blank), bool(zero_infinity))
    if zero_infinity:
        nll = gt.where(nll == float("inf"), gt.zeros((), dtype=nll.dtype), nll)
    if reduction == "mean":
        lengths = gt.tensor(tls, dtype=nll.dtype).clamp(min=1)
        return (nll / lengths).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
