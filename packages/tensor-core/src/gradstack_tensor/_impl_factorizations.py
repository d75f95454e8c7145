"""Kernels of the factorizations behind ``torch.linalg``'s eig, eigh, qr, lstsq,
solve_triangular, lu and pinv: ``linalg_eig``, ``linalg_eigh``, ``linalg_qr``,
``linalg_lstsq``, ``linalg_solve_triangular``, ``linalg_lu`` and ``linalg_pinv``, with
torch's checks and errors.

numpy's LAPACK gives eig (``geev``), eigh (``syevd``/``heevd``), qr (``geqrf`` +
``orgqr``), lstsq (``gelsd``) and the SVD: the routines torch calls on the CPU, up to the
precision numpy computes in (Note [numpy factorizes in double precision]).  numpy has no
LU nor triangular solve: they are written here in numpy terms (Note [LU by rows in
numpy], Note [A triangular solve on numpy's solver]).

Note [numpy factorizes in double precision]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``numpy.linalg`` computes float32 (complex64) inputs in float64 (complex128) and rounds
the result to float32, where torch calls LAPACK's single-precision routines.  float32
results may then differ from torch's in the last bits (about 1e-6 relative, more for
ill-conditioned matrices); float64 results differ only by the LAPACK build's rounding.
"""

from __future__ import annotations

import numpy as np

from . import _triangular_arrays
from ._dispatch import OPS
from ._impl_decompositions import LinAlgError, check_matrices, svd_not_finite
from ._out import _SCALAR_NAMES as _TYPE_NAMES
from ._tensor import Tensor, _data, _wrap

__all__ = ["complex_dtype_of", "lu_factor_arrays", "pivots_to_permutation", "tolerance"]

_COMPLEX = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
    np.dtype(np.complex64): np.dtype(np.complex64),
    np.dtype(np.complex128): np.dtype(np.complex128),
}


def complex_dtype_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype of eig's results for an input of ``dtype``."""
    return _COMPLEX[np.dtype(dtype)]


def _type_name(dtype) -> str:
    return _TYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _out(r: np.ndarray, dtype) -> Tensor:
    return _wrap(np.array(r, dtype=dtype, order="C", copy=None))


def _check_float(fname: str, x: np.ndarray) -> None:
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(x.dtype)}"
        )
    if x.dtype == np.float16:
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got Half")


def _check_kernel_dtype(kernel: str, x: np.ndarray) -> None:
    """torch's dtype dispatch of a LAPACK kernel: float32/64 and complex64/128 only."""
    if x.dtype.kind not in "fc" or x.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(x.dtype)}'")


def _check_float_or_double(x: np.ndarray) -> None:
    if x.dtype.kind not in "fc" or x.dtype == np.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")


def _check_finite(fname: str, x: np.ndarray) -> None:
    if x.size and not np.isfinite(x).all():
        raise RuntimeError(f"{fname}: input tensor should not contain infs or NaNs.")


# ---------------------------------------------------------------------------------------
# eig and eigh


@OPS["linalg_eig"].set_kernel
def linalg_eig(A):
    """``(eigenvalues, eigenvectors)``, complex, of each square matrix: LAPACK's ``geev``
    (unit eigenvectors, each with its largest component real)."""
    from .return_types import linalg_eig as _result

    x = _data(A)
    if x.dtype.kind not in "fc":  # torch asks for the complex type of the input first
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(x.dtype)}")
    _check_kernel_dtype("linalg_eig_out_cpu", x)
    check_matrices("linalg.eig", x)
    _check_finite("torch.linalg.eig", x)
    cdt = complex_dtype_of(x.dtype)
    if x.size == 0:
        return _result(_out(np.zeros(x.shape[:-1]), cdt), _out(np.zeros(x.shape), cdt))
    w, v = np.linalg.eig(x)
    return _result(_out(w, cdt), _out(v, cdt))


def _check_uplo(uplo) -> str:
    if not isinstance(uplo, str) or uplo.upper() not in ("L", "U") or len(uplo) != 1:
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


