"""Views and shape: getitem, view/reshape, transpose, permute, expand, narrow, cat, gather ..."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import dispatch
from gradstack_tensor.extension import wrap as _data_wrap

from .. import _native
from ._formulas import (
    _along_axis_key,
    _batch_gather,
    _batch_scatter,
    _dim_after,
    _first_order_arrays,
    _lead,
    _sum_all,
    scatter_along,
)
from ._layout import layout_of
from ._shown import narrow_as_slice, split_sizes, squeeze_dims, uint_dims
from ._table import jvp, register
from ._tangents import _pad, _pieces_jvp, _put, _shift, _sorted_jvp, _take, _zero_tangents
from .batching import (
    _all_batched,
    _arg,
    _index_items,
    _is_advanced,
    _rank,
    along_dim,
    batch_size,
    dim_error,
    dim_then,
    front,
    pad,
    per_sample,
    phys,
    unary,
    view_like,
    wrap_dim,
)
from .reductions import _selected_indices

__all__: list[str] = []


# -------------------------------------------------------------------------------------
# views and shape


@register(
    "_index_scatter(values, key, shape)",
    "IndexScatterBackward0",
    save="key",
    batch=per_sample(
        "graph-engine's internal scatter for backward formulas, which run on physical "
        "tensors (below vmap's layer)"
    ),
)
def _index_scatter_backward(ctx, grad):
    key = ctx.saved_value("key")
    return (_batch_gather(grad, key, tuple(grad.shape[len(_lead(grad)) :])),)


@jvp("_index_scatter")
def _index_scatter_jvp(args, out, tangents, lead):
    return _put(tangents[0], args[1], args[2], lead)


def _torch_key(args):
    from gradstack_tensor.extension import index_key

    return index_key(args[1], tuple(args[0].shape))[0]


def _getitem_name(args):
    """The node torch records for ``x[index]``: the last view op its indexing applies.

    torch walks the index left to right: an int selects, a slice that is not the whole
    dimension slices, None unsqueezes, full slices and Ellipsis do nothing (an alias
    if nothing else happens); any tensor/list index makes it an IndexBackward0.
    """
    index = args[1]
    if (isinstance(index, int) and not isinstance(index, bool)) or _int_scalar_tensor(index):
        return "SelectBackward0"
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(0 if _int_scalar_tensor(i) else i for i in items)  # torch selects with it
    if not _basic_index(items):
        return "IndexBackward0"
    shape = args[0].shape
    consuming = sum(1 for i in items if i is not None and i is not Ellipsis)
    name, dim = "AliasBackward0", 0
    for i in items:
        if i is None:
            name = "UnsqueezeBackward0"
        elif i is Ellipsis:
            dim += len(shape) - consuming
        elif isinstance(i, slice):
            if dim < len(shape) and i.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    return name


def _getitem_rule(args, bdims):
    x, xb = args[0], bdims[0]
    items, item_bdims = _index_items(args[1], bdims[1])
    if any(b is not None for b in item_bdims):
        # a batched index into an unbatched tensor: x[idx] for an integer idx
        if (
            xb is None
            and len(items) == 1
            and isinstance(items[0], Tensor)
            and items[0].dtype.name.startswith(("int", "uint"))
        ):
            return x[front(items[0], item_bdims[0])], 0
        return NotImplemented
    adv = [i for i, it in enumerate(items) if _is_advanced(it)]
    if len(adv) > 1 and adv != list(range(adv[0], adv[-1] + 1)):
        return NotImplemented  # separated advanced indices move their dims first
    return dispatch(OPS["getitem"], (front(x, xb), (slice(None),) + tuple(items))), 0


@register(
    "getitem(self, indices)",
    _getitem_name,
    extra=lambda args, out: _torch_key(args),
    batch=_getitem_rule,
)
def _getitem(ctx, grad):
    return (_batch_scatter(grad, ctx.extra, ctx.input_shape(0)),)


@jvp("getitem")
def _getitem_jvp(args, out, tangents, lead):
    (t,) = tangents
    if not lead:
        return gt.dispatch(OPS["getitem"], (t, args[1]))
    return _take(t, _torch_key(args), tuple(args[0].shape), lead)


def _int_scalar_tensor(i):
    """A 0-d integer tensor: torch indexes with it as with an int (a select)."""
    ints = (gt.int64, gt.int32, gt.int16, gt.int8)
    return isinstance(i, Tensor) and i.dim() == 0 and i.dtype in ints


def _basic_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(
        i is None
        or i is Ellipsis
        or (isinstance(i, (int, slice)) and not isinstance(i, bool))
        or _int_scalar_tensor(i)
        for i in items
    )


def _written_view_key(index):
    """The numpy key of the view torch's ``x[index] = v`` writes into: its indexing
    applies ints (and 0-d integer tensors), slices and None first, as a view, and the
    tensor and list indices to that view afterwards (each stands for the dims it
    consumes, whole here; a Python bool adds a dim)."""
    items = index if isinstance(index, tuple) else (index,)
    out: list = []
    for i in items:
        if i is None or i is Ellipsis or isinstance(i, bool):
            out.append(None if isinstance(i, bool) else i)
        elif isinstance(i, (int, slice)):
            out.append(i)
        elif _int_scalar_tensor(i):
            out.append(int(i.item()))
        else:
            a = np.asarray(i.tolist() if hasattr(i, "tolist") else i)
            out.extend([slice(None)] * (a.ndim if a.dtype == np.bool_ else 1))
    return tuple(out)


def _reshape_back(ctx, grad):
    return grad.reshape(_lead(grad) + tuple(ctx.input_shape(0)))


@register("view(self, size)", "ViewBackward0", sizes="self", batch=view_like, keeps_zero="self")
def _view(ctx, grad):
    return (_reshape_back(ctx, grad),)


def _reshape_name(args):
    """ViewBackward0 when the result views the input, UnsafeViewBackward0 for a copy (torch)."""
    x = args[0]
    if x.is_contiguous():
        return "ViewBackward0"
    return "ViewBackward0" if _views(x, args) else "UnsafeViewBackward0"


def _views(x, args):
    """Whether reshape(args) / flatten(args) of ``x`` can be a view (no copy)."""
    a = layout_of(x)  # (Note [Meta tensors fold as contiguous ones])
    if len(args) > 1 and isinstance(args[1], (tuple, list)):
        shape = tuple(args[1])
    elif len(args) > 1:  # flatten(start_dim, end_dim)
        s, e = args[1], (args[2] if len(args) > 2 else -1)
        nd = max(a.ndim, 1)
        s, e = s % nd, e % nd
        shape = a.shape[:s] + (-1,) + a.shape[e + 1 :] if a.ndim else (1,)
    else:
        shape = (-1,)
    try:
        np.reshape(a, shape, copy=False)  # numpy refuses exactly when a copy is needed
    except ValueError:
        return False
    return True


@register(
    "reshape(self, shape)",
    _reshape_name,
    sizes="self",
    batch=view_like,
    keeps_zero={"ViewBackward0": "self"},
)
def _reshape(ctx, grad):
    return (_reshape_back(ctx, grad),)


def _flatten_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    if rank == 0:
        return x.reshape(x.shape[0], 1), 0
    start = phys(_arg(args, 1, 0), rank)
    end = phys(_arg(args, 2, -1), rank)
    return dispatch(OPS["flatten"], (x, start, end)), 0


@register(
    "flatten(self)",
    _reshape_name,
    sizes="self",
    batch=_flatten_rule,
    keeps_zero={"ViewBackward0": "self"},
)
def _flatten(ctx, grad):
    return (_reshape_back(ctx, grad),)


def _squeeze_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dim = _arg(args, 1)
    shape = tuple(x.shape)[1:]
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(wrap_dim(d, rank) for d in dim)
        dims = tuple(d for d in dims if rank and shape[d] == 1)
    else:
        d = wrap_dim(dim, rank)
        dims = (d,) if rank and shape[d] == 1 else ()
    if not dims:
        return dispatch(OPS["alias"], (x,)), 0
    for d in sorted(dims, reverse=True):  # one view per dim
        x = dispatch(OPS["squeeze"], (x, d + 1))
    return x, 0


@register(
    "squeeze(self, dim)",
    lambda a: (
        "SqueezeBackward0"
        if a[1] is None
        else "SqueezeBackward2"
        if isinstance(a[1], (tuple, list))
        else "SqueezeBackward1"
    ),
    save="dim",
    sizes="self",
    batch=_squeeze_rule,
    shown=squeeze_dims,
    keeps_zero="self",
)
def _squeeze(ctx, grad):
    return (_reshape_back(ctx, grad),)


def _unsqueeze_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dim = args[1]
    if not -(rank + 1) <= dim <= rank:
        raise dim_error(dim, rank + 1)
    d = dim % (rank + 1)
    return dispatch(OPS["unsqueeze"], (x, d + 1)), 0


@register(
    "unsqueeze(self, dim)",
    "UnsqueezeBackward0",
    save="dim",
    batch=_unsqueeze_rule,
    shown=uint_dims("dim"),
    keeps_zero="self",
)
def _unsqueeze(ctx, grad):
    return (_reshape_back(ctx, grad),)


@jvp("view", "reshape", "flatten", "squeeze", "unsqueeze")
def _reshape_jvp(args, out, tangents, lead):
    return tangents[0].reshape(tuple(lead) + tuple(out.shape))


def _transpose_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    return dispatch(OPS["transpose"], (x, phys(args[1], rank), phys(args[2], rank))), 0


@register(
    "transpose(self, dim0, dim1)",
    "TransposeBackward0",
    save="dim0, dim1",
    batch=_transpose_rule,
    shown=uint_dims("dim0", "dim1"),
)
def _transpose(ctx, grad):
    lead = _lead(grad)
    if lead:
        if grad.dim() == 1:
            return (grad,)
        return (
            grad.transpose(
                _dim_after(ctx.saved_value("dim0"), grad, lead),
                _dim_after(ctx.saved_value("dim1"), grad, lead),
            ),
        )
    return (grad.transpose(ctx.saved_value("dim0"), ctx.saved_value("dim1")),)


@jvp("transpose")
def _transpose_jvp(args, out, tangents, lead):
    x, (t,) = args[0], tangents
    if x.dim() == 0:
        return t
    return t.transpose(_shift(args[1], x, lead), _shift(args[2], x, lead))


def _t_rule(args, bdims):
    x, b = args[0], bdims[0]
    rank = x.dim() - 1
    if rank > 2:
        return NotImplemented  # t() refuses, per sample, with its own message
    if rank < 2:
        return dispatch(OPS["alias"], (x,)), b
    x = front(x, b)
    return dispatch(OPS["transpose"], (x, 1, 2)), 0


@register("t(self)", "TBackward0", batch=_t_rule)
def _t(ctx, grad):
    if _lead(grad):
        return (grad.transpose(-1, -2) if grad.dim() == 3 else grad,)
    return (grad.t(),)


@jvp("t")
def _t_jvp(args, out, tangents, lead):
    (t,) = tangents
    return t.transpose(-1, -2) if args[0].dim() == 2 else t


def _permute_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dims = args[1]
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    if len(dims) != rank:
        return NotImplemented  # the kernel's own error, per sample
    return dispatch(OPS["permute"], (x, (0,) + tuple(phys(d, rank) for d in dims))), 0


@register("permute(self, dims)", "PermuteBackward0", save="dims", batch=_permute_rule)
def _permute(ctx, grad):
    dims = ctx.saved_value("dims")
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    if _lead(grad):
        return (grad.permute(0, *(i + 1 for i in inverse)),)
    return (grad.permute(tuple(inverse)),)


@jvp("permute")
def _permute_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    nl = len(lead)
    return tangents[0].permute((*range(nl), *(d % x.dim() + nl for d in dims)))


def _expand_rule(args, bdims):
    if bdims[0] is None:
        return NotImplemented
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    sizes = args[1]
    if isinstance(sizes, (int, np.integer)):
        sizes = (sizes,)
    sizes = tuple(sizes)
    if len(sizes) < rank:
        return NotImplemented  # the kernel's error, per sample
    x = pad(x, rank, len(sizes))
    return dispatch(OPS["expand"], (x, (x.shape[0],) + sizes)), 0


@register("expand(self, size)", "ExpandBackward0", sizes="self", batch=_expand_rule)
def _expand(ctx, grad):
    return (_native.sum_to_py(grad, ctx.input_shape(0)),)


def _expand_as_rule(args, bdims):
    if bdims[0] is None:
        return NotImplemented
    other, ob = args[1], bdims[1]
    shape = tuple(other.shape)
    if ob is not None:
        shape = shape[:ob] + shape[ob + 1 :]
    return _expand_rule((args[0], shape), (bdims[0], None))


@register("expand_as(self, other)", "ExpandBackward0", inputs="self", batch=_expand_as_rule)
def _expand_as(ctx, grad):
    return (_native.sum_to_py(grad, ctx.input_shape(0)),)


@jvp("expand", "expand_as")
def _expand_jvp(args, out, tangents, lead):
    return _pad(tangents[0], args[0], out, lead).expand(tuple(lead) + tuple(out.shape))


@register("alias(self)", "AliasBackward0", batch=unary)
def _alias(ctx, grad):
    return (grad,)


@register(
    "narrow(self, dim, start, length)",
    "SliceBackward0",
    save="dim, start, length",
    sizes="self",
    batch=dim_then,
    shown=narrow_as_slice,
)  # torch's narrow is a slice
def _narrow(ctx, grad):
    dim, start, length = (ctx.saved_value(k) for k in ("dim", "start", "length"))
    shape = ctx.input_shape(0)
    key = [slice(None)] * len(shape)
    axis = dim % len(shape)
    start = start + shape[axis] if start < 0 else start
    key[axis] = slice(start, start + length)
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("narrow")
def _narrow_jvp(args, out, tangents, lead):
    x, dim, start, length = args[0], args[1], args[2], args[3]
    return tangents[0].narrow(_shift(dim, x, lead), start, length)


@register(
    "select(self, dim, index)",
    "SelectBackward0",
    save="dim, index",
    sizes="self",
    batch=dim_then,
    shown=uint_dims("dim"),
)
def _select(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    key = [slice(None)] * len(shape)
    key[dim % len(shape)] = index
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("select")
def _select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    return tangents[0].select(_shift(dim, x, lead), index)


def _diagonal_rule(args, bdims):
    if bdims[0] is None or any(b is not None for b in bdims[1:]):
        return NotImplemented
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    offset, dim1, dim2 = _arg(args, 1, 0), _arg(args, 2, 0), _arg(args, 3, 1)
    if rank < 2 or not all(type(v) is int for v in (offset, dim1, dim2)):
        return NotImplemented  # the kernel's own error, per sample
    if not (-rank <= dim1 < rank and -rank <= dim2 < rank):
        return NotImplemented
    return dispatch(OPS["diagonal"], (x, offset, phys(dim1, rank), phys(dim2, rank))), 0


def _diagonal_positions(shape, offset, dim1, dim2, length):
    """The permutation that moves ``dim1`` and ``dim2`` last, and the index of the
    diagonal's ``length`` elements in the permuted shape."""
    n = len(shape)
    a1, a2 = dim1 % n, dim2 % n
    order = [i for i in range(n) if i not in (a1, a2)] + [a1, a2]
    rows = np.arange(length) + max(0, -offset)
    key = (slice(None),) * (n - 2) + (rows, rows + offset)
    return order, tuple(shape[i] for i in order), key


