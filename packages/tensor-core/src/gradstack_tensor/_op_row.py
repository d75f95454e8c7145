"""The op table's vocabulary: what one row (:class:`OpRow`) holds, and :func:`op`, which makes it.

:mod:`._op_table` declares every built-in op as a row made by :func:`op`; this module
says what a row can say: the elementwise kinds (how the generic kernels treat an op), the
argument kinds of the generated forms (torch's schema words), and ``ufuncs``, the stand-in
for ``_ufuncs.pyx``'s functions that the build cannot import (Note [The table is read at
build time] in ``_op_table.py``).  Like the table, it imports numpy and the standard
library only, so that the build can read both before anything is compiled.

Examples
--------
>>> from gradstack_tensor._op_row import op, UNARY, TENSOR
>>> import numpy as np
>>> row = op("neg", UNARY, np.negative, inplace_form=True, args=TENSOR, doc="Negative.")
>>> row.inplace_name, row.unary, row.out
('neg_', True, 'same')
>>> op("x", "ternary")
Traceback (most recent call last):
...
ValueError: op 'x': unknown kind 'ternary'
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

__all__ = [
    "OTHER",
    "BINARY",
    "BINARY_FLOAT",
    "COMPARE",
    "UNARY",
    "UNARY_FLOAT",
    "ELEMENTWISE",
    "TENSOR",
    "TENSORS",
    "TENSOR_FIRST",
    "EITHER",
    "OpRow",
    "op",
    "ufuncs",
    "resolve",
]

# ----------------------------------------------------------------------------------------
# The kinds (Op.kind, gradstack_tensor.KIND_*): how the generic elementwise kernels treat
# an op

OTHER = "other"  # a kernel of its own (_impl_*.py, or _elementwise.pyx's sum)
BINARY = "binary"  # elementwise, torch promotion, result in the promoted dtype
BINARY_FLOAT = "binary_float"  # elementwise, integer results become the default float
COMPARE = "compare"  # elementwise, promoted inputs, bool result
UNARY = "unary"  # elementwise, same dtype out
UNARY_FLOAT = "unary_float"  # elementwise, integer inputs become the default float first
ELEMENTWISE = (BINARY, BINARY_FLOAT, COMPARE, UNARY, UNARY_FLOAT)

# The argument kinds of the generated forms, as torch's schema spells them.  A method checks
# ``other`` when it must be a Tensor; a function form checks each argument that must be.
TENSOR = "Tensor"  # unary: (Tensor self)
TENSORS = "Tensor, Tensor"  # torch's maximum, atan2, logical_and ...: no Python number
TENSOR_FIRST = "Tensor, Tensor|Number"  # a number ``other`` (and in-place), a Tensor first
EITHER = "Tensor|Number, Tensor|Number"  # either may be a number (pow(2, t), remainder ...)

_SAME = object()  # ``aten``'s default: torch's name is the op's name
_DERIVED = object()  # ``out``'s default: from the kind


class _Deferred:
    """A function of ``_ufuncs.pyx`` (``attr``), called with ``args`` when the ops are
    declared (Note [The table is read at build time])."""

    __slots__ = ("attr", "args", "called")

    def __init__(self, attr: str, args: tuple = (), called: bool = False) -> None:
        self.attr, self.args, self.called = attr, args, called

    def __call__(self, *args: Any) -> _Deferred:
        return _Deferred(self.attr, args, True)

    def __repr__(self) -> str:
        inner = ", ".join(map(repr, self.args))
        return f"ufuncs.{self.attr}" + (f"({inner})" if self.called else "")


class _Ufuncs:
    """``ufuncs.name`` stands for ``gradstack_tensor._ufuncs.name``, made later."""

    def __getattr__(self, attr: str) -> _Deferred:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Deferred(attr)


ufuncs = _Ufuncs()


def resolve(spec: Any, module: Any) -> Any:
    """``spec`` with every ``ufuncs.x(...)`` made from ``module`` (``_ufuncs``)."""
    if isinstance(spec, _Deferred):
        fn = getattr(module, spec.attr)
        return fn(*(resolve(a, module) for a in spec.args)) if spec.called else fn
    return spec


class OpRow(NamedTuple):
    """One op of the table (made by :func:`op`, which explains each field)."""

    name: str
    kind: str
    ufunc: Any
    inplace_form: bool
    writes: bool
    view: bool
    aten: str | None
    args: str | None
    forms: tuple[str, ...]
    params: str
    doc: str
    inplace_doc: str
    aliases: tuple[str, ...]
    method_aliases: tuple[str, ...]
    out: str | None

    @property
    def inplace_name(self) -> str | None:
        """The name of the in-place form, or None."""
        return self.name + "_" if self.inplace_form else None

    @property
    def unary(self) -> bool:
        """A generated form of one tensor argument."""
        return self.args == TENSOR

    @property
    def arg_kinds(self) -> tuple[str, ...]:
        """``args`` split: one kind per positional argument."""
        return tuple(a.strip() for a in (self.args or "").split(","))

    @property
    def param_names(self) -> tuple[str, ...]:
        """The names the generated forms pass to the op after ``self``, in order."""
        return tuple(
            p.split("=")[0].strip() for p in self.params.split(",") if p.strip() not in ("", "*")
        )


def op(
    name: str,
    kind: str = OTHER,
    ufunc: Any = None,
    *,
    inplace_form: bool = False,
    writes: bool = False,
    view: bool = False,
    aten: Any = _SAME,
    args: str | None = None,
    forms: tuple[str, ...] = ("method", "function"),
    params: str | None = None,
    doc: str = "",
    inplace_doc: str | None = None,
    aliases: tuple[str, ...] = (),
    method_aliases: tuple[str, ...] = (),
    out: Any = _DERIVED,
) -> OpRow:
    """One row of the table.

    Parameters
    ----------
    name : str
        torch's name of the op (``"mul"``; an op that writes in place ends in ``_``).
    kind : str
        ``OTHER`` (its own kernel) or an elementwise kind (``BINARY``, ``UNARY_FLOAT`` ...).
    ufunc : numpy ufunc or ``ufuncs.<function>(...)``
        The numpy path of an elementwise op: what its C kernel calls past the small loops.
    inplace_form : bool
        Also declare ``name_``, the same op writing into its first argument.
    writes, view : bool
        The op writes into its first argument (``zero_``), or returns a view of it.
    aten : str or None
        torch's name of the op, when it differs from ``name`` (``"to"`` for ``to_dtype``);
        None when torch has no such op.  The in-place form's is this name with ``_``.
    args : str, optional
        The argument kinds (``TENSOR``, ``TENSORS``, ``TENSOR_FIRST``, ``EITHER``).  A row
        with ``args`` gets the generated forms that ``forms`` names (Note [Generated from
        the op table]); without, its method and function are written by hand.
    forms : tuple of str
        Which forms are generated: ``"method"`` (with the in-place method) and
        ``"function"`` (with the in-place function of a unary op).
    params : str, optional
        The generated method's parameters after ``self`` (default ``"other"`` for two
        arguments): ``"exponent"``, ``"other, *, alpha=1"``; each name is passed to the op
        in order.
    doc : str
        The method's docstring (numpy style, examples with ``gt``); the function form's
        starts with its first line.
    inplace_doc : str, optional
        The in-place method's docstring (default: "In-place :meth:`name`; returns self").
    aliases, method_aliases : tuple of str
        Other names of the generated forms (``multiply``), or of the method only
        (``negative``; a name ending in ``_`` aliases the in-place method).
    out : str or None
        The ``out=`` rule of the function form (Note [Which dtypes out= accepts] in
        ``_out.py``); default ``"same"`` for ``UNARY``, else ``"cast"``; None: no ``out=``.
    """
    if kind not in ELEMENTWISE and kind != OTHER:
        raise ValueError(f"op {name!r}: unknown kind {kind!r}")
    if (ufunc is None) != (kind == OTHER):
        raise ValueError(f"op {name!r}: an elementwise op has a ufunc, no other op does")
    if params is None:
        params = "" if args in (None, TENSOR) else "other"
    if out is _DERIVED:
        out = "same" if kind == UNARY else "cast"
    doc = inspect.cleandoc(doc) if "\n" in doc else doc
    if args is not None and not doc:
        raise ValueError(f"op {name!r}: a row with generated forms needs its docstring")
    return OpRow(
        name=name,
        kind=kind,
        ufunc=ufunc,
        inplace_form=inplace_form,
        writes=writes,
        view=view,
        aten=name if aten is _SAME else aten,
        args=args,
        forms=forms if args is not None else (),
        params=params,
        doc=doc,
        inplace_doc=(
            inspect.cleandoc(inplace_doc)
            if inplace_doc
            else f"In-place :meth:`{name}`; returns ``self``."
        ),
        aliases=aliases,
        method_aliases=method_aliases,
        out=out,
    )
