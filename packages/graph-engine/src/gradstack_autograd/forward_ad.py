"""Forward-mode automatic differentiation: dual tensors that carry a tangent through ops.

The API of ``torch.autograd.forward_ad``: inside a :class:`dual_level`, :func:`make_dual`
attaches a tangent (a direction ``v``) to a tensor; every op on it computes the tangent of
its result with the op's forward formula (its ``@jvp`` row in ``derivatives``), so
after ``out = f(make_dual(x, v))``, :func:`unpack_dual` gives ``(f(x), J_f(x) @ v)``: a
Jacobian-vector product in one forward pass.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd.forward_ad as fwAD
>>> x = gt.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, gt.tensor([1.0, 1.0])).exp() * 2
...     primal, tangent = fwAD.unpack_dual(y)
>>> [round(v, 4) for v in tangent.tolist()]
[2.0, 5.4366]
>>> fwAD.unpack_dual(y).tangent is None    # tangents live only inside their level
True

Note [How tangents propagate]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
While a level is open, the autograd dispatch layer calls :func:`_on_op` after every op
(``_forward_ad_hooks._set_forward_ad_callback``) and hands in-place ops to :func:`_on_inplace_op`.
When an argument carries a tangent, the op's ``Derivative.jvp`` formula computes the
output's tangent from the arguments, the output and the input tangents.  Formulas are
written with gradstack ops and run with forward propagation switched off (a tangent has
no tangent of its own at the same level), but *with* the caller's grad mode: tangents are
recorded like any computation, so they can be differentiated backward (reverse-over-
forward), and backward formulas running on dual tensors propagate tangents
(forward-over-reverse: ``hvp``, a forward-mode outer jacobian for ``hessian``).

A tensor's tangents are stored on its ``_fw_grad`` slot as a tuple of ``(level,
tangent)`` pairs, one per open level that gave it one (Note [Nested levels]): a tangent
of a closed level is ignored wherever it is still referenced (a saved output's copy, Note
[Saved outputs keep their tangents]) and :func:`exit_dual_level` clears the tensors that
received one.

Note [Batched tangents]
~~~~~~~~~~~~~~~~~~~~~~~
:func:`make_batched_dual` (a gradstack extension) attaches a *batch* of tangents, one
extra leading dim: every formula keeps it (the ``lead`` argument), so one forward pass
computes ``J @ V`` for a whole matrix ``V`` of directions.  functional-api's forward-mode
``jacobian`` and ``hessian`` use it.

Levels: torch's public API opens one at a time (:func:`enter_dual_level` raises
torch's error when one is open); :class:`nested_dual_level` (a gradstack extension, used by
gradstack_functional's ``jvp``/``jacfwd``) opens more, as torch.func nests its jvp levels.
Limitations: an in-place op on a view updates the base's
tangent but not the tangents of *other* views of that base; a custom ``Function``'s
output carries the tangent its ``forward``'s own ops computed (no ``jvp`` method is used).
"""

from __future__ import annotations

import math
import weakref
from typing import NamedTuple

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor
from gradstack_tensor.extension import data_of as _data

from . import _forward_ad_hooks, _layer, _views
from .grad_mode import _DecoratorContextManager

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "nested_dual_level",
    "make_dual",
    "unpack_dual",
    "make_batched_dual",
]


class _Level:
    """An open forward-AD level: identity token for stored tangents, and who got one."""

    __slots__ = ("index", "tracked", "prune_at", "open")

    def __init__(self, index: int):
        self.index = index  # its position in the stack of open levels (torch's level index)
        # weakrefs to tensors that received a tangent in this level
        self.tracked: list[weakref.ref] = []
        self.prune_at = 1024
        self.open = True

    def __repr__(self):
        return f"<forward AD level {self.index}{'' if self.open else ' (closed)'}>"


