"""The stack of active transforms: which vmap, grad and jvp levels are open, innermost last.

Every transform call (``vmap(f)(x)``, ``grad(f)(x)`` ...) opens a level with a number
larger than every open one and closes it when ``f`` returns.  A batched tensor records the
number of the vmap level that made it (functorch's level semantics): an op is batched for
the highest level among its arguments first, and each level's rule calls the op again on
the unwrapped values, which lower levels then handle.  The stack is thread-local, as
torch's interpreter stack is.
"""

from __future__ import annotations

import itertools
import threading

_local = threading.local()
_numbers = itertools.count(1)


class Level:
    """One open transform: ``kind`` is ``"vmap"``, ``"grad"``, ``"jvp"`` or ``"jacfwd"``."""

    __slots__ = ("number", "kind", "batch_size", "randomness", "dual_level")

    def __init__(self, kind: str, batch_size: int = -1, randomness: str = "error"):
        self.number = next(_numbers)
        self.kind = kind
        self.batch_size = batch_size
        self.randomness = randomness
        self.dual_level = None  # a jvp level's forward-AD level index (forward_ad)

    def __repr__(self):
        extra = f", batch_size={self.batch_size}" if self.kind == "vmap" else ""
        return f"Level({self.kind}, {self.number}{extra})"


def stack() -> list:
    """The open levels of this thread, outermost first."""
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def push(level: Level) -> Level:
    stack().append(level)
    return level


def pop(level: Level) -> None:
    s = stack()
    if not s or s[-1] is not level:
        raise RuntimeError(f"transform levels closed out of order: {level} is not the innermost")
    s.pop()


def vmap_levels() -> list:
    """The open vmap levels, outermost first."""
    return [lv for lv in stack() if lv.kind == "vmap"]


def find(number: int):
    """The open level with this number, or None (it was closed)."""
    for lv in stack():
        if lv.number == number:
            return lv
    return None


def random_levels() -> list:
    """The open levels whose ``randomness`` flag rules random draws: vmap's, and jacfwd's
    (Note [jacfwd by batched tangents] in eager_transforms)."""
    return [lv for lv in stack() if lv.kind == "vmap" or lv.kind == "jacfwd"]


def dual_levels() -> list:
    """The forward-AD level indices of the open jvp levels, outermost first."""
    return [lv.dual_level for lv in stack() if lv.kind == "jvp"]


def any_open(kind: str) -> bool:
    return any(lv.kind == kind for lv in stack())