@register(
    "diagonal(self, offset, dim1, dim2)",
    "DiagonalBackward0",
    save="offset, dim1, dim2",
    sizes="self",
    batch=_diagonal_rule,
    shown=uint_dims("dim1", "dim2"),
)
def _diagonal(ctx, grad):
    offset, dim1, dim2 = (ctx.saved_value(k) for k in ("offset", "dim1", "dim2"))
    shape = ctx.input_shape(0)
    if _first_order_arrays(grad):
        # zeros with the gradient written on their diagonal: a view of the fresh block
        # (numpy's diagonal is torch's, read-only until told otherwise: the block is ours)
        out = kernels.result_zeros(tuple(shape), _data(grad).dtype)
        n = len(shape)
        d = np.diagonal(out, offset, dim1 % n, dim2 % n)
        d.flags.writeable = True
        d[...] = _data(grad)
        return (_data_wrap(out),)
    order, permuted, key = _diagonal_positions(shape, offset, dim1, dim2, grad.shape[-1])
    g = _batch_scatter(grad, key, permuted)  # zeros but the diagonal, dims still moved
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    if _lead(grad):
        return (g.permute(0, *(i + 1 for i in inverse)),)
    return (g.permute(tuple(inverse)),)


@jvp("diagonal")
def _diagonal_jvp(args, out, tangents, lead):
    x = args[0]
    offset, dim1, dim2 = _arg(args, 1, 0), _arg(args, 2, 0), _arg(args, 3, 1)
    return tangents[0].diagonal(offset, _shift(dim1, x, lead), _shift(dim2, x, lead))


