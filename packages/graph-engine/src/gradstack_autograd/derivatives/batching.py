"""vmap's batching rules: how each op of the tensor library runs on a whole batch at once.

Each rule is stored in its op's entry of the derivative table (``entry(name).batch_rule``),
given by the op's row (``register(..., batch=...)``) in the family module that holds the
op's backward and forward formulas: functional-api's vmap reads it from there.  This
module holds what the rows use: the *kinds* of rule (elementwise, reductions ...), the
helpers on physical values, and what vmap's layer reads (``LEVELS``, ``drawing``,
``FALLBACK``, the errors).  The rules live in graph-engine because they
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
runs once per sample.

Note [A batching rule per entry]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An op's row names its rule with ``batch=``, one of:

- a rule written for that op (``_permute_rule`` in ``views``), defined right above the
  row;
- a :class:`RuleKind`: a factory of rules shared by a kind of op (:func:`unary`,
  :func:`pointwise`, :func:`reduction` ...), which the row binds to the op's name;
  ``reduction(keepdim_pos=None)`` is the kind with an option set;
- ``per_sample(reason)``: no rule; vmap runs the op once per sample, warning once, and
  the reason is listed in :data:`FALLBACK`.

The in-place variant that a row also registers (``sin_`` for ``sin``) takes the
:func:`inplace` kind unless the row says otherwise (``batch_inplace=``).

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
>>> from gradstack_autograd.derivatives.batching import rule_of
>>> out, bdim = rule_of("sum")((x, (0,), False, None), (0, None, None, None))
>>> out.tolist(), bdim                            # sample-wise sums of dim 0
([3.0, 12.0], 0)
"""

from __future__ import annotations

import functools

import numpy as np
from gradstack_tensor import OPS, Tensor, dtypes
from gradstack_tensor.extension import dispatch

__all__ = [
    "FALLBACK",
    "INPLACE_ERROR",
    "LEVELS",
    "RANDOM_ERROR",
    "SAME_RANDOMNESS_ERROR",
    "PerSample",
    "RuleKind",
    "aligned",
    "along_dim",
    "arg_extreme",
    "batch_size",
    "dim_error",
    "dim_then",
    "drawing",
    "front",
    "inplace",
    "inplace_error",
    "kind",
    "last_two",
    "max_min",
    "pad",
    "per_sample",
    "phys",
    "pointwise",
    "reduction",
    "rule_of",
    "unary",
    "var_std",
    "view_like",
    "wrap_dim",
]


# -------------------------------------------------------------------------------------
# how a row names its rule


class RuleKind:
    """A kind of batching rule: ``factory(op_name, **options) -> rule``.

    Calling the kind with an op name builds that op's rule now (``pointwise("where",
    (1, 2))``); calling it with options only gives the kind with those options set
    (``reduction(keepdim_pos=None)``), which a row of the table binds to its op's name
    (Note [A batching rule per entry]).
    """

    def __init__(self, factory, options=None):
        self.factory = factory
        self.options = dict(options or {})
        functools.update_wrapper(self, factory)

    def __call__(self, *args, **options):
        if args:
            return self.factory(*args, **{**self.options, **options})
        return RuleKind(self.factory, {**self.options, **options})

    def bind(self, op_name: str):
        """The rule of ``op_name``."""
        return self.factory(op_name, **self.options)

    def __repr__(self):
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<batching rule kind {self.factory.__name__}({opts})>"


def kind(factory) -> RuleKind:
    """Decorator making a rule factory ``factory(op_name, ...)`` a :class:`RuleKind`."""
    return RuleKind(factory)


class PerSample:
    """``batch=per_sample(reason)``: the op has no rule and runs once per sample."""

    def __init__(self, reason: str):
        if not isinstance(reason, str) or not reason:
            raise ValueError("per_sample needs the reason the op has no batching rule")
        self.reason = reason


def per_sample(reason: str) -> PerSample:
    """The op runs once per sample under vmap, for ``reason`` (listed in ``FALLBACK``)."""
    return PerSample(reason)


