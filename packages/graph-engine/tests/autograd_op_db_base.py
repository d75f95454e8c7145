"""What the autograd op database (``autograd_op_db.py``) and its family modules share:
the entry types (:class:`GradSample`, :class:`GradOp`) and the input-array helpers.

A family module imports these by name (Note [Test helpers import by name] in the
workspace's conftest.py), never the database itself (the database may be loaded under
another name, as root ``tests/test_vmap_against_torch.py`` loads it).

Examples
--------
>>> import numpy as np
>>> arr(np.random.default_rng(0), (2, 3)).shape
(2, 3)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

__all__ = ["Family", "GradOp", "GradSample", "arr", "distinct", "to_gs", "to_torch"]


@dataclasses.dataclass
class GradSample:
    """One call: ``fn(L, *tensors)`` where ``tensors`` are made from ``inputs`` (float64)."""

    inputs: tuple
    fn: Callable
    desc: str = ""
    torch_fn: Callable | None = None  # when torch spells the call differently

    def __repr__(self) -> str:
        return f"GradSample({self.desc})"


@dataclasses.dataclass
class GradOp:
    """Sample inputs and checking options for one differentiable op.

    Attributes
    ----------
    name : str
        The op's name in ``gradstack_tensor.OPS``.
    samples : callable
        ``samples(rng) -> list of GradSample``.
    second_order : bool
        Run gradgradcheck and compare second-order gradients with torch.
    torch : bool
        Compare with torch (False when torch has no such public op).
    eps, atol, rtol : float
        gradcheck settings (defaults are gradcheck's).
    """

    name: str
    samples: Callable
    second_order: bool = True
    torch: bool = True
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3


# ---------------------------------------------------------------------------------------
# input arrays


def arr(rng, shape, lo=-2.0, hi=2.0, *, away=(), gap=0.15, transposed=False):
    """Uniform float64 values in [lo, hi], at least ``gap`` away from each point of ``away``.

    ``transposed`` returns a transposed (non-contiguous) view of a fresh array.
    """
    shape = tuple(shape)
    if transposed and len(shape) >= 2:
        return arr(rng, shape[::-1], lo, hi, away=away, gap=gap).T
    v = rng.uniform(lo, hi, size=shape)
    for p in away:
        close = np.abs(v - p) < gap
        v = np.where(close, p + np.where(v >= p, gap, -gap), v)
    return np.asarray(v, dtype=np.float64)


def distinct(rng, shape, lo=-2.0, hi=2.0, gap=0.1):
    """Values pairwise at least ``gap`` apart (no ties for max, sort ...)."""
    n = math.prod(shape)
    v = lo + gap * rng.permutation(n) + rng.uniform(0, gap / 4, size=n)
    v = v * (hi - lo) / max(gap * n, hi - lo)
    return np.asarray(v, dtype=np.float64).reshape(shape)


def to_gs(a, gt, requires_grad=True):
    t = gt.from_numpy(np.array(a, copy=True))
    return t.requires_grad_(requires_grad)


def to_torch(a, torch, requires_grad=True):
    t = torch.from_numpy(np.array(a, copy=True))  # keeps the layout (strides)
    return t.requires_grad_(requires_grad)


def _S(inputs, fn, desc, torch_fn=None):
    return GradSample(tuple(inputs), fn, desc, torch_fn)


class Family:
    """The entries of a family module (``autograd_op_db_linalg.py`` ...), in the order its
    ``_add`` calls gave them; ``autograd_op_db.py`` calls its ``extend`` with itself."""

    def __init__(self) -> None:
        self.entries: list[GradOp] = []

    def add(self, op: GradOp) -> None:
        self.entries.append(op)

    def extend(self, db) -> None:
        """Add the entries to the autograd op database module ``db``, in order."""
        for op in self.entries:
            db._add(op)