def _unfold_rule(args, bdims):
    if bdims[0] is None or any(b is not None for b in bdims[1:]):
        return NotImplemented
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dim = args[1]
    if rank == 0 or type(dim) is not int or not -rank <= dim < rank:
        return NotImplemented  # the kernel's own error (or a 0-d sample), per sample
    return dispatch(OPS["unfold"], (x, phys(dim, rank), args[2], args[3])), 0


@register(
    "unfold(self, dimension, size, step)",
    "UnfoldBackward0",
    save="dimension, size, step",
    sizes="self",
    batch=_unfold_rule,
)
def _unfold(ctx, grad):
    # each window's elements go back to their places, summed where windows overlap
    dim, size, step = (ctx.saved_value(k) for k in ("dimension", "size", "step"))
    shape = tuple(ctx.input_shape(0))
    lead = _lead(grad)
    if not shape:  # a 0-d input unfolds into one window of one element
        return (grad.reshape(lead),)
    axis = dim % len(shape) + len(lead)
    count = grad.shape[axis]
    if _first_order_arrays(grad):
        return (_data_wrap(_unfold_backward_arrays(_data(grad), shape, axis, size, step)),)
    g = grad.movedim(-1, axis + 1).flatten(axis, axis + 1)
    positions = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    zeros = gt.zeros(lead + shape, dtype=grad.dtype)
    return (zeros.index_add(axis, gt.tensor(positions, dtype=gt.int64), g),)