@OPS["linalg_eigh"].set_kernel
def linalg_eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of each Hermitian matrix, read from its ``UPLO``
    triangle; eigenvalues real and ascending (LAPACK's ``syevd``/``heevd``)."""
    from .return_types import linalg_eigh as _result

    uplo = _check_uplo(UPLO)
    x = _data(A)
    _check_kernel_dtype("linalg_eigh_cpu", x)
    check_matrices("linalg.eigh", x)
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    if x.size == 0:
        return _result(_out(np.zeros(x.shape[:-1]), real), _out(np.zeros(x.shape), x.dtype))
    with np.errstate(all="ignore"):
        try:
            w, v = np.linalg.eigh(x, UPLO=uplo)
        except np.linalg.LinAlgError:
            raise LinAlgError(
                "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues (error code: 1)."
            ) from None
    return _result(_out(w, real), _out(v, x.dtype))


# ---------------------------------------------------------------------------------------
# qr


def parse_qr_mode(mode) -> str:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    return mode


@OPS["linalg_qr"].set_kernel
def linalg_qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q R`` (LAPACK's ``geqrf`` and ``orgqr``, numpy's signs are
    torch's); ``mode='r'`` gives an empty ``Q``."""
    from .return_types import linalg_qr as _result

    mode = parse_qr_mode(mode)
    x = _data(A)
    if x.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if x.dtype.kind not in "fc":
        _check_float("linalg.qr", x)
    _check_kernel_dtype("geqrf_cpu", x)
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    qcols = m if mode == "complete" else k
    rrows = m if mode == "complete" else k
    if x.size == 0:
        q = np.broadcast_to(np.eye(m, qcols, dtype=x.dtype), batch + (m, qcols))
        r = np.zeros(batch + (rrows, n), x.dtype)
    elif mode == "r":
        q, r = None, np.linalg.qr(x, mode="r")
    else:
        q, r = np.linalg.qr(x, mode=mode)
    q_t = _out(np.zeros((0,), x.dtype), x.dtype) if mode == "r" else _out(q, x.dtype)
    return _result(q_t, _out(r, x.dtype))


# ---------------------------------------------------------------------------------------
# lstsq

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@OPS["linalg_lstsq"].set_kernel
def linalg_lstsq(A, B, rcond=None, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||``: the
    solution of LAPACK's ``gelsd`` whatever the driver (Note [lstsq by the SVD]: from
    numpy's SVD, the same minimum-norm solution), the other fields as
    torch's driver fills them (``gelsy``, the default: the rank; ``gelsd``/``gelss``: the
    rank, the singular values and, for tall full-rank matrices, the residuals; ``gels``:
    the residuals)."""
    from .return_types import linalg_lstsq as _result

    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_lstsq(): argument 'b' must be Tensor, not {type(B).__name__}")
    a, b = _data(A), _data(B)
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if a.dtype != b.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {_type_name(a.dtype)} and other's dtype {_type_name(b.dtype)}"
        )
    if a.ndim < b.ndim or a.ndim - b.ndim > 1:
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    _check_float_or_double(a)
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    if bm.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    m, n = a.shape[-2:]
    if bm.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    k = bm.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a_b = np.broadcast_to(a, batch + (m, n)).reshape((-1, m, n))
    b_b = np.broadcast_to(bm, batch + (m, k)).reshape((-1, m, k))
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    eps = float(np.finfo(real).eps)
    rc = eps * max(m, n) if rcond is None else float(rcond)
    count = a_b.shape[0]
    if a_b.size and not (np.isfinite(a_b).all() and np.isfinite(b_b).all()):
        raise LinAlgError(  # (torch's CPU lstsq fails an internal assert there)
            "torch.linalg.lstsq: the input matrices contain infinities or NaNs"
        )
    if driver == "gels" and a_b.size:
        _check_full_rank(a_b)
    sol = np.zeros((count, n, k), a.dtype)
    ranks = np.zeros(count, np.int64)
    svals = np.zeros((count, min(m, n)), real)
    res = np.zeros((count, k), real)
    full_rank = True
    if a_b.size:
        sol, ranks, svals, res, full_rank = _lstsq_by_svd(a_b, b_b, rc)
    else:
        full_rank = m > n
        if count and m and k and n == 0:
            res = np.sum(np.abs(b_b) ** 2, axis=1)
    solution = sol.reshape(batch + (n, k))
    if vector:
        solution = solution[..., 0]
    empty = np.zeros((0,), real)
    ranks_out = (
        _out(ranks.reshape(batch), np.int64)
        if driver != "gels"
        else _wrap(np.zeros((0,), np.int64))
    )
    sv_out = (
        _out(svals.reshape(batch + (min(m, n),)), real)
        if driver in ("gelsd", "gelss")
        else _out(empty, real)
    )
    if m > n and driver != "gelsy" and (full_rank or driver == "gels"):
        residuals = res.reshape(batch + (k,))
        res_out = _out(residuals, real)
    else:
        res_out = _out(empty, real)
    return _result(_out(solution, a.dtype), res_out, ranks_out, sv_out)


def _lstsq_by_svd(a: np.ndarray, b: np.ndarray, rc: float):
    """``(solution, ranks, singular values, residuals, all full rank)`` of a batch of
    least-squares problems ``(count, m, n)``, ``(count, m, k)``.

    Note [lstsq by the SVD]
    ~~~~~~~~~~~~~~~~~~~~~~~
    The solution is gelsd's (what ``numpy.linalg.lstsq`` calls): the minimum-norm
    ``X = V diag(1/s) U^H B`` over the singular values above ``rc * s_max`` (above double
    precision's eps when ``rc <= 0``, as gelsd with a negative ``rcond``), the rank their
    count.  It is computed here from numpy's SVD, in double precision as numpy computes
    gelsd: at 1000 x 1000 with 1000 right-hand sides, ~0.6 s where ``numpy.linalg.lstsq``
    takes ~2 s (gelsd applies its divide-and-conquer transforms to every right-hand side;
    two products do it here).  The values differ from gelsd's by rounding only.
    """
    wide = np.dtype(np.complex128 if a.dtype.kind == "c" else np.float64)
    a64, b64 = a.astype(wide, copy=False), b.astype(wide, copy=False)
    m, n = a.shape[-2:]
    u, s, vh = np.linalg.svd(a64, full_matrices=False)
    eps = float(np.finfo(np.float64).eps)
    keep = s > (rc if rc > 0 else eps) * s[:, :1]
    inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    uhb = np.conj(np.swapaxes(u, -1, -2)) @ b64
    x = np.conj(np.swapaxes(vh, -1, -2)) @ (inv[..., None] * uhb)
    ranks = keep.sum(-1).astype(np.int64)
    full = (ranks == n) & (m > n)
    res = np.zeros((a.shape[0], b.shape[-1]), s.dtype)
    if full.any() and b.shape[-1]:
        res[full] = np.sum(np.abs(b64[full] - a64[full] @ x[full]) ** 2, axis=-2)
    return x, ranks, s, res, bool(full.all()) and bool(b.shape[-1])


def _check_full_rank(a: np.ndarray) -> None:
    """``gels`` (QR, or LQ for wide matrices) fails on an exactly zero diagonal of ``R``:
    torch's error, with its 1-based index."""
    m, n = a.shape[-2:]
    r = np.linalg.qr(a if m >= n else np.conj(np.swapaxes(a, -1, -2)), mode="r")
    zero = np.diagonal(r, 0, -2, -1) == 0
    if zero.any():
        code = int(np.argmax(zero.any(0))) + 1
        raise LinAlgError(
            "torch.linalg.lstsq: The least squares solution could not be computed because "
            f"the input matrix does not have full rank (error code: {code})."
        )


# ---------------------------------------------------------------------------------------
# solve_triangular


def _triangular_solve_array(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool):
    """``X`` with ``T X = B`` for ``T`` the ``upper`` (lower) triangle of each ``a`` (its
    diagonal replaced by ones when ``unit``); ``b`` has the broadcast batch shape, ``a``
    broadcasts against it.

    Note [A triangular solve on numpy's solver]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    numpy has no ``trsm``.  Partial pivoting leaves an upper triangular matrix as it is
    (every entry below a pivot is zero: no swap, zero multipliers), so numpy's ``gesv`` of
    an upper triangular matrix is its back substitution; a lower triangular one is solved
    reversed (``J L J`` is upper triangular, ``J`` the reversal).  A zero on the diagonal
    makes ``gesv`` refuse; torch's ``trsm`` divides by it, so that case runs the
    substitution row by row (infinities and NaNs as torch's).

    float32/float64 matrices with a non-zero diagonal and finite entries take the blocked
    solve of ``_triangular_arrays.py`` instead (Note [Triangular solves by recursive
    halving]: matrix products, at torch's speed, where ``gesv`` factors the matrix again
    in double precision, ~8x slower at n = 1000); it reads only the named triangle.
    """
    n = a.shape[-1]
    idx = np.arange(n)
    if a.dtype in _BLOCKED and np.isfinite(a).all():
        if unit:
            a = a.copy()
            a[..., idx, idx] = 1
        if np.all(np.diagonal(a, 0, -2, -1) != 0):
            return _triangular_arrays.solve_triangular(a, b, upper=upper)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri = tri.copy()
        tri[..., idx, idx] = 1
    if not upper:
        tri = tri[..., ::-1, ::-1]
        b = b[..., ::-1, :]
    diag = np.diagonal(tri, 0, -2, -1)
    if np.all(diag != 0) and np.isfinite(tri).all():
        x = np.linalg.solve(tri, b)
    else:
        x = _back_substitution(tri, b)
    return x if upper else x[..., ::-1, :]


_BLOCKED = (np.dtype(np.float32), np.dtype(np.float64))


def _back_substitution(u: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = u.shape[-1]
    dtype = np.result_type(u.dtype, b.dtype)
    x = np.zeros(np.broadcast_shapes(u.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype)
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1):
            acc = b[..., i, :] - np.einsum(
                "...j,...jk->...k", u[..., i, i + 1 :], x[..., i + 1 :, :]
            )
            x[..., i, :] = acc / u[..., i, i, None]
    return x


@OPS["linalg_solve_triangular"].set_kernel
def linalg_solve_triangular(A, B, upper, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``: only its
    ``upper`` (lower) triangle is read, its diagonal taken as ones when ``unitriangular``."""
    if not isinstance(B, Tensor):
        raise TypeError(
            f"linalg_solve_triangular(): argument 'B' must be Tensor, not {type(B).__name__}"
        )
    a, b = _data(A), _data(B)
    for name, x in (("A", a), ("B", b)):
        if x.ndim < 2:
            raise RuntimeError(
                f"linalg.solve_triangular: The input tensor {name} must have at least 2 dimensions."
            )
    _check_kernel_dtype("triangular_solve_cpu", a)
    if b.dtype != a.dtype:  # (torch solves in A's dtype)
        b = b.astype(a.dtype)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            "linalg.solve_triangular: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    n = a.shape[-1]
    rows = b.shape[-2] if left else b.shape[-1]
    if rows != n:
        raise RuntimeError(
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})"
        )
    if not left:  # X A = B  <=>  A^T X^T = B^T, A^T of the other triangle
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
        upper = not upper
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    b_b = np.broadcast_to(b, batch + b.shape[-2:])
    if a_b.size == 0 or b_b.size == 0:
        x = np.zeros(b_b.shape, a.dtype)
    else:
        # (a un-broadcast: every path broadcasts it against b, a unit diagonal copies it)
        x = _triangular_solve_array(a, b_b, bool(upper), bool(unitriangular))
    if not left:
        x = np.swapaxes(x, -1, -2)
    return _out(x, a.dtype)


# ---------------------------------------------------------------------------------------
# lu


def lu_factor_arrays(x: np.ndarray):
    """getrf on each matrix of ``x``: ``(LU, pivots, info)`` (LAPACK's packed factors,
    1-based int32 pivots, the 1-based index of the first zero pivot or 0).

    Note [LU by rows in numpy]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~
    numpy exposes no ``getrf``.  Complex matrices take its unblocked algorithm
    (``getf2``), vectorised over the batch in numpy: for each column, the pivot of largest
    magnitude (``|re| + |im|`` for complex numbers, as LAPACK's ``i?amax``; the first of
    equal ones), the row swap, the multipliers (times the pivot's reciprocal), the rank-1
    update of the rest.  float32/float64 matrices take the recursive LU of Note [A
    recursive LU on matrix products], whose base case is the same loop in C
    (``_lu_kernels.pyx``).  The pivots are LAPACK's; the factors differ from torch's
    blocked ``getrf`` by rounding only (the updates are summed in another order).
    """
    return _lu_factor(x)[:3]


def _lu_factor(x: np.ndarray):
    """``(LU, pivots, info, perm)``: :func:`lu_factor_arrays` and the row order ``perm``
    of its pivots (``A[perm] = L U``, as :func:`pivots_to_permutation`)."""
    lu = np.array(x, order="C", copy=True)
    batch = lu.shape[:-2]
    m, n = lu.shape[-2:]
    k = min(m, n)
    lu = lu.reshape((-1, m, n))
    count = lu.shape[0]
    pivots = np.zeros((count, k), np.int32)
    info = np.zeros(count, np.int32)
    if lu.dtype in _BLOCKED:
        perm = np.tile(np.arange(m, dtype=np.int64), (count, 1))
        _recursive_lu(lu, 0, k, pivots, perm, info)
        if n > k:  # a wide matrix: U's last columns, L^-1 A[:, k:]
            _solve_unit_lower(lu[:, :, :k], lu[:, :, k:])
        return (
            lu.reshape(batch + (m, n)),
            pivots.reshape(batch + (k,)),
            info.reshape(batch),
            perm.reshape(batch + (m,)),
        )
    at = np.arange(count)
    tiny = np.finfo(lu.dtype).tiny
    with np.errstate(all="ignore"):
        for j in range(k):
            col = lu[:, j:, j]
            size = np.abs(col.real) + np.abs(col.imag) if lu.dtype.kind == "c" else np.abs(col)
            p = j + np.argmax(size, axis=1)
            pivots[:, j] = p + 1
            swap = p != j
            if swap.any():
                rows_j = lu[at, j].copy()
                lu[at, j] = lu[at, p]
                lu[at, p] = rows_j
            pivot = lu[:, j, j]
            zero = pivot == 0
            info[(info == 0) & zero] = j + 1
            safe = np.where(zero, 1, pivot)
            big = (np.abs(safe) >= tiny)[:, None]  # getf2: times the reciprocal
            col = lu[:, j + 1 :, j]
            lu[:, j + 1 :, j] = np.where(big, col * (1 / safe)[:, None], col / safe[:, None])
            lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
    pivots = pivots.reshape(batch + (k,))
    return (
        lu.reshape(batch + (m, n)),
        pivots,
        info.reshape(batch),
        pivots_to_permutation(pivots, m),
    )


# Note [A recursive LU on matrix products]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Toledo's recursive LU (LAPACK's getrf2): factor the left half of the columns (rows j0:),
# then U12 = L11^-1 A12 (a unit lower triangular solve, _triangular_arrays.py: matrix
# products), the trailing update A22 -= L21 U12 (one GEMM), and factor A22's columns.
# Panels of at most _LU_PANEL columns take getf2's loop in C (_lu_kernels.getf2_panel_),
# which swaps whole rows of the matrix at once: the swaps LAPACK applies to the left and
# right parts after each half (laswp) touch columns that nothing reads or writes in
# between, so applying them early gives the same matrix.  All but ~m * n * _LU_PANEL / 2
# of the ~2/3 n**3 flops are matrix products.  Measured (CPU time, float32, one thread,
# loaded host): n = 1000, 19 ms (getf2's loop alone 55 ms, torch's getrf 9 ms); panels of
# 8, 16, 32 or 64 columns took 24, 22, 21 and 19 ms (the solves' Python overhead).  A
# matrix of at most _LU_PANEL columns is one panel: at n = 100, 0.07 ms (torch's 0.06;
# as recursion into 32 columns, 0.37 ms).  The pivots are getf2's (the largest magnitude
# in the column, the first of ties) on values that differ from LAPACK's by rounding only.
_LU_PANEL = 128


def _solve_unit_lower(low: np.ndarray, b: np.ndarray) -> None:
    """b := L^-1 b for ``L`` the unit lower triangle of ``low`` (square, its diagonal not
    read; ``b`` a writable view)."""
    unit = np.tril(low)
    idx = np.arange(unit.shape[-1])
    unit[..., idx, idx] = 1
    _triangular_arrays._solve_into(unit, b, upper=False)


def _recursive_lu(lu, j0: int, j1: int, pivots, perm, info) -> None:
    """Columns ``j0:j1`` of rows ``j0:`` of each matrix of ``lu`` (``(count, m, n)``,
    C-contiguous) factored in place (Note [A recursive LU on matrix products])."""
    from ._lu_kernels import getf2_panel_

    if j1 - j0 <= _LU_PANEL:
        getf2_panel_(lu, j0, j1, pivots, perm, info)
        return
    h = j0 + _triangular_arrays._split(j1 - j0)
    _recursive_lu(lu, j0, h, pivots, perm, info)
    a12 = lu[:, j0:h, h:j1]
    _solve_unit_lower(lu[:, j0:h, j0:h], a12)
    lu[:, h:, h:j1] -= lu[:, h:, j0:h] @ a12
    _recursive_lu(lu, h, j1, pivots, perm, info)


def pivots_to_permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` of LAPACK's pivots: ``A[perm] = L U``."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((-1, pivots.shape[-1])) if pivots.size else np.zeros((0, 0), np.int32)
    count = int(np.prod(batch)) if batch else 1
    perm = np.tile(np.arange(m), (count, 1))
    at = np.arange(count)
    for j in range(pivots.shape[-1] if count else 0):
        p = flat[:, j].astype(np.int64) - 1
        pj = perm[at, j].copy()
        perm[at, j] = perm[at, p]
        perm[at, p] = pj
    return perm.reshape(batch + (m,))


def permutation_matrix(perm: np.ndarray, dtype) -> np.ndarray:
    """``P`` with ``P[perm[i], i] = 1``, so that ``A = P L U`` when ``A[perm] = L U``
    (C-contiguous)."""
    m = perm.shape[-1]
    p = np.zeros(perm.shape[:-1] + (m, m), dtype)
    np.put_along_axis(p, perm[..., None, :].astype(np.intp, copy=False), 1, axis=-2)
    return p


@OPS["linalg_lu"].set_kernel
def linalg_lu(A, pivot=True):
    """``(P, L, U)`` with ``A = P L U``, ``L`` unit lower triangular (``m x k``), ``U``
    upper triangular (``k x n``) (Note [LU by rows in numpy])."""
    from .return_types import linalg_lu as _result

    x = _data(A)
    if x.ndim < 2:
        raise RuntimeError(
            "linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(x.shape)} instead"
        )
    _check_kernel_dtype("lu_cpu", x)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    m, n = x.shape[-2:]
    k = min(m, n)
    if x.size:
        lu, _pivots, _info, perm = _lu_factor(x)
    else:
        lu = np.zeros(x.shape, x.dtype)
        perm = np.broadcast_to(np.arange(m), x.shape[:-2] + (m,))
    p = permutation_matrix(perm, x.dtype)
    low = np.tril(lu[..., :, :k], -1)
    idx = np.arange(k)
    low[..., idx, idx] = 1
    up = np.triu(lu[..., :k, :])
    return _result(_out(p, x.dtype), _out(low, x.dtype), _out(up, x.dtype))


# ---------------------------------------------------------------------------------------
# pinv


def tolerance(s_max: np.ndarray, m: int, n: int, real, atol, rtol) -> np.ndarray:
    """torch's threshold of pinv and matrix_rank: ``max(atol, rtol * s_max)``, ``rtol``
    defaulting to ``eps * max(m, n)`` (to 0 when ``atol`` is given and positive)."""
    eps = float(np.finfo(real).eps)

    def batched(t):  # a tensor tolerance has the batch's shape: against s_max's (..., 1)
        return np.asarray(_data(t))[..., None] if isinstance(t, Tensor) else float(t)

    a = 0.0 if atol is None else batched(atol)
    if rtol is None:
        default = eps * max(m, n)
        r = default if atol is None else np.where(np.asarray(a) > 0, 0.0, default)
    else:
        r = batched(rtol)
    return np.maximum(a, np.asarray(r) * s_max)


@OPS["linalg_pinv"].set_kernel
def linalg_pinv(A, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse of each matrix from its SVD (``eigh`` when ``hermitian``): the
    reciprocals of the singular values above :func:`tolerance`, zeros for the rest."""
    x = _data(A)
    if x.ndim < 2 or x.dtype.kind not in "fc" or x.dtype == np.float16:
        raise RuntimeError(
            f"linalg.pinv({_type_name(x.dtype)}{{{list(x.shape)}}}): expected a tensor with 2 "
            "or more dimensions of float, double, cfloat or cdouble types"
        )
    m, n = x.shape[-2:]
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    if x.size == 0:
        return _out(np.zeros(x.shape[:-2] + (n, m)), x.dtype)
    if hermitian:
        if m != n:
            check_matrices("linalg.eigh", x)
        w, u = np.linalg.eigh(x)
        size = np.abs(w)
        tol = tolerance(size.max(-1, keepdims=True), m, n, real, atol, rtol)
        with np.errstate(all="ignore"):
            inv = np.where(size > _keep(tol, size), 1.0 / w, 0.0)
        r = (u * inv[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
    else:
        if not np.isfinite(x).all():
            raise svd_not_finite(x)
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        tol = tolerance(s[..., :1], m, n, real, atol, rtol)
        with np.errstate(all="ignore"):
            inv = np.where(s > _keep(tol, s), 1.0 / s, 0.0)
        r = (np.conj(np.swapaxes(vh, -1, -2)) * inv[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
    return _out(r, x.dtype)


def _keep(tol: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``tol`` (batch-shaped, or with a trailing 1) against values ``s`` (batch, k)."""
    tol = np.asarray(tol)
    if tol.ndim and tol.shape[-1:] != (1,):
        tol = tol[..., None]
    return tol
