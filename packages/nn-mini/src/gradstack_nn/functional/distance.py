"""Distances and similarities as functions: ``cosine_similarity``, ``pairwise_distance``,
``cdist`` and ``pdist``, composed of norms and elementwise ops as torch composes them.

Examples
--------
>>> import gradstack_tensor as gt
>>> cosine_similarity(gt.tensor([[1.0, 0.0]]), gt.tensor([[1.0, 1.0]])).tolist()
[0.7071067690849304]
>>> pairwise_distance(gt.tensor([[0.0, 0.0]]), gt.tensor([[3.0, 4.0]]), eps=0.0).tolist()
[5.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ._utils import _check_tensor, _type_name

__all__ = ["cosine_similarity", "pairwise_distance", "cdist", "pdist"]


def _clamped_by_value(n: Tensor, eps: float) -> Tensor:
    """``max(n, eps)`` whose gradient is ``n``'s: torch clamps the norms in place under
    no_grad, so the clamp does not stop their gradient."""
    return n + (n.clamp(min=eps) - n).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast),
    each norm clamped below by ``eps``."""
    a = _check_tensor(x1, "cosine_similarity", "x1")
    b = _check_tensor(x2, "cosine_similarity", "x2")
    a, b = gt.broadcast_tensors(a, b)
    na = _clamped_by_value(a.norm(2, dim, keepdim=True), eps)
    nb = _clamped_by_value(b.norm(2, dim, keepdim=True), eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim."""
    a = _check_tensor(x1, "pairwise_distance", "x1")
    b = _check_tensor(x2, "pairwise_distance", "x2")
    d = a - b + eps
    if d.dim() == 0:
        return d.abs() if p != 0 else (d != 0).to(d.dtype)
    return d.norm(p, -1, keepdim=keepdim)


_CDIST_MODES = (
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


def _euclidean_by_products(a: Tensor, b: Tensor) -> Tensor:
    """torch's ``_euclidean_dist``: ``||a||^2 - 2 a.b + ||b||^2`` as one product of padded
    matrices, clamped at 1e-30 before the square root (Note [cdist's two ways])."""
    a_norm = a.pow(2).sum(-1, keepdim=True)
    b_norm = b.pow(2).sum(-1, keepdim=True)
    a_ = gt.cat([a * -2, a_norm, gt.ones_like(a_norm)], -1)
    b_ = gt.cat([b, gt.ones_like(b_norm), b_norm], -1)
    return a_.matmul(b_.transpose(-1, -2)).clamp_min(1e-30).sqrt()


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """The ``p``-norm distances between the rows of ``x1`` (``(..., P, M)``) and of ``x2``
    (``(..., R, M)``): a ``(..., P, R)`` tensor, batch dims broadcast.

    Note [cdist's two ways]
    As torch: for ``p == 2`` with more than 25 rows on either side (or
    ``compute_mode="use_mm_for_euclid_dist"``) the distances come from one matrix product
    (``||a||^2 - 2 a.b + ||b||^2``, faster, less exact for close points); otherwise from
    the differences themselves.  The gradient at a zero distance is 0.  Known difference:
    the direct way differentiates to second order here; torch's ``_cdist_backward`` has no
    derivative.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cdist(gt.tensor([[0.0, 0.0], [3.0, 4.0]]), gt.tensor([[0.0, 0.0]])).tolist()
    [[0.0], [5.0]]
    """
    a = _check_tensor(x1, "cdist", "x1")
    b = _check_tensor(x2, "cdist", "x2")
    for name, t in (("X1", a), ("X2", b)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
        if not t.is_floating_point():
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_type_name(t)}"
            )
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = compute_mode or _CDIST_MODES[0]
    if mode not in _CDIST_MODES:
        raise ValueError(f"{mode} is not a valid value for compute_mode")
    batch = gt.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a = a.expand((*batch, *a.shape[-2:]))
    b = b.expand((*batch, *b.shape[-2:]))
    rows_a, rows_b = a.shape[-2], b.shape[-2]
    use_mm = p == 2 and (
        mode == "use_mm_for_euclid_dist"
        or (mode == _CDIST_MODES[0] and (rows_a > 25 or rows_b > 25))
    )
    if use_mm and rows_a and rows_b:
        return _euclidean_by_products(a, b)
    diff = a.unsqueeze(-2) - b.unsqueeze(-3)  # (..., P, R, M)
    if diff.shape[-1] == 0:
        return gt.zeros(tuple(diff.shape[:-1]), dtype=a.dtype)
    return gt.linalg.vector_norm(diff, p, dim=-1)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of the 2-D
    ``input``, in row-major order of the pairs: ``N * (N - 1) / 2`` values.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pdist(gt.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])).tolist()
    [5.0, 10.0, 5.0]
    """
    x = _check_tensor(input, "pdist", "input")
    if x.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.dim()}D")
    if not x.is_floating_point():
        raise RuntimeError(f"pdist only supports floating-point dtypes, got: {_type_name(x)}")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = x.shape[0]
    rows, cols = gt.triu_indices(n, n, 1)
    diff = x.index_select(0, rows) - x.index_select(0, cols)
    if diff.shape[-1] == 0:
        return gt.zeros(diff.shape[0], dtype=x.dtype)
    return gt.linalg.vector_norm(diff, p, dim=-1)
