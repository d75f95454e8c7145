"""torch's top-level names of the factorizations (most deprecated in torch for their
``torch.linalg`` forms, with its warnings): ``qr``, ``lu``, ``lu_solve``, ``lu_unpack``,
``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``, ``geqrf``, ``orgqr``,
``ormqr`` and ``pinverse``; compositions of :mod:`gradstack_tensor.linalg`'s functions
(their gradients are autograd's, the same values as torch's nodes give).

Examples
--------
>>> import gradstack_tensor as gt
>>> L = gt.tensor([[2.0, 0.0], [1.0, 1.0]], dtype=gt.float64)
>>> cholesky_inverse(L).tolist()
[[0.5, -0.5], [-0.5, 1.0]]
"""

from __future__ import annotations

import warnings

import numpy as np

from . import linalg as _linalg
from ._out import _SCALAR_NAMES
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap
from .linalg_factorizations import lu_unpack_tensors
from .return_types import _structseq

__all__ = [
    "qr",
    "lu",
    "lu_solve",
    "lu_unpack",
    "triangular_solve",
    "cholesky_solve",
    "cholesky_inverse",
    "geqrf",
    "orgqr",
    "ormqr",
    "pinverse",
]

_lu_with_info = _structseq("_lu_with_info", ["LU", "pivots", "info"])


def _tensor(x, fname: str, name: str, position: int) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
            f"{type(x).__name__}"
        )
    return x


def _write(result, out):
    if out is None:
        return result
    from ._out import write_out

    if isinstance(result, tuple):
        return type(result)(*(write_out("", r, o, rule="exact") for r, o in zip(result, out)))
    return write_out("", result, out, rule="exact")


@checked("qr", "Tensor input, bool some", first=0)
def qr(input, some: bool = True, *, out=None):
    """``linalg.qr(input, 'reduced' if some else 'complete')`` as torch's ``qr`` named
    tuple ``(Q, R)``, with torch's deprecation warning.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> import warnings; warnings.simplefilter("ignore")
    >>> qr(gt.tensor([[3.0], [4.0]])).R.tolist()
    [[-5.0]]
    """
    from .return_types import qr as _result

    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')",
        UserWarning,
        stacklevel=3,
    )
    q, r = _linalg.qr(_tensor(input, "qr", "input", 1), "reduced" if some else "complete")
    return _write(_result(q, r), out)


@checked("_lu_with_info", "Tensor input, bool pivot, bool get_infos", first=0)
def lu(A, pivot: bool = True, get_infos: bool = False, out=None):
    """torch's legacy ``lu``: the tuple ``(LU, pivots)`` of :func:`linalg.lu_factor`, or
    ``(LU, pivots, info)`` with ``get_infos`` (no error for a singular matrix), with
    torch's deprecation warning.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> import warnings; warnings.simplefilter("ignore")
    >>> LU, pivots = lu(gt.tensor([[1.0, 2.0], [2.0, 2.0]]))
    >>> pivots.tolist()
    [2, 2]
    """
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
        "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
        "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
        "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
        "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
        "torch.linalg.lu_factor_ex(A, compute_pivots)",
        UserWarning,
        stacklevel=3,
    )
    r = _linalg.lu_factor_ex(A, pivot=pivot)
    if get_infos:
        result = _lu_with_info(r.LU, r.pivots, r.info)
    else:
        result = (r.LU, r.pivots)
    if out is not None:
        return tuple(_write(tuple(result), tuple(out)))
    return result


