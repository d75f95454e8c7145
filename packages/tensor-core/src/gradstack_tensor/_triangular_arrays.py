"""Triangular solves and the Cholesky factor on arrays, blocked so that BLAS products
do the work.

numpy has no triangular solve (``np.linalg.solve`` factors the triangular matrix as a
general one: ~2.7 n**3 flops where a triangular solve takes n**3), and its Cholesky
factor is LAPACK's potrf of the bundled OpenBLAS, ~2x MKL's (torch's) at n = 1000 on one
thread, while numpy's matrix products run as fast as torch's.  So both are written here
as recursions on halves whose work is matrix products (Note [Triangular solves by
recursive halving]).  tensor-core's ``linalg_cholesky`` and graph-engine's
``LinalgCholeskyExBackward0`` (torch's ``cholesky_backward``: two triangular solves) call
them on float32/float64 arrays.  Public as ``gradstack_tensor.kernels``.

Note [Triangular solves by recursive halving]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For ``U X = B`` with ``U`` upper triangular, split at ``h``::

    [U11 U12] [X1]   [B1]
    [ 0  U22] [X2] = [B2]   =>   X2 = U22 \\ B2,  X1 = U11 \\ (B1 - U12 X2)

(lower triangular: the mirror image, ``X1`` first), recursively, down to blocks of at
most ``_BLOCK`` rows, solved as the block's inverse (``np.linalg.inv`` of its triangle,
the other triangle zeroed first) times the block of ``B``.  All but ~n * _BLOCK * m of
the n**2 m flops are the products ``U12 X2``.  (``np.linalg.solve`` for the blocks took
twice as long: it copies each block of ``B`` to Fortran order and back.  The inverse of
a triangular block of 64 rows has the same forward error bound as its solve, ~cond *
eps.)  The Cholesky factor is the same recursion (Gustavson's recursive potrf): ``L11 =
chol(A11)``, ``L21 = A21 L11^-T`` (a triangular solve), ``L22 = chol(A22 - L21
L21^T)``, n**3 / 2 flops of which all but the blocks' are products, against LAPACK's
n**3 / 3 in its own slower kernels.

Measured at n = 1000, float32, one thread (CPU time, min of 5, loaded host): a solve
with 1000 right-hand sides 13.6 ms (np.linalg.solve 102 ms, torch's solve_triangular
16.7 ms; _BLOCK 32: 12.9, 128: 15.3); the factor 9.6 ms (numpy's potrf 12.7 ms, torch's
6.6 ms; blocks of 128: 11.7).  The factor pays from ~200 rows only (at 100, 98 us
against potrf's 40): ``linalg_cholesky`` takes it from 192.  The roundings differ from
LAPACK's blocked ones as any two blockings do (backward stable all the same; the results
agree with torch's to float32 rounding of the problem's condition).

Examples
--------
>>> import numpy as np
>>> u = np.array([[2.0, 1.0], [0.0, 4.0]])
>>> solve_triangular(u, np.array([[4.0], [8.0]]), upper=True)
array([[1.],
       [2.]])
>>> cholesky_lower(np.array([[4.0, 2.0], [2.0, 2.0]]))
array([[2., 0.],
       [1., 1.]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["cholesky_lower", "solve_triangular"]

# rows of the blocks np.linalg takes (Note [Triangular solves by recursive halving])
BLOCK = _BLOCK = 64
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check(func: str, name: str, a) -> None:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{func}: {name} must be a numpy array, got {type(a).__name__}")
    if a.dtype not in _FLOATS:
        raise TypeError(f"{func}: {name} must be float32 or float64, got {a.dtype}; cast it")
    if a.ndim < 2:
        raise ValueError(f"{func}: {name} must be a (batch of) matrices, got shape {a.shape}")


def _split(n: int) -> int:
    """Where to halve n rows: a multiple of 16 (whole vectors for the products)."""
    h = n // 2
    return h - h % 16 if h > 16 else h


def _solve_block(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """A \\ b for a block of at most _BLOCK rows: the inverse of its triangle (the other
    one is not read) times b (Note [Triangular solves by recursive halving])."""
    return np.linalg.inv(np.triu(a) if upper else np.tril(a)) @ b


def _solve_into(a: np.ndarray, b: np.ndarray, upper: bool) -> None:
    """b := A \\ b for triangular A (b a writable view; Note [Triangular solves by
    recursive halving])."""
    n = a.shape[-1]
    if n <= _BLOCK:
        b[...] = _solve_block(a, b, upper)
        return
    h = _split(n)
    if upper:
        _solve_into(a[..., h:, h:], b[..., h:, :], True)
        b[..., :h, :] -= a[..., :h, h:] @ b[..., h:, :]
        _solve_into(a[..., :h, :h], b[..., :h, :], True)
    else:
        _solve_into(a[..., :h, :h], b[..., :h, :], False)
        b[..., h:, :] -= a[..., h:, :h] @ b[..., :h, :]
        _solve_into(a[..., h:, h:], b[..., h:, :], False)


def solve_triangular(a, b, *, upper: bool, left: bool = True) -> np.ndarray:
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A`` triangular, as a new array.

    Only the triangle of ``A`` that `upper` names is read.  Batch dims broadcast.

    Parameters
    ----------
    a : ndarray
        ``(..., n, n)`` float32/float64, its diagonal non-zero.
    b : ndarray
        ``(..., n, m)`` (``left``) or ``(..., m, n)``, `a`'s dtype.
    upper : bool
        `a` is upper (else lower) triangular.
    left : bool, optional
        Solve ``A X = B`` (else ``X A = B``).

    Returns
    -------
    ndarray
        ``X``, of the broadcast batch shape and `b`'s matrix shape.

    Raises
    ------
    TypeError, ValueError
        Non-float or mismatched arrays, or shapes that do not fit.
    numpy.linalg.LinAlgError
        A zero on the diagonal of `a`.

    Examples
    --------
    >>> import numpy as np
    >>> low = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> solve_triangular(low, np.array([[2.0, 4.0]]), upper=False, left=False)
    array([[-1.,  4.]])
    """
    func = "solve_triangular"
    _check(func, "a", a)
    _check(func, "b", b)
    if b.dtype != a.dtype:
        raise TypeError(f"{func}: a and b must have one dtype, got {a.dtype} and {b.dtype}")
    n = a.shape[-1]
    if a.shape[-2] != n or (b.shape[-2] if left else b.shape[-1]) != n:
        raise ValueError(f"{func}: a must be square and fit b, got shapes {a.shape} and {b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    if left:
        x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), order="C")
        if x.size:
            _solve_into(a, x, upper)
        return x
    # X A = B  <=>  A^T X^T = B^T
    xt = np.array(np.swapaxes(np.broadcast_to(b, batch + b.shape[-2:]), -1, -2), order="C")
    if xt.size:
        _solve_into(np.swapaxes(a, -1, -2), xt, not upper)
    return np.swapaxes(xt, -1, -2)


