"""The triangular solves the multivariate distributions need and tensor-core does not
have yet: ``linalg.solve_triangular`` (left side), ``cholesky_solve`` and
``cholesky_inverse``, differentiable (any order) with torch's gradient formulas, and
torch's broadcasting of batch dims.

Note [A triangular solve in the distributions package]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``MultivariateNormal``'s Mahalanobis distance, ``LowRankMultivariateNormal`` and the KL
divergences between them call ``torch.linalg.solve_triangular``; numpy has no triangular
solve and a general ``solve`` would spend an LU factorisation, pivot, and give the upper
triangle of the matrix a gradient that torch's does not.  So :func:`solve_triangular` is a
custom ``Function`` here: column-oriented substitution (the order of the reference BLAS
``trsm``) in numpy for the forward, and the backward written with itself, ``B``'s gradient
``A^-T G`` and ``A``'s ``-tril(A^-T G X^T)`` (``triu`` for ``upper``), so that it
differentiates again.  LAPACK's blocked kernels round differently: values agree with
torch's to a few ulps, not bit for bit.  It belongs in tensor-core's linalg with the other
solvers; the distributions would then call that one.

Examples
--------
>>> import gradstack_tensor as gt
>>> L = gt.tensor([[2.0, 0.0], [1.0, 1.0]], dtype=gt.float64)
>>> solve_triangular(L, gt.tensor([[2.0], [3.0]], dtype=gt.float64), upper=False).tolist()
[[1.0], [2.0]]
"""

from __future__ import annotations

import numpy as np
from gradstack_autograd import Function
from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of, wrap

__all__ = ["solve_triangular", "cholesky_solve", "cholesky_inverse"]


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """``a^-1 b`` for triangular ``a`` (..., n, n) and ``b`` (..., n, k), broadcast."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = np.result_type(a, b)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=dtype)
    n = a.shape[-1]
    with np.errstate(all="ignore"):
        for k in reversed(range(n)) if upper else range(n):
            x[..., k, :] /= a[..., k, k, None]
            rest = slice(0, k) if upper else slice(k + 1, n)
            x[..., rest, :] -= a[..., rest, k, None] * x[..., k, None, :]
    return x


def _sum_to(t: Tensor, shape) -> Tensor:
    """``t`` summed over the dims it was broadcast along, back to ``shape``."""
    lead = t.dim() - len(shape)
    if lead:
        t = t.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and t.shape[i] != 1)
    return t.sum(dims, keepdim=True) if dims else t


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper):
        X = wrap(_substitute(data_of(A), data_of(B), upper))
        ctx.save_for_backward(A, X)
        ctx.upper = upper
        ctx.shapes = (tuple(A.shape), tuple(B.shape))
        return X

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        a_shape, b_shape = ctx.shapes
        grad_b = solve_triangular(A.mT, grad, upper=not ctx.upper)
        grad_a = None
        if ctx.needs_input_grad[0]:
            product = -(grad_b @ X.mT)
            grad_a = _sum_to(product.triu() if ctx.upper else product.tril(), a_shape)
        return grad_a, _sum_to(grad_b, b_shape), None


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True) -> Tensor:
    """``torch.linalg.solve_triangular`` with ``left=True``: ``X`` with ``A X = B`` for
    (batches of) triangular ``A`` (only its ``upper`` or lower triangle is read).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> U = gt.tensor([[1.0, 2.0], [0.0, 4.0]])
    >>> solve_triangular(U, gt.tensor([[5.0], [4.0]]), upper=True).tolist()
    [[3.0], [1.0]]
    """
    if not left:
        raise NotImplementedError("solve_triangular(left=False) is not implemented in gradstack")
    if B.dim() < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.solve_triangular: A must be batches of square matrices, but they are "
            f"{A.shape[-2] if A.dim() >= 2 else ''} by {A.shape[-1] if A.dim() else ''} matrices"
        )
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    B = B.to(A.dtype)  # torch's result has A's dtype
    return _SolveTriangular.apply(A, B, upper)


class _CholeskySolve(Function):
    @staticmethod
    def forward(ctx, B, L, upper):
        a, b = data_of(L), data_of(B)
        a_t = np.swapaxes(a, -1, -2)
        if upper:  # U^T U X = B
            X = _substitute(a, _substitute(a_t, b, upper=False), upper=True)
        else:  # L L^T X = B
            X = _substitute(a_t, _substitute(a, b, upper=False), upper=True)
        X = wrap(X)
        ctx.save_for_backward(L, X)
        ctx.upper = upper
        ctx.shapes = (tuple(B.shape), tuple(L.shape))
        return X

    @staticmethod
    def backward(ctx, grad):
        # torch's cholesky_solve_backward: the factor's gradient is not projected onto its
        # triangle (torch's formula reads L as a full matrix)
        L, X = ctx.saved_tensors
        b_shape, l_shape = ctx.shapes
        grad_b = cholesky_solve(grad, L, upper=ctx.upper)
        grad_l = None
        if ctx.needs_input_grad[1]:
            common = grad_b @ X.mT
            common = common + common.mT
            grad_l = _sum_to(-(L @ common) if ctx.upper else -(common @ L), l_shape)
        return _sum_to(grad_b, b_shape), grad_l, None


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_solve``: ``X`` with ``(L L^T) X = B`` (``U^T U`` for ``upper``),
    two triangular solves as LAPACK's ``potrs``, with torch's gradients.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> L = gt.tensor([[2.0, 0.0], [1.0, 1.0]], dtype=gt.float64)
    >>> cholesky_solve(gt.tensor([[4.0], [3.0]], dtype=gt.float64), L).tolist()
    [[0.5], [1.0]]
    """
    return _CholeskySolve.apply(B, L, upper)


class _CholeskyInverse(Function):
    @staticmethod
    def forward(ctx, L, upper):
        a = data_of(L)
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        a_t = np.swapaxes(a, -1, -2)
        if upper:
            inverse = _substitute(a, _substitute(a_t, eye, upper=False), upper=True)
        else:
            inverse = _substitute(a_t, _substitute(a, eye, upper=False), upper=True)
        inverse = wrap(inverse)
        ctx.save_for_backward(L, inverse)
        ctx.upper = upper
        return inverse

    @staticmethod
    def backward(ctx, grad):
        # torch's cholesky_inverse_backward (not projected onto the triangle either)
        L, inverse = ctx.saved_tensors
        common = inverse @ ((grad + grad.mT) @ inverse)
        return (-(L @ common) if ctx.upper else -(common @ L)), None


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_inverse``: ``(L L^T)^-1`` from the Cholesky factor ``L``, with
    torch's gradient.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cholesky_inverse(gt.tensor([[2.0, 0.0], [0.0, 0.5]])).tolist()
    [[0.25, 0.0], [0.0, 4.0]]
    """
    return _CholeskyInverse.apply(L, upper)
