"""Running a program in one library and recording what it produced.

:func:`execute` runs the statements in order with ``torch`` bound to the given module and
returns a list of :class:`Event`: after each statement, a snapshot of each of its checked
expressions; at the first exception, an ``error`` event (and nothing after it); at the end,
a ``final`` snapshot of every variable, so that a view modified later through its base is
compared too.

A snapshot (:func:`snapshot`) turns a value into plain Python and numpy data independent of
the library: tensors become ``("tensor", dtype name, shape, ndarray, requires_grad)``,
sequences and namedtuples become ``("seq", [snapshots])``.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

__all__ = ["Event", "execute", "snapshot"]


@dataclasses.dataclass
class Event:
    """What one check produced: ``kind`` is ``"snap"`` or ``"error"``."""

    stmt: int  # statement index (len(stmts) for the final snapshot)
    kind: str
    expr: str = ""
    value: object = None  # the snapshot, or (builtin exception name, message)


def _builtin_base(exc: BaseException) -> str:
    """The first builtin class in the exception's MRO (gradstack subclasses map to it)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(exc).__name__


def _is_tensor(v) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "detach") and hasattr(v, "shape")


def snapshot(v):
    """A library-independent copy of ``v``."""
    if v is None:
        return None
    if _is_tensor(v):
        d = v.detach()
        if type(d).__module__.startswith("torch") and d._is_zerotensor():
            # autograd.grad may return torch's ZeroTensor, which refuses .numpy()
            arr = np.array(d.numpy(force=True), copy=True)
        else:
            arr = np.array(d.numpy(), copy=True)
        return (
            "tensor",
            str(v.dtype).rsplit(".", 1)[-1],
            tuple(int(s) for s in v.shape),
            arr,
            bool(v.requires_grad),
        )
    if isinstance(v, (tuple, list)):
        if (
            all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            and type(v).__name__ == "Size"
        ):
            return ("size", tuple(v))
        return ("seq", [snapshot(x) for x in v])
    if isinstance(v, (bool, int, float)):
        return ("py", type(v).__name__, v)
    return ("other", type(v).__name__)


def execute(lib, program, *, final: bool = True) -> list[Event]:
    """Run ``program`` with ``torch`` bound to ``lib``; the events it produced."""
    ns = {"torch": lib}
    events: list[Event] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, st in enumerate(program.stmts):
            try:
                exec(compile(st.code, f"<stmt {i}>", "exec"), ns)
                values = [(c, eval(c, ns)) for c in st.checks]
            except Exception as exc:  # noqa: BLE001 - every exception is a result here
                why = f"{type(exc).__name__}: {exc}"[:400]
                events.append(Event(i, "error", "", (_builtin_base(exc), why)))
                return events
            # a snapshot that fails is the harness's failure: it propagates
            events.extend(Event(i, "snap", c, snapshot(v)) for c, v in values)
        if final:
            n = len(program.stmts)
            names = [d for st in program.stmts for d in st.defines]
            for name in dict.fromkeys(names):
                v = ns.get(name)
                if _is_tensor(v) or isinstance(v, (tuple, list)):
                    events.append(Event(n, "snap", name, snapshot(v)))
    return events
