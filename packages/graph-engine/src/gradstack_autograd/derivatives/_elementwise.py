"""``elementwise``: the row of a pointwise op, its derivative written once.

Note [A pointwise derivative is written once]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The derivative of a pointwise op of real tensors is diagonal: each input's gradient is the
incoming gradient times a local derivative, ``grad * d(x)``, element by element.  So one
formula per input says everything, written as torch's derivatives.yaml writes it, as a
function of the incoming gradient and the saved values by name::

    @elementwise("cosh(self)", "CoshBackward0", keeps_zero="self")
    def _cosh(grad, self):
        return grad * self.sinh()

and the rest follows, as torch's ``auto_element_wise`` derives it:

- the backward formula applies it to ``grad`` (for each input whose gradient is wanted);
- the forward formula (JVP) applies it to each input's tangent and adds them up: the
  map ``g -> g * d`` is its own transpose, so ``t * d`` is the tangent;
- the saved values are the formulas' parameters (``"result"`` is the op's output), each
  saved only when a gradient that reads it is wanted (``save_for``);
- vmap's batching rule is the kind of the op: ``unary`` for an op of one argument,
  ``pointwise`` otherwise.

The formula is the map ``g -> g * d`` rather than ``d`` alone because torch's formulas
group their products and quotients in a given order, and the values must be torch's to the
bit: ``grad / x`` (log) rounds differently from ``grad * (1 / x)``; written as a map, the
backward keeps torch's grouping and the JVP becomes torch's ``auto_element_wise`` one.
A formula must therefore be linear in ``grad``.  An op with several inputs gives one
formula per input by keyword, as derivatives.yaml's lines::

    elementwise(
        "fmod(self, other)", _fmod_name,
        self=lambda grad: grad,
        other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"),
    )

The row takes ``register``'s options that concern the node (``keeps_zero``, ``extra``,
``byproduct``, ``inplace_variant``) and, for a first-order fast path, ``fused`` (the
kernel runs on ``grad`` and the saved values, in the formula's order, when it may: Note
[Native first-order formulas]) and ``shortcut`` (``shortcut(ctx, grad, *values)``, tried
first: sin's and cos's kept other function, Note [sin and cos keep each other]).
"""

from __future__ import annotations

import inspect

from . import _wirtinger
from ._table import _parse_signature, jvp, register
from ._tangents import _pad, _tangent_sum
from .batching import pointwise, unary

__all__ = ["ROWS", "elementwise"]

# the pointwise rows: op name -> the forward formula made from its local derivatives
ROWS: dict = {}


def _saved_names(formula) -> tuple[str, ...]:
    """The names a formula reads: its parameters after the gradient."""
    params = list(inspect.signature(formula).parameters)
    if not params:
        raise ValueError(f"{formula!r}: a pointwise formula takes the gradient first")
    return tuple(params[1:])


def elementwise(
    op,
    node,
    *,
    keeps_zero=None,
    fused=None,
    shortcut=None,
    extra=None,
    byproduct=False,
    inplace_variant=True,
    batch=None,
    holomorphic=True,
    **formulas,
):
    """The row of the pointwise op ``op`` from its local derivatives (Note [A pointwise
    derivative is written once]): ``elementwise(op, node, input=formula, ...)``, or a
    decorator over the formula of a one-input op.

    Parameters
    ----------
    op, node : str
        As ``register``: ``"atan2(self, other)"`` and torch's node name (or a function of
        the op's arguments).
    **formulas : callable
        By input name, ``formula(grad, *saved) -> gradient``, linear in ``grad``; its
        parameters after ``grad`` name the values it reads (arguments of the op, or
        ``result``).
    keeps_zero, extra, byproduct, inplace_variant, batch
        As ``register`` (``batch`` defaults to ``unary`` for an op of one argument, else
        ``pointwise``).
    fused : str, optional
        The kernel that may replace the first-order formula of a one-input op.
    shortcut : callable, optional
        ``shortcut(ctx, grad, *values) -> gradient or None``, tried before ``fused``.
    holomorphic : bool
        The formulas are ``grad * f'(z)`` of a holomorphic function, and a complex
        gradient is ``conj(formula(conj(grad)))`` (Note [The conjugate Wirtinger
        gradient] in ``_wirtinger``); False for a formula already in torch's convention.
    """
    options = dict(
        keeps_zero=keeps_zero,
        fused=fused,
        shortcut=shortcut,
        extra=extra,
        byproduct=byproduct,
        inplace=inplace_variant,
        batch=batch,
        holomorphic=holomorphic,
    )
    if formulas:
        _row(op, node, formulas, **options)
        return None

    def deco(formula):
        _row(op, node, {_parse_signature(op)[1][0]: formula}, **options)
        return formula

    return deco