def _unfold_backward_arrays(g, shape, axis, size, step):
    """Each window's elements added back to their places: one strided add per position in
    the window (``size`` of them), no index array, no copy of ``g``.  Positions go from the
    window's last to its first, so an element shared by windows sums them in window order
    (as the index_add of the differentiable formula)."""
    count = g.shape[axis]
    if 0 < size == step:
        # windows side by side: the gradient is the windows laid back in place, one copy,
        # and zeros only past the last window
        out = kernels.result_zeros(shape, g.dtype) if count * size < shape[axis] else None
        if out is None:
            out = np.empty(shape, g.dtype)
        key = [slice(None)] * len(shape)
        key[axis] = slice(0, count * size)
        covered = out[tuple(key)]
        split = covered.reshape(shape[:axis] + (count, size) + shape[axis + 1 :])
        np.copyto(split, np.moveaxis(g, -1, axis + 1))
        return out
    out = kernels.result_zeros(shape, g.dtype)
    if count == 0:
        return out
    key = [slice(None)] * len(shape)
    for k in range(size - 1, -1, -1):
        key[axis] = slice(k, k + step * (count - 1) + 1, step)
        if step >= size:  # windows apart: each element has one gradient at most
            out[tuple(key)] = g[..., k]
        else:
            out[tuple(key)] += g[..., k]
    return out


