"""torch's composite shape functions: broadcasting, grids, tiling, rolling, differences,
stacking and splitting, written with the view and copy ops that have kernels and
derivatives (torch defines most of them the same way, as CompositeImplicitAutograd).

``broadcast_to`` is ``expand``; ``meshgrid`` views and expands each input; ``tile`` is
``repeat``; ``repeat_interleave`` is an ``index_select``; ``hstack``/``vstack``/``dstack``/
``column_stack`` are ``cat`` of ``atleast_Nd`` views; ``tensor_split`` and ``hsplit``/
``vsplit``/``dsplit`` are ``narrow`` views; ``unflatten`` is a ``view``.  They record the
nodes torch records.  ``roll`` (two ``narrow`` and a ``cat``: CatBackward0 where torch
records RollBackward0) and ``diff`` (``narrow`` and ``sub``) record their parts (Note
[Composites record their parts], in composites.py).  ``tril_indices``/``triu_indices``
are index factories (numpy's, in torch's row-major order).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.roll(gt.arange(5), 2).tolist()
[3, 4, 0, 1, 2]
>>> [g.tolist() for g in gt.meshgrid(gt.tensor([1, 2]), gt.tensor([3, 4, 5]), indexing="ij")]
[[[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]]]
>>> gt.repeat_interleave(gt.tensor([1, 2]), 2).tolist()
[1, 1, 2, 2]
>>> gt.hstack([gt.tensor([1, 2]), gt.tensor([3])]).tolist()
[1, 2, 3]
"""

from __future__ import annotations

import warnings

import numpy as np

from ._composite_args import _tensor
from ._shapes import Size, _normalize_dim
from ._signatures import MISSING, checked
from ._tensor import Tensor, _data, _wrap

__all__ = [
    "broadcast_to",
    "broadcast_shapes",
    "meshgrid",
    "tile",
    "repeat_interleave",
    "roll",
    "diff",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "swapdims",
    "fliplr",
    "flipud",
    "unflatten",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "scatter",
    "scatter_add",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "index_add",
    "index_copy",
    "index_fill",
    "scatter_reduce",
    "index_reduce",
    "tril_indices",
    "triu_indices",
]


def _ints(value, fname: str, name: str) -> tuple:
    items = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(
                f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                f"{type(v).__name__}"
            )
    return tuple(int(v) for v in items)


def _tensors(tensors, fname: str) -> tuple:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{fname}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        _tensor(t, fname, f"tensors[{i}]")
    return tuple(tensors)


# ---------------------------------------------------------------------------- broadcasting


