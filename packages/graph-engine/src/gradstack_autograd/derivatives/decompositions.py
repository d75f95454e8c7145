"""Derivatives of the matrix functions with a factorization (tensor-core's
``_impl_decompositions.py``): ``linalg_inv``, ``linalg_det``, ``linalg_logabsdet`` (the
differentiable half of ``slogdet``), ``linalg_solve``, ``linalg_cholesky`` and
``linalg_svd``.

Each formula is written with gradstack ops (``inv``, ``solve``, matmul ...), so it
differentiates again, to any order, as torch's do.

Note [The gradient of a singular determinant]
``det(A)``'s gradient is its adjugate's transpose, ``det(A) * inv(A).mT`` when ``A`` is
invertible.  torch takes an SVD where it is not; here a batch with a singular matrix
builds the adjugate from the determinants of the minors (each a ``det`` again, so the
formula still differentiates to any order: the recursion stops at invertible minors or at
1x1 ones).  It costs ``n**2`` determinants of order ``n - 1``, on that rare path only.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import kernels
from gradstack_tensor import linalg as _linalg
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from ._formulas import _first_order_arrays
from ._table import jvp, register
from ._wirtinger import holomorphic
from .batching import per_sample

__all__: list[str] = []

_PER_SAMPLE = per_sample("a factorization of each matrix; rare inside vmap")


def _mT(t):
    return t.transpose(-1, -2)


def _expand_last_two(t):
    return t.unsqueeze(-1).unsqueeze(-1)


@register("linalg_inv(self)", "LinalgInvExBackward0", save="result", batch=_PER_SAMPLE)
@holomorphic
def _linalg_inv(ctx, grad):
    inverse = ctx.saved_value("result")
    return (-(_mT(inverse).matmul(grad).matmul(_mT(inverse))),)


@jvp("linalg_inv")
def _linalg_inv_jvp(args, out, tangents, lead):
    return -(out.matmul(tangents[0]).matmul(out))


def _inverse_if_invertible(a):
    """The inverses (a numpy array) of the matrices of ``a`` when every one is invertible
    to working precision (its condition number, 2-norm, below ``1 / eps``), else None.

    Note [Deciding invertibility without an SVD]
    np.linalg.cond is an SVD, ~10x an LU at n = 1000 (most of det's and slogdet's
    backward).  The 1-norm condition number from the inverse, c1 = |A|_1 |inv(A)|_1,
    bounds the 2-norm one within a factor n (c1 / n <= c2 <= n c1), so far from the
    threshold it decides alone: every c1 below 1 / (2 n eps) is invertible, any c1 from
    2 n / eps on (or an exactly singular matrix, which inv rejects) is not (the factors 2
    leave room for the computed inverse's rounding errors, small where c2 is far below
    1 / eps).  Between them the SVD decides, as before.
    """
    x = _data(a)
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    n, eps = x.shape[-1], np.finfo(x.dtype).eps
    try:
        with np.errstate(all="ignore"):
            inverse = _spd_inverse(x)
            if inverse is None:
                inverse = np.linalg.inv(x)
            c1 = np.linalg.norm(x, 1, axis=(-2, -1)) * np.linalg.norm(inverse, 1, axis=(-2, -1))
    except np.linalg.LinAlgError:
        return None  # an exactly singular matrix
    if np.all(np.isfinite(c1)):
        if np.all(c1 < 0.5 / (n * eps)):
            return inverse
        if np.any(c1 >= 2.0 * n / eps):
            return None
    return inverse if bool(np.all(np.linalg.cond(x) < 1.0 / eps)) else None


# Note [The inverse of a symmetric positive-definite matrix by its Cholesky factor]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# det's and slogdet's backward is the inverse, and numpy's (OpenBLAS's getrf + getrs) takes
# 1.5-2x torch's MKL at n = 1000 on one thread (inv 82-94 ms against torch's 54, lu_solve
# 40): below that only with a factorization of our own.  For a symmetric matrix (exactly:
# a covariance, a Gram matrix, a Hessian) the blocked Cholesky factor is ours (tensor-
# core's _triangular_arrays.py, on matrix products), so, as MATLAB's inv and mldivide do,
# it is tried first: inv(A) = L^-T L^-1 with L^-1 by the blocked triangular solve, ~45 ms
# at n = 1000 float32.  A matrix that is not positive-definite fails the factor and takes
# numpy's inverse (the check and the failed attempt cost ~1-10 ms there); below 192 rows
# numpy's is as fast.  The inverse is the same to rounding (both backward stable for an
# SPD matrix); the invertibility decision after it is unchanged.

_SPD_INVERSE_FROM = 192


def _spd_inverse(x):
    """``inv(x)`` by the Cholesky factor when every matrix of ``x`` is symmetric positive-
    definite (Note [The inverse of a symmetric positive-definite matrix by its Cholesky
    factor]), else None."""
    n = x.shape[-1]
    if (
        n < _SPD_INVERSE_FROM
        or x.dtype not in (np.dtype(np.float32), np.dtype(np.float64))
        or not np.array_equal(x, np.swapaxes(x, -1, -2))
    ):
        return None
    try:
        low = kernels.cholesky_lower(x)
    except np.linalg.LinAlgError:
        return None
    inverse_low = kernels.solve_triangular(low, np.eye(n, dtype=x.dtype), upper=False)
    return np.swapaxes(inverse_low, -1, -2) @ inverse_low


def _adjugate(a):
    """The adjugate of each matrix in ``a`` from the determinants of its minors (Note [The
    gradient of a singular determinant])."""
    n = a.shape[-1]
    if n == 1:
        return gt.ones_like(a)
    rows = []
    for i in range(n):
        keep_i = [r for r in range(n) if r != i]
        row = []
        for j in range(n):
            keep_j = [c for c in range(n) if c != j]
            minor = a[..., keep_i, :][..., :, keep_j]
            cofactor = _linalg.det(minor)
            row.append(cofactor if (i + j) % 2 == 0 else -cofactor)
        rows.append(gt.stack(row, -1))
    cofactors = gt.stack(rows, -2)
    return _mT(cofactors)


def _det_gradient_matrix(a, det, arrays=False):
    """``d det(A) / dA``: the adjugate's transpose (``arrays`` as for
    :func:`_logabsdet_gradient_matrix`)."""
    inverse = _inverse_if_invertible(a)
    if inverse is not None:
        if arrays:
            inv_t = _wrap(np.ascontiguousarray(np.swapaxes(inverse, -1, -2)))
            return _expand_last_two(det) * inv_t
        return _expand_last_two(det) * _mT(_linalg.inv(a))
    return _mT(_adjugate(a))


@register("linalg_det(self)", "LinalgDetBackward0", save="self, result", batch=_PER_SAMPLE)
@holomorphic
def _linalg_det(ctx, grad):
    a, det = ctx.saved_value("self"), ctx.saved_value("result")
    return (_expand_last_two(grad) * _det_gradient_matrix(a, det, _first_order_arrays(grad)),)


@jvp("linalg_det")
def _linalg_det_jvp(args, out, tangents, lead):
    grad_matrix = _det_gradient_matrix(args[0], out)
    return (grad_matrix * tangents[0]).sum((-2, -1))


def _logabsdet_gradient_matrix(a, arrays=False):
    """``d log|det(A)| / dA = inv(A).mT``; NaN for a singular matrix (torch's LU
    divides by its zero pivot).  ``arrays``: a first-order backward, which takes the
    inverse the invertibility check computed (np.linalg.inv: linalg_inv's kernel)."""
    inverse = _inverse_if_invertible(a)
    if inverse is not None:
        if arrays:
            return _wrap(np.ascontiguousarray(np.swapaxes(inverse, -1, -2)))
        return _mT(_linalg.inv(a))
    x = _data(a)
    singular = np.linalg.cond(x) >= 1.0 / np.finfo(x.dtype).eps
    safe = gt.where(
        gt.tensor(singular[..., None, None]), gt.eye(a.shape[-1], dtype=a.dtype), a.detach()
    )
    inverse = _mT(_linalg.inv(safe))
    return gt.where(gt.tensor(singular[..., None, None]), float("nan"), inverse)


@register("linalg_logabsdet(self)", "LinalgSlogdetBackward0", save="self", batch=_PER_SAMPLE)
def _linalg_logabsdet(ctx, grad):
    a = ctx.saved_value("self")
    return (_expand_last_two(grad) * _logabsdet_gradient_matrix(a, _first_order_arrays(grad)),)


@jvp("linalg_logabsdet")
def _linalg_logabsdet_jvp(args, out, tangents, lead):
    return (_logabsdet_gradient_matrix(args[0]) * tangents[0]).sum((-2, -1))


def _as_matrix(b, vector):
    return b.unsqueeze(-1) if vector else b


@register(
    "linalg_solve(self, B, left)",
    "LinalgSolveExBackward0",
    inputs="self, B",
    save="self, left, result",
    batch=_PER_SAMPLE,
)
@holomorphic
def _linalg_solve(ctx, grad):
    a, left, x = (ctx.saved_value(k) for k in ("self", "left", "result"))
    # B was a (batch of) vector(s) exactly when X has A's shape without its last dim
    vector = x.dim() == a.dim() - 1 and tuple(x.shape) == tuple(a.shape[:-1])
    g = _as_matrix(grad, vector)
    xm = _as_matrix(x, vector)
    if left:  # A X = B: gB = A^-T G, gA = -gB X^T
        g_b = _linalg.solve(_mT(a), g)
        g_a = -g_b.matmul(_mT(xm))
    else:  # X A = B: gB = G A^-T, gA = -X^T gB
        g_b = _linalg.solve(_mT(a), g, left=False)
        g_a = -_mT(xm).matmul(g_b)
    return (g_a, g_b.squeeze(-1) if vector else g_b)


def _batch_aligned(t, rank, out_rank, lead):
    """Tangent ``t`` (``lead`` dims, then ``rank`` dims) with singleton batch dims
    inserted after ``lead``, so that it broadcasts against the output's ``out_rank``."""
    if t is None or not lead or rank >= out_rank:
        return t
    shape = tuple(t.shape)
    n = len(lead)
    return t.reshape(shape[:n] + (1,) * (out_rank - rank) + shape[n:])


@jvp("linalg_solve")
def _linalg_solve_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    left = args[2] if len(args) > 2 else True
    vector = out.dim() == a.dim() - 1 and tuple(out.shape) == tuple(a.shape[:-1])
    xm = _as_matrix(out, vector)
    # batched tangents carry ``lead`` dims first: give each the output's batch dims
    ta = _batch_aligned(tangents[0], a.dim(), xm.dim(), lead)
    tb = tangents[1]
    if tb is not None:
        tb = _batch_aligned(_as_matrix(tb, vector), b.dim() + vector, xm.dim(), lead)
    rhs = tb
    if ta is not None:  # d(A X) = dB  =>  A dX = dB - dA X  (X dA + dX A for left=False)
        da_x = ta.matmul(xm) if left else xm.matmul(ta)
        rhs = -da_x if rhs is None else rhs - da_x
    dx = _linalg.solve(a, rhs, left=left)
    return dx.squeeze(-1) if vector else dx


def _phi(x):
    """The strict lower triangle plus half the diagonal."""
    return x.tril(-1) + 0.5 * (x - x.tril(-1) - x.triu(1))


@register(
    "linalg_cholesky(self, upper)",
    "LinalgCholeskyExBackward0",
    save="upper, result",
    batch=_PER_SAMPLE,
)
def _linalg_cholesky(ctx, grad):
    # torch's cholesky_backward (Iain Murray, arXiv 1602.07527):
    # L^-H Phi(L^H gL), symmetrised, then L^-1 on the right
    upper, low = ctx.saved_value("upper"), ctx.saved_value("result")
    if _first_order_arrays(grad) and _data(low).dtype == _data(grad).dtype:
        return (_wrap(_cholesky_backward_arrays(_data(low), _data(grad), upper)),)
    g = grad
    if upper:
        low, g = _mT(low), _mT(g)
    ga = _mT(low).matmul(g).tril()
    ga = 0.5 * (ga + _mT(ga.tril(-1)))
    ga = _linalg.solve(_mT(low), ga)
    ga = _linalg.solve(low, ga, left=False)
    return (ga,)


def _cholesky_backward_arrays(low, g, upper):
    """torch's cholesky_backward on arrays (first order): its formula above, with its
    two triangular solves by tensor-core's blocked ``solve_triangular`` (Note [Triangular
    solves by recursive halving]) where ``linalg.solve`` factored each triangle as a
    general matrix (~2.7x the flops)."""
    if upper:
        low, g = np.swapaxes(low, -1, -2), np.swapaxes(g, -1, -2)
    low_t = np.swapaxes(low, -1, -2)
    ga = np.tril(low_t @ g)
    ga = 0.5 * (ga + np.swapaxes(np.tril(ga, -1), -1, -2))
    n = low.shape[-1]
    if n <= _SMALL_CHOLESKY:
        # L^-T ga L^-1 with L^-1 made once: two products where two solves cost twice the
        # numpy calls (n = 100, float32: 408 -> 280 us, CPU time; the solves' forward
        # error bound, cond(L) eps, holds for the products of the inverse as well)
        inverse = kernels.solve_triangular(low, np.eye(n, dtype=low.dtype), upper=False)
        ga = np.swapaxes(inverse, -1, -2) @ ga @ inverse
    else:
        ga = kernels.solve_triangular(low_t, ga, upper=True)
        ga = kernels.solve_triangular(low, ga, upper=False, left=False)
    return np.ascontiguousarray(ga, dtype=g.dtype)


_SMALL_CHOLESKY = 128  # (the products cost 4 n**3 flops where the solves take 2 n**3)


@jvp("linalg_cholesky")
def _linalg_cholesky_jvp(args, out, tangents, lead):
    # dL = L Phi(L^-1 dA L^-T)
    upper = args[1] if len(args) > 1 else False
    low = _mT(out) if upper else out
    inner = _linalg.solve(low, _linalg.solve(low, tangents[0]).transpose(-1, -2))
    inner = _mT(inner)
    d_low = low.matmul(_phi(inner))
    return _mT(d_low) if upper else d_low


def _svd_backward(g_u, g_s, g_vh, u, s, vh):
    """torch's ``svd_backward`` (FunctionsManual.cpp) for real inputs and the reduced
    factors: ``gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] V^T`` with
    ``E_ij = s_j^2 - s_i^2`` (1 on the diagonal), plus the terms of the columns outside
    ``U`` (``m > n``) or rows outside ``Vh`` (``m < n``)."""
    m, n = u.shape[-2], vh.shape[-1]
    if g_u is None and g_vh is None:
        if g_s is None:
            return None
        if m >= n:
            return u.matmul(g_s.unsqueeze(-1) * vh)
        return (u * g_s.unsqueeze(-2)).matmul(vh)

    def skew(a):
        return a - _mT(a)

    s2 = s * s
    k = s.shape[-1]
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + gt.eye(k, dtype=s.dtype)
    uhgu = skew(_mT(u).matmul(g_u)) if g_u is not None else None
    vhgv = skew(vh.matmul(_mT(g_vh))) if g_vh is not None else None
    if uhgu is not None and vhgv is not None:
        g_a = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / e
    elif uhgu is None:
        g_a = s.unsqueeze(-1) * vhgv / e
    else:
        g_a = uhgu * s.unsqueeze(-2) / e
    if g_s is not None:
        g_a = g_a + gt.diag_embed(g_s)
    if m > n and g_u is not None:
        g_a = u.matmul(g_a)
        g_u_sinv = g_u / s.unsqueeze(-2)
        g_a = g_a + g_u_sinv - u.matmul(_mT(u).matmul(g_u_sinv))
        return g_a.matmul(vh)
    if m < n and g_vh is not None:
        g_a = g_a.matmul(vh)
        sinv_g_vh = g_vh / s.unsqueeze(-1)
        g_a = g_a + sinv_g_vh - sinv_g_vh.matmul(_mT(vh)).matmul(vh)
        return u.matmul(g_a)
    return u.matmul(g_a.matmul(vh)) if m >= n else u.matmul(g_a).matmul(vh)


@register(
    "linalg_svd(self, full_matrices)",
    "LinalgSvdBackward0",
    save="full_matrices, result",
    batch=_PER_SAMPLE,
)
def _linalg_svd(ctx, g_u=None, g_s=None, g_vh=None):
    full, (u, s, vh) = ctx.saved_value("full_matrices"), ctx.saved_value("result")
    k = s.shape[-1]
    if full:  # torch narrows the full factors (and their gradients) to the reduced ones
        u, vh = u.narrow(-1, 0, k), vh.narrow(-2, 0, k)
        g_u = g_u.narrow(-1, 0, k) if g_u is not None else None
        g_vh = g_vh.narrow(-2, 0, k) if g_vh is not None else None
    return (_svd_backward(g_u, g_s, g_vh, u, s, vh),)


@jvp("linalg_svd")
def _linalg_svd_jvp(args, out, tangents, lead):
    # dP = U^T dA V; dS = diag(dP); U^T dU and V^T dV are the skew matrices solving
    # dP = (U^T dU) S + dS - S (V^T dV) off the diagonal (torch's linalg_svd_jvp, real case)
    full = args[1] if len(args) > 1 else True
    u, s, vh = out
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full and m != n:
        raise NotImplementedError(
            "linalg_svd_jvp: forward-mode AD of linalg.svd with full_matrices=True is only "
            "defined for square matrices (torch's too): use full_matrices=False"
        )
    da = tangents[0]
    v = _mT(vh)
    dp = _mT(u).matmul(da).matmul(v)
    ds = dp.diagonal(0, -2, -1)
    s2 = s * s
    off = 1.0 - gt.eye(k, dtype=s.dtype)
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + gt.eye(k, dtype=s.dtype)
    omega_u = (dp * s.unsqueeze(-2) + s.unsqueeze(-1) * _mT(dp)) / e * off
    omega_v = (s.unsqueeze(-1) * dp + _mT(dp) * s.unsqueeze(-2)) / e * off
    du = u.matmul(omega_u)
    dv = v.matmul(omega_v)
    if m > k:  # the part of dA V outside U's columns
        rest = da.matmul(v) / s.unsqueeze(-2)
        du = du + rest - u.matmul(_mT(u).matmul(rest))
    if n > k:  # the part of dA^T U outside V's columns
        rest = _mT(da).matmul(u) / s.unsqueeze(-2)
        dv = dv + rest - v.matmul(_mT(v).matmul(rest))
    return (du, ds, _mT(dv))
