"""Random torch programs from ``(seed, index)``.

:func:`generate` builds a program statement by statement and runs each candidate in
PyTorch as it goes, so it always knows the real shape, dtype, ``requires_grad`` and view
status of every variable (no shape algebra to get wrong).  A candidate that torch rejects is
either kept as the program's last statement (an error test: gradstack must raise the same
exception type) or dropped, and the program is replayed without it.  The program ends with a
backward phase: a weighted loss, then ``backward()``, ``autograd.grad`` or a second-order
pass through ``create_graph=True``.

What the programs cover: leaves of every dtype gradstack has (float16/32/64, uint8,
int8..int64, bool), shapes of rank 0 to 8 with empty and size-1 dims; unary, binary
(broadcasting, promotion, Python scalars, 0-d tensors, operators and their reflections),
reductions with dim/keepdim, views (view, reshape, transpose, permute, expand, narrow,
select, unbind, split, chunk, basic indexing), advanced and boolean indexing, setitem,
diag/tril/triu/trace/repeat/flip/expand_as, fill_/zero_/copy_,
in-place ops on clones and on views (aliasing operands such as ``y.mul_(y)``, overlapping
views), linear algebra, joins, index ops, clamp, sort/topk, conversions, factories, hooks,
``retain_grad``, ``no_grad`` and ``detach``.

Note [Generation constraints, not comparison tolerances]
A few torch results are unspecified, so the generator does not produce them (instead of the
comparator accepting differences): sort/topk of a slice with ties (torch documents the
order of equal elements as unspecified), partially overlapping in-place operands of a
non-contiguous target (torch cannot detect the overlap there, and its result follows its loop
order), float-to-integer conversions of values the target
type cannot hold (NaN, inf, out of range: undefined in C, so in both libraries), and
writing a value that requires grad into an integer or bool tensor in place (``i[0] =
x.sum()``, ``i.masked_fill_(m, x.sum())``): torch then reports ``requires_grad=True`` on the
integer tensor for some index kinds and not for others, a state it refuses everywhere else
(``requires_grad_()`` on an integer tensor raises); such values are written detached.

Examples
--------
>>> p = generate(0, 0)
>>> p.stmts[0].tag
'leaf'
"""

from __future__ import annotations

import math
import random
import warnings

import torch

from .generate_backward import BackwardPhase
from .generate_common import (
    _DTYPE_WEIGHTS,
    DTYPES,
    FLOATS,
    INTS,
    KEEP_ERROR,
    MAX_LEAF_NUMEL,
    MAX_NUMEL,
    _broadcasts,
    _dt,
    _is_tensor,
    _prod,
    fmt_nested,
    fmt_scalar,
)
from .generate_index import IndexFamilies
from .generate_ops import OpFamilies
from .program import Program, Stmt

__all__ = ["DTYPES", "FLOATS", "INTS", "Generator", "generate"]