@jvp("unfold")
def _unfold_jvp(args, out, tangents, lead):
    x, dim, size, step = args[0], args[1], args[2], args[3]
    if x.dim() == 0:
        return tangents[0].reshape(lead + (1,))
    return tangents[0].unfold(_shift(dim, x, lead), size, step)


def _block_for(grads, shape, dtype):
    """The block the pieces' gradients are written into: zeros when a piece has none,
    else uninitialised, each element then written once.

    Note [split's gradient needs no zeros when every piece has one]
    A GPT's attention splits its qkv projection in three and all three get a gradient:
    zeroing the (1024, 384) block first was a pass over 1.5 MiB that the copies overwrite
    at once (~0.8% of the character GPT's step).  A formula runs inside the op count, so
    the block is gradstack's for the block cache, as ``result_zeros``' is.
    """
    if any(g is None for g in grads):
        return kernels.result_zeros(shape, dtype)
    return np.empty(shape, dtype)


def _pieces_backward(ctx, grads, dim):
    shape = ctx.input_shape(0)
    axis = dim % len(shape)
    pieces = ctx.extra
    first = next(x for x in grads if x is not None)
    if _first_order_arrays(first):
        # Note [split's gradient in one block]: the pieces' gradients written into one
        # zeroed block, not a zeros tensor per piece without a gradient and a cat of all
        # (a split into 1,000 rows of which one is used made 999 tensors per backward)
        out = _block_for(grads, tuple(shape), _data(first).dtype)
        key = [slice(None)] * len(shape)
        start = 0
        for g, size in zip(grads, pieces):
            if g is not None:
                key[axis] = slice(start, start + size)
                out[tuple(key)] = _data(g)
            start += size
        return (_data_wrap(out),)
    lead = _lead(first)
    out = []
    for g, size in zip(grads, pieces):
        if g is None:
            piece_shape = list(lead) + list(shape)
            piece_shape[axis + len(lead)] = size
            dt = next(x for x in grads if x is not None).dtype
            g = gt.zeros(piece_shape, dtype=dt)
        out.append(g)
    return (gt.cat(out, axis + len(lead)),)


