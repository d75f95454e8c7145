"""vmap's layer on the dispatch point: ops on batched tensors run their batching rule.

While a ``vmap`` runs, :class:`BatchingLayer` sits on tensor-core's dispatch point above
every other layer (autograd at 100, the profiler at 1000).  An op whose arguments hold no
:class:`~gradstack_functional.batched_tensor.BatchedTensor` passes straight through.
Otherwise the layer takes the highest vmap level among the arguments, replaces each
tensor batched at that level by its physical value, and runs the op's rule (the
``batch_rule`` of its entry in graph-engine's derivative table, given by the op's row;
``gradstack_autograd.derivatives.batching``) on them; the rule's ops go through the dispatch
point again, so
lower levels, autograd and the profiler see physical tensors.  The result is wrapped at
the same level.  An op without a rule (or whose rule declines the arguments) runs once
per sample: a loop over the batch that stacks the results, with a one-time performance
warning naming the op, as torch warns.

Note [Layer above autograd]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
The autograd layer records nodes and saves tensors by their numpy storage; a batched
tensor has none (Note [Logical shape without storage]).  So vmap's layer is outermost:
autograd only ever records the physical ops of batching rules, and the transforms
(``grad``, ``vjp`` ...) differentiate physical graphs (Note [Transforms on physical
tensors] in ``eager_transforms``).

Note [Random draws under vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
tensor-core tells an observer of every random draw (``extension.set_draw_observer``).
While a vmap with ``randomness="error"`` is open, a draw raises torch's error.  The rules
of ``uniform_``/``normal_`` draw per sample ("different") or once for all samples
("same") themselves.  The factories ask :class:`FactoryBatcher` (tensor-core's Note
[Factories under vmap]): under "different", ``randn(3)`` draws ``randn(B, 3)`` (one batch
dim per such vmap level, outermost first) and returns it batched, and ``rand_like(x)`` of
a batched ``x`` draws on ``x``'s physical tensor, torch's numbers in both cases.  Under
"same" a factory draws one sample's values, unbatched.  ``zeros_like(x)`` and the other
``*_like`` factories of a batched ``x`` are batched like ``x`` in every mode (so that
``zeros_like(x).copy_(x)`` works, as in torch).
"""

from __future__ import annotations

import threading
import warnings

from gradstack_autograd.derivatives import batching as _rules
from gradstack_tensor import DispatchLayer, register_layer, unregister_layer
from gradstack_tensor.extension import dispatch, set_draw_observer, set_factory_batcher

from . import _levels
from .batched_tensor import BatchedTensor, flatten_levels, make_batched, nest

__all__ = [
    "BatchingLayer",
    "FactoryBatcher",
    "LAYER_PRIORITY",
    "active",
    "draws_checked",
    "warned_ops",
]

LAYER_PRIORITY = 2000

DYNAMIC_SHAPE_ERROR = (
    "vmap: We do not support batching operators that can output dynamic shape. Attempted "
    "to vmap over {op}. Please file an issue at https://github.com/pytorch/pytorch/issues "
    "if you need this feature."
)

warned_ops: set = set()


def _max_level(args) -> int:
    best = -1
    for a in args:
        if type(a) is BatchedTensor:
            if a._gs_level > best:
                best = a._gs_level
        elif type(a) is tuple or type(a) is list:
            for b in a:
                if type(b) is BatchedTensor and b._gs_level > best:
                    best = b._gs_level
    return best


def _unwrap_args(args, level):
    """The arguments with tensors batched at ``level`` replaced by their values, and the
    batch dims (``gradstack_autograd.derivatives.batching``: the shape of a rule)."""
    values, bdims = [], []
    for a in args:
        if type(a) is BatchedTensor and a._gs_level == level:
            values.append(a._gs_value)
            bdims.append(a._gs_bdim)
        elif type(a) is tuple or type(a) is list:
            vs, bs, any_b = [], [], False
            for b in a:
                if type(b) is BatchedTensor and b._gs_level == level:
                    vs.append(b._gs_value)
                    bs.append(b._gs_bdim)
                    any_b = True
                else:
                    vs.append(b)
                    bs.append(None)
            values.append(type(a)(vs) if any_b else a)
            bdims.append(tuple(bs) if any_b else None)
        else:
            values.append(a)
            bdims.append(None)
    return tuple(values), tuple(bdims)


