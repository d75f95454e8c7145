"""Helpers of the backward formulas (shapes of reductions, batched backward, scatter)."""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, kernels, register_op
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from .. import _grad_mode as _modes

__all__: list[str] = []


def _grad_mode() -> bool:
    return _modes.is_grad_enabled()


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _first_order_arrays(grad) -> bool:
    """Whether a formula may compute on ``grad``'s array with a kernel of tensor-core and
    wrap the result: a first-order backward (no ``create_graph``, no forward-mode AD to
    carry, not batched) of a float32/float64 gradient (as ``run_fused`` decides; Note
    [Formulas are written with gradstack ops])."""
    return (
        not _modes.is_grad_enabled()
        and not _modes.forward_ad_enabled()
        and not _modes.grads_batched()
        and _data(grad).dtype in _KERNEL_DTYPES
    )


def _kernel_arrays(*tensors):
    """The tensors' arrays in C order, for a fused backward kernel of
    ``gradstack_tensor.kernels`` whose arguments are not all of one shape (layer norm,
    softmax along a dim), the first being the gradient; None when the formula must run
    with gradstack ops instead (not :func:`_first_order_arrays`, or arrays of different
    dtypes)."""
    if not _first_order_arrays(tensors[0]):
        return None
    arrays = [_data(t) for t in tensors]
    if any(a.dtype != arrays[0].dtype for a in arrays):
        return None
    return [np.ascontiguousarray(a) for a in arrays]


def _expand_reduced(grad, shape, dim, keepdim, lead=()):
    """Broadcast the gradient of a reduction back to the input's ``shape`` (after ``lead``)."""
    if lead and (dim is None or dim == ()) and grad.dim() == len(lead):
        return grad.reshape(tuple(lead) + (1,) * len(shape)).expand(tuple(lead) + tuple(shape))
    if dim is not None and not keepdim and len(shape) > 0:
        dims = dim if isinstance(dim, tuple) else (dim,)
        for d in sorted(d % len(shape) for d in dims):
            grad = grad.unsqueeze(d + len(lead))
    return grad.expand(tuple(lead) + tuple(shape))


def _reduced_count(shape, dim):
    if dim is None or dim == ():
        return math.prod(shape)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return math.prod(shape[d % len(shape)] for d in dims) if shape else 1


def _keep(t, shape, dim, keepdim, lead=()):
    """A reduction's result reshaped to broadcast against its input (keepdim=True form).

    ``lead`` is the batch prefix ``t`` carries in a batched backward (see ``_lead``).
    """
    if dim is None or dim == ():
        return t.reshape(tuple(lead) + (1,) * len(shape)) if shape else t
    return t if keepdim else _expand_dims(t, shape, dim, len(lead))


def _expand_dims(t, shape, dim, nl=0):
    if not shape:
        return t  # Note [Dims of a 0-d tensor]: reducing a 0-d tensor over dim 0 keeps it 0-d
    dims = dim if isinstance(dim, tuple) else (dim,)
    for d in sorted(d % len(shape) for d in dims):
        t = t.unsqueeze(d + nl)
    return t


# Note [Batched formulas]
# In a batched backward (Note [Batched backward] in _engine.pyx) every incoming gradient
# has one extra leading dim, the batch.  Elementwise and matmul formulas broadcast over it
# as written; formulas that use shapes or dims take the prefix from ``_lead(grad)`` (``()``
# outside a batched pass, so the ordinary path is unchanged) and index-like ones go
# through ``_batch_scatter``/``_batch_gather``, which index flat positions so that any key works.


def _lead(grad):
    """``(batch,)`` in a batched backward, else ``()`` (Note [Batched formulas])."""
    return (grad.shape[0],) if _modes.grads_batched() else ()


def _sum_all(t, lead):
    """``t.sum()`` over everything but the batch prefix ``lead``."""
    if not lead:
        return t.sum()
    return t.sum(tuple(range(len(lead), t.dim()))) if t.dim() > len(lead) else t


def _dim_after(dim, grad, lead):
    """``dim`` of the unbatched tensor, as a dim of the batched ``grad``."""
    return dim % (grad.dim() - len(lead)) + len(lead)


def _positions(shape, key):
    """The flat (row-major) position in ``shape`` of each element of ``x[key]``."""
    return np.asarray(np.arange(math.prod(shape), dtype=np.intp).reshape(shape)[key])


def _batch_scatter(grad, key, shape):
    """``index_scatter(grad, key, shape)``, keeping the batch dim of a batched backward."""
    if not _modes.grads_batched():
        return index_scatter(grad, key, shape)
    b = grad.shape[0]
    pos = _positions(tuple(shape), key).reshape(-1)
    flat = index_scatter(grad.reshape(b, -1), (slice(None), pos), (b, math.prod(shape)))
    return flat.reshape((b,) + tuple(shape))


