"""torch's top-level names of the matrix functions in :mod:`gradstack_tensor.linalg`:
``inverse``, ``det``, ``slogdet``, ``logdet``, ``cholesky`` (deprecated in torch, with its
warning), ``matrix_power`` and ``svd`` (the legacy form of ``linalg.svd``: ``V``, not
``Vh``).

Examples
--------
>>> import gradstack_tensor as gt
>>> a = gt.tensor([[2.0, 0.0], [0.0, 2.0]], dtype=gt.float64)
>>> gt.logdet(a).item() == 2 * 0.6931471805599453
True
"""

from __future__ import annotations

import warnings

from . import linalg as _linalg
from ._signatures import checked
from .return_types import slogdet as _slogdet_result

__all__ = ["inverse", "det", "slogdet", "logdet", "cholesky", "matrix_power", "svd", "matrix_exp"]


def inverse(input, *, out=None):
    """``linalg.inv(input)``."""
    return _linalg.inv(input, out=out)


def det(input):
    """``linalg.det(input)``."""
    return _linalg.det(input)


def slogdet(input):
    """``linalg.slogdet(input)`` as torch's ``slogdet`` named tuple ``(sign, logabsdet)``."""
    return _slogdet_result(*_linalg.slogdet(input))


def logdet(input):
    """The log of each determinant: NaN where it is negative, -inf where it is 0 (torch's
    ``where(sign == -1, nan, logabsdet)``)."""
    import gradstack_tensor as gt

    sign, logabsdet = _linalg.slogdet(input)
    return gt.where(sign == -1, float("nan"), logabsdet)


@checked("cholesky")
def cholesky(input, upper: bool = False, *, out=None):
    """``linalg.cholesky(input, upper=upper)``, with torch's deprecation warning."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
        "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs.",
        UserWarning,
        stacklevel=2,
    )
    return _linalg.cholesky(input, upper=upper, out=out)


def matrix_power(input, n: int):
    """``linalg.matrix_power(input, n)``."""
    return _linalg.matrix_power(input, n)


def svd(input, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch's legacy ``svd``: the named tuple ``(U, S, V)`` with ``input = U @ diag(S) @
    V.mT``, reduced when ``some`` (``linalg.svd(input, full_matrices=not some)`` with ``V =
    Vh.mT``).  With ``compute_uv=False``, ``U`` and ``V`` are zero-filled ``(m, m)`` and
    ``(n, n)`` matrices and ``S`` is ``linalg.svdvals(input)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> U, S, V = svd(gt.tensor([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    >>> tuple(U.shape), S.tolist(), tuple(V.shape)
    ((3, 2), [2.0, 1.0], (2, 2))
    """
    import gradstack_tensor as gt

    if not isinstance(input, gt.Tensor):  # (the tensor first, as torch)
        raise TypeError(
            f"svd(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    for position, (name, flag) in enumerate((("some", some), ("compute_uv", compute_uv)), 2):
        if type(flag) is not bool:
            raise TypeError(
                f"svd(): argument '{name}' (position {position}) must be bool, not "
                f"{type(flag).__name__}"
            )

    from .return_types import svd as _svd_result

    if not isinstance(input, gt.Tensor):
        raise TypeError(
            f"svd(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            "linalg.svd: input should have at least 2 dimensions, but has "
            f"{input.dim()} dimensions instead"
        )
    if compute_uv:
        U, S, Vh = _linalg.svd(input, full_matrices=not some)
        result = _svd_result(U, S, Vh.mT)  # (real: mH is mT)
    else:
        S = _linalg.svdvals(input)
        batch, (m, n) = tuple(input.shape[:-2]), tuple(input.shape[-2:])
        result = _svd_result(
            gt.zeros(batch + (m, m), dtype=input.dtype),
            S,
            gt.zeros(batch + (n, n), dtype=input.dtype),
        )
    if out is not None:
        for r, o in zip(result, out):
            o.resize_(r.shape).copy_(r)
        return _svd_result(*out)
    return result


def matrix_exp(input):
    """``linalg.matrix_exp(input)``."""
    return _linalg.matrix_exp(input)