def _wrap(out, out_bdims, level):
    if out is None:
        return None
    if isinstance(out, tuple):
        bdims = out_bdims if isinstance(out_bdims, tuple) else (out_bdims,) * len(out)
        items = [_wrap(o, b, level) for o, b in zip(out, bdims)]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    if out_bdims is None:
        return out
    return make_batched(out, out_bdims, level)


class BatchingLayer(DispatchLayer):
    """The dispatch layer of vmap (module docstring)."""

    def handle(self, op, args, next_index):
        level = _max_level(args)
        if level < 0:
            return self.call_next(op, args, next_index)
        return batched_call(op, args, level)


def batched_call(op, args, level):
    """Run ``op`` on ``args`` whose highest vmap level is ``level``."""
    values, bdims = _unwrap_args(args, level)
    d = op.derivative  # the op's entry in graph-engine's table holds its batching rule
    rule = None if d is None else d.batch_rule
    lv = _levels.find(level)
    _rules.LEVELS.append(lv)
    try:
        result = NotImplemented if rule is None else rule(values, bdims)
        if result is NotImplemented:
            if op.name not in warned_ops:
                warned_ops.add(op.name)
                reason = _rules.FALLBACK.get(op.name)
                warnings.warn(
                    f"There is a performance drop because we have not yet implemented the "
                    f"batching rule for {op.name}"
                    + (f" ({reason})" if reason else " for these arguments")
                    + ". vmap runs it once per sample and stacks the results.",
                    UserWarning,
                    stacklevel=4,
                )
            result = _loop(op, values, bdims)
    finally:
        _rules.LEVELS.pop()
    out, out_bdims = result
    if op.inplace:
        return args[0]
    return _wrap(out, out_bdims, level)


def _select(value, bdim, i):
    if bdim is None:
        return value
    if isinstance(bdim, tuple):
        return type(value)(_select(v, b, i) for v, b in zip(value, bdim))
    return value.select(bdim, i)


def _loop(op, values, bdims):
    """The op once per sample, results stacked along dim 0 (torch's fallback)."""
    size = _rules.batch_size(values, bdims)
    if op.inplace and bdims[0] is None:
        raise _rules.inplace_error(op.name, values[0].shape)
    outs = [
        dispatch(op, tuple(_select(v, b, i) for v, b in zip(values, bdims))) for i in range(size)
    ]
    if op.inplace:
        return values[0], bdims[0]
    if size == 0:
        raise RuntimeError(f"vmap: cannot run {op.name} once per sample over an empty batch")
    return _stack(op, outs), 0


def _stack(op, outs):
    first = outs[0]
    if isinstance(first, tuple):
        parts = [_stack(op, [o[k] for o in outs]) for k in range(len(first))]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)
    if first is None:
        return None
    shape = tuple(first.shape)
    if any(tuple(o.shape) != shape for o in outs):
        raise RuntimeError(DYNAMIC_SHAPE_ERROR.format(op=op.name))
    from gradstack_tensor import stack

    return stack(outs, 0)


# -------------------------------------------------------------------------------------
# registration while a vmap is open (in any thread)

_LAYER = BatchingLayer(LAYER_PRIORITY)
_lock = threading.Lock()
_open = 0


def _on_draw(generator):
    """The draw observer (Note [Random draws under vmap])."""
    levels = _levels.random_levels()
    if not levels:
        return
    if any(lv.randomness == "error" for lv in levels):
        raise RuntimeError(_rules.RANDOM_ERROR)
    if _rules.drawing.depth == 0 and any(lv.randomness == "different" for lv in levels):
        raise RuntimeError(
            "vmap(randomness='different'): this random call would make a tensor without a "
            "batch dim, the same for every sample (a factory with out=, or a random draw "
            "under jacfwd(randomness='different')); draw the batch outside and pass it "
            "in, or use randomness='same'."
        )


_RANDOM_LIKE = frozenset({"rand_like", "randn_like", "randint_like"})