# -------------------------------------------------------------------------------------
# what vmap's layer reads: fallbacks, errors, levels


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


SAME_RANDOMNESS_ERROR = (
    "Vmap does not currently support same randomness with a batched tensor input. Please "
    "file an issue with functorch"
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


LEVELS: list = []


def rule_of(op_name: str):
    """The batching rule of ``op_name`` (from its entry), or None when it has none."""
    d = OPS[op_name].derivative
    return None if d is None else d.batch_rule


class drawing:
    """Marks the random draws a rule makes itself (the draw observer lets them through)."""

    depth = 0

    def __enter__(self):
        drawing.depth += 1

    def __exit__(self, *exc):
        drawing.depth -= 1


# -------------------------------------------------------------------------------------
# elementwise kinds


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


@kind
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


@kind
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


@kind
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


@kind
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


def _dim_shifted(op, args, x, dim_pos, default):
    """``op`` on ``args`` with ``x`` (the batch dim first) as the input and the dim at
    ``dim_pos`` (``default`` where it is left out) shifted past the batch dim."""
    new = list(args) + [default] * (dim_pos + 1 - len(args))
    new[0] = x
    new[dim_pos] = phys(new[dim_pos], x.dim() - 1)
    return dispatch(op, tuple(new))


@kind
def along_dim(name: str, dim_pos: int = 1, default=None):
    """Rule of an op along one dim (softmax, cumsum, sort ...); outputs keep the batch
    first (tuples too)."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(b is not None for b in bdims[1:]):
            return NotImplemented
        x = front(args[0], bdims[0])
        if x.dim() == 1:
            return NotImplemented
        return _dim_shifted(op, args, x, dim_pos, default), 0

    rule.__name__ = f"along_dim_{name}"
    return rule


@kind
def max_min(name: str):
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


@kind
def arg_extreme(name: str):
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


@kind
def var_std(name: str):
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


@kind
def view_like(name: str):
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


@kind
def dim_then(name: str, dim_pos: int = 1, default=0):
    """Ops whose one ``dim`` argument shifts and whose outputs (views, tuples of views)
    keep the batch first: narrow, select, split, chunk, unbind, index_select ..."""
    op = OPS[name]

    def rule(args, bdims):
        if bdims[0] is None or any(
            b is not None for i, b in enumerate(bdims) if i != 0 and not isinstance(b, tuple)
        ):
            return NotImplemented
        return _dim_shifted(op, args, front(args[0], bdims[0]), dim_pos, default), 0

    rule.__name__ = f"dim_{name}"
    return rule


@kind
def last_two(name: str):
    """tril/triu: they act on the last two dims, which the leading batch dim leaves alone."""
    op = OPS[name]

    def rule(args, bdims):
        x = front(args[0], bdims[0])
        if x.dim() - 1 < 2:
            return NotImplemented  # the kernel's error, per sample
        return dispatch(op, (x,) + tuple(args[1:])), 0

    return rule


# -------------------------------------------------------------------------------------
# sequences and indices


def _all_batched(values, bdims, size):
    """Each value batch-first; unbatched ones expanded to the batch (a view)."""
    out = []
    for v, b in zip(values, bdims):
        if b is None:
            out.append(v.unsqueeze(0).expand((size,) + tuple(v.shape)))
        else:
            out.append(front(v, b))
    return out


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


# -------------------------------------------------------------------------------------
# random ops (vmap's randomness flag)


@kind
def random_inplace(name: str):
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


@kind
def random_tensor_params(name: str, inplace: bool):
    """The random ops with tensor parameters (``bernoulli(p)``, ``bernoulli_(p_tensor)``,
    ``multinomial``, ``normal(mean, std)``): "error" refuses; "same" refuses a batched
    parameter (torch's error: one draw cannot follow per-sample parameters) and fills a
    batched ``self`` with one sample's draw; "different"
    runs the op once on the whole batch, batch dim first and contiguous, which draws
    torch's values after the same seed.  In-place fills with number parameters use
    :func:`random_inplace`."""
    fill = random_inplace(name) if inplace else None
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