# Note [Nested levels]
# The open levels, outermost first.  Only the first ``_visible`` of them propagate
# tangents: while the formula of level i computes a tangent, ``_visible`` is i, so the
# formula's own ops carry the tangents of the levels *outside* i (the outer level sees how
# the inner tangent was computed: jvp of jvp, jacfwd(jacfwd(f))) and ignore the tangents
# of level i and of the levels inside it.  Levels are handled outermost first, so an
# output already has its outer tangents when an inner formula reads it (exp's tangent
# ``out * t`` then carries the mixed term ``out' * t + out * t'``).  torch's public API
# (enter_dual_level, dual_level) opens one level at a time; nested_dual_level opens more
# (torch.func's jvp nests the same way through functorch's interpreter levels).
_stack: list = []
_visible = 0
_current: _Level | None = None  # the innermost open level
_ALIAS = OPS["alias"]


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)``, as returned by :func:`unpack_dual`."""

    primal: Tensor
    tangent: Tensor | None


# -------------------------------------------------------------------------------------
# levels


def _install(n: int) -> None:
    """Make the first ``n`` open levels propagate (the hooks are off when ``n`` is 0)."""
    global _visible
    _visible = n
    if n:
        _forward_ad_hooks._set_forward_ad_callback(_on_op, _on_inplace_op)
    else:
        _forward_ad_hooks._set_forward_ad_callback(None)


def _push() -> int:
    global _current
    if _visible != len(_stack):
        raise RuntimeError(
            "Cannot open a forward AD level while a forward formula runs (a tangent is being "
            "computed)."
        )
    _current = _Level(len(_stack))
    _stack.append(_current)
    _install(len(_stack))
    return _current.index


def enter_dual_level():
    """Open a forward-AD level (only one at a time, as in torch); returns its index, 0.

    Raises
    ------
    RuntimeError
        If a level is already open (:class:`nested_dual_level` opens more).
    """
    if _stack:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _push()


def exit_dual_level(*, level=None):
    """Close the innermost level: every tangent attached in it is dropped."""
    global _current
    if not _stack or (level is not None and level != _stack[-1].index):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    lvl = _stack.pop()
    lvl.open = False
    _current = _stack[-1] if _stack else None
    _install(len(_stack))
    for ref in lvl.tracked:
        t = ref()
        if t is not None and t._fw_grad is not None:
            t._fw_grad = _without(t._fw_grad, lvl)
    lvl.tracked.clear()


class dual_level(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Context manager (and decorator) in which forward-AD computations happen.

    ``with dual_level(): ...`` enters a level and exits it (dropping every tangent) at the
    end.  Only one level may be open at a time, as in torch (see :class:`nested_dual_level`).
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


class nested_dual_level(_DecoratorContextManager):  # noqa: N801 - like dual_level
    """A forward-AD level opened inside the open ones (a gradstack extension; torch.func's
    ``jvp`` nests levels the same way): ``with nested_dual_level() as level`` gives its
    index for ``make_dual(..., level=level)`` and ``unpack_dual(..., level=level)``.

    Tangents of this level are computed with ops that the outer levels differentiate
    (Note [Nested levels]), so a tangent's own tangent is a mixed second derivative.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([2.0])
    >>> with nested_dual_level() as outer:
    ...     xo = make_dual(x, gt.ones(1), level=outer)
    ...     with nested_dual_level() as inner:
    ...         y = make_dual(xo, gt.ones(1), level=inner) ** 3
    ...         dy = unpack_dual(y, level=inner).tangent            # 3 x^2, as a dual
    ...     unpack_dual(dy, level=outer).tangent.tolist()           # 6 x
    [12.0]
    """

    def __enter__(self):
        self.level = _push()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)


def _find_level(level, what) -> _Level:
    """The open level of index ``level`` (the innermost when None); torch's errors."""
    if not _stack:
        raise RuntimeError(
            f"Trying to {what} for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level is None:
        return _stack[-1]
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(_stack):
        raise RuntimeError(
            f"Trying to {what} at level {level}, but the open levels are "
            f"{list(range(len(_stack)))}."
        )
    return _stack[level]


# -------------------------------------------------------------------------------------
# dual tensors


def _tangent(t, lvl):
    fw = t._fw_grad
    if fw is not None:
        for pair in fw:
            if pair[0] is lvl:
                return pair[1]
    return None


def _without(fw, lvl):
    """The (level, tangent) pairs of ``fw`` without ``lvl``'s and closed levels' (None if
    none is left)."""
    kept = tuple(p for p in fw if p[0] is not lvl and p[0].open)
    return kept or None


def _set_tangent(t, tangent, lvl):
    fw = t._fw_grad
    if fw is None:
        t._fw_grad = ((lvl, tangent),)
    else:
        t._fw_grad = (_without(fw, lvl) or ()) + ((lvl, tangent),)
    tracked = lvl.tracked
    tracked.append(weakref.ref(t))
    if len(tracked) > lvl.prune_at:
        tracked[:] = [r for r in tracked if r() is not None]
        lvl.prune_at = max(1024, 2 * len(tracked))


def _drop_tangent(t, lvl):
    if t._fw_grad is not None:
        t._fw_grad = _without(t._fw_grad, lvl)


def _alias_without(tensor, lvl):
    """A differentiable alias of ``tensor`` (reverse mode) that carries the tangents of
    every open level but ``lvl``."""
    fw = tensor._fw_grad
    if fw is None or all(p[0] is lvl or not p[0].open for p in fw):
        _forward_ad_hooks._set_forward_ad_callback(None)  # nothing to carry: skip propagation
        try:
            return gt.dispatch(_ALIAS, (tensor,))
        finally:
            _install(_visible)
    out = gt.dispatch(_ALIAS, (tensor,))
    _drop_tangent(out, lvl)
    return out


def _check_dual_args(tensor, tangent, batched, lvl):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual expects a Tensor as primal, got {type(tensor).__name__}")
    if not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual expects a Tensor as tangent, got {type(tangent).__name__}")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    want = tuple(tensor.shape)
    got = tuple(tangent.shape)[1:] if batched else tuple(tangent.shape)
    if got != want or (batched and tangent.dim() == 0):
        if batched:
            raise RuntimeError(
                f"make_batched_dual: the tangents must have shape [batch] + {list(want)} (one "
                f"tangent per row), but got {list(tangent.shape)}."
            )
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(want)} while the "
            f"given forward gradient is of size {list(tangent.shape)}."
        )
    if _tangent(tensor, lvl) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {lvl.index} is not supported."
        )


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor`` that carries ``tangent`` as its forward gradient.

    Differentiable backward with respect to ``tensor`` (the result is a view of it); the
    tangent is attached as is (cast to ``tensor``'s dtype if needed), so its own graph is
    kept.  ``level`` is the index of an open level (the innermost when None); the
    tangents ``tensor`` has at other levels are kept.

    Parameters
    ----------
    tensor : Tensor
        The primal, floating point.
    tangent : Tensor
        Same shape as ``tensor``.

    Examples
    --------
    >>> import gradstack_tensor as gt, gradstack_autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(gt.tensor([2.0]), gt.tensor([1.0]))
    ...     fwAD.unpack_dual(d * d).tangent.tolist()
    [4.0]
    """
    lvl = _find_level(level, "create a dual Tensor")
    _check_dual_args(tensor, tangent, False, lvl)
    return _make(tensor, tangent, lvl)


def make_batched_dual(tensor, tangents, *, level=None):
    """Like :func:`make_dual` with a batch of tangents: shape ``(batch,) + tensor.shape``.

    Every op then propagates all ``batch`` directions at once (Note [Batched tangents]);
    :func:`unpack_dual` returns the batch of output tangents.  A gradstack extension
    (torch gets the same with ``vmap``).
    """
    lvl = _find_level(level, "create a dual Tensor")
    _check_dual_args(tensor, tangents, True, lvl)
    return _make(tensor, tangents, lvl)


def _make(tensor, tangent, lvl):
    out = _alias_without(tensor, lvl)
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    _set_tangent(out, tangent, lvl)
    return out


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a dual tensor; ``(tensor, None)`` for a tensor without one.

    ``primal`` is a view of ``tensor`` without the tangent (differentiable backward; it
    keeps the tangents of other open levels), ``tangent`` the tangent as is (None outside a
    level).  ``level`` is the index of an open level (the innermost when None).
    """
    if not _stack or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    lvl = _find_level(level, "unpack a dual Tensor")
    t = _tangent(tensor, lvl)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias_without(tensor, lvl), t)


