"""torch's ``logcumsumexp``: a cumulative log-sum-exp along a dim, as a log-space scan of
``logaddexp`` (Note [logcumsumexp is a log-space scan]), so that it differentiates through
``logaddexp`` and ``cat``.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.logcumsumexp(gt.tensor([-1000.0, 1000.0, 0.0]), 0).tolist()
[-1000.0, 1000.0, 1000.0]
"""

from __future__ import annotations

from ._composite_args import _floating, _gt, _int, _name, _tensor
from ._shapes import _normalize_dim
from ._tensor import Tensor

__all__ = ["logcumsumexp"]


def logcumsumexp(input, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow or underflow: each element is the
    log-sum-exp of the elements up to it, exact for inputs spanning any range and -inf.

    Note [logcumsumexp is a log-space scan]
    ``log(cumsum(exp(x - c)))`` with one shift ``c`` underflows to -inf wherever the
    running sum is far below ``c`` (values from -1000 to 1000).  torch scans with a running
    ``logaddexp``; here the scan is Hillis-Steele's: ``ceil(log2 n)`` rounds of
    ``y[k:] = logaddexp(y[k:], y[:-k])`` for k = 1, 2, 4 ..., each a handful of
    differentiable ops (``logaddexp`` is stable, and exact for equal infinities), so the
    graph has O(log n) nodes, not O(n).  The sums are grouped differently from torch's
    running sum: values agree to a few ulps, not bit for bit.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in gt.logcumsumexp(gt.tensor([0.0, 0.0, 0.0]), 0).tolist()]
    [0.0, 0.6931, 1.0986]
    """
    gt = _gt()
    x = _tensor(input, "logcumsumexp")
    dim = _int(dim, "logcumsumexp", "dim")
    if not _floating(x.dtype):
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_name(x.dtype)}'"
        )
    axis = _normalize_dim(dim, x.dim())
    if x.dim() == 0 or x.shape[axis] <= 1:
        return x.clone()
    n = x.shape[axis]
    y = x
    k = 1
    while k < n:
        tail = gt.logaddexp(y.narrow(axis, k, n - k), y.narrow(axis, 0, n - k))
        y = gt.cat([y.narrow(axis, 0, k), tail], axis)
        k *= 2
    return y
