"""``gradstack_tensor.linalg`` (``gradstack.linalg``): the norms, products and cross
product of ``torch.linalg`` that compose existing ops (``vector_norm``, ``matrix_norm``
for the Frobenius and 1/inf norms, ``norm``, ``cross``, ``vecdot``, ``matmul``,
``multi_dot``), and those with a factorization on numpy's LAPACK: ``inv``, ``det``,
``slogdet``, ``solve``, ``cholesky``, ``matrix_power``, ``svd`` and ``svdvals`` (ops of
their own, with derivatives in graph-engine); the eigendecompositions, QR, least squares,
triangular solves, LU and what is made of them are in :mod:`.linalg_factorizations`.

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

import numpy as np

from ._dispatch import OPS, dispatch
from ._impl_decompositions import LinAlgError, check_matrices
from ._tensor import Tensor, _data, _wrap
from .autocast_mode import autocast_function
from .linalg_factorizations import *  # noqa: F403 - eig, qr, lstsq, lu ... (their module)
from .linalg_factorizations import __all__ as _factorizations_all

__all__ = [
    "vector_norm",
    "matrix_norm",
    "norm",
    "cross",
    "vecdot",
    "matmul",
    "multi_dot",
    "inv",
    "det",
    "slogdet",
    "solve",
    "cholesky",
    "matrix_power",
    "svd",
    "svdvals",
    "matrix_exp",
    "householder_product",
    "diagonal",
    "vander",
    "LinAlgError",
    "cond",
    *_factorizations_all,
]


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
    if x.is_complex():
        x = x.abs()  # (the norm of the magnitudes: a real result, torch's gradient)
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
    (largest/smallest column sum of ``|A|``), ``inf``/``-inf`` (rows), ``2``/``-2`` (the
    largest/smallest singular value) and ``'nuc'`` (their sum).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> matrix_norm(gt.tensor([[3.0, 0.0], [0.0, -4.0]]), 2).item()
    4.0
    """
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
    if ord in (2, -2, "nuc"):  # from the singular values, as torch's
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        out = s.amax(-1) if ord == 2 else s.amin(-1) if ord == -2 else s.sum(-1)
        for d in sorted((d0, d1)) if keepdim else ():
            out = out.unsqueeze(d)
        return out
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


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


@autocast_function("linalg_vecdot")
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


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """The diagonals of a batch of matrices: ``A.diagonal(offset, dim1, dim2)`` (a view),
    with ``linalg.diagonal``'s defaults (the last two dims).

    >>> import gradstack_tensor as gt
    >>> diagonal(gt.arange(8.0).reshape(2, 2, 2)).tolist()
    [[0.0, 3.0], [4.0, 7.0]]
    """
    return _t(A, "diagonal").diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrices of the vectors in ``x`` (``(..., n)`` -> ``(..., n, N)``),
    increasing powers ``x ** 0 .. x ** (N - 1)`` (``N`` defaults to ``n``, and must be more
    than 1), in ``x``'s dtype: torch's ones and running product (``cumprod``), concatenated.

    >>> import gradstack_tensor as gt
    >>> vander(gt.tensor([1.0, 2.0, 3.0])).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    import gradstack_tensor as gt

    x = _t(x, "vander")
    if x.dtype == gt.bool:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = gt.cumprod(x_.unsqueeze(-1).expand(*shape, n - 1), -1)
    ones = gt.ones(*shape, 1, dtype=powers.dtype)
    return gt.cat([ones, powers], -1)


# -------------------------------------------------------------------------------------
# with a factorization (the ops are _impl_decompositions.py's)


def _out(result, out):
    if out is None:
        return result
    from ._out import write_out

    return write_out("linalg", result, out, rule="exact")