# -------------------------------------------------------------------------------------
# propagation (Note [How tangents propagate])


def _has_tangent(args, lvl):
    for a in args:
        if isinstance(a, Tensor):
            if a._fw_grad is not None and _tangent(a, lvl) is not None:
                return True
        elif isinstance(a, (list, tuple)):
            for x in a:
                if (
                    isinstance(x, Tensor)
                    and x._fw_grad is not None
                    and _tangent(x, lvl) is not None
                ):
                    return True
    return False


def _inputs_of(d, args):
    """The op's differentiable arguments, in the order of the formula's tangents."""
    if d.list_input:
        return tuple(args[d.inputs[0]])
    n = len(args)
    return tuple(args[i] if i < n else None for i in d.inputs)


def _tangents_of(primals, lvl):
    """The tangent of each primal (None when it has none) and the batch prefix ``lead``."""
    tangents = []
    lead = None
    for p in primals:
        t = _tangent(p, lvl) if isinstance(p, Tensor) else None
        if t is not None and lead is None:
            lead = tuple(t.shape[: t.dim() - p.dim()])
        tangents.append(t)
    return tuple(tangents), lead


def _missing_formula(op, why):
    return NotImplementedError(
        f"Trying to use forward AD with {op.name} that does not support it: {why}. Add a "
        "formula (a @jvp row in gradstack_autograd.derivatives), or compute this part outside "
        "the dual level."
    )