class Generator(OpFamilies, IndexFamilies, BackwardPhase):
    """Builds one program; see :func:`generate`."""

    def __init__(self, seed: int, index: int):
        self.seed, self.index = seed, index
        self.rng = random.Random(f"gsfuzz:{seed}:{index}")
        self.stmts: list[Stmt] = []
        self.ns: dict = {"torch": torch}
        self.counter = 0
        self.order: list[str] = []  # tensor and sequence names, in definition order
        self.retained: list[str] = []
        self.hooks: list[str] = []
        self.ended = False

    # -----------------------------------------------------------------------------------
    # bookkeeping

    def fresh(self, prefix: str = "v") -> str:
        name = f"{prefix}{self.counter}"
        self.counter += 1
        return name

    def emit(self, st: Stmt, keep_error: float = KEEP_ERROR) -> bool:
        """Run ``st`` in torch; keep it when it works (or, rarely, as the failing end)."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(st.code, self.ns)
                for c in st.checks:
                    eval(c, self.ns)
        except Exception:
            if self.rng.random() < keep_error:
                self.stmts.append(st)
                self.ended = True
                return True
            self.replay()
            return False
        self.stmts.append(st)
        for name in st.defines:
            v = self.ns.get(name)
            if (_is_tensor(v) or isinstance(v, tuple)) and name not in self.order:
                self.order.append(name)
        return True

    def replay(self) -> None:
        """Rebuild torch's state from the kept statements.

        Rarely a kept statement raises on the replay although it ran when it was first
        executed (torch state that a dropped candidate had changed before raising); the
        program then ends before that statement, so that its text stays what torch runs.
        """
        self.ns = {"torch": torch}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, st in enumerate(self.stmts):
                try:
                    exec(st.code, self.ns)
                except Exception:  # noqa: BLE001
                    del self.stmts[k:]
                    self.ended = True
                    return self.replay()

    def t(self, name):
        return self.ns[name]

    def tensors(self, pred=None) -> list[str]:
        out = []
        for n in self.order:
            v = self.ns.get(n)
            if not _is_tensor(v):
                continue
            try:  # a view torch has invalidated raises on some attributes
                if pred is None or pred(v):
                    out.append(n)
            except RuntimeError:
                continue
        return out

    def pick(self, pred=None):
        names = self.tensors(pred)
        if not names:
            return None
        if self.rng.random() < 0.6:
            return self.rng.choice(names[-4:])
        return self.rng.choice(names)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # -----------------------------------------------------------------------------------
    # values and shapes

    def dtype(self) -> str:
        names = list(_DTYPE_WEIGHTS)
        return self.rng.choices(names, weights=[_DTYPE_WEIGHTS[n] for n in names])[0]

    def dim_size(self) -> int:
        r = self.rng.random()
        if r < 0.04:
            return 0
        if r < 0.3:
            return 1
        return self.rng.randint(2, 4)

    def shape(self) -> tuple:
        rank = self.rng.choices(range(9), weights=[10, 22, 28, 18, 8, 4, 3, 3, 4])[0]
        dims = [self.dim_size() for _ in range(rank)]
        if rank >= 5:
            dims = [min(d, 2) for d in dims]
        while _prod(dims) > MAX_NUMEL:
            i = max(range(len(dims)), key=lambda k: dims[k])
            dims[i] -= 1
        return tuple(dims)

    def related_shape(self, shape) -> tuple:
        """A shape that broadcasts with ``shape`` (or, rarely, one that does not)."""
        s = list(shape)
        if s and self.chance(0.3):
            s = s[self.rng.randint(0, len(s)) :]
        s = [1 if (d != 0 and self.chance(0.25)) else d for d in s]
        if self.chance(0.15) and len(s) < 8:
            s = [1] * self.rng.randint(1, 2) + s
        if s and self.chance(0.05):
            i = self.rng.randrange(len(s))
            s[i] = s[i] + 1  # usually no longer broadcasts
        while _prod(s) > MAX_NUMEL:
            s[s.index(max(s))] -= 1
        return tuple(s)

    def scalar_value(self, dtype: str, special: bool = False):
        if dtype == "bool":
            return self.chance(0.5)
        if dtype in INTS:
            if dtype == "uint8":
                return self.rng.randint(0, 9)
            if dtype == "int8" and self.chance(0.03):
                return self.rng.choice([127, -128])
            return self.rng.randint(-5, 5)
        if special and self.chance(0.15):
            return self.rng.choice([math.inf, -math.inf, math.nan, -0.0])
        return self.rng.randint(-12, 12) / 4

    def values(self, n: int, dtype: str) -> list:
        special = dtype in FLOATS and self.chance(0.08)
        if dtype in FLOATS and self.chance(0.15):  # ties and zeros
            return [float(self.rng.choice([-1, 0, 1, 2])) for _ in range(n)]
        return [self.scalar_value(dtype, special) for _ in range(n)]

    def py_scalar(self):
        """A Python scalar operand: float, int or bool."""
        r = self.rng.random()
        if r < 0.5:
            return fmt_scalar(self.rng.choice([0.5, 1.5, 2.0, -0.75, 3.0, -2.5, 0.0]))
        if r < 0.9:
            v = self.rng.choice([0, 1, 2, 3, -1, -2])
            if self.chance(0.03):
                v = self.rng.choice([300, -200, 2**40])
            return fmt_scalar(v)
        return fmt_scalar(self.chance(0.5))

    def tensor_literal(self, shape, dtype, *, rg=False, values=None, force_dtype=False) -> str:
        if values is None:
            values = self.values(_prod(shape), dtype)
        if dtype in FLOATS:
            values = [float(v) for v in values]
        lit = fmt_nested(values, tuple(shape))
        default = {"float32": float, "int64": int, "bool": bool}.get(dtype)
        args = [lit]
        if force_dtype or default is None or self.chance(0.7) or not values:
            args.append(f"dtype=torch.{dtype}")
        if rg:
            args.append("requires_grad=True")
        return f"torch.tensor({', '.join(args)})"

    # -----------------------------------------------------------------------------------
    # statements

    def leaf(self, shape=None, dtype=None, rg=None) -> str | None:
        """Emit a new leaf and return its name (None when it is not made)."""
        shape = self.shape() if shape is None else tuple(shape)
        if _prod(shape) > MAX_LEAF_NUMEL:
            return None  # an operand shaped after a 2048-element float16 leaf, squared
        dtype = dtype or self.dtype()
        if rg is None:
            rg = dtype in FLOATS and self.chance(0.8)
            if dtype not in FLOATS and self.chance(0.005):
                rg = True  # torch: only floating point tensors can require gradients
        name = self.fresh("x")
        rgs = ", requires_grad=True" if rg else ""
        if 0 in shape or (shape and self.chance(0.06)):
            fill = self.rng.choice(["zeros", "ones", "full"])
            if fill == "full":
                v = fmt_scalar(self.scalar_value(dtype))
                code = f"{name} = torch.full({shape!r}, {v}, dtype=torch.{dtype}{rgs})"
            else:
                code = f"{name} = torch.{fill}({shape!r}, dtype=torch.{dtype}{rgs})"
        else:
            code = f"{name} = {self.tensor_literal(shape, dtype, rg=rg)}"
        ok = self.emit(Stmt(code, (name,), (), (name,), "leaf"), keep_error=1.0)
        return name if ok and not self.ended else None

    def op(self, out, expr, uses, tag, checks=None, keep_error=KEEP_ERROR) -> bool:
        code = f"{out} = {expr}"
        st = Stmt(code, (out,), tuple(uses), (out,) if checks is None else checks, tag)
        return self.emit(st, keep_error)

    def inplace(self, target, code, uses, tag, keep_error=KEEP_ERROR) -> bool:
        root = target.split("[")[0].split(".")[0]
        checks = tuple(dict.fromkeys([root] + [u for u in uses if u in self.order]))
        return self.emit(Stmt(code, (), tuple(uses), checks, tag), keep_error)

    def operand(self, a: str):
        """(source, uses) of a second operand for ``a``."""
        ta = self.t(a)
        r = self.rng.random()
        if r < 0.3:
            return self.py_scalar(), ()
        if r < 0.4:
            dt = self.rng.choice(["float32", "int64", "float64", "bool", "float16", "int8"])
            v = fmt_scalar(self.scalar_value(dt))
            return f"torch.tensor({v}, dtype=torch.{dt})", ()
        if r < 0.48:
            return a, (a,)
        if r < 0.75:
            shape = tuple(ta.shape)
            cands = self.tensors(lambda t: _broadcasts(tuple(t.shape), shape))
            if cands:
                b = self.rng.choice(cands)
                return b, (b,)
        shape = self.related_shape(tuple(ta.shape))
        dt = _dt(ta) if self.chance(0.6) else self.dtype()
        b = self.leaf(shape, dt)
        if b is None:
            return None, ()
        return b, (b,)

    FAMILIES = (
        ("f_unary", 12),
        ("f_unary_inplace", 6),
        ("f_binary", 15),
        ("f_binary_inplace", 8),
        ("f_alias_inplace", 4),
        ("f_reduce", 11),
        ("f_view", 12),
        ("f_getitem", 8),
        ("f_setitem", 6),
        ("f_linalg", 5),
        ("f_join", 4),
        ("f_index_ops", 6),
        ("f_clamp", 3),
        ("f_sort", 2),
        ("f_convert", 4),
        ("f_create", 3),
        ("f_clone", 4),
        ("f_autograd", 7),
        ("f_misc", 5),
    )

    # -----------------------------------------------------------------------------------

    def build(self) -> Program:
        for _ in range(self.rng.randint(1, 3)):
            self.leaf()
            if self.ended:
                return self.program()
        n_ops = self.rng.randint(2, 14)
        names = [n for n, _ in self.FAMILIES]
        weights = [w for _, w in self.FAMILIES]
        attempts = 0
        while sum(1 for s in self.stmts if s.tag != "leaf") < n_ops and attempts < 4 * n_ops:
            attempts += 1
            getattr(self, self.rng.choices(names, weights=weights)[0])()
            if self.ended:
                return self.program()
        self.backward_phase()
        return self.program()

    def program(self) -> Program:
        return Program(self.seed, self.index, list(self.stmts))


def generate(seed: int, index: int) -> Program:
    """The program number ``index`` of the stream ``seed`` (deterministic)."""
    return Generator(seed, index).build()