@checked("lu_solve", "Tensor input, Tensor LU_data, Tensor LU_pivots", first=0)
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``linalg.lu_solve(LU_data, LU_pivots, b)``, with torch's deprecation warning.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> import warnings; warnings.simplefilter("ignore")
    >>> A = gt.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> lu_solve(gt.tensor([[2.0], [4.0]]), *lu(A)).tolist()
    [[1.0], [1.0]]
    """
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
        "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)",
        UserWarning,
        stacklevel=3,
    )
    return _write(_linalg.lu_solve(LU_data, LU_pivots, _tensor(b, "lu_solve", "input", 1)), out)


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True, *,
              out=None):  # fmt: skip
    """``(P, L, U)`` from :func:`linalg.lu_factor`'s packed ``LU_data`` and ``LU_pivots``
    (``A = P L U``); differentiable in ``LU_data``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> P, L, U = lu_unpack(*gt.linalg.lu_factor(gt.tensor([[1.0, 2.0], [2.0, 2.0]])))
    >>> L.tolist()
    [[1.0, 0.0], [0.5, 1.0]]
    """
    lu_t = _tensor(LU_data, "lu_unpack", "LU_data", 1)
    _tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if lu_t.dim() < 2:
        raise RuntimeError(
            f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(lu_t.shape)} instead"
        )
    return _write(lu_unpack_tensors(lu_t, LU_pivots, unpack_data, unpack_pivots), out)


def triangular_solve(b, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):  # fmt: skip
    """torch's legacy ``triangular_solve``: ``X`` with ``A X = b`` (``A^T X = b`` when
    ``transpose``) for the ``upper`` (lower) triangle of ``A``, as the named tuple
    ``(solution, cloned_coefficient)`` (a copy of ``A``), with torch's deprecation warning.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> import warnings; warnings.simplefilter("ignore")
    >>> A = gt.tensor([[2.0, 1.0], [0.0, 1.0]])
    >>> triangular_solve(gt.tensor([[3.0], [1.0]]), A).solution.tolist()
    [[1.0], [1.0]]
    """
    from .return_types import triangular_solve as _result

    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
        "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has "
        "its arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).",
        UserWarning,
        stacklevel=2,
    )
    b = _tensor(b, "triangular_solve", "input", 1)
    A = _tensor(A, "triangular_solve", "A", 2)
    if b.dim() < 2 or A.dim() < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b.dim()} dimensions instead" if b.dim() < 2 else
            "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{A.dim()} dimensions instead"
        )  # fmt: skip
    coeff = A.mT if transpose else A
    x = _linalg.solve_triangular(coeff, b, upper=bool(upper) != bool(transpose),
                                 unitriangular=unitriangular)  # fmt: skip
    batch = tuple(x.shape[:-2])
    cloned = A.expand(*batch, *A.shape[-2:]).clone()
    return _write(_result(x, cloned), out)


def cholesky_solve(B, L, upper: bool = False, *, out=None):
    """``X`` with ``A X = B`` for ``A = L L^H`` (``U^H U`` when ``upper``) from its
    Cholesky factor: two triangular solves.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> L = gt.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> cholesky_solve(gt.tensor([[4.0], [2.0]]), L).tolist()
    [[1.0], [0.0]]
    """
    B = _tensor(B, "cholesky_solve", "input", 1)
    L = _tensor(L, "cholesky_solve", "input2", 2)
    for name, t in (("b", B), ("A", L)):
        if t.dim() < 2:
            raise RuntimeError(
                f"b should have at least 2 dimensions, but has {t.dim()} dimensions instead"
                if name == "b"
                else f"u should have at least 2 dimensions, but has {t.dim()} dimensions instead"
            )
    if B.dtype != L.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_SCALAR_NAMES[_data(B).dtype.name]} and A of type "
            f"{_SCALAR_NAMES[_data(L).dtype.name]} instead."
        )
    if upper:
        y = _linalg.solve_triangular(L.mH, B, upper=False)
        x = _linalg.solve_triangular(L, y, upper=True)
    else:
        y = _linalg.solve_triangular(L, B, upper=False)
        x = _linalg.solve_triangular(L.mH, y, upper=True)
    return _write(x, out)


@checked("cholesky_inverse", "Tensor input, bool upper", first=0)
def cholesky_inverse(L, upper: bool = False, *, out=None):
    """The inverse of ``A = L L^H`` (``U^H U`` when ``upper``) from its Cholesky factor.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cholesky_inverse(gt.tensor([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [[0.25, 0.0], [0.0, 1.0]]
    """
    import gradstack_tensor as gt

    L = _tensor(L, "cholesky_inverse", "input", 1)
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(
            "cholesky_inverse: A must be batches of square matrices, but they are "
            f"{L.shape[-2] if L.dim() >= 2 else 1} by {L.shape[-1] if L.dim() else 1} matrices"
        )
    eye = gt.eye(L.shape[-1], dtype=L.dtype).expand(*L.shape)
    return _write(cholesky_solve(eye, L, upper), out)


def geqrf(input, *, out=None):
    """LAPACK's ``geqrf``: the named tuple ``(a, tau)``, ``R`` on and above the diagonal of
    ``a`` and the Householder vectors below it (for :func:`orgqr`/:func:`ormqr`); not
    differentiable, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> geqrf(gt.tensor([[3.0], [4.0]], dtype=gt.float64)).a.tolist()
    [[-5.0], [0.5]]
    """
    from ._impl_factorizations import _check_kernel_dtype
    from .return_types import geqrf as _result

    x = _data(_tensor(input, "geqrf", "input", 1))
    if x.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_kernel_dtype("geqrf_cpu", x)
    m, n = x.shape[-2:]
    if x.size == 0:
        a, tau = np.zeros(x.shape, x.dtype), np.zeros(x.shape[:-2] + (min(m, n),), x.dtype)
    else:
        h, tau = np.linalg.qr(x, mode="raw")
        a = np.swapaxes(h, -1, -2)
    return _write(
        _result(_wrap(np.ascontiguousarray(a, x.dtype)), _wrap(np.ascontiguousarray(tau, x.dtype))),
        out,
    )


@checked("orgqr", "Tensor input, Tensor input2", first=0)
def orgqr(input, tau):
    """``linalg.householder_product(input, tau)``: the ``Q`` of :func:`geqrf`'s factors.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> a, tau = geqrf(gt.tensor([[3.0], [4.0]], dtype=gt.float64))
    >>> [[round(v, 6) for v in row] for row in orgqr(a, tau).tolist()]
    [[-0.6], [-0.8]]
    """
    return _linalg.householder_product(input, tau)


@checked("ormqr", "Tensor input, Tensor input2, Tensor input3, bool left, bool transpose", first=0)
def ormqr(input, tau, other, left: bool = True, transpose: bool = False, *, out=None):
    """``Q @ other`` for the full ``m x m`` ``Q`` of :func:`geqrf`'s factors (``other @ Q``
    when not ``left``, ``Q^H`` for ``Q`` when ``transpose``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> a, tau = geqrf(gt.tensor([[3.0], [4.0]], dtype=gt.float64))
    >>> r = ormqr(a, tau, gt.tensor([[3.0], [4.0]], dtype=gt.float64), transpose=True)
    >>> [[round(v, 6) + 0.0 for v in row] for row in r.tolist()]
    [[-5.0], [0.0]]
    """
    import gradstack_tensor as gt

    input = _tensor(input, "ormqr", "input", 1)
    m, n = input.shape[-2:]
    if n < m:
        pad = gt.zeros(*input.shape[:-1], m - n, dtype=input.dtype)
        square = gt.cat([input, pad], -1)
    else:
        square = input[..., :, :m]
    q = _linalg.householder_product(square, tau)
    if transpose:
        q = q.mH
    return _write(q.matmul(other) if left else other.matmul(q), out)


@checked("pinverse", "Tensor input, float rcond", first=0)
def pinverse(input, rcond: float = 1e-15):
    """``linalg.pinv(input, rtol=rcond)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> pinverse(gt.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return _linalg.pinv(_tensor(input, "pinverse", "input", 1), rtol=rcond)