@checked("broadcast_to")
def broadcast_to(input, size) -> Tensor:
    """``input`` expanded to ``size`` (a view; -1 keeps a dim): ``input.expand(size)``.

    >>> import gradstack_tensor as gt
    >>> gt.broadcast_to(gt.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return _tensor(input, "broadcast_to").expand(tuple(_ints(size, "broadcast_to", "size")))


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of ``shapes`` (ints count as 1-d shapes) broadcast to.

    >>> broadcast_shapes((2, 1), (3,))
    gradstack.Size([2, 3])
    """
    as_tuples = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    for s in as_tuples:
        for d in s:
            if int(d) < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {int(d)}: {list(s)}"
                )
    try:
        return Size(np.broadcast_shapes(*as_tuples))
    except ValueError:
        raise RuntimeError(
            "Shape mismatch: objects cannot be broadcast to a single shape"
        ) from None


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids: output ``i`` holds ``tensors[i]`` varying along dim ``i`` and
    repeated along the others (views, as torch's ``view`` + ``expand``).  ``indexing="xy"``
    swaps the first two dims (numpy's default); without ``indexing`` it is ``"ij"``, with
    torch's warning.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = _tensors(tuple(tensors), "meshgrid")
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:
        order[0], order[1] = order[1], order[0]
    sizes = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        shape = [1] * len(order)
        shape[i] = -1
        grids.append(t.view(*shape).expand(tuple(sizes)))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ---------------------------------------------------------------------------- repeats


@checked("tile")
def tile(input, dims) -> Tensor:
    """``input`` repeated ``dims[i]`` times along each dim; fewer ``dims`` than dims are
    padded with leading 1s (torch's composite of ``repeat``).

    >>> import gradstack_tensor as gt
    >>> gt.tile(gt.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    x = _tensor(input, "tile")
    reps = _ints(dims, "tile", "dims")
    if len(reps) < x.dim():
        reps = (1,) * (x.dim() - len(reps)) + reps
    return x.repeat(*reps)


def _repeat_counts(repeats, n: int) -> np.ndarray:
    if isinstance(repeats, Tensor):
        r = _data(repeats)
        if r.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        r = r.reshape(-1).astype(np.int64)
    else:
        if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)):
            raise TypeError(
                "repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                f"{type(repeats).__name__}"
            )
        r = np.array([int(repeats)], dtype=np.int64)
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    if r.size == 1:
        return np.full(n, r[0], dtype=np.int64)
    if r.size != n:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{r.size} and input.size(0) = {n}"
        )
    return r


def repeat_interleave(input, repeats=MISSING, dim=None, *, output_size=None) -> Tensor:
    """Each element (or slice along ``dim``) of ``input`` repeated ``repeats`` times in a
    row (an int, or one count per element); without ``dim`` the input is flattened first.
    ``repeat_interleave(counts)`` alone gives the indices ``0..n-1`` repeated by
    ``counts``.  An ``index_select``, as torch's composite.

    >>> import gradstack_tensor as gt
    >>> gt.tensor([[1, 2], [3, 4]]).repeat_interleave(gt.tensor([1, 2]), dim=0).tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    x = _tensor(input, "repeat_interleave", "repeats" if repeats is MISSING else "input")
    if repeats is None:  # (torch has repeat_interleave(repeats), no repeats=None)
        raise TypeError(
            "repeat_interleave(): argument 'repeats' must be Tensor or int, not NoneType"
        )
    if repeats is MISSING:
        counts = _repeat_counts(x, x.numel())
        return _wrap(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        x = x.flatten()
        axis = 0
    else:
        axis = _normalize_dim(dim, max(x.dim(), 1))
        if x.dim() == 0:
            x = x.reshape(1)
    n = x.shape[axis]
    counts = _repeat_counts(repeats, n)
    index = np.repeat(np.arange(n, dtype=np.int64), counts)
    if output_size is not None and int(output_size) != index.size:
        raise RuntimeError("allocated size does not match required size")
    return x.index_select(axis, _wrap(index))


# ---------------------------------------------------------------------------- rolls and differences


@checked("roll")
def roll(input, shifts, dims=None) -> Tensor:
    """``input`` with its elements shifted by ``shifts`` along ``dims`` (wrapping around);
    without ``dims`` the flattened tensor is rolled and viewed back.

    >>> import gradstack_tensor as gt
    >>> gt.roll(gt.tensor([[1, 2], [3, 4]]), 1, 0).tolist()
    [[3, 4], [1, 2]]
    """
    x = _tensor(input, "roll")
    shift = _ints(shifts, "roll", "shifts")
    if dims is None:
        if len(shift) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift)}, dims:0")
        return roll(x.flatten(), shift, 0).view(*x.shape)
    axes = _ints(dims, "roll", "dims")
    if len(shift) != len(axes):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shift)}, dims:{len(axes)}"
        )
    if not axes:
        raise RuntimeError("`shifts` required")
    out = x
    for s, d in zip(shift, axes):
        axis = _normalize_dim(d, max(x.dim(), 1))
        n = out.shape[axis] if out.dim() else 1
        k = s % n if n else 0
        if k:
            out = _cat([out.narrow(axis, n - k, k), out.narrow(axis, 0, n - k)], axis)
    return out if out is not x else x.clone()


def _cat(tensors, dim):
    from .functions import cat

    return cat(tensors, dim)


