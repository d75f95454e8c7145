"""``gradstack_tensor.linalg`` (``gradstack.linalg``): the norms, products and cross
product of ``torch.linalg`` that compose existing ops (``vector_norm``, ``matrix_norm``
for the Frobenius and 1/inf norms, ``norm``, ``cross``, ``vecdot``, ``matmul``,
``multi_dot``).  Decompositions and solvers (``inv``, ``det``, ``solve``, ``svd`` ...) are
not implemented: they raise NotImplementedError naming the function.

Examples
--------
>>> import gradstack_tensor as gt
>>> vector_norm(gt.tensor([3.0, 4.0])).item()
5.0
>>> matrix_norm(gt.ones(2, 2)).item()
2.0
"""

from __future__ import annotations

import math

from ._tensor import Tensor

__all__ = ["vector_norm", "matrix_norm", "norm", "cross", "vecdot", "matmul", "multi_dot"]


def _t(x, fname: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"linalg.{fname}(): argument 'input' must be Tensor, not {type(x).__name__}"
        )
    return x


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The ``ord``-norm of ``x``'s elements over ``dim`` (all of them by default), as a
    vector: ``sum(|x| ** ord) ** (1 / ord)``, the largest or smallest ``|x|`` for ``inf``
    and ``-inf``, the count of nonzeros for 0."""
    x = _t(x, "vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{x.dtype.name.capitalize()}"
        )
    if dim is None:
        out = x.reshape(-1).norm(float(ord), 0)
        return out.reshape((1,) * x.dim()) if keepdim else out
    return x.norm(float(ord), dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The ``ord``-norm of the matrices in the last two dims: ``'fro'``, or ``1``/``-1``
    (largest/smallest column sum of ``|A|``), ``inf``/``-inf`` (rows).  The spectral and
    nuclear norms need an SVD: NotImplementedError."""
    A = _t(A, "matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return (A * A).sum((d0, d1), keepdim=keepdim).sqrt()
    if ord in (1, -1, math.inf, -math.inf):
        summed_dim, reduced_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed_dim, keepdim=True)
        out = (
            sums.amax(reduced_dim, keepdim=True)
            if ord > 0
            else sums.amin(reduced_dim, keepdim=True)
        )
        return out if keepdim else out.squeeze((d0, d1) if d0 < d1 else (d1, d0))
    raise NotImplementedError(
        f"linalg.matrix_norm(ord={ord!r}) needs a singular value decomposition, which gradstack "
        "does not implement"
    )


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """``vector_norm`` for a vector ``dim`` (or 1-d input), ``matrix_norm`` for a pair of
    dims (or a 2-d input), as ``torch.linalg.norm``."""
    A = _t(A, "norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    if ord is not None and dim is None and A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
            f"{A.dim()}D."
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim: int = -1):
    """The cross product of 3-vectors along ``dim`` (default the last)."""
    from .elementwise_composites import cross as _cross

    return _cross(input, other, dim)


def vecdot(x, y, *, dim: int = -1):
    """The dot product of the vectors along ``dim`` (broadcast)."""
    return (_t(x, "vecdot") * y).sum(dim)


def matmul(input, other):
    """``input @ other``."""
    return _t(input, "matmul") @ other


def multi_dot(tensors):
    """The product of the matrices left to right (the first and last may be vectors)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def _not_implemented(name):
    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"torch.linalg.{name} is not implemented in gradstack (no decompositions or "
            "solvers yet)"
        )

    missing.__name__ = name
    return missing


for _name in ("inv", "det", "slogdet", "solve", "svd", "svdvals", "eig", "eigh", "eigvals",
              "eigvalsh", "qr", "cholesky", "lstsq", "pinv", "matrix_rank", "matrix_power",
              "matrix_exp", "lu", "lu_factor", "inv_ex", "cholesky_ex", "solve_ex"):  # fmt: skip
    globals()[_name] = _not_implemented(_name)
del _name
