"""Kernels of the matrix functions that need a factorization: ``linalg_inv``,
``linalg_det``, ``linalg_logabsdet`` (the second half of ``slogdet``), ``linalg_solve``,
``linalg_cholesky`` and ``linalg_svd``, on numpy's LAPACK (the same LU, Cholesky and SVD
routines torch calls on the CPU), with torch's checks and errors.

Note [A singular matrix names its first zero pivot]
torch reports a singular matrix with the index LAPACK's ``getrf`` returns: the first zero
on the diagonal of U in the LU factorization with partial pivoting ("The diagonal element
2 is zero"), and a matrix that is not positive-definite with ``potrf``'s order of the
first leading minor that is not.  numpy raises one LinAlgError without the index, so on
that (rare) path the index is recomputed with the same column-by-column algorithm
(``_first_zero_pivot``, ``_first_bad_minor``).
"""

from __future__ import annotations

import threading

import numpy as np

from . import _triangular_arrays
from ._dispatch import OPS
from ._out import _SCALAR_NAMES as _TYPE_NAMES
from ._tensor import Tensor, _data, _wrap

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix function met a singular (or, for Cholesky, not
    positive-definite) matrix.  A RuntimeError, as torch's."""


LinAlgError.__module__ = "gradstack.linalg"


def svd_not_finite(x: np.ndarray) -> LinAlgError:
    """torch's error for an SVD of a matrix with infinities or NaNs (LAPACK's ``gesdd``
    does not converge; numpy's error says less), naming the first such batch element."""
    bad = ~np.isfinite(x.reshape((-1,) + x.shape[-2:])).all((-2, -1))
    i = int(np.argmax(bad))
    prefix = f"(Batch element {i}): " if x.ndim > 2 else ""
    return LinAlgError(
        f"linalg.svd: {prefix}The algorithm failed to converge because the input matrix "
        "contained non-finite values."
    )


def check_matrices(fname: str, x: np.ndarray, name: str = "A") -> None:
    """torch's checks of a batch of square float matrices, in torch's order."""
    if x.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{_TYPE_NAMES.get(x.dtype.name, x.dtype.name)}"
        )
    if x.dtype == np.float16:
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got Half")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            f"{fname}: {name} must be batches of square matrices, but they are "
            f"{x.shape[-2]} by {x.shape[-1]} matrices"
        )


