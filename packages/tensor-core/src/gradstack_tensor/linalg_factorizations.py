"""``torch.linalg``'s eigendecompositions, QR, least squares, triangular solves, LU and
the functions made of them (``pinv``, ``matrix_rank``, ``cond``, ``tensorinv``,
``tensorsolve``, the ``*_ex`` forms): re-exported by :mod:`gradstack_tensor.linalg`.

The factorizations are ops (``_impl_factorizations.py``, derivatives in graph-engine's
``derivatives/factorizations.py``); the rest are compositions of ops, whose gradients are
autograd's.

Examples
--------
>>> import gradstack_tensor as gt
>>> eigvalsh(gt.tensor([[2.0, 0.0], [0.0, 1.0]])).tolist()
[1.0, 2.0]
>>> Q, R = qr(gt.tensor([[3.0], [4.0]]))
>>> R.tolist()
[[-5.0]]
"""

from __future__ import annotations

import math

import numpy as np

from . import _impl_factorizations as _f
from ._composite_args import _tensor
from ._dispatch import OPS, dispatch
from ._impl_decompositions import LinAlgError, check_matrices
from ._tensor import Tensor, _data, _wrap

__all__ = [
    "eig",
    "eigvals",
    "eigh",
    "eigvalsh",
    "qr",
    "lstsq",
    "solve_triangular",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "pinv",
    "matrix_rank",
    "inv_ex",
    "cholesky_ex",
    "solve_ex",
    "tensorinv",
    "tensorsolve",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
]


def _t(x, fname: str, name: str = "A") -> Tensor:
    return _tensor(x, f"linalg_{fname}", name, position=1)


# Note [The factorizations call the ops, not torch.linalg's functions]
# ``linalg.py`` (the ``torch.linalg`` namespace) imports this module, so the compositions
# here call the ops that ``linalg.inv``/``solve``/``cholesky`` call, not those functions.


def _inv(A):
    return dispatch(OPS["linalg_inv"], (A,))


def _solve(A, B, left=True):
    return dispatch(OPS["linalg_solve"], (A, B, bool(left)))


def _cholesky(A, upper=False):
    return dispatch(OPS["linalg_cholesky"], (A, bool(upper)))


def _write(result, out):
    """``result`` (a tensor or a named tuple of tensors) written into ``out``."""
    if out is None:
        return result
    from ._out import write_out

    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        return type(result)(*(write_out("linalg", r, o, rule="exact") for r, o in zip(result, out)))
    return write_out("linalg", result, out, rule="exact")


def eig(A, *, out=None):
    """The eigenvalues and eigenvectors of each square matrix, complex: the named tuple
    ``(eigenvalues, eigenvectors)`` with ``A @ V = V @ diag(L)``, each eigenvector of norm
    1 (defined up to a phase: a loss that depends on it raises in backward, as torch's).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> L, V = eig(gt.tensor([[2.0, 0.0], [0.0, 3.0]]))
    >>> L.tolist()
    [(2+0j), (3+0j)]
    """
    return _write(dispatch(OPS["linalg_eig"], (_t(A, "eig"),)), out)


