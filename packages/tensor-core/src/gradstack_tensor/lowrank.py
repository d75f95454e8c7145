"""torch's randomized low-rank factorizations: ``svd_lowrank`` and ``pca_lowrank``
(Halko, Martinsson and Tropp, "Finding structure with randomness", 2009: a basis of the
range from a Gaussian sketch refined by subspace iterations, algorithms 4.4 and 5.1).

Compositions of ``randn``, ``linalg.qr``, ``linalg.svd`` and matmul: the draws are
torch's after the same ``manual_seed``, so are the factors (up to the LAPACK build's
rounding), and the gradients are autograd's.

Examples
--------
>>> import gradstack_tensor as gt
>>> _ = gt.manual_seed(0)
>>> a = gt.tensor([[3.0, 0.0], [0.0, 1.0]], dtype=gt.float64)
>>> U, S, V = svd_lowrank(a, q=2)
>>> [round(s, 6) for s in S.tolist()]
[3.0, 1.0]
"""

from __future__ import annotations

from ._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal ``Q`` (``m x q``) with ``Q Q^H (A - M)`` close to ``A - M``: the
    range of ``(A - M) R`` for a Gaussian ``R`` (``n x q``), refined ``niter`` times by
    alternating with ``(A - M)^H``."""
    import gradstack_tensor as gt

    dtype = A.dtype if A.is_complex() or A.is_floating_point() else gt.float32
    if dtype == gt.float16 or (not A.is_complex() and dtype not in (gt.float32, gt.float64)):
        dtype = gt.float32 if dtype != gt.float16 else dtype
    R = gt.randn(A.shape[-1], q, dtype=dtype)

    def times(X, Y, Z):  # (X - Z) Y without forming X - Z
        return X.matmul(Y) if Z is None else X.matmul(Y) - Z.matmul(Y)

    Q = gt.linalg.qr(times(A, R, M)).Q
    for _ in range(niter):
        Q = gt.linalg.qr(times(A.mH, Q, None if M is None else M.mH)).Q
        Q = gt.linalg.qr(times(A, Q, M)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None):
    import gradstack_tensor as gt

    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:  # work on the tall orientation
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = gt.linalg.svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    """An approximate truncated SVD ``A ~ U diag(S) V^H`` (of ``A - M`` when ``M`` is
    given) of rank ``q``, from ``niter`` subspace iterations on a random sketch: the tuple
    ``(U, S, V)``.  Reset the seed for repeatable results."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """The principal components of the rows of ``A``: :func:`svd_lowrank` of ``A`` minus
    its column means (``center``), ``q`` defaulting to ``min(6, m, n)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> U, S, V = pca_lowrank(gt.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=gt.float64), q=1)
    >>> [round(s, 6) for s in S.tolist()]
    [1.414214]
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)