def _cholesky_into(a: np.ndarray) -> None:
    """a := its lower Cholesky factor (a writable (batch of) matrices, its lower triangle
    read; the strict upper triangle zeroed)."""
    n = a.shape[-1]
    if n <= _BLOCK:
        a[...] = np.linalg.cholesky(a)
        return
    h = _split(n)
    _cholesky_into(a[..., :h, :h])
    l11 = a[..., :h, :h]
    # L21 = A21 L11^-T, i.e. L11 L21^T = A21^T: solved in place, transposed
    _solve_into(l11, np.swapaxes(a[..., h:, :h], -1, -2), False)
    l21 = a[..., h:, :h]
    a[..., h:, h:] -= l21 @ np.swapaxes(l21, -1, -2)
    _cholesky_into(a[..., h:, h:])
    a[..., :h, h:] = 0


def cholesky_lower(a) -> np.ndarray:
    """The lower Cholesky factor of each symmetric positive-definite matrix of `a` (its
    lower triangle read), as a new C-contiguous array (Note [Triangular solves by recursive
    halving]).

    Raises
    ------
    numpy.linalg.LinAlgError
        A matrix that is not positive-definite (as ``np.linalg.cholesky``).

    Examples
    --------
    >>> import numpy as np
    >>> cholesky_lower(np.array([[[1.0, 0.0], [0.0, 9.0]]]))
    array([[[1., 0.],
            [0., 3.]]])
    """
    _check("cholesky_lower", "a", a)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"cholesky_lower: a must be square, got shape {a.shape}")
    out = np.array(a, order="C")
    if out.size:
        _cholesky_into(out)
    return out