def eigvals(A, *, out=None):
    """The eigenvalues of each square matrix, complex (``eig(A).eigenvalues``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> eigvals(gt.tensor([[0.0, -1.0], [1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    # (always through eig's op, as torch does when A needs a gradient: forward-mode
    # tangents are invisible here; LAPACK's eigenvalues are the same with or without
    # eigenvectors up to rounding)
    a = _t(A, "eigvals")
    x = _data(a)
    if x.dtype.kind in "fc":
        check_matrices("linalg.eigvals", x)
    return _write(eig(a).eigenvalues, out)


def eigh(A, UPLO: str = "L", *, out=None):
    """The eigenvalues (real, ascending) and orthonormal eigenvectors of each Hermitian
    matrix, read from its lower (``UPLO='L'``) or upper triangle.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> eigh(gt.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=gt.float64)).eigenvalues.tolist()
    [1.0, 3.0]
    """
    return _write(dispatch(OPS["linalg_eigh"], (_t(A, "eigh"), UPLO)), out)


def eigvalsh(A, UPLO: str = "L", *, out=None):
    """The eigenvalues of each Hermitian matrix, real and ascending.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> eigvalsh(gt.tensor([[1.0, 2.0], [2.0, 1.0]])).tolist()
    [-1.0, 3.0]
    """
    return _write(eigh(_t(A, "eigvalsh"), UPLO).eigenvalues, out)


def qr(A, mode: str = "reduced", *, out=None):
    """The QR decomposition ``A = Q R`` of each matrix: ``Q`` with orthonormal columns,
    ``R`` upper triangular; ``mode`` ``'reduced'`` (``k = min(m, n)`` columns),
    ``'complete'`` (``Q`` square) or ``'r'`` (``R`` only, ``Q`` empty).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> Q, R = qr(gt.tensor([[0.0, 2.0], [1.0, 0.0]]))
    >>> (Q @ R).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """
    return _write(dispatch(OPS["linalg_qr"], (_t(A, "qr"), mode)), out)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` for each matrix: the named tuple
    ``(solution, residuals, rank, singular_values)``, its fields filled as torch's
    ``driver`` fills them (``'gelsy'`` by default: the rank; the residuals of tall
    full-rank matrices and the singular values with ``'gelsd'``/``'gelss'``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=gt.float64)
    >>> lstsq(A, gt.tensor([[1.0], [2.0], [3.0]], dtype=gt.float64)).solution.tolist()
    [[1.0], [2.0]]
    """
    return dispatch(OPS["linalg_lstsq"], (_t(A, "lstsq", "self"), B, rcond, driver))