def _piece_sizes(args, out):
    dim = args[2]
    return tuple(_data(o).shape[dim] for o in out)  # (the arrays' shapes: no Size objects)


@register(
    "split(self, split_size, dim)",
    lambda a: "SplitWithSizesBackward0" if isinstance(a[1], (list, tuple)) else "SplitBackward0",
    save="split_size, dim",
    sizes="self",
    extra=_piece_sizes,
    shown=split_sizes,
    batch=dim_then(dim_pos=2),
)
def _split(ctx, *grads):
    return _pieces_backward(ctx, grads, ctx.saved_value("dim"))


@register(
    "chunk(self, chunks, dim)",
    "SplitBackward0",
    save="dim",
    extra=_piece_sizes,
    batch=dim_then(dim_pos=2),
)
def _chunk(ctx, *grads):
    return _pieces_backward(ctx, grads, ctx.saved_value("dim"))


jvp("split", "chunk")(_pieces_jvp)


@register("unbind(self, dim)", "UnbindBackward0", save="dim", batch=dim_then)
def _unbind(ctx, *grads):
    dim = ctx.saved_value("dim")
    shape = ctx.input_shape(0)
    axis = dim % len(shape)
    piece = shape[:axis] + shape[axis + 1 :]
    first = next(g for g in grads if g is not None)
    if _first_order_arrays(first):
        # the pieces written into one zeroed block: no zeros tensor per missing gradient
        out = _block_for(grads, tuple(shape), _data(first).dtype)
        slots = np.moveaxis(out, axis, 0)
        for i, g in enumerate(grads):
            if g is not None:
                slots[i] = _data(g)
        return (_data_wrap(out),)
    dt = first.dtype
    lead = _lead(first)
    return (
        gt.stack(
            [g if g is not None else gt.zeros(lead + tuple(piece), dtype=dt) for g in grads],
            axis + len(lead),
        ),
    )


@jvp("unbind")
def _unbind_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else 0
    return tuple(tangents[0].unbind(_shift(dim, x, lead)))


def _cat_sizes(args, out):
    dim = args[1]
    axis = dim % out.dim()
    # a legacy empty 1-d input (shape (0,)) joins any cat and contributes nothing
    return tuple(0 if t.dim() <= axis and t.numel() == 0 else t.shape[axis] for t in args[0])


def _cat_rule(args, bdims):
    tensors, tb = args[0], bdims[0]
    if not isinstance(tb, tuple):
        return NotImplemented
    size = batch_size(args, bdims)
    ranks = [_rank(t, b) for t, b in zip(tensors, tb)]
    vals = _all_batched(tensors, tb, size)
    rank = max(ranks)
    # torch's legacy rule: 1-d empty tensors are skipped by cat
    keep = [v for v, r in zip(vals, ranks) if not (r == 1 and v.shape[1] == 0 and rank > 1)]
    dim = phys(_arg(args, 1, 0), rank)
    return dispatch(OPS["cat"], (tuple(keep), dim)), 0


