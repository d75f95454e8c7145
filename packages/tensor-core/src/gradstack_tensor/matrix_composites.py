"""torch's matrix builders, combinatorics, statistics, integration, counting, stable scans,
number theory and indexed writes, written as compositions of gradstack's ops:
``diag_embed``, ``diagflat``, ``block_diag``, ``cartesian_prod``, ``combinations``,
``cov``, ``corrcoef``, ``vander``, ``trapezoid`` (and ``trapz``), ``cumulative_trapezoid``,
``bincount``, ``logcumsumexp``, ``hypot``, ``gcd`` (``gcd_``), ``lcm`` (``lcm_``),
``heaviside``, ``index_put``, ``index_put_`` and ``masked_scatter``.

Positions, masks and counts are computed with numpy; every value that carries a gradient
is made by differentiable ops (``where``, ``cat``, ``index_select``, ``index_add``,
``logaddexp`` ...), so first and second order and forward mode come from theirs
(Note [Composites record their parts] in composites.py: the nodes are the parts', not
torch's single node).

The in-place variants of the methods torch has only on ``Tensor`` (``hypot_``,
``heaviside_``, ``masked_scatter_``) are here too but not in ``__all__`` (torch has no
``torch.hypot_``): ``Tensor`` methods call them.

Note [heaviside carries no gradient]
torch records a node for ``heaviside`` whose backward raises ("the derivative for
'heaviside' is not implemented").  Its value is a step (zero gradient almost everywhere,
``values`` where the input is zero), and a composite cannot make a node that raises, so
here the result never requires grad: ``backward`` through it finds no path instead of
raising.

Note [bincount with weights is differentiable]
torch's ``bincount`` records a node whose backward raises ("derivative for aten::bincount
is not implemented").  Here the weighted counts are an ``index_add`` of the weights into
zeros, so the gradient reaches the weights (``grad[input]``), a superset of torch's
behaviour.  The sums are in the result's dtype in input order, as torch's kernel.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.diag_embed(gt.tensor([1.0, 2.0]), 1).tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
>>> gt.combinations(gt.tensor([1, 2, 3])).tolist()
[[1, 2], [1, 3], [2, 3]]
>>> gt.logcumsumexp(gt.tensor([-1000.0, 1000.0, 0.0]), 0).tolist()
[-1000.0, 1000.0, 1000.0]
"""

from __future__ import annotations

import builtins
import itertools
import math
import warnings

import numpy as np

from ._out import _SCALAR_NAMES
from ._shapes import _normalize_dim
from ._tensor import Tensor, _data, _wrap

__all__ = [
    "diag_embed",
    "diagflat",
    "block_diag",
    "cartesian_prod",
    "combinations",
    "cov",
    "corrcoef",
    "vander",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "bincount",
    "logcumsumexp",
    "hypot",
    "gcd",
    "gcd_",
    "lcm",
    "lcm_",
    "heaviside",
    "index_put",
    "index_put_",
    "masked_scatter",
]


# ---------------------------------------------------------------------------- helpers


def _gt():
    import gradstack_tensor as gt

    return gt


