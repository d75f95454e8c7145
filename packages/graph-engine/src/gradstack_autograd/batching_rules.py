"""vmap's batching rules: how each op of the tensor library runs on a whole batch at once.

Each rule is stored in its op's entry of the derivative table (``entry(name).batch_rule``,
Note [Entries by name] in ``derivatives``), beside the backward and forward formulas:
functional-api's vmap reads it from there.  The rules live in graph-engine because they
only use tensor ops and the dispatch point, never vmap's machinery (levels, batched
tensors, the per-sample fallback loop: functional-api).  Ops that run once per sample
instead (a loop over the batch, with a one-time performance warning naming the op, as
torch) are listed in :data:`FALLBACK` with the reason; ``tests/test_batching_rules.py``
fails when an op of ``gradstack_tensor.OPS`` has neither.

The shape of a rule
-------------------
``rule(args, batch_dims) -> (out, out_batch_dims)``, a plain function:

``args``
    The op's canonical positional arguments (as the dispatch point receives them), with
    every tensor batched at the vmap level being handled replaced by its *physical*
    value (the whole batch: a plain tensor, or a tensor batched at an outer level).
    Sequences of tensors (``cat``'s list, ``getitem``'s index) hold values likewise.
``batch_dims``
    Parallel to ``args``: the batch dim of each physical value, None for arguments that
    are not batched at this level (a tuple of those for a sequence argument).
``out``, ``out_batch_dims``
    The physical result and where its batch dim is: an int (or None) for a tensor, and
    for a tuple result either one int for all or a tuple with one per element.  In-place
    rules return the physical ``self`` after the write.

A rule computes with ordinary ops on the physical values (Tensor methods and
``dispatch``), so that outer vmap levels, autograd and the profiler see them like any
other op.  It may return ``NotImplemented`` for arguments it does not cover; the op then
runs once per sample.  Rules are written per *kind* of op by the factories below
(elementwise with broadcasting, reductions, shape ops, the matmul family, indexing,
in-place ops, random ops, losses); a later restructure moves each op's rule into the
op's one entry of the derivative table, which is why a rule is a function of ``(args,
batch_dims)`` only.

Note [The batch dim goes first]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Most rules move the batch dim to the front (a ``permute``, a view) and then call the op
with its ``dim`` arguments shifted by one.  A negative ``dim`` counts from the end, which
the leading batch dim does not change, so only non-negative dims shift; every dim is
first checked against the *logical* rank, so that ``dim=-3`` on a 2-d sample is an error
(not the batch dim), with torch's message.  Elementwise ops align the operands' logical
dims on the right: a batched operand of lower rank gets size-1 dims inserted after its
batch dim; unbatched operands broadcast as they are.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.arange(6.0).reshape(2, 3)            # a batch of 2 samples of shape (3,)
>>> out, bdim = rule_of("sum")((x, (0,), False, None), (0, None, None, None))
>>> out.tolist(), bdim                            # sample-wise sums of dim 0
([3.0, 12.0], 0)
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, dtypes
from gradstack_tensor.extension import dispatch

# the rules are stored in the ops' entries: every row must exist first
from . import derivatives, derivatives_nn, derivatives_random  # noqa: F401
from .grad_mode import no_grad

__all__ = [
    "FALLBACK",
    "INPLACE_ERROR",
    "RANDOM_ERROR",
    "SAME_RANDOMNESS_ERROR",
    "LEVELS",
    "drawing",
    "batch_size",
    "inplace_error",
    "rule_of",
]

FALLBACK: dict = {}

INPLACE_ERROR = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace arithmetic. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead."
)
RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation "
    "out of vmap"
)


def inplace_error(op_name: str, self_shape) -> RuntimeError:
    """torch's in-place error, naming the op and the unbatched tensor it would write."""
    return RuntimeError(
        f"{INPLACE_ERROR} (op {op_name} on an unbatched tensor of shape {list(self_shape)})"
    )


# -------------------------------------------------------------------------------------
# helpers on physical values


def _arg(args, i, default=None):
    return args[i] if i < len(args) else default


def _batched_positions(bdims) -> list:
    return [i for i, b in enumerate(bdims) if b is not None and not isinstance(b, tuple)]


def batch_size(args, bdims) -> int:
    """The size of the batch (read from any batched argument)."""
    for a, b in zip(args, bdims):
        if isinstance(b, tuple):
            for x, bb in zip(a, b):
                if bb is not None:
                    return x.shape[bb]
        elif b is not None:
            return a.shape[b]
    raise RuntimeError("vmap: no batched argument")


def front(x: Tensor, bdim: int) -> Tensor:
    """``x`` with its batch dim ``bdim`` moved to dim 0 (a view)."""
    if bdim == 0:
        return x
    n = x.dim()
    return x.permute((bdim,) + tuple(i for i in range(n) if i != bdim))


def pad(xf: Tensor, rank: int, target: int) -> Tensor:
    """A batch-first value of logical ``rank`` viewed with ``target - rank`` size-1 dims
    after the batch dim (Note [The batch dim goes first])."""
    if target <= rank:
        return xf
    shape = tuple(xf.shape)
    return xf.reshape(shape[:1] + (1,) * (target - rank) + shape[1:])