def inv(A, *, out=None):
    """The inverse of each square matrix in ``A``; a singular one raises
    :class:`LinAlgError`.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> inv(gt.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _out(dispatch(OPS["linalg_inv"], (_t(A, "inv"),)), out)


def det(A, *, out=None):
    """The determinant of each square matrix in ``A``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> det(gt.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    -2.0
    """
    return _out(dispatch(OPS["linalg_det"], (_t(A, "det"),)), out)


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of each determinant: ``det = sign * exp(logabsdet)``, finite
    where the determinant over- or underflows.  The sign is not differentiable (a
    constant here; torch's requires grad and receives nothing).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> r = slogdet(gt.tensor([[0.0, 2.0], [2.0, 0.0]], dtype=gt.float64))
    >>> r.sign.item(), round(r.logabsdet.item(), 6)
    (-1.0, 1.386294)
    """
    import numpy as np

    from ._impl_decompositions import take_slogdet_sign
    from ._tensor import _data, _wrap
    from .return_types import linalg_slogdet

    x = _t(A, "slogdet")
    a = _data(x)
    logabsdet = dispatch(OPS["linalg_logabsdet"], (x,))
    sign = take_slogdet_sign(a)  # (Note [slogdet's sign from the kernel's factorization])
    if sign is None:
        sign = np.linalg.slogdet(a)[0] if a.size else np.ones(a.shape[:-2])
    result = linalg_slogdet(_wrap(np.array(sign, dtype=a.dtype, order="C")), logabsdet)
    return result if out is None else _out(result, out)


def solve(A, B, *, left: bool = True, out=None):
    """``X`` with ``A @ X = B`` (``X @ A = B`` with ``left=False``); ``B`` is a (batch
    of) vector(s) when it is 1-d or has ``A``'s shape without the last dim.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> solve(gt.tensor([[2.0, 0.0], [0.0, 4.0]]), gt.tensor([1.0, 1.0])).tolist()
    [0.5, 0.25]
    """
    return _out(dispatch(OPS["linalg_solve"], (_t(A, "solve"), B, bool(left))), out)


def cholesky(A, *, upper: bool = False, out=None):
    """The lower triangular ``L`` with ``A = L @ L.mT`` (read from ``A``'s lower
    triangle), or ``L.mT`` with ``upper=True``; not positive-definite: LinAlgError.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cholesky(gt.tensor([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    return _out(dispatch(OPS["linalg_cholesky"], (_t(A, "cholesky"), bool(upper))), out)


def matrix_power(A, n: int, *, out=None):
    """``A`` multiplied by itself ``n`` times (``inv(A)`` for negative ``n``, the identity
    for 0), by torch's binary decomposition of ``n``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> matrix_power(gt.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    a = _t(A, "matrix_power")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{a.shape[-2] if a.dim() >= 2 else a.shape[-1]} by {a.shape[-1]} matrices"
        )
    return _out(_matrix_power(a, n), out)