@checked("diff")
def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i+1] - x[i]``; logical
    xor for bool), after ``prepend`` and ``append`` are concatenated to ``input``.

    >>> import gradstack_tensor as gt
    >>> gt.diff(gt.tensor([1, 4, 9, 16]), n=2).tolist()
    [2, 2]
    """
    x = _tensor(input, "diff")
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = _normalize_dim(dim, x.dim())
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        e = _tensor(extra, "diff", name)
        if e.dim() != x.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append((name, e))
    if parts:
        pieces = [e for name, e in parts if name == "prepend"] + [x]
        pieces += [e for name, e in parts if name == "append"]
        x = _cat(pieces, axis)
    for _ in range(int(n)):
        length = x.shape[axis]
        if length == 0:
            break
        hi, lo = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
        x = hi.logical_xor(lo) if x.dtype.name == "bool" else hi - lo
    return x


# ---------------------------------------------------------------------------- stacking


def _atleast(fname, reshape, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(reshape(_tensor(t, fname)) for t in tensors[0])
    out = tuple(reshape(_tensor(t, fname)) for t in tensors)
    return out[0] if len(out) == 1 else out


def _view_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _view_2d(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _view_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (a 0-d tensor becomes shape ``(1,)``)."""
    return _atleast("atleast_1d", _view_1d, tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims (a 1-d ``(n,)`` becomes ``(1, n)``)."""
    return _atleast("atleast_2d", _view_2d, tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims (``(n,)`` becomes ``(1, n, 1)``,
    ``(m, n)`` becomes ``(m, n, 1)``)."""
    return _atleast("atleast_3d", _view_3d, tensors)


def hstack(tensors, *, out=None) -> Tensor:
    """Tensors joined along their second dim, or their first when they are 1-d."""
    ts = [_view_1d(t) for t in _tensors(tensors, "hstack")]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return _joined(ts, 0 if ts[0].dim() == 1 else 1, out)


def vstack(tensors, *, out=None) -> Tensor:
    """Tensors viewed as at least 2-d and joined along their first dim."""
    ts = [_view_2d(t) for t in _tensors(tensors, "vstack")]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _joined(ts, 0, out)


row_stack = vstack


def dstack(tensors, *, out=None) -> Tensor:
    """Tensors viewed as at least 3-d and joined along their third dim."""
    ts = [_view_3d(t) for t in _tensors(tensors, "dstack")]
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _joined(ts, 2, out)


def column_stack(tensors, *, out=None) -> Tensor:
    """Tensors joined as columns: 0-d and 1-d tensors become ``(n, 1)`` columns, the others
    join along their second dim."""
    ts = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in _tensors(tensors, "column_stack")]
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return _joined(ts, 1, out)


def _joined(ts, dim, out):
    from .functions import cat

    return cat(ts, dim) if out is None else cat(ts, dim, out=out)


# ---------------------------------------------------------------------------- dims and splits


def swapdims(input, dim0: int, dim1: int) -> Tensor:
    """``input.transpose(dim0, dim1)`` (a view)."""
    return _tensor(input, "swapdims").transpose(dim0, dim1)


def fliplr(input) -> Tensor:
    """``input`` flipped along its second dim (left to right); at least 2-d."""
    x = _tensor(input, "fliplr")
    if x.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return x.flip(1)


def flipud(input) -> Tensor:
    """``input`` flipped along its first dim (up to down); at least 1-d."""
    x = _tensor(input, "flipud")
    if x.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return x.flip(0)


@checked("unflatten", "int dim, size sizes")
def unflatten(input, dim: int, sizes) -> Tensor:
    """``input`` with dim ``dim`` viewed as ``sizes`` (one of them may be -1).

    >>> import gradstack_tensor as gt
    >>> gt.arange(6).unflatten(0, (2, -1)).shape
    gradstack.Size([2, 3])
    """
    x = _tensor(input, "unflatten")
    if x.dim() == 0:
        raise RuntimeError("unflatten: Expected input to have at least one dimension.")
    axis = _normalize_dim(dim, x.dim())
    new = _ints(sizes, "unflatten", "sizes")
    if not new:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sum(1 for s in new if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in new if s != -1], dtype=np.int64))
    n = x.shape[axis]
    if (-1 not in new and known != n) or (-1 in new and (known == 0 or n % known)):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(new)} don't multiply up to the size of dim "
            f"{dim} ({n}) in the input tensor"
        )
    shape = tuple(x.shape[:axis]) + new + tuple(x.shape[axis + 1 :])
    return x.view(*shape)