def _batch_prefix(x: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if x.ndim > 2 else ""


def _first_zero_pivot(a: np.ndarray) -> int:
    """getrf's ``info``: the 1-based index of the first zero pivot of U (0 if none)."""
    u = np.array(a, dtype=np.float64)
    n = u.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return j + 1
        u[[j, p]] = u[[p, j]]
        u[j + 1 :, j:] -= np.outer(u[j + 1 :, j] / u[j, j], u[j, j:])
    return 0


def _first_bad_minor(a: np.ndarray) -> int:
    """potrf's ``info``: the order of the first leading minor that is not positive-definite."""
    n = a.shape[0]
    low = np.zeros((n, n))
    for j in range(n):
        d = a[j, j] - low[j, :j] @ low[j, :j]
        if not d > 0:  # (NaN too)
            return j + 1
        low[j, j] = np.sqrt(d)
        low[j + 1 :, j] = (a[j + 1 :, j] - low[j + 1 :, :j] @ low[j, :j]) / low[j, j]
    return 0


def _singular(fname: str, x: np.ndarray, message) -> LinAlgError:
    flat = x.reshape((-1,) + x.shape[-2:])
    for i, m in enumerate(flat):
        info = _first_zero_pivot(m)
        if info:
            return LinAlgError(f"{fname}: {_batch_prefix(x, i)}{message(info)}")
    return LinAlgError(f"{fname}: {message(1)}")  # (numpy found what the recount did not)


def _result(r: np.ndarray, dtype) -> Tensor:
    # (np.array, not ascontiguousarray, which makes a 0-d result 1-d)
    return _wrap(np.array(r, dtype=dtype, order="C", copy=None))


@OPS["linalg_inv"].set_kernel
def linalg_inv(A):
    x = _data(A)
    check_matrices("linalg.inv", x)
    if x.size == 0:
        return _result(np.empty(x.shape), x.dtype)
    try:
        r = np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise _singular(
            "linalg.inv",
            x,
            lambda k: (
                f"The diagonal element {k} is zero, the inversion could not be completed "
                "because the input matrix is singular."
            ),
        ) from None
    return _result(r, x.dtype)


@OPS["linalg_det"].set_kernel
def linalg_det(A):
    x = _data(A)
    check_matrices("linalg.det", x)
    return _result(np.linalg.det(x) if x.size else np.ones(x.shape[:-2]), x.dtype)


# Note [slogdet's sign from the kernel's factorization]
# ``linalg.slogdet`` records the op ``linalg_logabsdet`` (the differentiable half) and
# returns the sign beside it.  The kernel's np.linalg.slogdet computes both from one LU;
# it leaves the sign here, for this thread, with the array it factored, and slogdet takes
# it when the array is the one it passed (one LU where there were two: half of slogdet's
# forward time at n = 1000).
_last_sign = threading.local()


def take_slogdet_sign(x: np.ndarray):
    """The sign the last ``linalg_logabsdet`` kernel of this thread computed for exactly
    the array ``x`` (Note [slogdet's sign from the kernel's factorization]), else None."""
    last = getattr(_last_sign, "value", None)
    _last_sign.value = None
    if last is None or last[0] is not x:
        return None
    return last[1]


@OPS["linalg_logabsdet"].set_kernel
def linalg_logabsdet(A):
    x = _data(A)
    check_matrices("linalg.slogdet", x)
    if x.size == 0:
        return _result(np.zeros(x.shape[:-2]), x.dtype)
    sign, logabsdet = np.linalg.slogdet(x)
    _last_sign.value = (x, sign)
    return _result(logabsdet, x.dtype)


def solve_is_vector(a_shape, b_shape) -> bool:
    """torch's rule: ``B`` is a (batch of) vector(s) when it is 1-d, or has one dim less
    than ``A`` and ``A``'s shape without its last dim."""
    return len(b_shape) == 1 or (
        len(b_shape) == len(a_shape) - 1 and tuple(b_shape) == tuple(a_shape[:-1])
    )


def _spd_solve(a: np.ndarray, b: np.ndarray):
    """``A \\ B`` by the blocked Cholesky factor when every matrix of ``a`` is symmetric
    positive-definite, else None (Note [A symmetric system is tried by its Cholesky
    factor first])."""
    n = a.shape[-1]
    if (
        n < _BLOCKED_CHOLESKY_FROM
        or a.dtype not in _BLOCKED_DTYPES
        or b.dtype != a.dtype
        or not np.array_equal(a, np.swapaxes(a, -1, -2))
    ):
        return None
    try:
        low = _triangular_arrays.cholesky_lower(a)
    except np.linalg.LinAlgError:
        return None
    y = _triangular_arrays.solve_triangular(low, b, upper=False)
    return _triangular_arrays.solve_triangular(np.swapaxes(low, -1, -2), y, upper=True)


# Note [A symmetric system is tried by its Cholesky factor first]
# numpy's solve (OpenBLAS's gesv) takes ~1.6x torch's MKL at n = 1000 on one thread (84-93
# against 54-55 ms, 1000 right-hand sides), and linalg_solve's backward is a solve again.
# For a symmetric matrix (exactly) of 192 rows or more the blocked Cholesky factor and two
# blocked triangular solves of _triangular_arrays.py (matrix products) are tried first, as
# MATLAB's mldivide does: ~37 ms there.  A matrix that is not positive-definite fails the
# factor and takes gesv (and its singular-matrix error); the check and the failed attempt
# cost ~1-10 ms.  The solution is the same to rounding (both backward stable for an SPD
# matrix).


@OPS["linalg_solve"].set_kernel
def linalg_solve(A, B, left=True):
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    a, b = _data(A), _data(B)
    check_matrices("linalg.solve", a)
    if b.dtype != a.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{_TYPE_NAMES.get(a.dtype.name)} and B of type {_TYPE_NAMES.get(b.dtype.name)} instead"
        )
    vector = solve_is_vector(a.shape, b.shape)
    rhs = b[..., None] if vector else b
    n = a.shape[-1]
    rows = rhs.shape[-2] if left else rhs.shape[-1]
    if rows != n:
        shown = rhs.shape[-2:] if not vector else (b.shape[-1], 1)
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {equation} "
            f"({n}x{n} and {shown[0]}x{shown[1]})"
        )
    if not left:  # X A = B: A^T X^T = B^T
        a, rhs = np.swapaxes(a, -1, -2), np.swapaxes(rhs, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    rhs_b = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    try:
        r = None
        if a_b.size and rhs_b.size:
            r = _spd_solve(a_b, rhs_b)
            if r is None:
                r = np.linalg.solve(a_b, rhs_b)
        else:
            r = np.zeros(rhs_b.shape)
    except np.linalg.LinAlgError:
        raise LinAlgError(
            "torch.linalg.solve: The solver failed because the input matrix is singular."
        ) from None
    if not left:
        r = np.swapaxes(r, -1, -2)
    return _result(r[..., 0] if vector else r, a.dtype)


def _cholesky_low(x: np.ndarray) -> np.ndarray:
    """The lower factor: blocked on matrix products for float32/float64 matrices above a
    block (Note [Triangular solves by recursive halving] in _triangular_arrays.py), else
    numpy's potrf.  Where the blocked factorization fails, potrf decides (a matrix at the
    edge of positive-definiteness may pass one and fail the other's roundings)."""
    if x.dtype in _BLOCKED_DTYPES and x.shape[-1] >= _BLOCKED_CHOLESKY_FROM:
        try:
            return _triangular_arrays.cholesky_lower(x)
        except np.linalg.LinAlgError:
            pass
    return np.linalg.cholesky(x)


_BLOCKED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# potrf is faster up to n = 150 (40 vs 98 us at 100, float32), the blocked factor from 200
# (363 vs 548 us; at 600, 3.2 vs 7.6 ms): CPU time, one thread
_BLOCKED_CHOLESKY_FROM = 192


@OPS["linalg_cholesky"].set_kernel
def linalg_cholesky(A, upper=False):
    x = _data(A)
    check_matrices("linalg.cholesky", x)
    if x.size == 0:
        return _result(np.empty(x.shape), x.dtype)
    try:
        low = _cholesky_low(x)
    except np.linalg.LinAlgError:
        flat = x.reshape((-1,) + x.shape[-2:])
        for i, m in enumerate(flat):
            order = _first_bad_minor(np.asarray(m, np.float64))
            if order:
                try:
                    np.linalg.cholesky(m)
                except np.linalg.LinAlgError:
                    raise LinAlgError(
                        f"linalg.cholesky: {_batch_prefix(x, i)}The factorization could not "
                        "be completed because the input is not positive-definite (the leading "
                        f"minor of order {order} is not positive-definite)."
                    ) from None
        raise
    # (numpy reads the lower triangle, as torch does by default)
    return _result(np.swapaxes(low, -1, -2) if upper else low, x.dtype)


# Note [SVD's signs are LAPACK's]
# The singular vectors are defined up to a sign per pair (``u_k``, ``v_k``).  torch's CPU
# svd calls LAPACK's ``gesdd``, as ``numpy.linalg.svd`` does, so the signs are the ones
# LAPACK picks; a different LAPACK build may flip a pair (the product ``U S Vh`` and the
# gradients of sign-invariant functions do not change).


@OPS["linalg_svd"].set_kernel
def linalg_svd(A, full_matrices=True):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (Note [SVD's signs are LAPACK's])."""
    from .return_types import linalg_svd as _svd_result

    x = _data(A)
    if x.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.svd: Expected a floating point or complex tensor as input. Got "
            f"{_TYPE_NAMES.get(x.dtype.name, x.dtype.name)}"
        )
    if x.dtype == np.float16:
        raise NotImplementedError("\"linalg_svd_cpu\" not implemented for 'Half'")
    m, n = x.shape[-2], x.shape[-1]
    k = min(m, n)
    batch = x.shape[:-2]
    if x.size == 0:
        um, vn = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, um, dtype=x.dtype), batch + (m, um))
        vh = np.broadcast_to(np.eye(vn, n, dtype=x.dtype), batch + (vn, n))
        s = np.zeros(batch + (k,), dtype=x.dtype)
    else:
        if not np.isfinite(x).all():
            raise svd_not_finite(x)
        u, s, vh = np.linalg.svd(x, full_matrices=bool(full_matrices))
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype  # (S is real)
    return _svd_result(_result(u, x.dtype), _result(s, real), _result(vh, x.dtype))