def solve_triangular(A, B, *, upper=None, left: bool = True, unitriangular: bool = False,
                     out=None):  # fmt: skip
    """``X`` with ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``, read
    from its upper (``upper=True``) or lower triangle, ones on its diagonal when
    ``unitriangular``; batch dims broadcast.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> solve_triangular(A, gt.tensor([[3.0], [4.0]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    a = _t(A, "solve_triangular", "input")
    if upper is None:  # (keyword-only and required, as torch's)
        raise TypeError(
            'linalg_solve_triangular() missing 1 required positional arguments: "upper"'
        )
    args = (a, B, bool(upper), bool(left), bool(unitriangular))
    return _write(dispatch(OPS["linalg_solve_triangular"], args), out)


def lu(A, *, pivot: bool = True, out=None):
    """The LU decomposition with partial pivoting ``A = P L U`` of each matrix: the named
    tuple ``(P, L, U)``, ``L`` unit lower triangular, ``U`` upper triangular.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> P, L, U = lu(gt.tensor([[1.0, 2.0], [2.0, 2.0]]))
    >>> (P.tolist(), U.tolist())
    ([[0.0, 1.0], [1.0, 0.0]], [[2.0, 2.0], [0.0, 1.0]])
    """
    return _write(dispatch(OPS["linalg_lu"], (_t(A, "lu"), bool(pivot))), out)


def _lu_packed(a: Tensor, pivot: bool):
    """``(LU, pivots, info)``: ``L`` and ``U`` of :func:`lu` packed in one matrix (``L``'s
    unit diagonal implied), LAPACK's 1-based int32 pivots, the first zero pivot's index."""
    from .return_types import linalg_lu_factor_ex as _result

    x = _data(a)
    if x.ndim < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(x.shape)} instead"
        )
    p, low, up = lu(a, pivot=pivot)
    m, n = x.shape[-2:]
    k = min(m, n)
    if m >= n:
        packed = low.tril(-1) + _pad_rows(up, m)
    else:
        packed = _pad_cols(low.tril(-1), n) + up
    if x.size:
        _lu, pivots, info = _f.lu_factor_arrays(x)  # (the op's pivots: the same algorithm)
    else:
        pivots = np.ones(x.shape[:-2] + (k,), np.int32)
        info = np.zeros(x.shape[:-2], np.int32)
    return _result(packed, _wrap(np.asarray(pivots, np.int32)), _wrap(np.asarray(info, np.int32)))


def _pad_rows(t: Tensor, m: int) -> Tensor:
    import gradstack_tensor as gt

    extra = m - t.shape[-2]
    if not extra:
        return t
    return gt.cat([t, gt.zeros(*t.shape[:-2], extra, t.shape[-1], dtype=t.dtype)], -2)


def _pad_cols(t: Tensor, n: int) -> Tensor:
    import gradstack_tensor as gt

    extra = n - t.shape[-1]
    if not extra:
        return t
    return gt.cat([t, gt.zeros(*t.shape[:-1], extra, dtype=t.dtype)], -1)


def _raise_singular_lu(info: np.ndarray, fname: str) -> None:
    flat = info.reshape(-1)
    i = int(np.flatnonzero(flat)[0])
    prefix = f"(Batch element {i}): " if info.ndim else ""
    raise RuntimeError(
        f"torch.linalg.{fname}: {prefix}U[{flat[i]},{flat[i]}] is zero and using it on "
        "lu_solve would result in a division by zero. If you still want to perform the "
        "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
        "pivot)"
    )


def lu_factor(A, *, pivot: bool = True, out=None):
    """The LU decomposition packed as LAPACK's ``getrf`` gives it: the named tuple
    ``(LU, pivots)`` (1-based int32 pivots), for :func:`lu_solve`.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> LU, pivots = lu_factor(gt.tensor([[1.0, 2.0], [2.0, 2.0]]))
    >>> (LU.tolist(), pivots.tolist())
    ([[2.0, 2.0], [0.5, 1.0]], [2, 2])
    """
    from .return_types import linalg_lu_factor as _result

    a = _t(A, "lu_factor")
    r = _lu_packed(a, pivot)
    info = _data(r.info)
    if info.size and info.any():  # (a RuntimeError in torch, not a LinAlgError)
        _raise_singular_lu(info, "lu_factor")
    return _write(_result(r.LU, r.pivots), out)


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False, out=None):
    """:func:`lu_factor` with the ``info`` of each matrix (0, or the 1-based index of its
    first zero pivot) instead of an error: the named tuple ``(LU, pivots, info)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> lu_factor_ex(gt.zeros(2, 2)).info.item()
    1
    """
    r = _lu_packed(_t(A, "lu_factor_ex"), pivot)
    if check_errors and _data(r.info).any():
        _raise_singular_lu(_data(r.info), "lu_factor_ex")
    return _write(r, out)


def lu_unpack_tensors(LU: Tensor, pivots: Tensor, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from :func:`lu_factor`'s packed factors (differentiable in ``LU``)."""
    import gradstack_tensor as gt

    from .return_types import lu_unpack as _result

    m, n = LU.shape[-2:]
    k = min(m, n)
    if unpack_data:
        low = LU[..., :, :k].tril(-1) + gt.eye(m, k, dtype=LU.dtype)
        up = LU[..., :k, :].triu()
    else:
        low = gt.empty(0, dtype=LU.dtype)
        up = gt.empty(0, dtype=LU.dtype)
    if unpack_pivots:
        piv = _data(pivots)
        if piv.dtype != np.int32:
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced "
                "by torch.linalg.lu_factor"
            )
        perm = _f.pivots_to_permutation(piv, m)
        p = _wrap(np.ascontiguousarray(_f.permutation_matrix(perm, _data(LU).dtype)))
    else:
        p = gt.empty(0, dtype=LU.dtype)
    return _result(p, low, up)


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False, out=None):
    """``X`` with ``A X = B`` from ``A``'s :func:`lu_factor` (``X A = B`` when not
    ``left``, ``A^H`` for ``A`` when ``adjoint``): two triangular solves.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[1.0, 2.0], [2.0, 2.0]], dtype=gt.float64)
    >>> LU, piv = lu_factor(A)
    >>> lu_solve(LU, piv, gt.tensor([[3.0], [4.0]], dtype=gt.float64)).tolist()
    [[1.0], [1.0]]
    """
    lu_t = _t(LU, "lu_solve", "LU")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_lu_solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    check_matrices("torch.linalg.lu_solve", _data(lu_t))
    n = lu_t.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if B.dim() < 2 or rows != n:
        shape = tuple(B.shape[-2:]) if B.dim() >= 2 else (B.shape[-1], 1)
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shape[0]}x{shape[1]})"
        )
    p, low, up = lu_unpack_tensors(lu_t, pivots)
    if left != adjoint:
        # A X = B with A = P L U: X = U^-1 L^-1 P^T B;  (X A^H = B: A X^H = B^H)
        rhs = B if left else B.mH
        y = solve_triangular(low, p.mT.matmul(rhs), upper=False, unitriangular=True)
        x = solve_triangular(up, y, upper=True)
        return _write(x if left else x.mH, out)
    # A^H X = B (left, adjoint), or X A = B: A^H X^H = B^H; A^H = U^H L^H P^T
    rhs = B if left else B.mH
    y = solve_triangular(up.mH, rhs, upper=False)
    z = solve_triangular(low.mH, y, upper=True, unitriangular=True)
    x = p.matmul(z)
    return _write(x if left else x.mH, out)


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False, out=None):
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD (from ``eigh`` when
    ``hermitian``): singular values at most ``max(atol, rtol * s_max)`` count as zero
    (``rtol`` defaults to ``eps * max(m, n)``, to 0 when a positive ``atol`` is given).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pinv(gt.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    a = _t(A, "pinv", "input")
    return _write(dispatch(OPS["linalg_pinv"], (a, atol, rtol, bool(hermitian))), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False, out=None):
    """The number of singular values (absolute eigenvalues when ``hermitian``) of each
    matrix above ``max(atol, rtol * s_max)``, as int64 (the tolerance of :func:`pinv`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> matrix_rank(gt.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    a = _t(A, "matrix_rank", "input")
    x = _data(a)
    if x.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    _f._check_float_or_double(x)
    m, n = x.shape[-2:]
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    if x.size == 0:
        return _write(_wrap(np.zeros(x.shape[:-2], np.int64)), out)
    if hermitian:
        check_matrices("torch.linalg.matrix_rank", x)
        s = np.abs(np.linalg.eigvalsh(x))
    else:
        if not np.isfinite(x).all():
            raise _f.svd_not_finite(x)
        s = np.linalg.svd(x, compute_uv=False)
    s = s.astype(real)
    tol = _f.tolerance(s.max(-1, keepdims=True), m, n, real, atol, rtol)
    rank = np.sum(s > _f._keep(tol, s), axis=-1).astype(np.int64)
    return _write(_wrap(np.asarray(rank)), out)


def inv_ex(A, *, check_errors: bool = False, out=None):
    """The inverse of each square matrix and the ``info`` of its LU (0, or the 1-based
    index of a zero pivot, where the inverse is not meaningful), as the named tuple
    ``(inverse, info)``; an error only when ``check_errors``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> inv_ex(gt.tensor([[2.0, 0.0], [0.0, 4.0]])).inverse.tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    from .return_types import linalg_inv_ex as _result

    a = _t(A, "inv_ex")
    x = _data(a)
    check_matrices("linalg.inv", x)
    info = _info(x)
    if info.any() and check_errors:
        _renamed(lambda: _inv(a), "linalg.inv", "linalg.inv_ex")
    if info.any() and not check_errors:
        with np.errstate(all="ignore"):
            bad = _wrap(np.full(x.shape, np.nan, x.dtype))
        import gradstack_tensor as gt

        ok = gt.tensor(info == 0).unsqueeze(-1).unsqueeze(-1) if info.ndim else None
        safe = a if ok is None else gt.where(ok, a, gt.eye(x.shape[-1], dtype=a.dtype))
        inverse = bad if ok is None else gt.where(ok, _inv(safe), bad)
    else:
        inverse = _inv(a)
    return _write(_result(inverse, _wrap(info)), out)


def _renamed(call, name: str, new: str):
    """``call()``, its LinAlgError's message naming ``new`` instead of ``name`` (the ``_ex``
    function raises as itself)."""
    try:
        return call()
    except LinAlgError as e:
        raise LinAlgError(str(e).replace(name, new, 1)) from None


def _info(x: np.ndarray) -> np.ndarray:
    """getrf's ``info`` of each matrix, int32."""
    if x.size == 0:
        return np.zeros(x.shape[:-2], np.int32)
    return np.asarray(_f.lu_factor_arrays(x)[2], np.int32)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False, out=None):
    """The Cholesky factor and ``potrf``'s ``info`` (0, or the order of the first leading
    minor that is not positive-definite, where the factor is not meaningful), as the named
    tuple ``(L, info)``; an error only when ``check_errors``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cholesky_ex(gt.tensor([[4.0, 2.0], [2.0, 2.0]])).L.tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    import gradstack_tensor as gt

    from ._impl_decompositions import _first_bad_minor
    from .return_types import linalg_cholesky_ex as _result

    a = _t(A, "cholesky_ex")
    x = _data(a)
    check_matrices("linalg.cholesky_ex", x)
    flat = x.reshape((-1,) + x.shape[-2:])
    info = np.array([_first_bad_minor(np.asarray(m)) if not _spd(m) else 0 for m in flat],
                    np.int32).reshape(x.shape[:-2])  # fmt: skip
    if not info.any() or check_errors:
        factor = _renamed(
            lambda: _cholesky(a, upper=upper), "linalg.cholesky", "linalg.cholesky_ex"
        )
    else:
        ok = gt.tensor(info == 0).unsqueeze(-1).unsqueeze(-1)
        safe = gt.where(ok, a, gt.eye(x.shape[-1], dtype=a.dtype))
        factor = gt.where(ok, _cholesky(safe, upper=upper), gt.zeros_like(a))
    return _write(_result(factor, _wrap(info)), out)


def _spd(m: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return False
    return True


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False, out=None):
    """:func:`gradstack_tensor.linalg.solve` and the ``info`` of ``A``'s LU, as the named
    tuple ``(result, info)``; a singular ``A`` raises only when ``check_errors``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> solve_ex(gt.tensor([[2.0, 0.0], [0.0, 4.0]]), gt.tensor([2.0, 4.0])).result.tolist()
    [1.0, 1.0]
    """
    from .return_types import linalg_solve_ex as _result

    a = _t(A, "solve_ex")
    x = _data(a)
    check_matrices("linalg.solve_ex", x)
    info = _info(x)
    if info.any() and not check_errors:
        import gradstack_tensor as gt

        ok = gt.tensor(info == 0)
        safe = gt.where(ok.unsqueeze(-1).unsqueeze(-1), a, gt.eye(x.shape[-1], dtype=a.dtype))
        r = _solve(safe, B, left=left)
        mask = ok.reshape(tuple(ok.shape) + (1,) * (r.dim() - ok.dim()))
        r = gt.where(mask, r, float("nan"))
    else:
        r = _renamed(lambda: _solve(a, B, left=left), "linalg.solve", "linalg.solve_ex")
    return _write(_result(r, _wrap(info)), out)


def tensorinv(A, ind: int = 2, *, out=None):
    """The inverse of ``A`` seen as a linear map from its first ``ind`` dims to the rest
    (their products must be equal): ``inv(A.reshape(p, q)).reshape(rest + first)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> tensorinv(gt.eye(4).reshape(4, 2, 2), ind=1).shape
    gradstack.Size([2, 2, 4])
    """
    a = _t(A, "tensorinv")
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(a.shape)
    first, rest = shape[:ind], shape[ind:]
    p, q = math.prod(first), math.prod(rest)
    if p != q:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {q} != {p}"
        )
    return _write(_inv(a.reshape(p, q)).reshape(rest + first), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """``X`` with ``tensordot(A, X, X.dim()) = B``: ``A`` seen as a square matrix from its
    last dims (``X``'s shape) to ``B``'s (``dims`` of ``A`` are moved last first).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> tensorsolve(2 * gt.eye(6).reshape(2, 3, 6), gt.ones(2, 3)).shape
    gradstack.Size([6])
    """
    a = _t(A, "tensorsolve")
    if dims is not None:
        nd = a.dim()
        dims = [d % nd for d in dims]
        keep = [d for d in range(nd) if d not in dims]
        a = a.permute(*keep, *dims)
    bshape = tuple(B.shape)
    result_shape = tuple(a.shape)[len(bshape) :]
    p, q = math.prod(bshape), math.prod(result_shape)
    if tuple(a.shape)[: len(bshape)] != bshape or p != q:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {q} != {p}"
        )
    x = _solve(a.reshape(p, q), B.reshape(p))
    return _write(x.reshape(result_shape), out)


def _ldl_checks(x: np.ndarray, fname: str, hermitian: bool) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{_f._type_name(x.dtype)}"
        )
    _f._check_kernel_dtype("ldl_factor_kernel_cpu", x)
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            f"{fname}: A must be batches of square matrices, but they are {x.shape[-2]} by "
            f"{x.shape[-1]} matrices"
        )


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """The Bunch-Kaufman factorization ``A = P L D L^T P^T`` of each symmetric matrix (its
    lower triangle read), packed as LAPACK's ``sytrf`` packs it: the named tuple
    ``(LD, pivots, info)`` (Note [LDL by Bunch-Kaufman in numpy]).  Not differentiable.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=gt.float64)
    >>> ldl_factor_ex(A).pivots.tolist()
    [-2, -2]
    """
    from ._ldl import sytf2
    from .return_types import linalg_ldl_factor_ex as _result

    x = _data(_t(A, "ldl_factor_ex"))
    _ldl_checks(x, "torch.linalg.ldl_factor_ex", bool(hermitian))
    n = x.shape[-1]
    flat = x.reshape((-1, n, n))
    lds = np.zeros(flat.shape, x.dtype)
    pivots = np.zeros(flat.shape[:-1], np.int32)
    infos = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        lds[i], pivots[i], infos[i] = sytf2(m, bool(hermitian))
    batch = x.shape[:-2]
    info = infos.reshape(batch)
    if check_errors and info.any():
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: Unknown error code: {int(info.max())}.")
    result = _result(_wrap(lds.reshape(x.shape)), _wrap(pivots.reshape(batch + (n,))), _wrap(info))
    return _write(result, out)


def ldl_factor(A, *, hermitian: bool = False, out=None):
    """:func:`ldl_factor_ex` without ``info``: the named tuple ``(LD, pivots)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=gt.float64)
    >>> ldl_factor(A).LD.tolist()
    [[4.0, 0.0], [0.5, 2.0]]
    """
    from .return_types import linalg_ldl_factor as _result

    a = _t(A, "ldl_factor")
    x = _data(a)
    if x.ndim >= 2 and x.dtype.kind in "fc":
        _ldl_checks(x, "torch.linalg.ldl_factor_ex", bool(hermitian))
    r = ldl_factor_ex(a, hermitian=hermitian)
    if _data(r.info).any():
        raise RuntimeError(
            f"torch.linalg.ldl_factor: Unknown error code: {int(_data(r.info).max())}."
        )
    return _write(_result(r.LD, r.pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian: bool = False, out=None):
    """``X`` with ``A X = B`` from ``A``'s :func:`ldl_factor` (LAPACK's ``sytrs``); batch
    dims broadcast.  Not differentiable.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> A = gt.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=gt.float64)
    >>> ldl_solve(*ldl_factor(A), gt.tensor([[6.0], [5.0]], dtype=gt.float64)).tolist()
    [[1.0], [1.0]]
    """
    from ._ldl import sytrs

    ld = _data(_t(LD, "ldl_solve", "LD"))
    piv = _data(pivots)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_ldl_solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    b = _data(B)
    if b.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if b.dtype != ld.dtype:
        raise RuntimeError(
            "Expected b and A to have the same dtype, but found b of type "
            f"{_f._type_name(b.dtype)} and A of type {_f._type_name(ld.dtype)} instead."
        )
    if piv.dtype != np.int32:
        raise RuntimeError(
            f"torch.linalg.ldl_solve: Expected LU_pivots to be int32, but got {piv.dtype.name}"
        )
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{n} by {n} but each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    ld_b = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n))
    piv_b = np.broadcast_to(piv, batch + (n,)).reshape((-1, n))
    b_b = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    herm = bool(hermitian)
    x = np.stack([sytrs(l, p, r, herm) for l, p, r in zip(ld_b, piv_b, b_b)]) if len(b_b) else b_b
    return _write(_wrap(np.ascontiguousarray(x.reshape(batch + b.shape[-2:]), ld.dtype)), out)