@register(
    "cat(tensors, dim)",
    "CatBackward0",
    list_input=True,
    save="dim",
    extra=_cat_sizes,
    batch=_cat_rule,
    keeps_zero="tensors",
)
def _cat(ctx, grad):
    dim = ctx.saved_value("dim")
    lead = _lead(grad)
    axis = _dim_after(dim, grad, lead)
    out, start = [], 0  # type: ignore[var-annotated]
    for i, size in enumerate(ctx.extra):
        shape = ctx.input_shape(i)
        if shape is None:
            out.append(None)
        elif len(shape) == 1 and shape[0] == 0:
            # torch's cat_tensors_backward: an empty 1-d input gets a new empty gradient
            # (not a slice of grad: it takes no part in a create_graph graph)
            out.append(gt.zeros(lead + (0,), dtype=grad.dtype))
        else:
            out.append(grad.narrow(axis, start, size))
        start += size
    return tuple(out)


@jvp("cat")
def _cat_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = []
    for x, t in zip(seq, tangents):
        if x.dim() == 1 and x.shape[0] == 0 and out.dim() > 1:
            continue  # cat skips legacy empty 1-D tensors
        parts.append(t if t is not None else _zero_tangents(lead, x).to(out.dtype))
    return gt.cat(parts, dim % out.dim() + len(lead))


def _stack_rule(args, bdims):
    tensors, tb = args[0], bdims[0]
    if not isinstance(tb, tuple):
        return NotImplemented
    size = batch_size(args, bdims)
    rank = _rank(tensors[0], tb[0])
    dim = _arg(args, 1, 0)
    if not -(rank + 1) <= dim <= rank:
        raise dim_error(dim, rank + 1)
    vals = _all_batched(tensors, tb, size)
    return dispatch(OPS["stack"], (tuple(vals), dim % (rank + 1) + 1)), 0


@register(
    "stack(tensors, dim)",
    "StackBackward0",
    list_input=True,
    save="dim",
    batch=_stack_rule,
    keeps_zero="tensors",
)
def _stack(ctx, grad):
    dim = ctx.saved_value("dim")
    return tuple(grad.unbind(_dim_after(dim, grad, _lead(grad))))


@jvp("stack")
def _stack_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = [
        t if t is not None else _zero_tangents(lead, x).to(out.dtype) for x, t in zip(seq, tangents)
    ]
    return gt.stack(parts, dim % out.dim() + len(lead))


@register("clone(self)", "CloneBackward0", batch=unary, keeps_zero="self")
def _clone(ctx, grad):
    return (grad,)


def _contiguous_rule(args, bdims):
    return dispatch(OPS["contiguous"], (front(args[0], bdims[0]),)), 0


@register("contiguous(self)", "CloneBackward0", batch=_contiguous_rule)
def _contiguous(ctx, grad):
    return (grad,)


@register("to_dtype(self, dtype)", "ToCopyBackward0", batch=unary)
def _to_dtype(ctx, grad):
    return (grad,)  # the engine casts to the input's dtype


@jvp("alias", "clone", "contiguous", "to_dtype")
def _identity_jvp(args, out, tangents, lead):
    return tangents[0]  # to_dtype: forward_ad casts the tangent to the output's dtype


def _repeat_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    sizes = args[1]
    if isinstance(sizes, (int, np.integer)):
        sizes = (sizes,)
    sizes = tuple(sizes)
    if len(sizes) < rank:
        return NotImplemented
    x = pad(x, rank, len(sizes))
    return dispatch(OPS["repeat"], (x, (1,) + sizes)), 0


