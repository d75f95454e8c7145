"""Kernels of the shape ops: views (view, transpose, expand, select, basic indexing ...),
copies (reshape when it must, cat, stack, clone, advanced indexing) and dtype conversion.

A view's output shares its input's storage and version counter (``_wrap_view``), so an
in-place write through either is seen by both, and by autograd's version checks.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from ._dispatch import OPS
from ._impl_elementwise import torch_dims, writable_alias
from ._impl_indexing import describe_index_error, index_key
from ._index_kernels import gather as _gather_kernel
from ._shapes import _normalize_dim, broadcast_view
from ._tensor import Tensor, _data, _wrap, _wrap_detached, _wrap_view

__all__: list[str] = []


def _view(r, input, overlapping=False):
    """A view kernel's result: ``r`` over ``input``'s storage, writable as torch allows."""
    return _wrap_view(writable_alias(r, overlapping=overlapping), input)


def infer_shape(shape, numel):
    """Resolve one ``-1`` in ``shape`` for ``numel`` elements (torch's messages)."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)  # (the common case, in a few C calls: Note [Shape kernels' cost])
    shape = list(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# Note [Shape kernels' cost]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A view op's time is its Python: the op sweep's forward of view, unsqueeze or flatten took
# twice torch's at every size, ~7 us against ~1 us, spent in infer_shape's list passes and
# numpy's function wrappers (np.reshape's _wrapfunc, np.expand_dims' axis normalisation).
# The kernels call the array's own methods (``x.reshape(shape, copy=False)``: the same
# view, or the same ValueError when there is none; ``x.transpose``, ``x.swapaxes``,
# ``x.squeeze``) and infer_shape returns a shape without -1 after one product and one min.


def _reshaped_view(input, shape):
    """``(view, x, shape)``: `input` reshaped to `shape` (one ``-1`` inferred) as a view of
    it, or None where its strides allow no such view; its array; the shape inferred."""
    x = _data(input)
    shape = infer_shape(shape, x.size)
    try:
        return _view(x.reshape(shape, copy=False), input), x, shape
    except ValueError:
        return None, x, shape


@OPS["view"].set_kernel
def view(input, shape):
    result, x, shape = _reshaped_view(input, shape)
    if result is None:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces): cannot view shape "
            f"{list(x.shape)} with strides {list(input.stride())} as {list(shape)}. "
            "Use .reshape(...) instead."
        )
    return result


def is_viewable(x: np.ndarray, shape) -> bool:
    try:
        x.reshape(shape, copy=False)
    except ValueError:
        return False
    return True


@OPS["reshape"].set_kernel
def reshape(input, shape):
    result, x, shape = _reshaped_view(input, shape)
    return result if result is not None else _wrap(x.reshape(shape))


@OPS["flatten"].set_kernel
def flatten(input, start_dim=0, end_dim=-1):
    x = _data(input)
    s = _normalize_dim(start_dim, x.ndim, "start_dim")
    e = _normalize_dim(end_dim, x.ndim, "end_dim")
    if x.ndim == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x.shape[:s] + (math.prod(x.shape[s : e + 1]),) + x.shape[e + 1 :]
    return reshape(input, shape)


@OPS["transpose"].set_kernel
def transpose(input, dim0, dim1):
    x = _data(input)
    if x.ndim == 0:
        _normalize_dim(dim0, 0, "dim0"), _normalize_dim(dim1, 0, "dim1")
        return _view(x.view(), input)
    d0, d1 = _normalize_dim(dim0, x.ndim, "dim0"), _normalize_dim(dim1, x.ndim, "dim1")
    return _view(x.swapaxes(d0, d1), input)


@OPS["permute"].set_kernel
def permute(input, dims):
    x = _data(input)
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    axes = tuple(_normalize_dim(d, x.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
    return _view(x.transpose(axes), input)


@OPS["t"].set_kernel
def t(input):
    x = _data(input)
    if x.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D; "
            "use transpose(dim0, dim1) or permute(...)"
        )
    return _view(x.T, input)


@OPS["squeeze"].set_kernel
def squeeze(input, dim=None):
    x = _data(input)
    if dim is None:
        return _view(x.squeeze(), input)
    axes = tuple(a for a in torch_dims(dim, x.ndim) if x.shape[a] == 1)
    return _view(x.squeeze(axis=axes) if axes else x.view(), input)


@OPS["unsqueeze"].set_kernel
def unsqueeze(input, dim):
    x = _data(input)
    axis = _normalize_dim(dim, x.ndim + 1)
    shape = x.shape
    return _view(x.reshape(shape[:axis] + (1,) + shape[axis:]), input)  # (np.expand_dims')


@OPS["expand"].set_kernel
def expand(input, sizes):
    x = _data(input)
    if len(sizes) < x.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(sizes)}): the number of "
            f"sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({x.ndim})"
        )
    lead = len(sizes) - x.ndim
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    "non-existing dimension"
                )
            target.append(s)
            continue
        have = x.shape[i - lead]
        if s == -1:
            target.append(have)
        elif have == 1 or have == s:
            target.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(x.shape)}"
            )
    target = tuple(target)
    if target == x.shape:  # nothing to broadcast: a plain (writable) view
        return _wrap_view(x.view(), input)
    return _view(broadcast_view(x, target), input)  # Note [A broadcast view built in C]


