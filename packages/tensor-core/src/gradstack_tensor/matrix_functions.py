"""torch's top-level names of the matrix functions in :mod:`gradstack_tensor.linalg`:
``inverse``, ``det``, ``slogdet``, ``logdet``, ``cholesky`` (deprecated in torch, with its
warning) and ``matrix_power``.

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
from .return_types import slogdet as _slogdet_result

__all__ = ["inverse", "det", "slogdet", "logdet", "cholesky", "matrix_power"]


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