def _tensor(x, fname: str, name: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _int(value, fname: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fname}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _long(a) -> Tensor:
    return _wrap(np.array(a, dtype=np.int64, order="C"))


def _name(dtype) -> str:
    return _SCALAR_NAMES[dtype.name]


def _floating(dtype) -> bool:
    return dtype.name.startswith("float")


def _integral(dtype) -> bool:
    return dtype.name.startswith(("int", "uint"))


def _zeros(shape, dtype) -> Tensor:
    return _gt().zeros(tuple(shape), dtype=dtype)


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


def _write_inplace(fname: str, input: Tensor, result: Tensor) -> Tensor:
    """``input.copy_(result)`` after torch's checks of an in-place op's result."""
    if tuple(result.shape) != tuple(input.shape):
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if result.dtype is not input.dtype and not _gt().can_cast(result.dtype, input.dtype):
        raise RuntimeError(
            f"result type {_name(result.dtype)} can't be cast to the desired output type "
            f"{_name(input.dtype)}"
        )
    return input.copy_(result)


# ---------------------------------------------------------------------------- 1. diagonals


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


# ---------------------------------------------------------------------------- 2. products


def _vector(t, fname: str) -> Tensor:
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    return t


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-d tensors of one dtype: a ``(prod(len), len(tensors))``
    tensor, in the order of ``itertools.product``; one tensor is returned as it is.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cartesian_prod(gt.tensor([1, 2]), gt.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    gt = _gt()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
        _vector(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    grids = gt.meshgrid(*tensors, indexing="ij")
    return gt.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-d tensor, as rows, in the order
    of ``itertools.combinations`` (``combinations_with_replacement``).

    ``r == 0`` gives an empty 1-d tensor, ``r > len(input)`` a ``(0, r)`` one.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.combinations(gt.tensor([1.0, 2.0]), 2, with_replacement=True).tolist()
    [[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]]
    """
    x = _tensor(input, "combinations")
    r = _int(r, "combinations", "r")
    _vector(x, "combinations")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _zeros((0,), x.dtype)
    n = x.shape[0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if count * r > 2**31:
        raise RuntimeError(f"combinations(): {count} combinations of {r} are too many")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.fromiter(
        itertools.chain.from_iterable(pick(range(n), r)), dtype=np.int64, count=count * r
    )
    # (values by index_select: the gradient of an element sums over its rows)
    return x.index_select(0, _long(index)).reshape(count, r)


# ---------------------------------------------------------------------------- 3. statistics


def _check_weights(w: Tensor, kind: str, observations: int) -> None:
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
            f"{w.dim()} dimensions"
        )
    ok = _integral(w.dtype) if kind == "fweights" else _floating(w.dtype)
    if not ok:
        what = "integral" if kind == "fweights" else "floating point"
        raise RuntimeError(
            f"cov(): expected {kind} to have {what} dtype but got {kind} with "
            f"{_name(w.dtype)} dtype"
        )
    if w.numel() != observations:
        raise RuntimeError(
            f"cov(): expected {kind} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {observations}"
        )
    if observations and (_data(w) < 0).any():
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with integer frequency weights ``fweights`` and float observation weights
    ``aweights``; torch's formula, op for op.

    A 1-d input is one variable (a 0-d result).  With ``correction`` at least the number
    of observations (the weights' sum), torch warns and divides by zero.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cov(gt.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    gt = _gt()
    x = _tensor(input, "cov")
    correction = _int(correction, "cov", "correction")
    if x.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{x.dim()} dimensions"
        )
    if x.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    data = x.reshape(1, -1) if x.dim() < 2 else x
    observations = data.shape[1]
    w = None
    if fweights is not None:
        _check_weights(_tensor(fweights, "cov", "fweights"), "fweights", observations)
        w = fweights
    if aweights is not None:
        _check_weights(_tensor(aweights, "cov", "aweights"), "aweights", observations)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = gt.scalar_tensor(observations, dtype=gt.int64)
    else:
        w_sum = w.sum()
        if not bool(_data(w_sum) != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (data if w is None else data * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(_data(norm) <= 0):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = gt.zeros_like(norm)
    centred = data - avg.unsqueeze(1)
    c = gt.mm(centred, (centred if w is None else centred * w).t())
    return gt.true_divide(c, norm).squeeze()


def corrcoef(input) -> Tensor:
    """Pearson's correlation coefficients of the rows of ``input``: ``cov`` divided by the
    outer product of the standard deviations, clipped to [-1, 1] (torch's formula).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.corrcoef(gt.tensor([[0.0, 1.0, 2.0], [4.0, 2.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = _tensor(input, "corrcoef")
    if x.dim() > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{x.dim()} dimensions"
        )
    c = cov(x)
    if c.dim() == 0:
        return c / c  # NaN for a covariance of 0, inf or NaN, else 1
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)


# ---------------------------------------------------------------------------- 4. integration


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


def _spacing(y: Tensor, x: Tensor, axis: int, fname: str) -> Tensor:
    """``x``'s differences along ``axis``, shaped to broadcast with ``y``'s (torch's
    trapezoid: a 1-d ``x`` lies along ``axis``, a shorter one gets leading 1s)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[axis]:
            raise RuntimeError(f"{fname}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[axis] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    m = x.shape[axis]
    return x.narrow(axis, 1, max(m - 1, 0)) - x.narrow(axis, 0, max(m - 1, 0))


def _dx_number(dx, fname: str) -> float:
    if isinstance(dx, Tensor):
        if dx.numel() != 1:
            raise TypeError(f"{fname}(): argument 'dx' must be Number, not Tensor")
        dx = dx.item()
    if isinstance(dx, (bool, np.bool_)):
        raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")
    if isinstance(dx, complex) or not isinstance(dx, (int, float, np.integer, np.floating)):
        if isinstance(dx, complex):
            raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")
        raise TypeError(f"{fname}(): argument 'dx' must be Number, not {type(dx).__name__}")
    return float(dx)


def _integration_args(fname, y, x, dx, dim):
    y = _tensor(y, fname, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{fname}() received an invalid combination of arguments: both x and dx")
    if x is not None:
        _tensor(x, fname, "x")
    dim = _int(dim, fname, "dim")
    return y, x, dim


def _sides(y: Tensor, axis: int):
    """``y`` without its last and without its first element along ``axis``."""
    n = y.shape[axis]
    return y.narrow(axis, 0, max(n - 1, 0)), y.narrow(axis, min(n, 1), max(n - 1, 0))


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples ``y`` at points ``x`` (a tensor), or
    spaced by ``dx`` (a number, 1 by default).  Zero samples integrate to zeros.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.trapezoid(gt.tensor([1.0, 5.0, 10.0])).item()
    10.5
    >>> gt.trapezoid(gt.tensor([1.0, 5.0, 10.0]), gt.tensor([1.0, 3.0, 6.0])).item()
    28.5
    """
    y, x, dim = _integration_args("trapezoid", y, x, dx, dim)
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = _normalize_dim(dim, y.dim())
    if y.shape[axis] == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != axis)
        return _zeros(shape, y.dtype)
    if x is None:
        step = 1.0 if dx is None else _dx_number(dx, "trapezoid")
        if y.dtype.name == "bool":
            raise RuntimeError(
                "trapezoid: received a bool input for `y`, but bool is not supported"
            )
        ends = y.select(axis, 0) + y.select(axis, -1)
        return (y.sum(axis) - ends * 0.5) * step
    if y.dtype.name == "bool" or x.dtype.name == "bool":
        raise RuntimeError(
            "trapezoid: received a bool input for `x` or `y`, but bool is not supported"
        )
    spacing = _spacing(y, x, axis, "trapezoid")
    left, right = _sides(y, axis)
    return ((left + right) * spacing).sum(axis) / 2.0


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """torch's alias of ``trapezoid``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.trapz(gt.tensor([1.0, 5.0, 10.0]), dx=2).item()
    21.0
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim``: one fewer element there than ``y``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cumulative_trapezoid(gt.tensor([1.0, 5.0, 10.0])).tolist()
    [3.0, 10.5]
    """
    fname = "cumulative_trapezoid"
    y, x, dim = _integration_args(fname, y, x, dx, dim)
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    axis = _normalize_dim(dim, y.dim())
    if x is None:
        step = 1.0 if dx is None else _dx_number(dx, fname)
        if y.dtype.name == "bool":
            raise RuntimeError(f"{fname}: received a bool input for `y`, but bool is not supported")
        left, right = _sides(y, axis)
        return (step / 2.0 * (left + right)).cumsum(axis)
    if y.dtype.name == "bool" or x.dtype.name == "bool":
        raise RuntimeError(
            f"{fname}: received a bool input for `x` or `y`, but bool is not supported"
        )
    spacing = _spacing(y, x, axis, fname)
    left, right = _sides(y, axis)
    return ((left + right) * spacing).cumsum(axis) / 2.0


# ---------------------------------------------------------------------------- 5. counting


def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """How often each value occurs in a 1-d tensor of non-negative integers (int64), or
    the sums of ``weights`` per value: float32 for float32 weights, float64 for any other
    dtype.  The result has ``max(input.max() + 1, minlength)`` elements.

    Note [bincount with weights is differentiable].

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.bincount(gt.tensor([0, 1, 1, 3])).tolist()
    [1, 2, 0, 1]
    >>> gt.bincount(gt.tensor([0, 1, 1]), gt.tensor([0.5, 1.0, 2.0])).tolist()
    [0.5, 3.0]
    """
    gt = _gt()
    x = _tensor(input, "bincount")
    minlength = _int(minlength, "bincount", "minlength")
    if weights is not None:
        _tensor(weights, "bincount", "weights")
    if not _integral(x.dtype):
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_name(x.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.dim() == 1 and x.numel() == 0:
        return _zeros((minlength,), gt.int64)
    a = _data(x)
    if x.dim() != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = builtins.max(int(a.max()) + 1, minlength)
    if weights is None:
        return _wrap(np.bincount(a.astype(np.int64), minlength=bins).astype(np.int64))
    dtype = gt.float32 if weights.dtype.name == "float32" else gt.float64
    return _zeros((bins,), dtype).index_add(0, _long(a), weights.to(dtype))


# ---------------------------------------------------------------------------- 6. scans


def logcumsumexp(input, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow or underflow: each element is the
    log-sum-exp of the elements up to it, exact for inputs spanning any range and -inf.

    Note [logcumsumexp is a log-space scan]
    ``log(cumsum(exp(x - c)))`` with one shift ``c`` underflows to -inf wherever the
    running sum is far below ``c`` (values from -1000 to 1000).  torch scans with a running
    ``logaddexp``; here the scan is Hillis-Steele's: ``ceil(log2 n)`` rounds of
    ``y[k:] = logaddexp(y[k:], y[:-k])`` for k = 1, 2, 4 ..., each a handful of
    differentiable ops (``logaddexp`` is stable, and exact for equal infinities), so the
    graph has O(log n) nodes, not O(n).  The sums are grouped differently from torch's
    running sum: values agree to a few ulps, not bit for bit.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in gt.logcumsumexp(gt.tensor([0.0, 0.0, 0.0]), 0).tolist()]
    [0.0, 0.6931, 1.0986]
    """
    gt = _gt()
    x = _tensor(input, "logcumsumexp")
    dim = _int(dim, "logcumsumexp", "dim")
    if not _floating(x.dtype):
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_name(x.dtype)}'"
        )
    axis = _normalize_dim(dim, x.dim())
    if x.dim() == 0 or x.shape[axis] <= 1:
        return x.clone()
    n = x.shape[axis]
    y = x
    k = 1
    while k < n:
        tail = gt.logaddexp(y.narrow(axis, k, n - k), y.narrow(axis, 0, n - k))
        y = gt.cat([y.narrow(axis, 0, k), tail], axis)
        k *= 2
    return y


# ---------------------------------------------------------------------------- 7. elementwise


def hypot(input, other) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow: both are divided by the larger
    magnitude first.  Infinity wins over NaN, as in C's ``hypot``.

    Note [hypot scales by a constant]
    ``m * sqrt((a/m)**2 + (b/m)**2)`` equals the hypotenuse for every ``m > 0``, so ``m``
    (the larger magnitude, 1 where that is 0 or not finite) is detached: the gradient is
    ``a / hypot`` exactly as torch's, and second order and forward mode follow.  Values
    agree with torch's to an ulp or two.  Where an input is infinite the value is inf and
    the gradient 0 (torch: ``a / inf``, NaN for the infinite input).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.hypot(gt.tensor([3.0, 3e30]), gt.tensor([4.0, 4e30])).tolist()
    [5.0, 4.9999999241216036e+30]
    """
    gt = _gt()
    a = _tensor(input, "hypot")
    b = _tensor(other, "hypot", "other")
    dtype = gt.result_type(a, b)
    if not _floating(dtype):
        raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{_name(dtype)}'")
    a, b = a.to(dtype), b.to(dtype)
    m = gt.maximum(a.detach().abs(), b.detach().abs())
    scale = gt.where((m == 0) | ~m.isfinite(), 1.0, m)
    r = scale * ((a / scale).square() + (b / scale).square()).sqrt()
    infinite = a.detach().isinf() | b.detach().isinf()
    if bool(_data(infinite).any()):
        r = gt.where(infinite, float("inf"), r)
    return r


def hypot_(input, other) -> Tensor:
    """In-place ``hypot`` (``Tensor.hypot_``)."""
    return _write_inplace("hypot_", input, hypot(input, other))


def _integer_operands(fname: str, input, other):
    gt = _gt()
    a = _tensor(input, fname)
    b = _tensor(other, fname, "other")
    dtype = gt.result_type(a, b)
    if not _integral(dtype):
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for '{_name(dtype)}'")
    np_dtype = _data(_zeros((), dtype)).dtype
    x, y = np.broadcast_arrays(_data(a).astype(np_dtype), _data(b).astype(np_dtype))
    return dtype, x, y


def _euclid(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's ``calc_gcd``: Euclid on the magnitudes, with C's remainder (so the most
    negative integer, whose magnitude wraps, gives torch's results)."""
    a, b = np.abs(x), np.abs(y)
    with np.errstate(all="ignore"):
        while True:
            live = a != 0
            if not live.any():
                return b
            c = a.copy()
            safe = np.where(live, a, 1)
            a = np.where(live, np.fmod(b, safe), a)
            b = np.where(live, c, b)


def gcd(input, other) -> Tensor:
    """The greatest common divisor of integer tensors, elementwise (broadcast); 0 for
    ``gcd(0, 0)``.  No gradient (integers).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.gcd(gt.tensor([12, -18, 0]), gt.tensor([8, 12, 5])).tolist()
    [4, 6, 5]
    """
    _, x, y = _integer_operands("gcd", input, other)
    return _wrap(np.ascontiguousarray(_euclid(x, y)))


def lcm(input, other) -> Tensor:
    """The least common multiple of integer tensors, elementwise (broadcast): ``|a / gcd *
    b|``, 0 when either is 0; it wraps around on overflow as torch's (in C's ``int`` for
    8- and 16-bit dtypes).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.lcm(gt.tensor([4, -6, 0]), gt.tensor([6, 4, 5])).tolist()
    [12, 12, 0]
    """
    _, x, y = _integer_operands("lcm", input, other)
    g = _euclid(x, y)
    # (torch computes a / g * b and its abs in C's int for 8- and 16-bit dtypes)
    wide = np.int32 if x.dtype.itemsize < 4 else x.dtype
    with np.errstate(all="ignore"):
        xw, yw, gw = x.astype(wide), y.astype(wide), g.astype(wide)
        safe = np.where(gw == 0, 1, gw).astype(wide)
        value = np.abs((xw // safe) * yw)
        value = np.where(gw == 0, 0, value).astype(wide)
    return _wrap(np.ascontiguousarray(value.astype(x.dtype)))


def gcd_(input, other) -> Tensor:
    """In-place ``gcd``: ``input`` holds the result.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.gcd_(gt.tensor([12, 9]), gt.tensor([8, 6])).tolist()
    [4, 3]
    """
    return _write_inplace("gcd_", _tensor(input, "gcd_"), gcd(input, other))


def lcm_(input, other) -> Tensor:
    """In-place ``lcm``: ``input`` holds the result.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.lcm_(gt.tensor([4, 3]), gt.tensor([6, 5])).tolist()
    [12, 15]
    """
    return _write_inplace("lcm_", _tensor(input, "lcm_"), lcm(input, other))


def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 where ``input < 0`` (and NaN), 1 where ``input > 0``,
    ``values`` where ``input == 0``; both of one dtype.  Note [heaviside carries no
    gradient].

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.heaviside(gt.tensor([-1.5, 0.0, 2.0]), gt.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    x = _tensor(input, "heaviside")
    v = _tensor(values, "heaviside", "values")
    if x.dtype is not v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _gt().broadcast_shapes(tuple(x.shape), tuple(v.shape))
    a, b = _data(x), _data(v)
    out = np.where(a == 0, b, (a > 0).astype(a.dtype)).astype(a.dtype)
    return _wrap(np.ascontiguousarray(out))


def heaviside_(input, values) -> Tensor:
    """In-place ``heaviside`` (``Tensor.heaviside_``)."""
    return _write_inplace("heaviside_", input, heaviside(input, values))


# ---------------------------------------------------------------------------- 8. index_put


def _index_key(fname: str, x: Tensor, indices):
    """``indices`` as numpy arrays (bool masks kept as masks), after torch's checks."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"{fname}(): argument 'indices' (position 2) must be tuple of Tensors, not "
            f"{type(indices).__name__}"
        )
    if not indices:
        raise RuntimeError(f"{fname}(): expected at least one index tensor")
    key, dim = [], 0
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(t).__name__}"
            )
        a = _data(t)
        if a.dtype.kind == "b" or a.dtype == np.uint8:
            a = a.astype(bool)
            for j, size in enumerate(a.shape):
                if dim + j >= x.dim() or x.shape[dim + j] != size:
                    raise IndexError(
                        f"The shape of the mask {list(a.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(x.shape)} at index {dim + j}"
                    )
            dim += a.ndim
        elif a.dtype.kind in "iu":
            a = a.astype(np.int64)
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        key.append(a)
    if dim > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got {len(indices)})")
    return tuple(key)


def _positions(x: Tensor, key) -> np.ndarray:
    """The flat (row-major) position in ``x`` of each element of ``x[key]``."""
    try:
        return np.arange(x.numel(), dtype=np.int64).reshape(tuple(x.shape))[key]
    except IndexError as e:
        raise IndexError(str(e).replace("for axis", "for dimension")) from None


def _check_values(x: Tensor, values, shape) -> Tensor:
    v = _tensor(values, "index_put", "values")
    if v.dtype is not x.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_name(x.dtype)} for the destination and {_name(v.dtype)} for the source."
        )
    vshape = tuple(v.shape)
    while vshape and vshape[0] == 1 and len(vshape) > len(shape):
        vshape = vshape[1:]  # (torch strips leading 1s of the values)
    try:
        fits = np.broadcast_shapes(vshape, tuple(shape)) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(shape)}"
        )
    return v.reshape(vshape)


def _accumulated(x: Tensor, positions: np.ndarray, values: Tensor) -> Tensor:
    """``x`` with ``values`` (broadcast to ``positions``' shape) added at ``positions``:
    an ``index_add`` into the flattened ``x``, which sums repeated positions in order."""
    flat = values.expand(*positions.shape).reshape(-1) if positions.ndim else values.reshape(-1)
    return x.reshape(-1).index_add(0, _long(positions.reshape(-1)), flat).reshape(x.shape)


def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    """``input[indices] = values`` in place (``+=``, summing repeated indices, when
    ``accumulate``); ``indices`` is a tuple of index tensors (int or bool), ``values`` of
    ``input``'s dtype broadcasts to the indexed shape.  Returns ``input``.

    Note [``index_put_`` writes through an in-place op]
    Without ``accumulate`` it is ``Tensor.__setitem__`` (the ``setitem_`` op); with it,
    ``input.copy_(...)`` of an ``index_add`` into the flattened input.  Both are recorded
    in-place ops, so autograd sees the write (version counter, leaf checks, the gradient
    of the overwritten elements).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.zeros(3)
    >>> _ = gt.index_put_(x, (gt.tensor([0, 0, 2]),), gt.tensor([1.0, 2.0, 5.0]), True)
    >>> x.tolist()
    [3.0, 0.0, 5.0]
    """
    x = _tensor(input, "index_put_")
    key = _index_key("index_put_", x, indices)
    positions = _positions(x, key)
    v = _check_values(x, values, positions.shape)
    if accumulate:
        return x.copy_(_accumulated(x, positions, v))
    x[tuple(_wrap(np.ascontiguousarray(k)) for k in key)] = v
    return x


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``index_put_``: a new tensor, ``input`` unchanged.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.index_put(gt.zeros(2, 2), (gt.tensor([1]), gt.tensor([0])), gt.tensor(7.0)).tolist()
    [[0.0, 0.0], [7.0, 0.0]]
    """
    x = _tensor(input, "index_put")
    key = _index_key("index_put", x, indices)
    positions = _positions(x, key)
    v = _check_values(x, values, positions.shape)
    if accumulate:
        return _accumulated(x, positions, v)
    out = x.clone()
    out[tuple(_wrap(np.ascontiguousarray(k)) for k in key)] = v
    return out


# ---------------------------------------------------------------------------- 9. masked_scatter


def masked_scatter(input, mask, source) -> Tensor:
    """``input`` (broadcast with ``mask``) with the positions where ``mask`` is True
    filled, in row-major order, by the first elements of ``source``.

    Note [masked_scatter reads source by a running count]
    Position p takes ``source.flatten()[cumsum(mask)[p] - 1]``: one ``index_select`` of
    the source and a ``where``, so the gradient reaches the source elements used (each
    once) and the unmasked elements of ``input``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> mask = gt.tensor([[True, False, True], [False, True, True]])
    >>> gt.masked_scatter(gt.zeros(2, 3), mask, gt.arange(1.0, 5.0)).tolist()
    [[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]]
    """
    gt = _gt()
    x = _tensor(input, "masked_scatter")
    m = _tensor(mask, "masked_scatter", "mask")
    s = _tensor(source, "masked_scatter", "source")
    if m.dtype.name != "bool":
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_name(m.dtype)}"
        )
    if s.dtype is not x.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_name(x.dtype)} and {_name(s.dtype)}"
        )
    shape = tuple(gt.broadcast_shapes(tuple(x.shape), tuple(m.shape)))
    where = np.broadcast_to(_data(m), shape)
    count = int(where.sum())
    if s.numel() < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count == 0:
        return x.expand(*shape).clone() if shape else x.clone()
    taken = np.maximum(np.cumsum(where.reshape(-1)) - 1, 0)
    values = s.reshape(-1).index_select(0, _long(taken)).reshape(shape)
    return gt.where(_wrap(np.ascontiguousarray(where)), values, x)


def masked_scatter_(input, mask, source) -> Tensor:
    """In-place ``masked_scatter`` (``Tensor.masked_scatter_``): ``mask`` broadcasts to
    ``input``'s shape."""
    return _write_inplace("masked_scatter_", input, masked_scatter(input, mask, source))
