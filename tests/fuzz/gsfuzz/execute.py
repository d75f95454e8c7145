"""Running a program in one library and recording what it produced.

:func:`execute` runs the statements in order with ``torch`` bound to the given module and
returns a list of :class:`Event`: after each statement, a snapshot of each of its checked
expressions; at the first exception, an ``error`` event (and nothing after it); at the end,
a ``final`` snapshot of every variable, so that a view modified later through its base is
compared too.

Note [An in-place op that reads what it writes]
An in-place op whose operand shares memory with its target, without being the target
itself or a part of it torch can judge (``v2.remainder_(v3)`` with ``v3 = v2[-3:, -3]``,
broadcast over ``v2``), makes torch read elements it has already written: its result
depends on its kernel's loop order and vector width, an undefined result (torch refuses
the overlaps its ``assert_no_partial_overlap`` can decide, and lets through those it
finds "too hard": a strided operand).  gradstack computes such an op as if its operands
were copied first, numpy's guarantee.  For torch, :func:`execute` runs such a statement a
second time on copies of every tensor (with the same random state), and marks the
statement's snapshots ``aliased`` when the two results differ: the comparison then
counts a difference of values after it as torch disagreeing with itself (fuzz seed 11
#1713).

A snapshot (:func:`snapshot`) turns a value into plain Python and numpy data independent of
the library: tensors become ``("tensor", dtype name, shape, ndarray, requires_grad)``,
sequences and namedtuples become ``("seq", [snapshots])``.
"""

from __future__ import annotations

import dataclasses
import re
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
    aliased: bool = False  # Note [An in-place op that reads what it writes]


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


_INPLACE_METHOD = re.compile(r"^\s*(\w+)\.(\w+_)\(")  # ``v.op_(...)``


def _shares_memory_with_another(name, ns) -> bool:
    target = ns.get(name)
    if not _is_tensor(target) or target.numel() == 0:
        return False
    mem = target.untyped_storage().data_ptr()
    return any(
        _is_tensor(v) and v is not target and v.numel() and v.untyped_storage().data_ptr() == mem
        for k, v in ns.items()
        if k != name
    )


def _as_if_copied(lib, code, ns, name):
    """The values the in-place statement ``code`` gives its target ``name`` when every
    tensor is a copy of its own (None when that raises); the random state is left as it
    was (Note [An in-place op that reads what it writes])."""
    copies = {k: (v.detach().clone() if _is_tensor(v) else v) for k, v in ns.items()}
    state = lib.get_rng_state()
    try:
        exec(compile(code, "<as if copied>", "exec"), copies)
        return np.array(copies[name].detach().numpy(), copy=True)
    except Exception:  # noqa: BLE001 - the real run reports what it raises
        return None
    finally:
        lib.set_rng_state(state)


def execute(lib, program, *, final: bool = True) -> list[Event]:
    """Run ``program`` with ``torch`` bound to ``lib``; the events it produced."""
    ns = {"torch": lib}
    events: list[Event] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, st in enumerate(program.stmts):
            copied = None
            m = _INPLACE_METHOD.match(st.code) if lib.__name__ == "torch" else None
            if m and _shares_memory_with_another(m.group(1), ns):
                copied = _as_if_copied(lib, st.code, ns, m.group(1))
            try:
                exec(compile(st.code, f"<stmt {i}>", "exec"), ns)
                values = [(c, eval(c, ns)) for c in st.checks]
            except Exception as exc:  # noqa: BLE001 - every exception is a result here
                why = f"{type(exc).__name__}: {exc}"[:400]
                events.append(Event(i, "error", "", (_builtin_base(exc), why)))
                return events
            aliased = copied is not None and not np.array_equal(
                copied, ns[m.group(1)].detach().numpy(), equal_nan=copied.dtype.kind in "fc"
            )
            # a snapshot that fails is the harness's failure: it propagates
            events.extend(Event(i, "snap", c, snapshot(v), aliased) for c, v in values)
        if final:
            n = len(program.stmts)
            names = [d for st in program.stmts for d in st.defines]
            for name in dict.fromkeys(names):
                v = ns.get(name)
                if _is_tensor(v) or isinstance(v, (tuple, list)):
                    events.append(Event(n, "snap", name, snapshot(v)))
    return events