def _fit(r, lead, out):
    """The formula's result as the tangent of ``out``: shape ``lead + out.shape``, its dtype."""
    want = lead + tuple(out.shape)
    if tuple(r.shape) != want:
        nl = len(lead)
        missing = len(want) - r.dim()
        if missing > 0:
            r = r.reshape(tuple(r.shape[:nl]) + (1,) * missing + tuple(r.shape[nl:]))
        r = r.expand(want)
    if r.dtype != out.dtype:
        # (a complex tangent of a real output keeps its real part: torch's handle_r_to_c)
        r = (r.real if r.is_complex() and not out.is_complex() else r).to(out.dtype)
    return r


def _outputs_with_tangents(out, r, lead):
    """Pair each float output with its fitted tangent (None where the formula gave none)."""
    if isinstance(out, Tensor):
        if r is not None and (out.is_floating_point() or out.is_complex()):
            return ((out, _fit(r, lead, out)),)
        return ()
    pairs = []
    for o, t in zip(out, r):
        if t is not None and isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex()):
            pairs.append((o, _fit(t, lead, o)))
    return tuple(pairs)


def _on_op(op, args, out):
    # Note [Nested levels]: the visible levels, outermost first
    for i in range(_visible):
        lvl = _stack[i]
        if _has_tangent(args, lvl):
            _propagate(op, args, out, i, lvl)