@OPS["narrow"].set_kernel
def narrow(input, dim, start, length):
    x = _data(input)
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    axis = _normalize_dim(dim, x.ndim)
    n = x.shape[axis]
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    sl = [slice(None)] * x.ndim
    sl[axis] = slice(start, start + length)
    return _view(x[tuple(sl)], input)


@OPS["select"].set_kernel
def select(input, dim, index):
    x = _data(input)
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    axis = _normalize_dim(dim, x.ndim)
    n = x.shape[axis]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(x.shape)} at "
            f"dimension {axis}"
        )
    sl = [slice(None)] * x.ndim
    sl[axis] = index
    return _view(x[(*sl, Ellipsis)], input)


@OPS["diagonal"].set_kernel
def diagonal(input, offset=0, dim1=0, dim2=1):
    x = _data(input)
    for name, value in (("offset", offset), ("dim1", dim1), ("dim2", dim2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(
                f"diagonal(): argument '{name}' must be int, not {type(value).__name__}"
            )
    a1 = _normalize_dim(dim1, x.ndim)
    a2 = _normalize_dim(dim2, x.ndim)
    if a1 == a2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    if x.flags.c_contiguous and x.flags.writeable:
        # Note [A strided view of a contiguous array made directly]: the view built on the
        # array's own buffer (``np.ndarray(shape, dtype, x, offset, strides)``, which
        # checks the extent against the buffer), writable as the array is: np.diagonal's
        # read-only view and the rebuild that lifts it were most of the op's time
        n1, n2 = x.shape[a1], x.shape[a2]
        length = max(0, min(n1 - max(0, -offset), n2 - max(0, offset)))
        start = offset * x.strides[a2] if offset >= 0 else -offset * x.strides[a1]
        start = start if length else 0  # (an empty diagonal: at the start, in bounds)
        rest = [d for d in range(x.ndim) if d not in (a1, a2)]
        shape = tuple(x.shape[d] for d in rest) + (length,)
        strides = tuple(x.strides[d] for d in rest) + (x.strides[a1] + x.strides[a2],)
        return _wrap_view(np.ndarray(shape, x.dtype, x, start, strides), input)
    # numpy's diagonal is torch's: the diagonal becomes the last dim, an offset beyond
    # the matrix gives an empty one (numpy marks the view read-only; _view lifts that)
    return _view(np.diagonal(x, offset, a1, a2), input)


@OPS["unfold"].set_kernel
def unfold(input, dimension, size, step):
    x = _data(input)
    for name, value in (("dimension", dimension), ("size", size), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"unfold(): argument '{name}' must be int, not {type(value).__name__}")
    axis = _normalize_dim(dimension, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {axis} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if x.ndim == 0:
        return _view(x.reshape(1), input)
    # Note [unfold is a strided view]: the windows become dim ``axis`` (their count) and a
    # new last dim (their elements), over the same storage: torch's strides, and writable
    # even where windows overlap, as torch's (its overlap check gives up on such strides)
    count = (n - size) // step + 1
    shape = x.shape[:axis] + (count,) + x.shape[axis + 1 :] + (size,)
    strides = x.strides[:axis] + (x.strides[axis] * step,) + x.strides[axis + 1 :]
    strides += (x.strides[axis],)
    if x.flags.c_contiguous and x.flags.writeable:  # Note [A strided view of a contiguous ...]
        return _wrap_view(np.ndarray(shape, x.dtype, x, 0, strides), input)
    r = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    return _view(r, input, overlapping=True)


@OPS["getitem"].set_kernel
def getitem(input, index):
    x = _data(input)
    key, basic = index_key(index, x.shape)
    try:
        r = x[key]
    except IndexError as e:
        raise describe_index_error(x.shape, e) from None
    if basic:
        return _view(r, input)
    r = np.asarray(r)
    if not r.flags.c_contiguous and _c_ordered(x):
        r = np.ascontiguousarray(r)  # Note [The layout of an advanced index's result]
    return _wrap(r)


def _c_ordered(x):
    """Whether ``x``'s strides run in C order (sizes 1 and stride-0 dims aside): a
    contiguous tensor, a slice of one or an expanded one.

    Note [The layout of an advanced index's result]
    numpy lays out ``x[:, idx]`` with the index's dims outermost (strides (9, 27, 3, 1)
    for a (3, 3, 3, 3) ``x``), a non-contiguous result.  torch's index kernel allocates its
    result as its TensorIterator orders the dims: by the strides of the source (0 along the
    indexed dims) and of the index tensors (0 along the other dims), where a source whose
    strides run in C order never reorders anything, so the result is contiguous, and
    ``x[:, idx].view(-1)`` works.  A source in another order (``x.mT[:, idx]``) keeps
    numpy's layout, which is not always torch's.
    """
    last = None
    for n, s in zip(x.shape, x.strides):
        if n == 1 or s == 0:
            continue
        if last is not None and abs(s) > last:
            return False
        last = abs(s)
    return True


def _split_sizes(n, split_size_or_sections):
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension), but got split_sizes={sizes}"
            )
        return sizes
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if n:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        return [0]
    return [size] * (n // size) + ([n % size] if n % size else []) or [0]


@OPS["split"].set_kernel
def split(input, split_size_or_sections, dim=0):
    x = _data(input)
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    axis = _normalize_dim(dim, x.ndim)
    # Note [split slices once per piece]: the pieces are in range by construction, so
    # each is one basic slice of the array, wrapped as a view (narrow's checks per piece
    # were most of the time of a split into many pieces); a writable array's slices are
    # writable, so only a read-only one goes through ``_view``'s rebuild
    lead = (slice(None),) * axis
    wrap = _view if not x.flags.writeable else _wrap_view
    out, start = [], 0
    for size in _split_sizes(x.shape[axis], split_size_or_sections):
        out.append(wrap(x[(*lead, slice(start, start + size))], input))
        start += size
    return tuple(out)


@OPS["chunk"].set_kernel
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    x = _data(input)
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    axis = _normalize_dim(dim, x.ndim)
    n = x.shape[axis]
    if n == 0:  # torch: ``chunks`` empty pieces
        return tuple(narrow(input, axis, 0, 0) for _ in range(chunks))
    size = max(1, -(-n // chunks))
    return split(input, size, axis)


@OPS["unbind"].set_kernel
def unbind(input, dim=0):
    x = _data(input)
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    axis = _normalize_dim(dim, x.ndim)
    return tuple(select(input, axis, i) for i in range(x.shape[axis]))


@OPS["alias"].set_kernel
def alias(input):
    return _view(_data(input).view(), input)


@OPS["detach"].set_kernel
def detach(input):
    """The same storage and version counter, outside the graph; not a view (``_base`` is
    None), as torch's ``detach``."""
    return _wrap_detached(input)


@OPS["expand_as"].set_kernel
def expand_as(input, other):
    return expand(input, _data(other).shape)


def _tensors(seq, name):
    if isinstance(seq, Tensor) or not isinstance(seq, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' must be a tuple or list of Tensors")
    if not seq:
        # torch's types: cat raises ValueError, stack RuntimeError
        if name == "cat":
            raise ValueError("cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    for i, t in enumerate(seq):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i}, got {type(t).__name__}")
    res = _dt.result_type([(t.dtype, 1) for t in seq])
    return [_data(t).astype(res.numpy, copy=False) for t in seq]


def _c_order(r):
    """A join's result in C order: torch's cat and stack allocate a contiguous result,
    numpy's keep the inputs' order when they are all transposed (``torch.cat([x.t(),
    x.t()])`` was F-ordered, so a later ``flatten()`` copied where torch's views and
    sees writes into the result: fuzz seed 2 #17603)."""
    return r if r.flags.c_contiguous else r.copy(order="C")


@OPS["cat"].set_kernel
def cat(tensors, dim=0):
    arrays = _tensors(tensors, "cat")
    ref = next((a for a in arrays if a.ndim > 0), arrays[0])
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor cannot be concatenated")
    if all(a.ndim == 1 and a.shape[0] == 0 for a in arrays):
        # only legacy empty (0,) tensors, which torch skips: their dtype, any dim
        return _wrap(_c_order(np.concatenate(arrays, axis=0)))
    axis = _normalize_dim(dim, ref.ndim)
    arrays = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or [arrays[0]]
    for i, a in enumerate(arrays):
        if a.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}"
            )
        for d in range(ref.ndim):
            if d != axis and a.shape[d] != ref.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected size "
                    f"{ref.shape[d]} but got size {a.shape[d]} for tensor number {i} in the list."
                )
    return _wrap(_c_order(np.concatenate(arrays, axis=axis)))


@OPS["stack"].set_kernel
def stack(tensors, dim=0):
    arrays = _tensors(tensors, "stack")
    for i, a in enumerate(arrays):
        if a.shape != arrays[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(arrays[0].shape)} "
                f"at entry 0 and {list(a.shape)} at entry {i}"
            )
    axis = _normalize_dim(dim, arrays[0].ndim + 1)
    return _wrap(_c_order(np.stack(arrays, axis=axis)))


@OPS["clone"].set_kernel
def clone(input):
    return _wrap(np.copy(_data(input), order="K"))


@OPS["contiguous"].set_kernel
def contiguous(input):
    return _wrap(np.ascontiguousarray(_data(input)))


@OPS["to_dtype"].set_kernel
def to_dtype(input, dtype, copy=False):
    x = _data(input)
    target = _dt.as_dtype(dtype).numpy
    if x.dtype == target and not copy:
        return _view(x.view(), input)
    with np.errstate(over="ignore", invalid="ignore"):  # torch casts silently (inf, wraps)
        return _wrap(x.astype(target))


@OPS["repeat"].set_kernel
def repeat(input, sizes):
    x = _data(input)
    if len(sizes) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    return _wrap(np.tile(x, sizes))


@OPS["flip"].set_kernel
def flip(input, dims):
    x = _data(input)
    axes = torch_dims(dims, x.ndim)
    return _wrap(np.flip(x, axis=axes).copy())


def _index_array(index, name, expected):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{name}(): Expected dtype {expected} for index")
    return _data(index)


@OPS["index_select"].set_kernel
def index_select(input, dim, index):
    """Rows of ``input`` along ``dim`` at ``index`` (a vector, or a 0-d tensor).

    As torch, indices must lie in ``[0, size)``: a negative index is an IndexError, not a
    count from the end.
    """
    x = _data(input)
    idx = _index_array(index, "index_select", "int32 or int64")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    axis = _normalize_dim(dim, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if x.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
        )
    if x.ndim > 1 and idx.size and n == 0:
        # torch's CPU kernel checks this dim of an empty input first (fuzz seed 7 #4181)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx[(idx < 0) | (idx >= n)].reshape(-1)[0])
        if (axis == 1 and x.flags.c_contiguous) or (x.ndim > 1 and x.size == 0):
            # torch's CPU kernel for dim 1 of a contiguous tensor raises this instead, and
            # so does its range check of an empty input (fuzz seed 8 #2479)
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
        raise IndexError(
            f"index out of range in self (index {bad} for dimension {axis} of size {n})"
        )
    if x.ndim == 0:
        return _wrap(x.copy())  # torch: a 0-d input stays 0-d
    return _wrap(np.take(x, idx.reshape(-1), axis=axis))


def along_axis_key(idx, axis):
    """The numpy key of ``x[i0, ..., idx[i], ..., in]`` for every position ``i`` of ``idx``:
    ``idx`` along ``axis``, its own position in the other dims (gather's selection)."""
    key = list(np.indices(idx.shape, sparse=True))
    key[axis] = idx
    return tuple(key)


def _kernel_operands(x, idx):
    """Whether the indexing kernels take these arrays: float32/float64 ``x``, native byte
    order, aligned (numpy's own arrays are; a view of a byte buffer may not be)."""
    return (
        x.dtype in (np.float32, np.float64)
        and idx.dtype.isnative
        and x.flags.aligned
        and idx.flags.aligned
    )


@OPS["gather"].set_kernel
def gather(input, dim, index):
    """``out[i][j] = input[index[i][j]][j]`` (dim 0): the result has ``index``'s shape.

    As torch: ``index`` has as many dims as ``input`` and is no larger than it in the
    other dims (it is not broadcast); its values lie in ``[0, size)``.
    """
    x = _data(input)
    idx = _index_array(index, "gather", "int32/int64")
    axis = _normalize_dim(dim, x.ndim)
    if idx.size == 0:
        # torch checks neither the ranks nor the sizes of an empty index (fuzz seed 2 #4240)
        return _wrap(np.empty(idx.shape, dtype=x.dtype))
    if x.ndim == 0:
        # torch: a 0-d input gathers as a vector of one element
        if idx.ndim > 1:
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as input tensor"
            )
        if idx.size and (idx != 0).any():
            raise RuntimeError(
                f"index {int(idx[idx != 0].reshape(-1)[0])} is out of bounds for dimension 0 "
                "with size 1"
            )
        return _wrap(np.broadcast_to(x, idx.shape).copy())
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(x.ndim):
        if d != axis and idx.shape[d] > x.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(idx.shape)} to be "
                f"no larger than self {list(x.shape)} apart from dimension {axis}"
            )
    n = x.shape[axis]
    if _kernel_operands(x, idx):
        try:  # one pass (the bounds first, then the values)
            return _wrap(_gather_kernel(x, axis, idx))
        except IndexError as e:  # (the kernel's words are torch's; torch's type)
            raise RuntimeError(str(e)) from None
    if idx.size:
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise RuntimeError(
                f"index {int(idx[bad].reshape(-1)[0])} is out of bounds for dimension {axis} "
                f"with size {n}"
            )
    return _wrap(x[along_axis_key(idx, axis)])