def aligned(x, bdim, rank: int, target: int):
    """A batched value batch-first and padded to ``target``; unbatched values as they are."""
    if bdim is None:
        return x
    return pad(front(x, bdim), rank, target)


def dim_error(dim, rank: int) -> IndexError:
    lo, hi = -max(rank, 1), max(rank, 1) - 1
    return IndexError(
        f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
    )


def wrap_dim(dim, rank: int) -> int:
    """A logical dim in ``[0, rank)`` (torch's wrapping: a 0-d tensor accepts 0 and -1)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"a dim must be an int, got {type(dim).__name__}")
    n = max(rank, 1)
    if not -n <= dim < n:
        raise dim_error(dim, rank)
    return int(dim) % n


def phys(dim, rank: int) -> int:
    """The physical dim, batch first, of logical ``dim`` (Note [The batch dim goes first])."""
    return wrap_dim(dim, rank) + 1


def _rank(x, bdim) -> int:
    return x.dim() - (0 if bdim is None else 1)


def _current_level():
    return LEVELS[-1] if LEVELS else None


# The vmap levels the rules are running for, innermost last: the batching layer pushes
# the level it handles around each rule.  Random rules read its ``randomness`` flag
# ("error", "same" or "different"); nothing else of the level is read here.
LEVELS: list = []


def rule_of(op_name: str):
    """The batching rule of ``op_name`` (from its entry), or None when it has none."""
    d = OPS[op_name].derivative
    return None if d is None else d.batch_rule


# -------------------------------------------------------------------------------------
# elementwise


def _promotion_fix(new, args, bdims, positions, ranks, target):
    """Cast logically 0-d batched operands so that type promotion sees them as 0-d.

    A batched 0-d sample is a 1-d physical tensor, which would take part in promotion as
    a dimensioned tensor (float32 x + float64 0-d y must stay float32, as in torch)."""
    zero = [i for i in positions if bdims[i] is not None and ranks[i] == 0]
    if not zero or target == 0:
        return
    logical = [(args[i].dtype, ranks[i]) for i in positions]
    physical = [(args[i].dtype, ranks[i] + (bdims[i] is not None)) for i in positions]
    want = dtypes.result_type(logical)
    if dtypes.result_type(physical) != want:
        for i in zero:
            new[i] = new[i].to(want)


def pointwise(name: str, value_positions=None, promote: bool = True):
    """Rule of an elementwise op with broadcasting: its tensor arguments are aligned on
    their logical dims (batched ones batch-first), the op runs once, batch dim 0.
    ``value_positions`` are the arguments that take part in type promotion (all tensor
    arguments by default; not a ``where`` condition or a mask)."""
    op = OPS[name]

    def rule(args, bdims):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        batched = [i for i in positions if bdims[i] is not None]
        if len(batched) == 1 and len(positions) == 1:
            return dispatch(op, args), bdims[batched[0]]  # one tensor: nothing to align
        ranks = {i: _rank(args[i], bdims[i]) for i in positions}
        target = max(ranks.values())
        new = list(args)
        for i in batched:
            new[i] = pad(front(args[i], bdims[i]), ranks[i], target)
        if promote:
            vp = (
                positions if value_positions is None else [p for p in value_positions if p in ranks]
            )
            _promotion_fix(new, args, bdims, vp, ranks, target)
        return dispatch(op, tuple(new)), 0

    rule.__name__ = f"pointwise_{name}"
    return rule


def unary(name: str):
    """Rule of an op applied to each element (or a view keeping every dim): the batch dim
    stays where it is; other tensor arguments are handled as by :func:`pointwise`."""
    op = OPS[name]
    general = pointwise(name)

    def rule(args, bdims):
        for i in range(1, len(args)):
            if isinstance(args[i], Tensor):
                return general(args, bdims)
        return dispatch(op, args), bdims[0]

    rule.__name__ = f"unary_{name}"
    return rule


def inplace(name: str, value_positions=None):
    """Rule of an in-place elementwise op: ``self`` must be batched when any other operand
    is (torch's in-place error otherwise); it is written through a batch-first view."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None:
            raise inplace_error(name, args[0].shape)
        rank = _rank(args[0], bdims[0])
        selff = front(args[0], bdims[0])
        new = [selff] + list(args[1:])
        for i in range(1, len(args)):
            if isinstance(args[i], Tensor) and bdims[i] is not None:
                r = _rank(args[i], bdims[i])
                new[i] = pad(front(args[i], bdims[i]), r, rank)
        dispatch(op, tuple(new))
        return args[0], bdims[0]

    rule.__name__ = f"inplace_{name}"
    return rule


# -------------------------------------------------------------------------------------
# reductions and ops along a dim


def _dims_arg(dim, rank):
    """Physical dims of a ``dim`` argument (int or tuple), or None for "all dims"."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(phys(d, rank) for d in dim)
    return phys(dim, rank)


def reduction(name: str, dim_pos: int = 1, keepdim_pos: int | None = 2):
    """Rule of a reduction over ``args[dim_pos]`` (an int, a tuple, or None/() for all
    dims): batch first, dims shifted; over all dims, each sample is flattened and reduced
    along dim 1 (``keepdim`` then restores the sample's rank)."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(b is not None for b in bdims[1:]):
            return NotImplemented
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        if rank == 0:
            return NotImplemented  # a 0-d sample: rare, exact per-sample
        dims = _dims_arg(_arg(args, dim_pos), rank)
        new = list(args) + [None] * (dim_pos + 1 - len(args))
        if dims is not None:
            new[0], new[dim_pos] = x, dims
            return dispatch(op, tuple(new)), 0
        new[0], new[dim_pos] = x.reshape(x.shape[0], -1), 1
        keepdim = keepdim_pos is not None and bool(_arg(args, keepdim_pos, False))
        if keepdim and keepdim_pos is not None:
            new[keepdim_pos] = False
        out = dispatch(op, tuple(new))
        if keepdim:
            out = out.reshape((x.shape[0],) + (1,) * rank)
        return out, 0

    rule.__name__ = f"reduction_{name}"
    return rule


def along_dim(name: str, dim_pos: int = 1, default=None):
    """Rule of an op along one dim (softmax, cumsum, sort ...); outputs keep the batch
    first (tuples too)."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(b is not None for b in bdims[1:]):
            return NotImplemented
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        if rank == 0:
            return NotImplemented
        new = list(args) + [default] * (dim_pos + 1 - len(args))
        new[0] = x
        new[dim_pos] = phys(new[dim_pos], rank)
        return dispatch(op, tuple(new)), 0

    rule.__name__ = f"along_dim_{name}"
    return rule


def _max_min(name: str):
    """``max``/``min``: without ``dim`` the largest element (``amax`` over the sample),
    with ``dim`` the ``(values, indices)`` pair."""
    amax = OPS["amax" if name == "max" else "amin"]
    with_dim = along_dim(name)

    def rule(args, bdims):
        if _arg(args, 1) is None:
            if bdims[0] is None:
                return NotImplemented
            x = front(args[0], bdims[0])
            rank = x.dim() - 1
            if rank == 0:
                return x, 0
            return dispatch(amax, (x, tuple(range(1, rank + 1)), False)), 0
        return with_dim(args, bdims)

    return rule


def _arg_extreme(name: str):
    """``argmax``/``argmin``: without ``dim`` the index into the flattened sample."""
    op = OPS[name]
    with_dim = along_dim(name)

    def rule(args, bdims):
        if bdims[0] is None:
            return NotImplemented
        if _arg(args, 1) is not None:
            return with_dim(args, bdims)
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        keepdim = bool(_arg(args, 2, False))
        out = dispatch(op, (x.reshape(x.shape[0], -1), 1, False))
        if keepdim:
            out = out.reshape((x.shape[0],) + (1,) * rank)
        return out, 0

    return rule


def _norm(args, bdims):
    """``norm(input, p, dim, keepdim)``: "all dims" is the sample's dims."""
    if bdims[0] is None or any(b is not None for b in bdims[1:]):
        return NotImplemented
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    p = _arg(args, 1, "fro")
    dims = _dims_arg(_arg(args, 2), rank)
    if rank == 0:
        return NotImplemented
    if dims is None:
        if p == "fro":
            p = 2  # torch's Frobenius norm over all dims is the 2-norm of the flat sample
        x = x.reshape(x.shape[0], -1)
        out = dispatch(OPS["norm"], (x, p, 1, False))
        if _arg(args, 3, False):
            out = out.reshape((x.shape[0],) + (1,) * rank)
        return out, 0
    return dispatch(OPS["norm"], (x, p, dims, _arg(args, 3, False))), 0


def _var_std(name: str):
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None:
            return NotImplemented
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        if rank == 0:
            return NotImplemented
        dims = _dims_arg(_arg(args, 1), rank)
        correction, keepdim = _arg(args, 2, 1), bool(_arg(args, 3, False))
        if dims is not None:
            return dispatch(op, (x, dims, correction, keepdim)), 0
        out = dispatch(op, (x.reshape(x.shape[0], -1), 1, correction, False))
        return (out.reshape((x.shape[0],) + (1,) * rank) if keepdim else out), 0

    return rule


# -------------------------------------------------------------------------------------
# shape ops


def _view_like(name: str):
    """``view``/``reshape(input, shape)``: the batch size leads the new shape."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None:
            return NotImplemented
        x = front(args[0], bdims[0])
        shape = args[1]
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        return dispatch(op, (x, (x.shape[0],) + tuple(shape))), 0

    return rule


def _flatten(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    if rank == 0:
        return x.reshape(x.shape[0], 1), 0
    start = phys(_arg(args, 1, 0), rank)
    end = phys(_arg(args, 2, -1), rank)
    return dispatch(OPS["flatten"], (x, start, end)), 0


def _permute(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dims = args[1]
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    if len(dims) != rank:
        return NotImplemented  # the kernel's own error, per sample
    return dispatch(OPS["permute"], (x, (0,) + tuple(phys(d, rank) for d in dims))), 0


def _transpose(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    return dispatch(OPS["transpose"], (x, phys(args[1], rank), phys(args[2], rank))), 0


def _t(args, bdims):
    x, b = args[0], bdims[0]
    rank = x.dim() - 1
    if rank > 2:
        return NotImplemented  # t() refuses, per sample, with its own message
    if rank < 2:
        return dispatch(OPS["alias"], (x,)), b
    x = front(x, b)
    return dispatch(OPS["transpose"], (x, 1, 2)), 0


def _squeeze(args, bdims):
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


def _unsqueeze(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dim = args[1]
    if not -(rank + 1) <= dim <= rank:
        raise dim_error(dim, rank + 1)
    d = dim % (rank + 1)
    return dispatch(OPS["unsqueeze"], (x, d + 1)), 0


def _expand(args, bdims):
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


def _expand_as(args, bdims):
    if bdims[0] is None:
        return NotImplemented
    other, ob = args[1], bdims[1]
    shape = tuple(other.shape)
    if ob is not None:
        shape = shape[:ob] + shape[ob + 1 :]
    return _expand((args[0], shape), (bdims[0], None))


def _dim_then(name: str, dim_pos: int = 1, default=0):
    """Ops whose one ``dim`` argument shifts and whose outputs (views, tuples of views)
    keep the batch first: narrow, select, split, chunk, unbind, index_select ..."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(
            b is not None for i, b in enumerate(bdims) if i != 0 and not isinstance(b, tuple)
        ):
            return NotImplemented
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        new = list(args) + [default] * (dim_pos + 1 - len(args))
        new[0] = x
        new[dim_pos] = phys(new[dim_pos], rank)
        return dispatch(op, tuple(new)), 0

    rule.__name__ = f"dim_{name}"
    return rule


def _flip(args, bdims):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    dims = args[1]
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    return dispatch(OPS["flip"], (x, tuple(phys(d, rank) for d in dims))), 0


def _repeat(args, bdims):
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


def _last_two(name: str):
    """tril/triu: they act on the last two dims, which the leading batch dim leaves alone."""
    op = OPS[name]

    def rule(args, bdims):
        x = front(args[0], bdims[0])
        if x.dim() - 1 < 2:
            return NotImplemented  # the kernel's error, per sample
        return dispatch(op, (x,) + tuple(args[1:])), 0

    return rule


def _trace(args, bdims):
    x = front(args[0], bdims[0])
    if x.dim() != 3:
        return NotImplemented
    eye = gt.from_numpy(np.eye(x.shape[1], x.shape[2], dtype=x.dtype.numpy))
    return (x * eye).sum((1, 2)), 0


def _all_batched(values, bdims, size):
    """Each value batch-first; unbatched ones expanded to the batch (a view)."""
    out = []
    for v, b in zip(values, bdims):
        if b is None:
            out.append(v.unsqueeze(0).expand((size,) + tuple(v.shape)))
        else:
            out.append(front(v, b))
    return out


def _cat(args, bdims):
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


def _stack(args, bdims):
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


def _gather(args, bdims):
    x, xb, index, ib = args[0], bdims[0], args[2], bdims[2]
    size = batch_size(args, bdims)
    rank = _rank(x, xb)
    if rank == 0:
        return NotImplemented
    xv, iv = _all_batched((x, index), (xb, ib), size)
    return dispatch(OPS["gather"], (xv, phys(args[1], rank), iv)), 0


def _is_advanced(item) -> bool:
    """An index item that is not an int, a slice, None, Ellipsis or a bool (a 0-d integer
    tensor selects, as an int does)."""
    if isinstance(item, Tensor):
        return not (item.dim() == 0 and item.dtype.numpy.kind in "iu")
    return isinstance(item, (list, np.ndarray))


def _index_items(key, kb):
    if isinstance(key, tuple):
        return key, (kb if isinstance(kb, tuple) else (None,) * len(key))
    return (key,), (kb,)


def _getitem(args, bdims):
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


def _setitem(args, bdims):
    x, xb, value, vb = args[0], bdims[0], args[2], bdims[2]
    items, item_bdims = _index_items(args[1], bdims[1])
    if any(b is not None for b in item_bdims):
        return NotImplemented
    if xb is None:
        raise inplace_error("setitem_ (x[index] = value)", x.shape)
    adv = [i for i, it in enumerate(items) if _is_advanced(it)]
    if len(adv) > 1 and adv != list(range(adv[0], adv[-1] + 1)):
        return NotImplemented
    xf = front(x, xb)
    key = (slice(None),) + tuple(items)
    if isinstance(value, Tensor) and vb is not None:
        region = dispatch(OPS["getitem"], (xf, key))
        value = pad(front(value, vb), _rank(value, vb), region.dim() - 1)
    dispatch(OPS["setitem_"], (xf, key, value))
    return x, xb


# -------------------------------------------------------------------------------------
# the matmul family


def _matmul(a, ab, b, bb):
    """``a @ b`` of two samples (torch's matmul rules, 1-d operands included), batch
    first.  Batched operands get their logical batch dims padded to a common rank so
    that the sample's batch dim never meets an unbatched operand's leading dims."""
    ra, rb = _rank(a, ab), _rank(b, bb)
    if ra == 0 or rb == 0:
        return NotImplemented  # matmul refuses 0-d operands, per sample
    if ab is not None:
        a = front(a, ab)
    if bb is not None:
        b = front(b, bb)
    squeeze_row = squeeze_col = False
    if ra == 1:  # a row vector
        a = a.unsqueeze(1 if ab is not None else 0)
        ra, squeeze_row = 2, True
    if rb == 1:  # a column vector
        b = b.unsqueeze(-1)
        rb, squeeze_col = 2, True
    k = max(ra, rb) - 2
    if ab is not None:
        a = pad(a, ra, k + 2)
    if bb is not None:
        b = pad(b, rb, k + 2)
    out = dispatch(OPS["matmul"], (a, b))
    if squeeze_col:
        out = out.squeeze(-1)
    if squeeze_row:
        out = out.squeeze(-2 if not squeeze_col else -1)
    return out, 0


def _matmul_rule(args, bdims):
    return _matmul(args[0], bdims[0], args[1], bdims[1])


def _outer(args, bdims):
    a, ab, b, bb = args[0], bdims[0], args[1], bdims[1]
    if _rank(a, ab) != 1 or _rank(b, bb) != 1:
        return NotImplemented
    a = (front(a, ab) if ab is not None else a).unsqueeze(-1)
    b = (front(b, bb) if bb is not None else b).unsqueeze(-2)
    if ab is None:  # (n, 1) * (B, 1, m): the batch leads anyway
        return a * b, 0
    return a * b, 0


def _addmm(args, bdims):
    inp, ib = args[0], bdims[0]
    beta, alpha = _arg(args, 3, 1), _arg(args, 4, 1)
    for v in (beta, alpha):
        if isinstance(v, Tensor):
            return NotImplemented
    prod, _ = _matmul(args[1], bdims[1], args[2], bdims[2])
    if prod is NotImplemented:
        return NotImplemented
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod, 0
    if ib is not None:
        inp = pad(front(inp, ib), _rank(inp, ib), 2)
    if beta != 1:
        inp = inp * beta
    return inp + prod, 0


# -------------------------------------------------------------------------------------
# in-place ops that are not plain elementwise


def _fill(args, bdims):
    if bdims[0] is None:
        raise inplace_error("fill_", args[0].shape)
    x = front(args[0], bdims[0])
    value, vb = args[1], bdims[1]
    if isinstance(value, Tensor) and vb is not None:
        dispatch(OPS["copy_"], (x, pad(front(value, vb), 0, x.dim() - 1)))
    else:
        dispatch(OPS["fill_"], (x, value))
    return args[0], bdims[0]


def _masked_fill_inplace(args, bdims):
    if bdims[0] is None:
        raise inplace_error("masked_fill_", args[0].shape)
    value, vb = args[2], bdims[2]
    if isinstance(value, Tensor) and vb is not None:
        rank = _rank(args[0], bdims[0])
        xf = front(args[0], bdims[0])
        mask = aligned(args[1], bdims[1], _rank(args[1], bdims[1]), rank)
        dispatch(
            OPS["copy_"], (xf, dispatch(OPS["where"], (mask, pad(front(value, vb), 0, rank), xf)))
        )
        return args[0], bdims[0]
    return inplace("masked_fill_")(args, bdims)


def _masked_fill(args, bdims):
    value, vb = args[2], bdims[2]
    if isinstance(value, Tensor) and vb is not None:
        # a per-sample fill value: where(mask, value, input)
        return pointwise("where", (1, 2))((args[1], args[2], args[0]), (bdims[1], vb, bdims[0]))
    return pointwise("masked_fill", (0,))(args, bdims)


# -------------------------------------------------------------------------------------
# random ops (vmap's randomness flag)


def _random_inplace(name: str):
    """``uniform_``/``normal_``: "error" refuses; "different" draws every sample's
    values; "same" draws one sample and writes it into every sample."""
    op = OPS[name]

    def rule(args, bdims):
        level = _current_level()
        mode = level.randomness if level is not None else "error"
        if mode == "error":
            raise RuntimeError(RANDOM_ERROR)
        if bdims[0] is None:
            if mode == "different":
                raise RuntimeError(
                    "vmap: Cannot ask for different inplace randomness on an unbatched "
                    "tensor. This will appear like same randomness. If this is necessary "
                    "for your usage, please file an issue with functorch."
                )
            with drawing():
                dispatch(op, args)
            return args[0], None
        if any(isinstance(a, Tensor) for a in args[1:]):
            return NotImplemented
        x = front(args[0], bdims[0])
        with drawing():
            if mode == "different":
                dispatch(op, (x,) + tuple(args[1:]))
            else:
                sample = x[0].clone()
                dispatch(op, (sample,) + tuple(args[1:]))
                dispatch(OPS["copy_"], (x, sample))
        return args[0], bdims[0]

    return rule


SAME_RANDOMNESS_ERROR = (
    "Vmap does not currently support same randomness with a batched tensor input. Please "
    "file an issue with functorch"
)


def _random_tensor_params(name: str, inplace: bool):
    """The random ops with tensor parameters (``bernoulli(p)``, ``bernoulli_(p_tensor)``,
    ``multinomial``, ``normal(mean, std)``): "error" refuses; "same" refuses a batched
    parameter (torch's error: one draw cannot follow per-sample parameters) and fills a
    batched ``self`` with one sample's draw; "different"
    runs the op once on the whole batch, batch dim first and contiguous, which draws
    torch's values after the same seed.  In-place fills with number parameters use
    :func:`_random_inplace`."""
    fill = _random_inplace(name) if inplace else None
    op = OPS[name]

    def rule(args, bdims):
        level = _current_level()
        mode = level.randomness if level is not None else "error"
        if mode == "error":
            raise RuntimeError(RANDOM_ERROR)
        if fill is not None and not any(isinstance(a, Tensor) for a in args[1:]):
            return fill(args, bdims)
        if inplace and bdims[0] is None:
            raise inplace_error(name, args[0].shape)
        if mode == "same":
            if any(b is not None for b in bdims[1:]) or not inplace:
                raise RuntimeError(SAME_RANDOMNESS_ERROR)
            # only ``self`` is batched: one sample's draw, written into every sample
            x = front(args[0], bdims[0])
            sample = x[0].clone()
            with drawing():
                dispatch(op, (sample,) + tuple(args[1:]))
            dispatch(OPS["copy_"], (x, sample))
            return args[0], bdims[0]
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ranks = {i: _rank(args[i], bdims[i]) for i in positions}
        target = max(ranks.values())
        new = list(args)
        for i in positions:
            if bdims[i] is not None:
                x = pad(front(args[i], bdims[i]), ranks[i], target)
                new[i] = x if inplace and i == 0 else x.contiguous()
        with drawing():
            if name == "multinomial" and ranks[0] == 2:
                # the op takes one or two dims: the samples' rows one after another
                x = new[0]
                rows = dispatch(op, (x.reshape(-1, x.shape[-1]),) + tuple(new[1:]))
                return rows.reshape(tuple(x.shape[:2]) + tuple(rows.shape[-1:])), 0
            out = dispatch(op, tuple(new))
        return (args[0], bdims[0]) if inplace else (out, 0)

    return rule


class drawing:
    """Marks the random draws a rule makes itself (the draw observer lets them through)."""

    depth = 0

    def __enter__(self):
        drawing.depth += 1

    def __exit__(self, *exc):
        drawing.depth -= 1


# -------------------------------------------------------------------------------------
# nn ops


def _reduce_loss(loss, reduction, rank):
    """Per-sample ``mean``/``sum`` of an elementwise loss (batch first)."""
    if reduction == "none" or rank == 0:
        return loss
    dims = tuple(range(1, rank + 1))
    return loss.mean(dims) if reduction == "mean" else loss.sum(dims)


def loss(name: str, tensor_positions: tuple, reduction_pos: int):
    """Rule of an elementwise loss with ``reduction``: the loss with ``reduction='none'``
    on the operands aligned and expanded to the batch, then each sample reduced alone."""
    op = OPS[name]

    def rule(args, bdims):
        new = list(args) + [None] * (reduction_pos + 1 - len(args))
        reduction = _arg(args, reduction_pos, "mean")
        if reduction not in ("none", "mean", "sum"):
            return NotImplemented  # the kernel's own error, per sample
        positions = [i for i in tensor_positions if isinstance(_arg(args, i), Tensor)]
        ranks = {i: _rank(args[i], bdims[i]) for i in positions}
        target = max(ranks.values())
        for i in positions:
            if bdims[i] is not None:
                new[i] = pad(front(args[i], bdims[i]), ranks[i], target)
        shape = tuple(np.broadcast_shapes(*(tuple(new[i].shape) for i in positions)))
        for i in tensor_positions[:2]:  # input and target: the full batch, exactly
            if tuple(new[i].shape) != shape:
                new[i] = new[i].expand(shape)
        new[reduction_pos] = "none"
        return _reduce_loss(dispatch(op, tuple(new)), reduction, target), 0

    rule.__name__ = f"loss_{name}"
    return rule


def _nll_loss(args, bdims):
    """``nll_loss(input, target, weight, reduction, ignore_index)``: the batch folded into
    the loss's own batch dim N, then each sample reduced with torch's weighted mean."""
    inp, ib, target, tb = args[0], bdims[0], args[1], bdims[1]
    weight, wb = _arg(args, 2), _arg(bdims, 2)
    reduction = _arg(args, 3, "mean")
    ignore_index = _arg(args, 4, -100)
    if wb is not None or reduction not in ("none", "mean", "sum"):
        return NotImplemented
    size = batch_size(args, bdims)
    rank = _rank(inp, ib)
    if rank not in (1, 2):
        return NotImplemented  # K-dim losses run per sample
    x, t = _all_batched((inp, target), (ib, tb), size)
    if rank == 1:  # input (C,), target (): one row per sample
        n = 1
        x2, t2 = x, t.reshape(size)
    else:
        n = x.shape[1]
        x2, t2 = x.reshape(size * n, x.shape[2]), t.reshape(size * n)
    per = dispatch(OPS["nll_loss"], (x2, t2, weight, "none", ignore_index)).reshape(size, n)
    if reduction == "none":
        return per.reshape(size) if rank == 1 else per, 0
    if reduction == "sum":
        return per.sum(1), 0
    keep = (t2 != ignore_index).reshape(size, n)
    if weight is None:
        w = keep.to(per.dtype)
    else:
        safe = t2.masked_fill(t2 == ignore_index, 0)
        w = weight.index_select(0, safe).reshape(size, n) * keep.to(per.dtype)
    return per.sum(1) / w.sum(1), 0


def _layer_norm(args, bdims):
    inp, ib = args[0], bdims[0]
    shape = args[1]
    weight, wb, bias, bb = _arg(args, 2), _arg(bdims, 2), _arg(args, 3), _arg(bdims, 3)
    eps = _arg(args, 4, 1e-5)
    if ib is None:
        return NotImplemented
    x = front(inp, ib)
    rank = x.dim() - 1
    if wb is None and bb is None:
        return dispatch(OPS["layer_norm"], (x, shape, weight, bias, eps)), 0
    out = dispatch(OPS["layer_norm"], (x, shape, None, None, eps))
    if weight is not None:
        out = out * aligned(weight, wb, _rank(weight, wb), rank)
    if bias is not None:
        out = out + aligned(bias, bb, _rank(bias, bb), rank)
    return out, 0


def _batch_norm(args, bdims):
    """``batch_norm`` of a batched sample ``(N, C, *S)``: statistics per sample (over N and
    S), running statistics updated in place per sample when they are batched (ensembles);
    unbatched running statistics cannot take per-sample updates (torch's in-place error)."""
    inp, ib = args[0], bdims[0]
    weight, bias, rmean, rvar = args[1], args[2], args[3], args[4]
    wb, bb, mb, vb = bdims[1], bdims[2], bdims[3], bdims[4]
    training, momentum, eps = args[5], args[6], args[7]
    if ib is None:
        return NotImplemented
    x = front(inp, ib)
    rank = x.dim() - 1
    if rank < 2:
        return NotImplemented

    def per_channel(t, b):  # a (C,) statistic or parameter, aligned with (B, N, C, *S)
        if t is None:
            return None
        if b is None:
            return t.reshape((t.shape[0],) + (1,) * (rank - 2))
        return front(t, b).reshape((t.shape[b], 1, t.shape[1 - b]) + (1,) * (rank - 2))

    if training or rmean is None:
        if training and rmean is not None and (mb is None or vb is None):
            raise inplace_error("batch_norm (running_mean/running_var update)", rmean.shape)
        dims = (1,) + tuple(range(3, rank + 1))
        mean = x.mean(dims, keepdim=True)
        var = dispatch(OPS["var"], (x, dims, 0, True))
        if training and rmean is not None:
            count = math.prod(x.shape[i] for i in dims)
            size = x.shape[0]
            with no_grad():
                m = mean.reshape(size, -1)
                v = var.reshape(size, -1) * (count / max(count - 1, 1))
                rm, rv = front(rmean, mb), front(rvar, vb)
                rm.mul_(1 - momentum).add_(m * momentum)
                rv.mul_(1 - momentum).add_(v * momentum)
    else:
        mean, var = per_channel(rmean, mb), per_channel(rvar, vb)
    out = (x - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * per_channel(weight, wb)
    if bias is not None:
        out = out + per_channel(bias, bb)
    return out, 0


def _embedding(args, bdims):
    if bdims[0] is not None:
        return NotImplemented  # a batched table: per sample
    return dispatch(OPS["embedding"], (args[0], front(args[1], bdims[1])) + tuple(args[2:])), 0


# -------------------------------------------------------------------------------------
# the table

_UNARY = (
    "abs", "acos", "asin", "atan", "bitwise_not", "ceil", "cos", "cosh", "exp", "exp2",
    "expm1", "floor", "log", "log10", "log1p", "log2", "logical_not", "neg", "reciprocal",
    "relu", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh",
    "trunc", "isnan", "isinf", "isfinite", "erf", "erfinv", "gelu", "silu", "log_sigmoid",
    "leaky_relu",
    "clone", "to_dtype", "alias", "detach",
)  # fmt: skip
_BINARY = (
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "floor_divide",
    "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
    "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "rsub", "gelu_backward", "div_rounding",
)  # fmt: skip
_INPLACE = (
    "abs_", "acos_", "asin_", "atan_", "bitwise_not_", "ceil_", "cos_", "cosh_", "exp_",
    "exp2_", "expm1_", "floor_", "log_", "log10_", "log1p_", "log2_", "logical_not_",
    "neg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sign_", "sin_",
    "sinh_", "sqrt_", "tan_", "tanh_", "trunc_", "silu_", "leaky_relu_", "zero_",
    "add_", "sub_", "mul_", "div_", "pow_", "remainder_", "floor_divide_", "atan2_",
    "bitwise_and_", "bitwise_or_", "bitwise_xor_", "copy_", "clamp_",
)  # fmt: skip


def _contiguous(args, bdims):
    return dispatch(OPS["contiguous"], (front(args[0], bdims[0]),)), 0


def _build():
    rules: dict = {}
    for name in _UNARY:
        rules[name] = unary(name)
    for name in _BINARY:
        rules[name] = pointwise(name)
    for name in _INPLACE:
        rules[name] = inplace(name)
    rules["where"] = pointwise("where", (1, 2))
    rules["clamp"] = pointwise("clamp")
    rules["masked_fill"] = _masked_fill
    rules["masked_fill_"] = _masked_fill_inplace
    rules["fill_"] = _fill
    rules["setitem_"] = _setitem
    rules["contiguous"] = _contiguous
    # reductions
    for name in ("sum", "mean", "prod", "amax", "amin", "logsumexp"):
        rules[name] = reduction(name)
    rules["count_nonzero"] = reduction("count_nonzero", keepdim_pos=None)
    rules["var"] = _var_std("var")
    rules["std"] = _var_std("std")
    rules["norm"] = _norm
    rules["max"] = _max_min("max")
    rules["min"] = _max_min("min")
    rules["argmax"] = _arg_extreme("argmax")
    rules["argmin"] = _arg_extreme("argmin")
    for name in ("softmax", "log_softmax", "cumsum"):
        rules[name] = along_dim(name)
    rules["sort"] = along_dim("sort", default=-1)
    rules["topk"] = along_dim("topk", dim_pos=2, default=-1)
    # shape ops
    rules["view"] = _view_like("view")
    rules["reshape"] = _view_like("reshape")
    rules["flatten"] = _flatten
    rules["permute"] = _permute
    rules["transpose"] = _transpose
    rules["t"] = _t
    rules["squeeze"] = _squeeze
    rules["unsqueeze"] = _unsqueeze
    rules["expand"] = _expand
    rules["expand_as"] = _expand_as
    rules["narrow"] = _dim_then("narrow")
    rules["select"] = _dim_then("select")
    rules["split"] = _dim_then("split", dim_pos=2)
    rules["chunk"] = _dim_then("chunk", dim_pos=2)
    rules["unbind"] = _dim_then("unbind")
    rules["index_select"] = _dim_then("index_select")
    rules["flip"] = _flip
    rules["repeat"] = _repeat
    rules["tril"] = _last_two("tril")
    rules["triu"] = _last_two("triu")
    rules["trace"] = _trace
    rules["cat"] = _cat
    rules["stack"] = _stack
    rules["gather"] = _gather
    rules["getitem"] = _getitem
    # matmul family
    for name in ("matmul", "mm", "bmm", "mv", "dot"):
        rules[name] = _matmul_rule
    rules["outer"] = _outer
    rules["addmm"] = _addmm
    # random
    rules["uniform_"] = _random_inplace("uniform_")
    rules["normal_"] = _random_inplace("normal_")
    rules["exponential_"] = _random_inplace("exponential_")
    rules["random_"] = _random_inplace("random_")
    rules["bernoulli_"] = _random_tensor_params("bernoulli_", inplace=True)
    for name in ("bernoulli", "multinomial", "normal"):
        rules[name] = _random_tensor_params(name, inplace=False)
    # nn
    rules["mse_loss"] = loss("mse_loss", (0, 1), 2)
    rules["huber_loss"] = loss("huber_loss", (0, 1), 2)
    rules["smooth_l1_loss"] = loss("smooth_l1_loss", (0, 1), 2)
    rules["binary_cross_entropy"] = loss("binary_cross_entropy", (0, 1, 2), 3)
    rules["binary_cross_entropy_with_logits"] = loss(
        "binary_cross_entropy_with_logits", (0, 1, 2, 3), 4
    )
    rules["nll_loss"] = _nll_loss
    rules["layer_norm"] = _layer_norm
    rules["batch_norm"] = _batch_norm
    rules["embedding"] = _embedding

    FALLBACK.update(
        {
            "diag": "it builds or reads a diagonal whose layout depends on the sample's rank "
            "and offset; rare inside vmap",
            "nll_loss2d": "the K-dim loss's weighted mean per sample; rare inside vmap",
            "embedding_renorm_": "it rewrites rows of the table in place, per sample",
            "_index_scatter": "graph-engine's internal scatter for backward formulas, which "
            "run on physical tensors (below vmap's layer)",
        }
    )
    for name, rule in rules.items():
        OPS[name].derivative.batch_rule = rule  # the op's one entry holds its rule


_build()