def _matrix_power(a: Tensor, n: int) -> Tensor:
    import gradstack_tensor as gt

    if n == 0:
        return gt.eye(a.shape[-1], dtype=a.dtype).expand_as(a).clone()
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a.clone()
    if n == 2:
        return a.matmul(a)
    if n == 3:
        return a.matmul(a).matmul(a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else z.matmul(z)
        if bit:
            result = z if result is None else result.matmul(z)
    return result


def svd(A, full_matrices: bool = True, *, driver=None, out=None):
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` of each matrix, as the
    named tuple ``(U, S, Vh)``; ``full_matrices=False`` gives the reduced one (``U`` of
    ``min(m, n)`` columns).  Signs are LAPACK's, as torch's on the CPU (Note [SVD's signs are
    LAPACK's] in ``_impl_decompositions.py``).  Its gradient is torch's ``svd_backward``
    (ill-defined where singular values repeat, as torch's).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> U, S, Vh = svd(gt.tensor([[3.0, 0.0], [0.0, -2.0]]))
    >>> S.tolist()
    [3.0, 2.0]
    >>> (U @ gt.diag(S) @ Vh).tolist()
    [[3.0, 0.0], [0.0, -2.0]]
    """
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
            "with cuSOLVER backend."
        )
    result = dispatch(OPS["linalg_svd"], (_t(A, "svd"), bool(full_matrices)))
    if out is not None:
        from ._out import write_out
        from .return_types import linalg_svd

        return linalg_svd(*(write_out("linalg", r, o, rule="exact") for r, o in zip(result, out)))
    return result


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix, in descending order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> svdvals(gt.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = _t(A, "svdvals")
    if x.dim() < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 dimensions.")
    s = svd(x, full_matrices=False, driver=driver).S
    return _out(s, out)


def cond(A, p=None, *, out=None):
    """The condition number of each matrix in the norm ``p``: ``s_max / s_min`` for
    ``None``/``2`` (``s_min / s_max`` for ``-2``, any shape), ``norm(A) * norm(inv(A))``
    for ``'fro'``, ``'nuc'``, ``1``, ``-1``, ``inf``, ``-inf`` (square matrices).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> cond(gt.tensor([[4.0, 0.0], [0.0, 2.0]])).item()
    2.0
    """
    a = _t(A, "cond")
    if a.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = svdvals(a)
        if s.shape[-1] == 0:
            return _out(s.sum(-1), out)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _out(r, out)
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_matrices(f"linalg.cond(ord={p})", _data(a))
    try:
        r = matrix_norm(a, p) * matrix_norm(inv(a), p)
    except LinAlgError:  # torch: a singular matrix has condition number inf
        return _out(_wrap(np.full(tuple(a.shape[:-2]), math.inf, dtype=_data(a).dtype)), out)
    return _out(r, out)


def matrix_exp(A):
    """The matrix exponential of each square matrix, by scaling and squaring: ``A / 2**s``
    with its 1-norm at most 1/2, its Taylor series to degree 18 (Horner), squared ``s``
    times.  A composition of matmuls, so its gradient (to any order) is autograd's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> matrix_exp(gt.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    import gradstack_tensor as gt

    x = _t(A, "matrix_exp")
    data = x.detach().numpy() if x.numel() else None
    if x.dim() < 2 or x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_exp: A must be batches of square matrices, but they are "
            f"{x.shape[-2] if x.dim() > 1 else 1} by {x.shape[-1] if x.dim() else 1} matrices"
        )
    if not x.is_floating_point():
        raise RuntimeError(
            "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
            f"{str(x.dtype).split('.')[-1].capitalize()}"
        )
    n = x.shape[-1]
    eye = gt.eye(n, dtype=x.dtype)
    if data is None:
        return x + eye  # (an empty batch, or 0x0 matrices)
    import numpy as np

    norm = float(np.max(np.abs(data).sum(-2))) if data.size else 0.0
    squarings = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    b = x / (2.0**squarings)
    result = eye + b / 18.0
    for k in range(17, 0, -1):  # Horner: I + B/1 (I + B/2 (... (I + B/18)))
        result = eye + b.matmul(result) / float(k)
    for _ in range(squarings):
        result = result.matmul(result)
    return result


def householder_product(A, tau, *, out=None):
    """The first ``k`` columns of ``H_1 H_2 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with
    ``v_i`` the ``i``-th column of ``A`` below the diagonal and 1 on it (LAPACK's
    ``orgqr``): composed of gradstack ops, so it differentiates.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> householder_product(gt.tensor([[1.0], [0.0]]), gt.tensor([2.0])).tolist()
    [[-1.0], [0.0]]
    """
    import gradstack_tensor as gt

    x = _t(A, "householder_product")
    if x.dim() < 2:
        raise RuntimeError(
            "torch.linalg.householder_product: input must have at least 2 dimensions."
        )
    m, n = x.shape[-2], x.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or "
            "equal to input.shape[-1]"
        )
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or "
            "equal to tau.shape[-1]"
        )
    batch = tuple(x.shape[:-2])
    q = gt.eye(m, n, dtype=x.dtype).expand(*batch, m, n)
    rows = gt.arange(m).unsqueeze(-1)
    for i in range(k - 1, -1, -1):  # Q = H_1 (H_2 (... (H_k I)))
        col = x[..., :, i : i + 1]
        v = gt.where(rows > i, col, gt.where(rows == i, 1.0, 0.0).to(x.dtype))
        t = tau[..., i : i + 1].unsqueeze(-1)
        q = q - (t * v).matmul(v.transpose(-1, -2).matmul(q))
    return _out(q, out)
