"""``normalize``, ``cosine_similarity`` and ``pairwise_distance``, composed of norms and
elementwise ops as torch composes them.

Examples
--------
>>> import gradstack_tensor as gt
>>> [round(v, 4) for v in normalize(gt.tensor([[3.0, 4.0]]))[0].tolist()]
[0.6, 0.8]
>>> cosine_similarity(gt.tensor([[1.0, 0.0]]), gt.tensor([[1.0, 1.0]])).tolist()
[0.7071067690849304]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = ["normalize", "cosine_similarity", "pairwise_distance"]


def _tensor(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    x = _tensor(input, "normalize", "input")
    denom = x.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(x)
    if out is None:
        return x / denom
    return out.copy_(x / denom)


def _clamped_by_value(n: Tensor, eps: float) -> Tensor:
    """``max(n, eps)`` whose gradient is ``n``'s: torch clamps the norms in place under
    no_grad, so the clamp does not stop their gradient."""
    return n + (n.clamp(min=eps) - n).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast),
    each norm clamped below by ``eps``."""
    a = _tensor(x1, "cosine_similarity", "x1")
    b = _tensor(x2, "cosine_similarity", "x2")
    a, b = gt.broadcast_tensors(a, b)
    na = _clamped_by_value(a.norm(2, dim, keepdim=True), eps)
    nb = _clamped_by_value(b.norm(2, dim, keepdim=True), eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim."""
    a = _tensor(x1, "pairwise_distance", "x1")
    b = _tensor(x2, "pairwise_distance", "x2")
    d = a - b + eps
    if d.dim() == 0:
        return d.abs() if p != 0 else (d != 0).to(d.dtype)
    return d.norm(p, -1, keepdim=keepdim)