@register(
    "repeat(self, repeats)", "RepeatBackward0", save="repeats", sizes="self", batch=_repeat_rule
)
def _repeat(ctx, grad):
    sizes = ctx.saved_value("repeats")
    shape = (1,) * (len(sizes) - len(ctx.input_shape(0))) + tuple(ctx.input_shape(0))
    lead = _lead(grad)
    if 0 in tuple(sizes):
        # torch's repeat_backward: a zero repeat gives fresh zeros, with no graph (fuzz seed
        # 14 #18009: under create_graph the gradient does not require grad)
        return (grad.new_zeros(lead + tuple(ctx.input_shape(0))),)
    interleaved = []
    for s, d in zip(sizes, shape):
        interleaved += [s, d]
    g = grad.reshape(list(lead) + interleaved).sum(
        tuple(range(len(lead), len(lead) + 2 * len(sizes), 2))
    )
    return (g.reshape(lead + tuple(ctx.input_shape(0))),)


@jvp("repeat")
def _repeat_jvp(args, out, tangents, lead):
    x, sizes = args[0], tuple(args[1])
    t = tangents[0]
    if lead:
        t = t.reshape(tuple(lead) + (1,) * (len(sizes) - x.dim()) + tuple(x.shape))
    return t.repeat(*((1,) * len(lead) + sizes))


def _flip_rule(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dims = args[1]
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    return dispatch(OPS["flip"], (x, tuple(phys(d, rank) for d in dims))), 0


@register("flip(self, dims)", "FlipBackward0", save="dims", batch=_flip_rule)
def _flip(ctx, grad):
    lead = _lead(grad)
    if lead:
        return (grad.flip(*(_dim_after(d, grad, lead) for d in ctx.saved_value("dims"))),)
    return (grad.flip(*ctx.saved_value("dims")),)


@jvp("flip")
def _flip_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    return tangents[0].flip(*(_shift(d, x, lead) for d in dims))


@register(
    "index_select(self, dim, index)",
    "IndexSelectBackward0",
    save="dim, index",
    sizes="self",
    batch=dim_then,
)
def _index_select(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)  # a 0-d input: the result is that element
    key = [slice(None)] * len(shape)
    key[dim % len(shape)] = _data(index).reshape(-1)
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("index_select")
def _index_select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        return tangents[0]
    return tangents[0].index_select(_shift(dim, x, lead), index)


def _gather_rule(args, bdims):
    x, xb, index, ib = args[0], bdims[0], args[2], bdims[2]
    size = batch_size(args, bdims)
    rank = _rank(x, xb)
    if rank == 0:
        return NotImplemented
    xv, iv = _all_batched((x, index), (xb, ib), size)
    return dispatch(OPS["gather"], (xv, phys(args[1], rank), iv)), 0


# torch's GatherBackward0 saves ``self`` too and its formula reads it (for the sizes):
# writing the input in place before backward raises there, so it does here
@register(
    "gather(self, dim, index)", "GatherBackward0", save="self, dim, index", batch=_gather_rule
)
def _gather(ctx, grad):
    ctx.saved_value("self")  # unpacked as torch's formula does: its version check
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    if not shape:  # every element of the result is the 0-d input
        return (_sum_all(grad, _lead(grad)),)
    return (scatter_along(grad, _data(index), dim % len(shape), shape),)


@jvp("gather")
def _gather_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        t = tangents[0].reshape(tuple(lead) + (1,) * index.dim())
        return t.expand(tuple(lead) + tuple(index.shape))
    if not lead:
        return tangents[0].gather(dim, index)
    return _take(tangents[0], _along_axis_key(_data(index), dim % x.dim()), tuple(x.shape), lead)


def _sorted_backward(ctx, grad, grad_indices=None):
    dim = ctx.saved_value("dim")
    shape = ctx.input_shape(0)
    if grad is None:
        return (None,)
    if not shape:
        return (grad,)
    return (scatter_along(grad, ctx.extra, dim % len(shape), shape),)


# Note [Selections keep their indices, not their values]
register(
    "sort(self, dim, descending)",
    "SortBackward0",
    save="dim",
    extra=_selected_indices,
    batch=along_dim(default=-1),
)(_sorted_backward)


jvp("sort")(_sorted_jvp(1))
register(
    "topk(self, k, dim, largest, sorted)",
    "TopkBackward0",
    save="dim",
    extra=_selected_indices,
    batch=along_dim(dim_pos=2, default=-1),
)(_sorted_backward)


jvp("topk")(_sorted_jvp(2))