def _batch_gather(grad, key, shape):
    """``grad[key]`` (``grad`` of shape ``shape``), keeping the batch dim of a batched backward."""
    if not _modes.grads_batched():
        return _getitem_np(grad, key)
    b = grad.shape[0]
    pos = _positions(tuple(shape), key)
    r = _getitem_np(grad.reshape(b, -1), (slice(None), pos.reshape(-1)))
    return r.reshape((b,) + pos.shape)


_AUTOGRAD_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                          "uint8": "Byte", "bool": "Bool"}  # fmt: skip


def refuse_undifferentiable_result(out):
    """Raise torch's "Autograd not support dtype" when ``out``, the result of a
    differentiable op with an input that requires grad, is an integer or bool tensor
    (torch checks this where it attaches the node: ``sum(dtype=int64)`` of such an input,
    or an empty ``bmm`` whose second operand is an integer tensor)."""
    if isinstance(out, Tensor) and not (out.is_floating_point() or out.is_complex()):
        raise RuntimeError(f"Autograd not support dtype: {_AUTOGRAD_SCALAR_NAMES[out.dtype.name]}")


def _is_tensor(x):
    return isinstance(x, Tensor)


def _detached(x):
    """``x`` outside the graph (numbers pass through): for values a formula uses as constants."""
    return x.detach() if isinstance(x, Tensor) else x


def _zeros(grad):
    """Zeros shaped like ``grad``, not ``grad * 0`` (Note [Masks select, never multiply])."""
    return gt.zeros_like(grad)


# Note [Masks select, never multiply]
# A gradient that is zero on part of the input must be *selected* to zero
# (``where(mask, grad, 0)``, ``masked_fill``), never multiplied by a 0/1 mask: an incoming
# gradient of inf or nan times 0 is nan, so ``x.clamp(min=0).sqrt()`` at x = -1 (sqrt's
# gradient at 0 is inf) would give nan where torch gives 0.  Formulas follow torch's own
# choice per op: where torch multiplies by a mask (``abs``'s sign, ``amax``'s count-scaled
# mask), so do we, so that both give the same nan in the same place.


# Note [Scatter is getitem's adjoint]
# Every indexing-like op (getitem, select, narrow, index_select, gather, sort, max along a
# dim ...) has a backward that adds the gradient into zeros at the indexed positions.
# That is one linear op, `_index_scatter`, whose own derivative is plain indexing, so both
# are differentiable to any order.


def _index_scatter_kernel(values, key, shape):
    v = _data(values)
    # empty then zeroed: inside an op a large block comes from the block cache, its pages
    # mapped (np.zeros' calloc is never served from it, and faults its pages in each time)
    out = np.empty(shape, dtype=v.dtype)
    out.fill(0)
    if not _scatter_in_one_pass(out, key, v):
        np.add.at(out, key, v)
    return _wrap(out)


# Note [The scatter-add of a backward in one pass]
# ``np.add.at`` is numpy's general unbuffered scatter: correct for any key, but one
# element at a time through a generic iterator (20-60x torch's index backward on 1e6
# elements).  The keys the formulas build are mostly of three forms, each one pass:
#   - a basic key (narrow, select, slices, None): its positions are distinct, so the
#     values are *assigned* into the zeros;
#   - one integer array along a dim, the other dims whole (index_select, embedding,
#     ``x[idx]``, a batched backward's flat positions): tensor-core's ``scatter_add_`` with
#     the index broadcast along the other dims (torch's index_add);
#   - the grid of ``_along_axis_key`` (gather, and the ops whose backward is a gather's):
#     ``scatter_add_`` along that axis.
# Anything else (diagonals, mixed advanced keys, other dtypes) stays ``np.add.at``.  Repeated
# indices add in C order in both, so the sums are the same.


def _scatter_in_one_pass(out, key, v):
    """``np.add.at(out, key, v)`` for the keys of Note [The scatter-add of a backward in one
    pass]; False (nothing written) for any other key."""
    if v.dtype not in (np.float32, np.float64) or not v.flags.aligned:
        return False
    items = key if isinstance(key, tuple) else (key,)
    if all(_basic_item(k) for k in items):
        out[key] = v  # distinct positions
        return True
    if len(items) > out.ndim:
        return False
    arrays = [j for j, k in enumerate(items) if isinstance(k, np.ndarray)]
    if len(arrays) == 1 and all(j == arrays[0] or k == slice(None) for j, k in enumerate(items)):
        return _scatter_along(out, arrays[0], items[arrays[0]], v)
    if len(arrays) == out.ndim == len(items):
        return _scatter_grid(out, items, v)
    return False


def _basic_item(k):
    return (
        k is None
        or k is Ellipsis
        or isinstance(k, slice)
        or (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))
    )


def _int_index(idx):
    if idx.dtype.kind not in "iu":
        return None
    if idx.dtype in (np.int64, np.int32) and idx.flags.aligned:
        return idx
    return idx.astype(np.int64)