@checked("tensor_split")
def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """``input`` split along ``dim`` into views: ``n`` nearly equal parts for an int (the
    first ``size % n`` one longer), or at the given indices for a list or a 1-d tensor.

    >>> import gradstack_tensor as gt
    >>> [t.tolist() for t in gt.tensor_split(gt.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    x = _tensor(input, "tensor_split")
    if x.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    axis = _normalize_dim(dim, x.dim())
    size = x.shape[axis]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.name != "int64" or spec.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have a single dimension "
                "and dtype long (torch.int64)"
            )
        spec = spec.tolist()
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        sections = int(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        bounds, start = [], 0
        for i in range(sections):
            length = base + (1 if i < extra else 0)
            bounds.append((start, length))
            start += length
    else:
        cuts = list(_ints(spec, "tensor_split", "indices"))
        bounds, start = [], 0
        for c in cuts + [size]:
            c = min(max(c if c >= 0 else c + size, 0), size)
            bounds.append((start, max(c - start, 0)))  # (torch's slice [start, c))
            start = c
    return tuple(x.narrow(axis, s, n) for s, n in bounds)


def _split_at(fname, x, spec, axis):
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec == 0 or x.shape[axis] % int(spec):
            raise RuntimeError(
                f"torch.{fname} attempted to split along dimension {axis}, but the size of the "
                f"dimension {x.shape[axis]} is not divisible by the split_size {int(spec)}!"
            )
    return tensor_split(x, spec, axis)


def _at_least(fname, input, ndim):
    """`input` as a Tensor of at least `ndim` dims, as torch's hsplit/vsplit/dsplit check."""
    x = _tensor(input, fname)
    if x.dim() < ndim:
        raise RuntimeError(
            f"torch.{fname} requires a tensor with at least {ndim} dimension, but got a tensor "
            f"with {x.dim()} dimensions!"
        )
    return x


@checked("hsplit")
def hsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 for a 1-d tensor), into equal parts for an int."""
    x = _at_least("hsplit", input, 1)
    return _split_at("hsplit", x, indices_or_sections, 1 if x.dim() > 1 else 0)


@checked("vsplit")
def vsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 0 (at least 2-d), into equal parts for an int."""
    return _split_at("vsplit", _at_least("vsplit", input, 2), indices_or_sections, 0)


@checked("dsplit")
def dsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 2 (at least 3-d), into equal parts for an int."""
    return _split_at("dsplit", _at_least("dsplit", input, 3), indices_or_sections, 2)


# ---------------------------------------------------------------------------- indexed writes
# (the ops are tensor-core's, _impl_scatter.py; these are torch's function forms)


def scatter(input, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
    """``input.scatter(dim, index, src)``: a copy with ``src`` written at ``index``."""
    return _tensor(input, "scatter").scatter(dim, index, src, value=value, reduce=reduce)


def scatter_add(input, dim, index, src) -> Tensor:
    """``input.scatter_add(dim, index, src)``: a copy with ``src`` added at ``index``."""
    return _tensor(input, "scatter_add").scatter_add(dim, index, src)


def _into(out, name, result):
    """``result``, or ``result`` written into ``out`` (torch's exact dtype rule)."""
    if out is None:
        return result
    from ._out import write_out

    return write_out(name, result, out, rule="exact")


def index_add(input, dim, index, source, *, alpha=1, out=None) -> Tensor:
    """``input.index_add(dim, index, source, alpha=alpha)``."""
    result = _tensor(input, "index_add").index_add(dim, index, source, alpha=alpha)
    return _into(out, "index_add", result)


def index_copy(input, dim, index, source) -> Tensor:
    """``input.index_copy(dim, index, source)``."""
    return _tensor(input, "index_copy").index_copy(dim, index, source)


def index_fill(input, dim, index, value) -> Tensor:
    """``input.index_fill(dim, index, value)``."""
    return _tensor(input, "index_fill").index_fill(dim, index, value)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None) -> Tensor:
    """``input.scatter_reduce(dim, index, src, reduce, include_self=include_self)``."""
    result = _tensor(input, "scatter_reduce").scatter_reduce(
        dim, index, src, reduce, include_self=include_self
    )
    return _into(out, "scatter_reduce", result)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None) -> Tensor:
    """``input.index_reduce(dim, index, source, reduce, include_self=include_self)``."""
    result = _tensor(input, "index_reduce").index_reduce(
        dim, index, source, reduce, include_self=include_self
    )
    return _into(out, "index_reduce", result)