def _propagate(op, args, out, i, lvl):
    """Set the tangent of level ``lvl`` (``_stack[i]``) on the op's outputs."""
    d = op.derivative
    if d is None:
        raise _missing_formula(op, "the op has no derivative-table entry")
    if not d.differentiable:
        return
    primals = _inputs_of(d, args)
    tangents, lead = _tangents_of(primals, lvl)
    if lead is None:
        return  # the tangents sit on non-differentiable arguments
    fn = d.jvp
    if fn is None:
        raise _missing_formula(op, "it has no forward (jvp) formula")
    visible = _visible
    _install(i)  # the formula's ops carry the outer levels' tangents only
    try:
        pairs = _outputs_with_tangents(out, fn(args, out, tangents, lead), lead)
    finally:
        _install(visible)
    for o, t in pairs:
        _set_tangent(o, t, lvl)


def _on_inplace_op(op, args, next_index):
    visible = _visible
    levels = [(i, _stack[i]) for i in range(visible) if _has_tangent(args, _stack[i])]
    if not levels:
        return _layer._run_inplace(op, args, next_index)
    d = op.derivative
    self_t = args[0]
    if d is None:
        raise _missing_formula(op, "the op has no derivative-table entry")
    if not d.differentiable:
        out = _layer._run_inplace(op, args, next_index)
        self_t._fw_grad = None  # a non-differentiable write: no tangent is defined
        return out
    fn = d.jvp
    if fn is None:
        raise _missing_formula(op, "it has no forward (jvp) formula")
    inputs = _inputs_of(d, args)
    before = [_tangents_of(inputs, lvl) for _, lvl in levels]  # tangents before the write
    base = self_t._base
    # the formulas see self before the write; level i's formula reads its outer tangents
    # (Note [Nested levels]), so the copy carries them (none for the outermost level)
    _install(levels[-1][0])
    try:
        old = self_t.clone()
    finally:
        _install(visible)
    # with propagation on: the value the backward formula saves (a clone of self before
    # the write) must keep its tangent, for forward-over-reverse
    out = _layer._run_inplace(op, args, next_index)
    for (i, lvl), (tangents, lead) in zip(levels, before):
        base_tangent = _tangent(base, lvl) if base is not None else None
        _install(i)
        try:
            if lead is None:  # tangents only on non-differentiable args
                new = None
            else:
                r = fn((old,) + tuple(args[1:]), self_t, tangents, lead)
                new = _fit(r, lead, self_t) if r is not None else None
            if base is not None and (new is not None or base_tangent is not None):
                new_base = _base_tangent_after_write(
                    base, self_t, base_tangent, new, lead if lead is not None else ()
                )
            else:
                new_base = None
        finally:
            _install(visible)
        if new is None:
            _drop_tangent(self_t, lvl)
        else:
            _set_tangent(self_t, new, lvl)
            _forward_ad_hooks._share_tangent_py(self_t)  # Note [Saved outputs keep their tangents]
        if new_base is not None:
            _set_tangent(base, new_base, lvl)
    return out


def _base_tangent_after_write(base, view, base_tangent, view_tangent, lead):
    """The base's tangent after an in-place op wrote through ``view``: the view's elements
    take the view's new tangent, the others keep the base's (zero if it had none)."""
    bd, vd = _data(base), _data(view)
    offset = vd.__array_interface__["data"][0] - bd.__array_interface__["data"][0]
    pos = _views.view_positions(bd.shape, bd.strides, vd.shape, vd.strides, offset).reshape(-1)
    n = math.prod(bd.shape)
    mask = np.ones(n, dtype=bool)
    mask[pos] = False
    b = math.prod(lead)
    if base_tangent is None:
        kept = gt.zeros((b, n) if lead else (n,), dtype=base.dtype)
    else:
        kept = base_tangent.reshape((b, n) if lead else (n,)) * gt.from_numpy(mask)
    if view_tangent is None:
        written = None
    else:
        from .derivatives import index_scatter

        flat = view_tangent.reshape((b, -1) if lead else (-1,))
        key = (slice(None), pos) if lead else pos
        written = index_scatter(flat, key, (b, n) if lead else (n,))
    r = kept if written is None else kept + written
    return r.reshape(lead + tuple(base.shape))


from . import derivatives as _derivatives  # noqa: E402, F401 - fills Derivative.jvp