def _row(
    op,
    node,
    formulas,
    *,
    keeps_zero,
    fused,
    shortcut,
    extra,
    byproduct,
    inplace,
    batch,
    holomorphic,
):
    name, signature = _parse_signature(op)
    unknown = set(formulas) - set(signature)
    if unknown:
        raise ValueError(f"elementwise({op!r}): {sorted(unknown)} are not arguments")
    inputs = tuple(n for n in signature if n in formulas)
    reads = {i: _saved_names(formulas[i]) for i in inputs}
    for i, names in reads.items():
        bad = set(names) - set(signature) - {"result"}
        if bad:
            raise ValueError(f"elementwise({op!r}): {i}'s formula reads unknown {sorted(bad)}")
    read_by = {n: [i for i in inputs if n in reads[i]] for n in (*signature, "result")}
    args = tuple(n for n in signature if read_by[n])
    save = args + (("result",) if read_by["result"] else ())
    save_for = {n: tuple(read_by[n]) for n in args if len(read_by[n]) < len(inputs)}
    if fused is not None and len(inputs) > 1:
        raise ValueError(f"elementwise({op!r}): fused takes a one-input op")
    if batch is None:
        batch = unary if len(signature) == 1 else pointwise
    steps = tuple((formulas[i], reads[i]) for i in inputs)
    backward = _backward(steps, fused is not None, shortcut, holomorphic)
    backward.__name__ = backward.__qualname__ = f"_{name}_backward"
    register(
        op,
        node,
        inputs=inputs,
        save=save,
        save_for=save_for or None,
        fused=fused,
        extra=extra,
        byproduct=byproduct,
        keeps_zero=keeps_zero,
        inplace_variant=inplace,
        batch=batch,
    )(backward)
    positions = tuple(signature.index(i) for i in inputs)
    forward = _forward(steps, positions, {n: signature.index(n) for n in args})
    forward.__name__ = forward.__qualname__ = f"_{name}_jvp"
    jvp(name, inplace_variant=inplace)(forward)
    ROWS[name] = forward


def _backward(steps, fused, shortcut, holomorphic):
    """The backward formula: each wanted input's formula applied to ``grad`` (a complex
    ``grad`` of a holomorphic op: ``conj(formula(conj(grad)))``, Note [The conjugate
    Wirtinger gradient] in ``_wirtinger``)."""
    if len(steps) == 1:
        ((formula, names),) = steps

        def backward_one(ctx, grad):
            values = [ctx.saved_value(n) for n in names]
            if holomorphic and grad.is_complex():
                return (formula(grad.conj_physical(), *values).conj_physical(),)
            if shortcut is not None:
                r = shortcut(ctx, grad, *values)
                if r is not None:
                    return (r,)
            if fused:
                r = ctx.fused(grad, *values)
                if r is not None:
                    return (r,)
            return (formula(grad, *values),)

        return backward_one

    def backward(ctx, grad):
        if holomorphic and grad.is_complex():
            return _wirtinger.holomorphic(_real_backward)(ctx, grad)
        return _real_backward(ctx, grad)

    def _real_backward(ctx, grad):
        return tuple(
            formula(grad, *[ctx.saved_value(n) for n in names]) if need else None
            for (formula, names), need in zip(steps, ctx.needs_input_grad)
        )

    return backward


def _forward(steps, positions, where):
    """The forward formula: each input's formula applied to its tangent, summed
    (``args[0]`` of an in-place op is ``self`` before the write)."""
    padded = len(steps) > 1  # broadcast operands: Note [Aligning a batch of tangents]

    def forward(args, out, tangents, lead):
        r = None
        for (formula, names), position, t in zip(steps, positions, tangents):
            if t is None:
                continue
            if padded:
                t = _pad(t, args[position], out, lead)
            values = [out if n == "result" else args[where[n]] for n in names]
            r = _tangent_sum(r, formula(t, *values))
        return r

    return forward