def _scatter_along(out, axis, idx, v):
    """One integer array ``idx`` at dim ``axis``, the other dims whole (index_add)."""
    idx = _int_index(idx)
    shape = out.shape
    if idx is None or v.shape != shape[:axis] + idx.shape + shape[axis + 1 :]:
        return False
    flat = shape[:axis] + (idx.size,) + shape[axis + 1 :]
    src = v.reshape(flat)
    ones = (1,) * (out.ndim - axis - 1)
    index = np.broadcast_to(idx.reshape((1,) * axis + (idx.size,) + ones), flat)
    kernels.scatter_add_(out, axis, index, src, wrap_negative=True)
    return True


def _scatter_grid(out, items, v):
    """``_along_axis_key``'s grid: an open grid (``np.indices(sparse=True)``) but for one
    axis, whose array has the values' shape (gather's backward)."""
    nd = out.ndim
    if v.ndim != nd:
        return False
    axis = None
    for j, k in enumerate(items):
        if not _is_grid(k, j, nd, v.shape):
            if axis is not None:
                return False
            axis = j
    axis = 0 if axis is None else axis  # every item a grid: any axis gives these positions
    idx = _int_index(items[axis])
    if idx is None or idx.ndim != nd:
        return False
    try:
        index = np.broadcast_to(idx, v.shape)
    except ValueError:
        return False
    kernels.scatter_add_(out, axis, index, v, wrap_negative=True)
    return True


def _is_grid(k, j, nd, shape):
    n = shape[j]
    want = (1,) * j + (n,) + (1,) * (nd - j - 1)
    return k.dtype.kind in "iu" and k.shape == want and np.array_equal(k.reshape(-1), np.arange(n))


INDEX_SCATTER = register_op("_index_scatter", _index_scatter_kernel)


def index_scatter(values, key, shape):
    """zeros(shape) with ``values`` added at ``key`` (a numpy index): getitem's adjoint."""
    return gt.dispatch(INDEX_SCATTER, (values, key, tuple(shape)))


def _getitem_np(t, key):
    """``t[key]`` for a numpy-style key, differentiable (through the getitem op)."""
    return gt.dispatch(OPS["getitem"], (t, _key_for_tensor(key)))


def _key_for_tensor(key):
    return (
        tuple(_wrap(np.asarray(k)) if isinstance(k, np.ndarray) else k for k in key)
        if isinstance(key, tuple)
        else key
    )


def _two_over(dof):
    """``2 / dof`` as C++ divides doubles: ``inf`` at 0 (Python would raise)."""
    return 2.0 / dof if dof != 0 else math.inf


def var_backward(grad, x, dim, correction, keepdim, lead=()):
    """torch's var_backward: ``2 / (n - correction) * grad * (x - mean)``.

    Over everything (or a 0-d ``x``) with ``n <= correction`` the result is ``grad`` times
    nan where ``x`` equals its mean and inf elsewhere, as torch's; along dims the factor is
    ``2 / (n - correction)`` as a double division (inf at 0, negative below).  Also the
    forward formula: ``var_jvp`` is this with the tangent as ``grad`` and ``keepdim=True``.
    """
    shape = tuple(x.shape)
    if correction is None:  # torch's var() saves None: Bessel's correction
        correction = 1
    if not shape or dim is None or dim == ():
        # a batched gradient of the result (lead only) broadcasts after the batch dims
        reduced = lead and grad.dim() == len(lead)
        g = grad.reshape(tuple(lead) + (1,) * len(shape)) if reduced else grad
        dof = math.prod(shape) - correction
        if dof <= 0:
            return g * gt.where(x == x.mean(), math.nan, math.inf)
        return _two_over(dof) * g * (x - x.mean())
    g = _keep(grad, shape, dim, keepdim, lead)
    dof = _reduced_count(shape, dim) - correction
    return _two_over(dof) * g * (x - x.mean(dim, keepdim=True))


def scatter_along(grad, idx, axis, shape):
    """zeros(``shape``) with ``grad`` added at ``idx`` along ``axis`` (``idx`` an integer
    array of ``grad``'s shape, the other dims their own positions): the backward of gather
    and of the ops that select along a dim (sort, topk, max/min with a dim).

    Note [A selection's backward straight into the kernel]
    In a first-order backward this is one zeroed block and tensor-core's ``scatter_add_``
    on the arrays: no open-grid key built and recognised again (``_scatter_grid``'s checks
    were about half of topk's and gather's backward at 10**4 elements), no op dispatched.
    Repeated indices add in C order, as the key path and torch's scatter_add.  Otherwise
    (create_graph, a batched backward, other dtypes) it is the differentiable
    ``_index_scatter`` of the key.
    """
    if _first_order_arrays(grad):
        g = _data(grad)
        if g.ndim == len(shape) > 0 and idx.shape == g.shape and idx.dtype in _INDEX_DTYPES:
            out = kernels.result_zeros(tuple(shape), g.dtype)
            kernels.scatter_add_(out, axis, idx, g, wrap_negative=True)
            return _wrap(out)
    return _batch_scatter(grad, _along_axis_key(idx, axis), shape)


_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))


def _along_axis_key(idx, axis):
    grids = np.indices(idx.shape, sparse=True)
    key = list(grids)
    key[axis] = idx
    return tuple(key)