def _triangle_indices(fname, select, row, col, offset, dtype):
    from .dtypes import int64

    for name, value in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{fname}(): argument '{name}' must be int, not {type(value).__name__}")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = int64 if dtype is None else dtype
    if dt.name not in ("int32", "int64"):
        raise RuntimeError(f"\"{fname}\" not implemented for '{dt.name}'")
    r, c = select(int(row), int(offset), int(col))
    return _wrap(np.stack([r, c]).astype(dt.name).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the lower triangle (on and below diagonal
    ``offset``) of a ``row x col`` matrix, in row-major order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.tril_indices(3, 3).tolist()
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The ``(2, N)`` row and column indices of the upper triangle (on and above diagonal
    ``offset``) of a ``row x col`` matrix, in row-major order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.triu_indices(3, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype)


@checked("fill_diagonal_", "Scalar fill_value, bool wrap")
def fill_diagonal_(input, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal of ``input`` in place (``Tensor``'s
    ``fill_diagonal_``): of a matrix, or of an n-d tensor whose dims are all equal; with
    ``wrap``, a tall matrix's diagonal starts again every ``width + 1`` rows, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.zeros(2, 3).fill_diagonal_(5.0).tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    x = _tensor(input, "fill_diagonal_")
    if x.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = x.shape[0], x.shape[1]
    if x.dim() > 2 and any(s != height for s in x.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    size = min(height, width)
    index = np.arange(size)
    positions = [index] * x.dim()
    if wrap and x.dim() == 2 and height > width + 1:
        # torch's second strided view: (width + 1 + j, j) for the rest of the storage
        step = width + 1
        extra = np.arange((x.numel() + step - 1) // step - size)
        positions = [np.concatenate([index, step + extra]), np.concatenate([index, extra])]
    if size:
        x[tuple(_wrap(np.ascontiguousarray(p, dtype=np.int64)) for p in positions)] = fill_value
    return x


# ------------------------------------------------------------------------ embedding a view

# Note [A view's scatter is a clone and a copy into its view]
# torch's ``select_scatter``/``slice_scatter``/``diagonal_scatter`` return ``input`` with the
# view that ``select``/slicing/``diagonal`` would take replaced by ``src``.  Here they are a
# clone of ``input`` and ``copy_`` of ``src`` into that view of the clone: autograd
# rebases the copy (CopySlices, where torch records SelectScatterBackward0 ...), and the
# gradients are torch's: ``input``'s with the view zeroed, ``src``'s the view's.  ``src``
# must have the view's shape (torch's message); its dtype is cast to ``input``'s, as torch.


def _embed(fname: str, input, src, view) -> Tensor:
    x = _tensor(input, fname)
    s = _tensor(src, fname, "src")
    out = x.clone()
    target = view(out)
    if tuple(s.shape) != tuple(target.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(s.shape)}, slice size = {list(target.shape)}"
        )
    target.copy_(s)
    return out


def select_scatter(input, src, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (a new tensor; Note
    [A view's scatter is a clone and a copy into its view]).

    >>> import gradstack_tensor as gt
    >>> gt.select_scatter(gt.zeros(2, 2), gt.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    return _embed("select_scatter", input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """``input`` with its slice ``start:end:step`` along ``dim`` replaced by ``src`` (a new
    tensor).

    >>> import gradstack_tensor as gt
    >>> gt.slice_scatter(gt.zeros(4), gt.ones(2), start=0, step=2).tolist()
    [1.0, 0.0, 1.0, 0.0]
    """

    def view(t):
        d = _normalize_dim(dim, t.dim())
        return t[(slice(None),) * d + (slice(start, end, step),)]

    return _embed("slice_scatter", input, src, view)


def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input`` with its diagonal ``input.diagonal(offset, dim1, dim2)`` replaced by
    ``src`` (a new tensor).

    >>> import gradstack_tensor as gt
    >>> gt.diagonal_scatter(gt.zeros(2, 2), gt.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _embed("diagonal_scatter", input, src, lambda t: t.diagonal(offset, dim1, dim2))