class FactoryBatcher:
    """Batches tensor-core's factory calls under vmap (Note [Random draws under vmap]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_functional.func import vmap
    >>> _ = gt.manual_seed(0)
    >>> vmap(lambda x: x + gt.randn(2), randomness="different")(gt.zeros(3, 2)).shape
    gradstack.Size([3, 2])
    """

    def draw_sizes(self, name):
        """``(sizes, wrap)`` for a factory's draw under vmap(randomness="different"), or None
        (no such vmap here, or a level that refuses draws: the draw observer raises)."""
        levels = _levels.random_levels()
        if not levels or any(lv.randomness == "error" for lv in levels):
            return None
        if any(lv.kind != "vmap" and lv.randomness == "different" for lv in levels):
            return None
        different = [lv for lv in levels if lv.randomness == "different"]
        if not different:
            return None
        dims = {lv.number: i for i, lv in enumerate(different)}  # outermost first
        return tuple(lv.batch_size for lv in different), lambda t: nest(t, dims)

    def like(self, fn, input, args, kwargs):
        """``fn(input, ...)``, a ``*_like`` factory, on a batched ``input``: run on the
        physical tensor (its layout, so random values land as torch's do) and batched like
        ``input``; NotImplemented for a plain ``input`` or a "same"/"error" draw."""
        if type(input) is not BatchedTensor:
            return NotImplemented
        phys, dims = flatten_levels(input)
        if fn.__name__ not in _RANDOM_LIKE:
            return nest(fn(phys, *args, **kwargs), dims)
        levels = _levels.random_levels()
        different = {lv.number for lv in levels if lv.randomness == "different"}
        if any(lv.randomness == "error" for lv in levels):
            return NotImplemented  # the draw observer refuses the draw
        if any(lv.kind != "vmap" for lv in levels if lv.number in different):
            return NotImplemented  # jacfwd(randomness="different"): the observer refuses it
        if not different:
            # "same": one sample's draw, unbatched, laid out as a sample of the physical
            # tensor (torch fills a logical tensor's memory order)
            if any(phys.shape[d] == 0 for d in dims.values()):
                return NotImplemented  # no sample to take the layout of: the logical one
            sample = phys
            for d in sorted(dims.values(), reverse=True):
                sample = sample.select(d, 0)
            return fn(sample, *args, **kwargs)
        if different != set(dims):
            raise RuntimeError(
                f"vmap(randomness='different'): {fn.__name__} of a tensor that is not batched "
                "at exactly the vmap levels with randomness='different' is not supported; "
                "use the factory without _like (it is batched at every such level), e.g. "
                "torch.rand(x.shape)"
            )
        with _rules.drawing():
            return nest(fn(phys, *args, **kwargs), dims)


def _observe_draws() -> None:
    """Install the draw observer for one more user (under ``_lock``)."""
    global _observers, _saved_observer
    if _observers == 0:
        _saved_observer = set_draw_observer(_on_draw)
    _observers += 1


def _unobserve_draws() -> None:
    """One user fewer; the last one restores the observer found before (under ``_lock``)."""
    global _observers
    _observers -= 1
    if _observers == 0:
        set_draw_observer(_saved_observer)


_observers = 0  # open vmaps and jacfwds (in any thread) that need the draw observer
_saved_observer = None  # the observer that was installed before the first of them


class active:
    """Context manager: the layer, the draw observer and the factory batcher are installed
    while any vmap is open (in any thread; an op without batched arguments passes through
    the layer, a factory outside a vmap of its own thread is not batched)."""

    def __enter__(self):
        global _open, _saved_batcher
        with _lock:
            if _open == 0:
                register_layer(_LAYER)
                _saved_batcher = set_factory_batcher(_BATCHER)
            _open += 1
            _observe_draws()
        return self

    def __exit__(self, *exc):
        global _open
        with _lock:
            _open -= 1
            if _open == 0:
                unregister_layer(_LAYER)
                set_factory_batcher(_saved_batcher)
            _unobserve_draws()


_BATCHER = FactoryBatcher()
_saved_batcher = None  # the batcher that was installed before the first open vmap


class draws_checked:
    """Context manager: only the draw observer, for a transform whose randomness flag
    rules draws but that batches nothing itself (jacfwd: Note [jacfwd by batched
    tangents] in eager_transforms)."""

    def __enter__(self):
        with _lock:
            _observe_draws()
        return self

    def __exit__(self, *exc):
        with _lock:
            _unobserve_draws()
