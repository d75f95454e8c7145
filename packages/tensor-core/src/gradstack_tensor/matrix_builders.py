"""torch's matrix builders, written as compositions of gradstack's ops: ``diag_embed``,
``diagflat``, ``block_diag`` and ``vander``.

The positions are computed with numpy; every value that carries a gradient is made by
differentiable ops (``where``, ``cat``, ``cumprod`` ...), so first and second order and
forward mode come from theirs (Note [Composites record their parts] in composites.py: the
nodes are the parts', not torch's single node).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.diag_embed(gt.tensor([1.0, 2.0]), 1).tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import builtins

import numpy as np

from ._composite_args import _floating, _gt, _int, _tensor, _zeros
from ._shapes import _normalize_dim
from ._signatures import checked
from ._tensor import Tensor, _wrap

__all__ = ["diag_embed", "diagflat", "block_diag", "vander"]


def _combine_categories(higher, lower):
    """torch's ``combine_categories`` (c10's ResultTypeState): ``higher`` wins unless
    ``lower`` is of a higher category (bool < integral < floating)."""
    gt = _gt()
    if higher is None:
        return lower
    if lower is None or _floating(higher):
        return higher
    if higher.name == "bool" or _floating(lower):
        return gt.promote_types(higher, lower)
    return higher


def _result_type(tensors):
    """torch's ``result_type`` of a list of tensors: 0-d tensors take part only when they
    are of a higher category than the others."""
    gt = _gt()
    dim_result = zero_result = None
    for t in tensors:
        if t.dim():
            dim_result = t.dtype if dim_result is None else gt.promote_types(dim_result, t.dtype)
        else:
            zero_result = t.dtype if zero_result is None else gt.promote_types(zero_result, t.dtype)
    return _combine_categories(dim_result, zero_result)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals (``offset``) in the planes of ``dim1`` and ``dim2`` hold the
    last dimension of ``input``; the rest is zero.

    The result has one more dimension than ``input``; ``dim1`` and ``dim2`` count in it.
    Its two new dimensions have ``input.shape[-1] + abs(offset)`` elements.

    Parameters
    ----------
    input : Tensor
        At least 1-d.
    offset : int
        0 the main diagonal, > 0 above it, < 0 below it.
    dim1, dim2 : int
        The rows and the columns of the diagonal's plane.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.diag_embed(gt.tensor([[1, 2], [3, 4]])).tolist()
    [[[1, 0], [0, 2]], [[3, 0], [0, 4]]]
    """
    gt = _gt()
    x = _tensor(input, "diag_embed")
    offset = _int(offset, "diag_embed", "offset")
    dim1 = _int(dim1, "diag_embed", "dim1")
    dim2 = _int(dim2, "diag_embed", "dim2")
    nd = x.dim() + 1
    d1, d2 = _normalize_dim(dim1, nd), _normalize_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    k = abs(offset)
    n = x.shape[-1] + k
    # Note [diag_embed is a where over a shifted identity]
    # The diagonal's element i sits at (row i, column i + offset) for offset >= 0 and at
    # (row i - offset, column i) below: pad the last dim with |offset| zeros and read it
    # along the rows (offset >= 0) or the columns (< 0) where column - row == offset.
    # ``where`` (not a product with the identity) keeps inf and NaN off the diagonal out.
    padded = gt.cat([x, _zeros(tuple(x.shape[:-1]) + (k,), x.dtype)], -1) if k else x
    rows = np.arange(n)
    mask = _wrap(np.ascontiguousarray(rows[None, :] - rows[:, None] == offset))
    source = padded.unsqueeze(-1) if offset >= 0 else padded.unsqueeze(-2)
    out = gt.where(mask, source, _zeros((), x.dtype))
    return gt.movedim(out, (-2, -1), (d1, d2))


def diagflat(input, offset: int = 0) -> Tensor:
    """A 2-d tensor with the flattened ``input`` on its ``offset`` diagonal.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.diagflat(gt.tensor([[1.0, 2.0]]), -1).tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    """
    x = _tensor(input, "diagflat")
    return diag_embed(x.reshape(-1), _int(offset, "diagflat", "offset"))


def block_diag(*tensors) -> Tensor:
    """The block diagonal matrix of ``tensors`` (0-d and 1-d ones are 1-row blocks), in
    their promoted dtype; ``block_diag()`` is an empty (1, 0) float tensor, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.block_diag(gt.tensor([[1, 2]]), gt.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    gt = _gt()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    if not tensors:
        return gt.empty((1, 0))
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {t.dim()} dimensions"
            )
    dtype = _result_type(tensors)
    blocks = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [_zeros((r, left), dtype), b.to(dtype), _zeros((r, width - left - c), dtype)]
        rows.append(gt.cat(parts, 1))
        left += c
    return gt.cat(rows, 0)


@checked("vander")
def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-d ``x``: column ``j`` is ``x ** (N - 1 - j)`` (``x **
    j`` when ``increasing``), as a running product (torch's cumprod); integers and bool
    give int64.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.vander(gt.tensor([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    gt = _gt()
    v = _tensor(x, "vander", "x")
    if v.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = v.shape[0]
    if N is not None:
        n = _int(N, "vander", "N")
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dtype = gt.promote_types(v.dtype, gt.int64)
    columns = [gt.ones((v.shape[0], 1), dtype=dtype)] if n > 0 else []
    if n > 1:
        powers = v.to(dtype).unsqueeze(1).expand(v.shape[0], n - 1)
        columns.append(gt.cumprod(powers, 1))
    result = gt.cat(columns, 1) if columns else _zeros((v.shape[0], 0), dtype)
    return result if increasing else result.flip(1)
