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

from .program import Program, Stmt

__all__ = ["DTYPES", "FLOATS", "INTS", "Generator", "generate"]

FLOATS = ("float16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
DTYPES = FLOATS + INTS + ("bool",)
_DTYPE_WEIGHTS = {
    "float32": 30,
    "float64": 26,
    "float16": 10,
    "int64": 9,
    "int32": 4,
    "int16": 3,
    "int8": 3,
    "uint8": 4,
    "bool": 6,
}
_INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
MAX_NUMEL = 96
MAX_LEAF_NUMEL = 4096  # the largest leaf written as a literal (big float16 leaves: 2048)
# probability of keeping a statement torch rejects, as the program's last one
KEEP_ERROR = 0.12

UNARY_FLOAT = (
    "abs acos asin atan ceil cos cosh exp exp2 expm1 floor log log10 log1p log2 neg "
    "reciprocal relu round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc square"
).split()
UNARY_INPLACE = [n for n in UNARY_FLOAT if n != "square"] + ["bitwise_not", "logical_not"]
BINARY = (
    "add sub mul div pow remainder floor_divide atan2 maximum minimum bitwise_and bitwise_or "
    "bitwise_xor logical_and logical_or logical_xor eq ne lt le gt ge rsub"
).split()
SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "pow": "**",
    "remainder": "%",
    "floor_divide": "//",
    "bitwise_and": "&",
    "bitwise_or": "|",
    "bitwise_xor": "^",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
}
BINARY_INPLACE = (
    "add sub mul div pow remainder floor_divide atan2 bitwise_and bitwise_or bitwise_xor".split()
)
INPLACE_SYMBOL = {"add": "+=", "sub": "-=", "mul": "*=", "div": "/="}


def _prod(shape):
    return math.prod(shape)


def fmt_scalar(v) -> str:
    """Python source for a scalar (``float('nan')`` for NaN)."""
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    return repr(v)


def fmt_nested(values, shape) -> str:
    """Nested-list source of ``values`` (flat, row-major) in ``shape``."""
    if not shape:
        return fmt_scalar(values[0])
    step = _prod(shape[1:])
    parts = [fmt_nested(values[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def _is_tensor(v) -> bool:
    return isinstance(v, torch.Tensor)


def _dt(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _is_float(t) -> bool:
    return t.dtype.is_floating_point


class Generator:
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

    # --- families -----------------------------------------------------------------------

    def f_unary(self):
        a = self.pick()
        if a is None:
            return
        out = self.fresh()
        ta = self.t(a)
        if not _is_float(ta) and self.chance(0.5):
            name = self.rng.choice(["bitwise_not", "logical_not", "neg", "abs", "sign"])
        else:
            name = self.rng.choice(UNARY_FLOAT + ["logical_not", "isnan", "isinf", "isfinite"])
        r = self.rng.random()
        if name == "neg" and r < 0.3:
            expr = f"-{a}"
        elif name == "abs" and r < 0.2:
            expr = f"abs({a})"
        elif name == "bitwise_not" and r < 0.3:
            expr = f"~{a}"
        elif r < 0.5 or name in ("isnan", "isinf", "isfinite") and r < 0.9:
            expr = f"torch.{name}({a})"
        else:
            expr = f"{a}.{name}()"
        self.op(out, expr, (a,), f"unary.{name}")

    def inplace_target(self, pred=None):
        """A tensor to modify in place: intermediates and views first, leaves rarely."""

        def ok(t):
            return pred is None or pred(t)

        views = self.tensors(lambda t: t._base is not None and ok(t))
        inter = self.tensors(lambda t: not t.is_leaf and ok(t))
        plain = self.tensors(lambda t: t.is_leaf and not t.requires_grad and ok(t))
        r = self.rng.random()
        for group, p in ((views, 0.4), (inter, 0.8), (plain, 0.97)):
            if group and r < p:
                return self.rng.choice(group)
        anyt = self.tensors(pred)
        return self.rng.choice(anyt) if anyt else None

    def f_unary_inplace(self):
        a = self.inplace_target()
        if a is None:
            return
        ta = self.t(a)
        if _is_float(ta) or self.chance(0.2):
            name = self.rng.choice(UNARY_INPLACE)
        else:
            name = self.rng.choice(["bitwise_not", "logical_not", "neg", "abs", "sign"])
        self.inplace(a, f"{a}.{name}_()", (a,), f"unary_.{name}")

    def f_binary(self):
        a = self.pick()
        if a is None:
            return
        b, uses = self.operand(a)
        if b is None or self.ended:
            return
        name = self.rng.choice(BINARY)
        out = self.fresh()
        r = self.rng.random()
        sym = SYMBOL.get(name)
        scalar = not uses and not b.startswith("torch.")
        if name == "rsub":
            expr = f"torch.rsub({a}, {b})"
        elif sym and r < 0.45:
            expr = f"{b} {sym} {a}" if scalar and self.chance(0.35) else f"{a} {sym} {b}"
        elif r < 0.7:
            extra = ""
            if name in ("add", "sub") and self.chance(0.3):
                extra = f", alpha={self.rng.choice([2, -1, 0.5])}"
            if name == "div" and self.chance(0.3):
                extra = f", rounding_mode={self.rng.choice(['trunc', 'floor'])!r}"
            expr = f"{a}.{name}({b}{extra})"
        else:
            extra = ""
            if name in ("add", "sub") and self.chance(0.3):
                extra = f", alpha={self.rng.choice([2, -1])}"
            if name == "div" and self.chance(0.3):
                extra = f", rounding_mode={self.rng.choice(['trunc', 'floor'])!r}"
            if name in ("maximum", "minimum") and self.chance(0.3) and uses:
                expr = f"torch.{'max' if name == 'maximum' else 'min'}({a}, {b})"
            else:
                expr = f"torch.{name}({a}, {b}{extra})"
        self.op(out, expr, (a,) + tuple(uses), f"binary.{name}")

    def f_binary_inplace(self):
        a = self.inplace_target()
        if a is None:
            return
        b, uses = self.operand(a)
        if b is None or self.ended:
            return
        if self.t(a) is None:
            return
        name = self.rng.choice(BINARY_INPLACE)
        if name in INPLACE_SYMBOL and self.chance(0.35):
            code = f"{a} {INPLACE_SYMBOL[name]} {b}"
        else:
            extra = ""
            if name in ("add", "sub") and self.chance(0.25):
                extra = f", alpha={self.rng.choice([2, -1])}"
            code = f"{a}.{name}_({b}{extra})"
        tag = f"binary_.{name}" + (".alias" if b == a else "")
        self.inplace(a, code, (a,) + tuple(uses), tag)

    def f_alias_inplace(self):
        """In-place ops whose operand aliases the target (the same tensor or a view of it)."""
        a = self.inplace_target(lambda t: _is_float(t))
        if a is None:
            return
        ta = self.t(a)
        name = self.rng.choice(["mul", "div", "pow", "atan2", "add", "sub"])
        r = self.rng.random()
        n = ta.shape[0] if ta.dim() else 0
        if not ta.is_contiguous():
            # Note [Generation constraints, not comparison tolerances]: torch detects a
            # partial overlap only between dense views; with others (``x.T[1:]`` and
            # ``x.T[:-1]``) it writes without a check, in its loop's order: unspecified
            n = 0
        if r < 0.45:
            code, tag = f"{a}.{name}_({a})", f"{name}_.alias"
        elif r < 0.6:
            code, tag = f"{a}.{name}_({a}.detach())", f"{name}_.alias_detached"
        elif r < 0.8 and n >= 2:
            k = self.rng.randint(1, n - 1)
            code, tag = f"{a}[:{k}].{name}_({a}[{n - k}:])", f"{name}_.overlap"
        elif r < 0.9 and ta.dim() == 2 and ta.shape[0] == ta.shape[1]:
            code, tag = f"{a}.{name}_({a}.t())", f"{name}_.alias_transposed"
        elif n >= 2:
            code, tag = f"{a}[1:].copy_({a}[:-1])", "copy_.overlap"
        else:
            code, tag = f"{a}.{name}_({a})", f"{name}_.alias"
        self.inplace(a, code, (a,), tag, keep_error=0.5)

    def dim_arg(self, rank: int, *, allow_oob=True) -> int:
        n = max(rank, 1)
        if allow_oob and self.chance(0.03):
            return self.rng.choice([n, -n - 1])
        return self.rng.randint(-n, n - 1)

    def f_reduce(self):
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        rank = ta.dim()
        name = self.rng.choice(
            "sum sum mean prod amax amin max min argmax argmin std var norm logsumexp softmax "
            "log_softmax cumsum all any".split()
        )
        out = self.fresh()
        kd = self.chance(0.4)
        kds = ", keepdim=True" if kd else ""
        dim = self.dim_arg(rank)
        if name in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "norm") and (
            rank >= 2 and self.chance(0.3)
        ):
            k = self.rng.randint(1, rank)
            dim = tuple(self.rng.sample(range(-rank, 0) if self.chance(0.3) else range(rank), k))
        fn = self.chance(0.35)
        call = f"torch.{name}({a}, " if fn else f"{a}.{name}("
        no_dim = self.chance(0.3)
        if name in ("sum", "mean", "prod"):
            extra = ""
            if self.chance(0.15):
                extra = f", dtype=torch.{self.rng.choice(['float64', 'float32', 'int64'])}"
            if no_dim and name != "prod" or name == "prod" and no_dim:
                expr = f"{call}{extra.lstrip(', ')})" if extra else f"{call.rstrip(', ')})"
            else:
                expr = f"{call}{dim!r}{kds}{extra})"
        elif name in ("amax", "amin", "logsumexp"):
            expr = (
                f"{call}{dim!r}{kds})"
                if not (no_dim and name != "logsumexp")
                else f"{call.rstrip(', ')})"
            )
        elif name in ("max", "min", "argmax", "argmin"):
            if no_dim:
                expr = f"{call.rstrip(', ')})"
            else:
                d = dim if isinstance(dim, int) else dim[0]
                expr = f"{call}{d}{kds})"
        elif name in ("std", "var"):
            opts = ["", ", unbiased=False", ", correction=0", ", correction=2"]
            o = self.rng.choice(opts)
            if no_dim and not o.startswith(", correction"):
                expr = f"{call}{o.lstrip(', ')})" if o else f"{call.rstrip(', ')})"
            else:
                expr = f"{call}{dim!r}{o}{kds})"
        elif name == "norm":
            p = self.rng.choice(["2", "1", "float('inf')", "0", "3", "'fro'", "-float('inf')"])
            if no_dim:
                expr = f"{call}p={p})"
            else:
                expr = f"{call}p={p}, dim={dim!r}{kds})"
        elif name in ("softmax", "log_softmax", "cumsum"):
            d = dim if isinstance(dim, int) else dim[0]
            expr = f"{call}{d})"
        else:  # all, any
            if no_dim:
                expr = f"{call.rstrip(', ')})"
            else:
                d = dim if isinstance(dim, int) else dim[0]
                expr = f"{call}{d}{kds})"
        self.op(out, expr, (a,), f"reduce.{name}")

    def reshape_target(self, shape) -> tuple:
        n = _prod(shape)
        r = self.rng.random()
        if r < 0.2:
            return (-1,)
        if r < 0.35:
            return (n,)
        if r < 0.55 and len(shape) >= 2:  # merge two adjacent dims
            i = self.rng.randrange(len(shape) - 1)
            return tuple(shape[:i]) + (shape[i] * shape[i + 1],) + tuple(shape[i + 2 :])
        if r < 0.7:  # insert a 1
            i = self.rng.randint(0, len(shape))
            return tuple(shape[:i]) + (1,) + tuple(shape[i:])
        if r < 0.85 and n > 1:  # factor
            divs = [d for d in range(2, n + 1) if n % d == 0]
            d = self.rng.choice(divs)
            s = (d, n // d)
            return s if self.chance(0.5) else (s[0], -1)
        if self.chance(0.5) and n > 0:
            return (n + 1,)  # invalid
        return tuple(reversed(shape)) or ()

    def f_view(self):
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        shape = tuple(ta.shape)
        rank = len(shape)
        out = self.fresh()
        kind = self.rng.choice(
            "view reshape flatten transpose permute t squeeze unsqueeze expand narrow select "
            "unbind split chunk T mT swapaxes ravel view_as contiguous detach".split()
        )
        seq = False
        if kind in ("view", "reshape"):
            tgt = self.reshape_target(shape)
            args = ", ".join(map(str, tgt)) if tgt and self.chance(0.5) else repr(tgt)
            expr = (
                f"torch.reshape({a}, {tgt!r})"
                if kind == "reshape" and self.chance(0.3)
                else f"{a}.{kind}({args})"
            )
        elif kind == "flatten":
            if rank and self.chance(0.6):
                s = self.rng.randint(0, rank - 1)
                e = self.rng.randint(s, rank - 1)
                expr = f"{a}.flatten({s}, {e - rank if self.chance(0.4) else e})"
            else:
                expr = f"torch.flatten({a})"
        elif kind in ("transpose", "swapaxes"):
            expr = f"{a}.{kind}({self.dim_arg(rank)}, {self.dim_arg(rank)})"
        elif kind == "permute":
            perm = list(range(rank))
            self.rng.shuffle(perm)
            if self.chance(0.3):
                perm = [p - rank for p in perm]
            if self.chance(0.03) and perm:
                perm[0] = perm[-1]
            expr = f"{a}.permute({', '.join(map(str, perm))})" if perm else f"{a}.permute()"
            if self.chance(0.3):
                expr = f"torch.permute({a}, {tuple(perm)!r})"
        elif kind == "t":
            expr = f"{a}.t()"
        elif kind == "squeeze":
            expr = (
                f"{a}.squeeze()"
                if self.chance(0.4) or not rank
                else f"{a}.squeeze({self.dim_arg(rank)})"
            )
        elif kind == "unsqueeze":
            expr = f"{a}.unsqueeze({self.rng.randint(-rank - 1, rank)})"
        elif kind == "expand":
            tgt = [d if d != 1 or self.chance(0.4) else self.rng.randint(2, 3) for d in shape]
            if self.chance(0.3) and rank < 8:
                tgt = [self.rng.randint(1, 3)] + tgt
            tgt = [
                (-1 if (i >= len(tgt) - rank and self.chance(0.2)) else d)
                for i, d in enumerate(tgt)
            ]
            if _prod([abs(d) for d in tgt]) > 4 * MAX_NUMEL:
                return
            expr = f"{a}.expand({', '.join(map(str, tgt))})" if tgt else f"{a}.expand(())"
        elif kind == "narrow":
            if not rank:
                expr = f"{a}.narrow(0, 0, 1)"
            else:
                d = self.rng.randrange(rank)
                n = shape[d]
                start = self.rng.randint(0, n)
                length = self.rng.randint(0, n - start)
                if self.chance(0.2) and start:
                    start -= n
                expr = f"{a}.narrow({d}, {start}, {length})"
        elif kind == "select":
            d = self.dim_arg(rank)
            n = shape[d] if rank and -rank <= d < rank else 1
            i = self.rng.randint(-n, n - 1) if n and not self.chance(0.03) else n
            expr = f"{a}.select({d}, {i})" if self.chance(0.6) else f"torch.select({a}, {d}, {i})"
        elif kind in ("unbind", "split", "chunk"):
            seq = True
            d = self.dim_arg(rank)
            if kind == "unbind":
                expr = f"{a}.unbind({d})"
            elif kind == "split":
                n = shape[d] if rank and -rank <= d < rank else 1
                if self.chance(0.3) and n:
                    cut = self.rng.randint(0, n)
                    expr = f"{a}.split([{cut}, {n - cut}], {d})"
                else:
                    expr = f"{a}.split({self.rng.randint(1, 3)}, {d})"
            else:
                expr = f"{a}.chunk({self.rng.randint(1, 4)}, {d})"
        elif kind in ("T", "mT"):
            expr = f"{a}.{kind}"
        elif kind == "ravel":
            expr = f"{a}.ravel()"
        elif kind == "view_as":
            b = self.pick(lambda t: t.numel() == ta.numel())
            expr = f"{a}.view_as({b})"
        elif kind == "contiguous":
            expr = f"{a}.contiguous()"
        else:
            expr = f"{a}.detach()"
        self.op(out, expr, (a,), f"view.{kind}")
        if seq and out in self.ns and isinstance(self.ns[out], tuple) and self.ns[out]:
            k = self.rng.randrange(len(self.ns[out]))
            self.op(self.fresh(), f"{out}[{k}]", (out,), "seq.item")

    # --- indexing -------------------------------------------------------------------------

    def index_key(self, a: str) -> str:
        ta = self.t(a)
        shape = tuple(ta.shape)
        rank = len(shape)
        kind = self.rng.choices(["basic", "adv", "mask", "mixed"], weights=[50, 22, 12, 16])[0]
        if kind == "mask":
            r = self.rng.random()
            if r < 0.4 and _is_float(ta):
                return f"{a} > {self.rng.choice([0, 0.5, -1])}"
            if rank and r < 0.8:
                k = self.rng.randint(1, rank)
                vals = [self.chance(0.5) for _ in range(_prod(shape[:k]))]
                return f"torch.tensor({fmt_nested(vals, shape[:k])}, dtype=torch.bool)"
            return self.rng.choice(["True", "False", "torch.tensor(True)"])
        parts = []
        d = 0  # next dim of ``a`` the key consumes
        used_ellipsis = False
        n_items = self.rng.randint(1, max(1, min(rank, 4) + (1 if self.chance(0.3) else 0)))
        for _ in range(n_items):
            size = shape[d] if d < rank else 1
            r = self.rng.random()
            if kind == "adv" and not parts or kind == "mixed" and self.chance(0.45):
                if self.chance(0.5):
                    k = self.rng.randint(0, 3)
                    vals = [self.rng.randint(-size, size - 1) if size else 0 for _ in range(k)]
                    if self.chance(0.03):
                        vals.append(size)
                    parts.append(repr(vals) if k or self.chance(0.5) else "[0]")
                else:
                    ishape = self.rng.choice([(2,), (3,), (2, 2), (), (1, 2)])
                    vals = [
                        self.rng.randint(-size, size - 1) if size else 0
                        for _ in range(_prod(ishape))
                    ]
                    parts.append(f"torch.tensor({fmt_nested(vals, ishape)})")
                d += 1
            elif r < 0.3:
                if not size:
                    parts.append(":")
                else:
                    parts.append(
                        str(self.rng.randint(-size, size - 1) if not self.chance(0.02) else size)
                    )
                d += 1
            elif r < 0.75:
                lo = self.rng.choice(["", str(self.rng.randint(-size - 1, size + 1))])
                hi = self.rng.choice(["", str(self.rng.randint(-size - 1, size + 1))])
                st = self.rng.choice(["", "", ":2", ":3"])
                if self.chance(0.01):
                    st = ":-1"
                parts.append(f"{lo}:{hi}{st}")
                d += 1
            elif r < 0.87:
                parts.append("None")
            elif not used_ellipsis:
                parts.append("...")
                used_ellipsis = True
                d = max(d, rank - (n_items - len(parts)))
            else:
                parts.append(":")
                d += 1
        if len(parts) == 1 and self.chance(0.8):
            return parts[0]
        return ", ".join(parts) + ("," if len(parts) == 1 else "")

    def f_getitem(self):
        a = self.pick()
        if a is None:
            return
        key = self.index_key(a)
        self.op(self.fresh(), f"{a}[{key}]", (a,), "getitem." + _key_kind(key))

    def f_setitem(self):
        a = self.inplace_target()
        if a is None:
            return
        key = self.index_key(a)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sub = eval(f"{a}[{key}]", self.ns)
            sshape = tuple(sub.shape)
        except Exception:
            sshape = ()
        r = self.rng.random()
        uses = (a,)
        if r < 0.35:
            val = self.py_scalar()
        elif r < 0.55:
            src = self.pick(lambda t: _is_float(t))
            if src is None:
                val = self.py_scalar()
            else:
                val, uses = f"{src}.sum()", (a, src)
        else:
            shape = sshape if self.chance(0.6) else self.related_shape(sshape)
            dt = _dt(self.t(a)) if self.chance(0.7) else self.dtype()
            b = self.leaf(shape, dt)
            if b is None:
                return
            val, uses = b, (a, b)
        if not _is_float(self.t(a)) and len(uses) > 1 and self.t(uses[1]).requires_grad:
            val = f"{val}.detach()"  # Note [Generation constraints, not comparison tolerances]
        op = "=" if self.chance(0.85) else "+="
        self.inplace(a, f"{a}[{key}] {op} {val}", uses, f"setitem.{_key_kind(key)}")

    # --- linear algebra, joins, index ops -------------------------------------------------

    def f_linalg(self):
        a = self.pick(lambda t: t.dim() >= 1 and t.dtype != torch.bool)
        if a is None:
            return
        ta = self.t(a)
        shape = tuple(ta.shape)
        dt = _dt(ta) if self.chance(0.9) else self.dtype()
        kind = self.rng.choice(["matmul", "matmul", "mm", "bmm", "mv", "dot", "outer", "addmm"])
        m = self.rng.randint(1, 3)
        n = shape[-1]
        bshape = {
            "matmul": self.rng.choice([(n,), (n, m), (2, n, m)]) if len(shape) <= 2 else (n, m),
            "mm": (n, m),
            "bmm": (shape[0], n, m),
            "mv": (n,),
            "dot": (n,),
            "outer": (self.rng.randint(1, 3),),
            "addmm": (n, m),
        }[kind]
        if self.chance(0.04):
            bshape = tuple(d + 1 for d in bshape)
        b = self.leaf(bshape, dt)
        if b is None:
            return
        out = self.fresh()
        if kind == "matmul":
            expr = self.rng.choice([f"{a} @ {b}", f"torch.matmul({a}, {b})", f"{a}.matmul({b})"])
        elif kind == "addmm":
            p = shape[0]
            ishape = self.rng.choice([(p, m), (m,), (), (1, m), (p, 1), (p + 1, m)])
            c = self.leaf(ishape, dt)
            if c is None:
                return
            extra = ""
            if self.chance(0.4):
                extra = (
                    f", beta={self.rng.choice([0, 2, 0.5])}, alpha={self.rng.choice([1, -1, 3])}"
                )
            expr = f"torch.addmm({c}, {a}, {b}{extra})"
            return self.op(out, expr, (c, a, b), "linalg.addmm")
        else:
            expr = f"torch.{kind}({a}, {b})" if self.chance(0.5) else f"{a}.{kind}({b})"
        self.op(out, expr, (a, b), f"linalg.{kind}")

    def f_join(self):
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        shape = tuple(ta.shape)
        kind = self.rng.choice(["cat", "cat", "stack", "concat"])
        rank = len(shape)
        if kind == "stack":
            d = self.rng.randint(-rank - 1, rank)
            other_shape = shape
        else:
            d = self.dim_arg(rank)
            other_shape = list(shape)
            if rank and -rank <= d < rank:
                other_shape[d] = self.rng.randint(0, 3)
            other_shape = tuple(other_shape)
        r = self.rng.random()
        if r < 0.3:
            b, uses = f"{a} * 2", (a,)
        else:
            dt = _dt(ta) if self.chance(0.7) else self.dtype()
            b = self.leaf(other_shape, dt)
            if b is None:
                return
            uses = (a, b)
        items = [a, b] if self.chance(0.7) else [a, b, a]
        expr = (
            f"torch.{kind}([{', '.join(items)}], {d})"
            if self.chance(0.7)
            else f"torch.{kind}(({', '.join(items)}), dim={d})"
        )
        self.op(self.fresh(), expr, uses, f"join.{kind}")

    def f_index_ops(self):
        a = self.pick(lambda t: t.dim() >= 0)
        if a is None:
            return
        ta = self.t(a)
        shape = tuple(ta.shape)
        rank = len(shape)
        kind = self.rng.choice(
            ["index_select", "gather", "masked_fill", "masked_fill_", "where", "where"]
        )
        out = self.fresh()
        if kind == "index_select":
            d = self.dim_arg(rank)
            n = shape[d] if rank and -rank <= d < rank else 1
            vals = [self.rng.randint(0, n - 1) for _ in range(self.rng.randint(0, 3))] if n else []
            if self.chance(0.08):
                vals.append(self.rng.choice([-1, n]))
            idx = f"torch.tensor({vals!r}, dtype=torch.int64)"
            if self.chance(0.15) and vals:
                idx = f"torch.tensor({vals[0]})"
            self.op(
                out,
                f"{a}.index_select({d}, {idx})"
                if self.chance(0.5)
                else f"torch.index_select({a}, {d}, {idx})",
                (a,),
                "index.index_select",
            )
        elif kind == "gather":
            d = self.dim_arg(rank)
            dd = d % max(rank, 1)
            ishape = [
                self.rng.randint(0 if s == 0 else 1, s) if i != dd else self.rng.randint(1, 3)
                for i, s in enumerate(shape)
            ]
            if self.chance(0.1) and rank:
                ishape[0] = 1
            n = shape[dd] if rank else 1
            vals = [self.rng.randint(0, max(n - 1, 0)) for _ in range(_prod(ishape))]
            idx = f"torch.tensor({fmt_nested(vals, tuple(ishape))}, dtype=torch.int64)"
            if _prod(ishape) == 0:
                idx = f"torch.zeros({tuple(ishape)!r}, dtype=torch.int64)"
            self.op(
                out,
                f"torch.gather({a}, {d}, {idx})" if self.chance(0.5) else f"{a}.gather({d}, {idx})",
                (a,),
                "index.gather",
            )
        elif kind in ("masked_fill", "masked_fill_"):
            mshape = self.related_shape(shape) if self.chance(0.3) else shape
            vals = [self.chance(0.5) for _ in range(_prod(mshape))]
            mask = (
                f"torch.tensor({fmt_nested(vals, mshape)}, dtype=torch.bool)"
                if _prod(mshape)
                else f"torch.zeros({mshape!r}, dtype=torch.bool)"
            )
            if _is_float(ta) and self.chance(0.3):
                mask = f"{a} > 0"
            r = self.rng.random()
            uses = (a,)
            if r < 0.6:
                v = self.py_scalar()
            elif r < 0.8:
                v = f"torch.tensor({fmt_scalar(self.scalar_value(_dt(ta)))}, dtype=torch.{_dt(ta)})"
            else:
                src = self.pick(lambda t: _is_float(t))
                v, uses = (f"{src}.sum()", (a, src)) if src else (self.py_scalar(), (a,))
                if src and self.t(src).requires_grad:
                    # Note [Generation constraints, not comparison tolerances]
                    v = v + ".detach()" if not _is_float(ta) else v
            if kind == "masked_fill":
                self.op(out, f"{a}.masked_fill({mask}, {v})", uses, "index.masked_fill")
            else:
                t = self.inplace_target()
                if t is None:
                    return
                tt = self.t(t)
                if not _is_float(tt) and v.endswith(".sum()"):
                    v += ".detach()"  # Note [Generation constraints, not comparison tolerances]
                mask = (
                    mask.replace(f"{a} > 0", f"{t} > 0")
                    if _is_float(tt)
                    else f"torch.ones({tuple(tt.shape)!r}, dtype=torch.bool)"
                )
                self.inplace(
                    t,
                    f"{t}.masked_fill_({mask}, {v})",
                    (t,) + tuple(u for u in uses if u != a),
                    "index.masked_fill_",
                )
        else:
            b, uses = self.operand(a)
            if b is None or self.ended:
                return
            cond = f"{a} > 0" if ta.dtype != torch.bool else a
            if self.chance(0.3):
                cshape = self.related_shape(shape)
                vals = [self.chance(0.5) for _ in range(_prod(cshape))]
                if _prod(cshape):
                    cond = f"torch.tensor({fmt_nested(vals, cshape)})"
            if self.chance(0.5):
                expr = f"torch.where({cond}, {a}, {b})"
            else:
                expr = f"torch.where({cond}, {b}, {self.py_scalar()})"
            self.op(out, expr, (a,) + tuple(uses), "index.where")

    def f_clamp(self):
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        lo = self.rng.choice([-1, -0.5, 0, 0.25, 1, None])
        hi = self.rng.choice([0, 0.5, 1, 2, None, -1])
        uses = (a,)
        r = self.rng.random()
        if r < 0.15:
            b = self.pick(lambda t: _broadcasts(tuple(t.shape), tuple(ta.shape)))
            if b is not None:
                expr = f"{a}.clamp(min={b})" if self.chance(0.5) else f"{a}.clamp(max={b})"
                return self.op(self.fresh(), expr, (a, b), "clamp.tensor")
        if r < 0.3:
            fn, args = self.rng.choice(
                [
                    ("clamp_min", fmt_scalar(lo if lo is not None else 0)),
                    ("clamp_max", fmt_scalar(hi if hi is not None else 1)),
                ]
            )
            return self.op(self.fresh(), f"{a}.{fn}({args})", uses, f"clamp.{fn}")
        args = []
        if lo is not None:
            args.append(f"min={lo}")
        if hi is not None:
            args.append(f"max={hi}")
        if not args:
            args = ["0"]
        if r < 0.5:
            t = self.inplace_target()
            if t is not None:
                return self.inplace(t, f"{t}.clamp_({', '.join(args)})", (t,), "clamp.clamp_")
        name = self.rng.choice(["clamp", "clamp", "clip"])
        expr = (
            f"torch.{name}({a}, {', '.join(args)})"
            if self.chance(0.4)
            else f"{a}.{name}({', '.join(args)})"
        )
        self.op(self.fresh(), expr, uses, f"clamp.{name}")

    def f_sort(self):
        a = self.pick(lambda t: t.dtype != torch.bool)
        if a is None:
            return
        ta = self.t(a)
        rank = ta.dim()
        d = self.dim_arg(rank, allow_oob=False)
        if rank and not _unique_along(ta, d):
            return  # Note [Generation constraints, not comparison tolerances]
        if not rank and False:
            return
        out = self.fresh()
        if self.chance(0.5):
            desc = ", descending=True" if self.chance(0.4) else ""
            expr = f"{a}.sort({d}{desc})" if self.chance(0.6) else f"torch.sort({a}, {d}{desc})"
            self.op(out, expr, (a,), "sort.sort")
        else:
            n = ta.shape[d] if rank else 1
            k = self.rng.randint(0, n) if not self.chance(0.03) else n + 1
            largest = ", largest=False" if self.chance(0.3) else ""
            self.op(out, f"{a}.topk({k}, {d}{largest})", (a,), "sort.topk")
        if out in self.ns and isinstance(self.ns[out], tuple):
            self.op(
                self.fresh(),
                f"{out}.values" if self.chance(0.7) else f"{out}[1]",
                (out,),
                "seq.item",
            )

    def f_convert(self):
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        target = self.dtype()
        if _is_float(ta) and target not in FLOATS and not _fits(ta, target):
            return  # Note [Generation constraints, not comparison tolerances]
        form = self.rng.random()
        method = {
            "float32": "float",
            "float64": "double",
            "float16": "half",
            "int64": "long",
            "int32": "int",
            "bool": "bool",
        }.get(target)
        if method and form < 0.5:
            expr = f"{a}.{method}()"
        elif form < 0.8:
            expr = f"{a}.to(torch.{target})"
        else:
            expr = f"{a}.to(dtype=torch.{target})"
        self.op(self.fresh(), expr, (a,), f"convert.{target}")

    def f_create(self):
        out = self.fresh()
        a = self.pick()
        kind = self.rng.choice(
            [
                "zeros_like",
                "ones_like",
                "full_like",
                "arange",
                "linspace",
                "eye",
                "full",
                "new_zeros",
                "new_full",
                "scalar",
                "big_half",
            ]
        )
        if a is None or kind in ("arange", "linspace", "eye", "full", "scalar", "big_half"):
            if kind == "arange":
                dt = self.rng.choice(
                    ["", ", dtype=torch.float32", ", dtype=torch.float64", ", dtype=torch.int32"]
                )
                s = self.rng.choice(
                    [
                        f"{self.rng.randint(0, 6)}",
                        f"1, {self.rng.randint(1, 7)}",
                        "0.5, 3.0, 0.5",
                        "5, 0, -1",
                    ]
                )
                expr = f"torch.arange({s}{dt})"
            elif kind == "linspace":
                lo, hi = self.rng.choice([-1, 0, 0.5]), self.rng.choice([1, 2.5, 3])
                expr = f"torch.linspace({lo}, {hi}, {self.rng.randint(0, 6)})"
            elif kind == "eye":
                expr = f"torch.eye({self.rng.randint(0, 4)}, {self.rng.randint(1, 4)})"
            elif kind == "full":
                shape = self.shape()
                expr = f"torch.full({shape!r}, {self.py_scalar()})"
            elif kind == "big_half":  # float16 sums and norms must accumulate in float32
                n, v = self.rng.choice([300, 1000, 2048]), self.rng.choice([100.0, 300.0, 0.1])
                expr = f"torch.full(({n},), {v}, dtype=torch.float16, requires_grad=True)"
            else:
                v = fmt_scalar(self.scalar_value("float32"))
                expr = f"torch.tensor({v}, requires_grad=True)"
            return self.op(out, expr, (), f"create.{kind}")
        dt = f", dtype=torch.{self.dtype()}" if self.chance(0.3) else ""
        if kind == "full_like":
            expr = f"torch.full_like({a}, {self.py_scalar()}{dt})"
        elif kind == "new_zeros":
            expr = f"{a}.new_zeros({self.shape()!r})"
        elif kind == "new_full":
            expr = f"{a}.new_full({self.shape()!r}, {self.py_scalar()})"
        else:
            expr = f"torch.{kind}({a}{dt})"
        self.op(out, expr, (a,), f"create.{kind}")

    def f_misc(self):
        """The remaining ops of ``gradstack_tensor.OPS``: diag, tril/triu, trace, repeat,
        flip, expand_as, fill_, zero_, copy_ (broadcasting a source into a target)."""
        a = self.pick()
        if a is None:
            return
        ta = self.t(a)
        rank = ta.dim()
        kind = self.rng.choice(
            "diag tril triu trace repeat flip expand_as fill_ zero_ copy_".split()
        )
        k = self.rng.choice([0, 0, 1, -1, 2])
        if kind == "diag":
            expr = f"torch.diag({a}, {k})" if self.chance(0.5) else f"{a}.diag({k})"
        elif kind in ("tril", "triu"):
            expr = f"{a}.{kind}({k})" if self.chance(0.5) else f"torch.{kind}({a}, {k})"
        elif kind == "trace":
            expr = f"{a}.trace()"
        elif kind == "repeat":
            reps = [self.rng.randint(0, 2) if self.chance(0.2) else self.rng.randint(1, 2)]
            reps = reps * max(rank, 1) + ([2] if self.chance(0.3) else [])
            if _prod(reps) * ta.numel() > 4 * MAX_NUMEL:
                return
            expr = f"{a}.repeat({', '.join(map(str, reps))})"
        elif kind == "flip":
            dims = self.rng.sample(range(rank), self.rng.randint(1, rank)) if rank else []
            expr = (
                f"{a}.flip({tuple(dims)!r})" if self.chance(0.5) else f"torch.flip({a}, {dims!r})"
            )
        elif kind == "expand_as":
            b = self.pick(lambda t: _broadcasts(tuple(ta.shape), tuple(t.shape)))
            expr = f"{a}.expand_as({b})"
            return self.op(self.fresh(), expr, (a, b), "misc.expand_as")
        else:
            t = self.inplace_target()
            if t is None:
                return
            if kind == "fill_":
                v = self.py_scalar() if self.chance(0.7) else f"torch.tensor({self.py_scalar()})"
                return self.inplace(t, f"{t}.fill_({v})", (t,), "misc.fill_")
            if kind == "zero_":
                return self.inplace(t, f"{t}.zero_()", (t,), "misc.zero_")
            src = self.pick(lambda u: _broadcasts(tuple(self.t(t).shape), tuple(u.shape)))
            if src is None or src == t:
                return
            return self.inplace(t, f"{t}.copy_({src})", (t, src), "misc.copy_")
        self.op(self.fresh(), expr, (a,), f"misc.{kind}")

    def f_clone(self):
        a = self.pick(lambda t: t.is_leaf) or self.pick()
        if a is None:
            return
        expr = self.rng.choice([f"{a}.clone()", f"{a} * 1", f"{a} + 0", f"torch.clone({a})"])
        self.op(self.fresh(), expr, (a,), "clone")

    def f_autograd(self):
        kind = self.rng.choice(
            ["retain_grad", "hook", "hook_record", "detach", "no_grad", "requires_grad_", "leaf"]
        )
        if kind == "leaf":
            self.leaf()
            return
        if kind == "no_grad":
            st_before = len(self.stmts)
            fam = self.rng.choice(
                [
                    self.f_unary,
                    self.f_binary,
                    self.f_view,
                    self.f_unary_inplace,
                    self.f_binary_inplace,
                ]
            )
            fam()
            # wrap the statement the family added (when it added exactly one, single line)
            added = self.stmts[st_before:]
            if len(added) == 1 and "\n" not in added[0].code and not self.ended:
                st = added[0]
                self.stmts.pop()
                self.replay()
                wrapped = Stmt(
                    "with torch.no_grad():\n    " + st.code,
                    st.defines,
                    st.uses,
                    st.checks,
                    "no_grad." + st.tag,
                )
                self.emit(wrapped)
            return
        a = self.pick(lambda t: t.requires_grad)
        if kind == "requires_grad_":
            b = self.pick(lambda t: t.is_leaf and not t.requires_grad)
            if b is None:
                return
            self.inplace(b, f"{b}.requires_grad_()", (b,), "autograd.requires_grad_")
            return
        if a is None:
            return
        if kind == "retain_grad":
            if (
                self.inplace(a, f"{a}.retain_grad()", (a,), "autograd.retain_grad")
                and not self.ended
            ):
                self.retained.append(a)
        elif kind == "hook":
            fn = self.rng.choice(
                ["lambda g: g * 2", "lambda g: None", "lambda g: g + 1", "lambda g: g.clamp(-1, 1)"]
            )
            self.inplace(a, f"{a}.register_hook({fn})", (a,), "autograd.hook")
        elif kind == "hook_record":
            h = self.fresh("hk")
            code = f"{h} = []\n{a}.register_hook(lambda g: {h}.append(g.clone()))"
            if self.emit(Stmt(code, (h,), (a,), (), "autograd.hook_record")) and not self.ended:
                self.hooks.append(h)
        else:
            expr = f"{a}.detach()" if self.chance(0.6) else f"{a}.detach().requires_grad_()"
            self.op(self.fresh(), expr, (a,), "autograd.detach")

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
    # the backward phase

    def grad_leaves(self) -> list[str]:
        return self.tensors(lambda t: t.is_leaf and t.requires_grad)

    def backward_phase(self) -> None:
        roots = self.tensors(lambda t: t.requires_grad and _is_float(t))
        if not roots:
            if self.chance(0.05):
                a = self.pick(lambda t: _is_float(t))
                if a is not None:
                    self.emit(
                        Stmt(
                            f"{a}.sum().backward()", (), (a,), (), "backward.no_grad_root", "bwd1"
                        ),
                        1.0,
                    )
            return
        chosen = [roots[-1]]
        if len(roots) > 1 and self.chance(0.5):
            chosen.append(self.rng.choice(roots[:-1]))
        terms = []
        for r in chosen:
            t = self.t(r)
            if t.numel() == 0 or t.numel() > 128 or self.chance(0.15):
                terms.append(f"{r}.sum()")
            else:
                w = [
                    self.rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0])
                    for _ in range(t.numel())
                ]
                lit = fmt_nested(w, tuple(t.shape))
                terms.append(f"({r} * torch.tensor({lit}, dtype=torch.{_dt(t)})).sum()")
        if (
            not self.emit(
                Stmt(f"loss = {' + '.join(terms)}", ("loss",), tuple(chosen), ("loss",), "loss"),
                1.0,
            )
            or self.ended
        ):
            return
        leaves = self.grad_leaves()
        grad_checks = (
            tuple(f"{x}.grad" for x in leaves)
            + tuple(f"{v}.grad" for v in self.retained)
            + tuple(self.hooks)
        )
        mode = self.rng.choices(
            ["backward", "grad", "second", "twice", "gradient"], weights=[35, 22, 33, 5, 5]
        )[0]
        inputs = list(leaves)
        inter = self.tensors(lambda t: t.requires_grad and not t.is_leaf)
        if inter and self.chance(0.25):
            inputs.append(self.rng.choice(inter))
        if not inputs and mode in ("grad", "second"):
            mode = "backward"
        ins = ", ".join(inputs)
        if mode == "backward":
            self.emit(Stmt("loss.backward()", (), ("loss",), grad_checks, "backward", "bwd1"), 1.0)
        elif mode == "gradient":
            r = chosen[0]
            t = self.t(r)
            if t.numel() > 128 or t.numel() == 0:
                g = f"torch.ones_like({r})"
            else:
                w = [self.rng.choice([-1.0, 0.5, 2.0]) for _ in range(t.numel())]
                g = f"torch.tensor({fmt_nested(w, tuple(t.shape))}, dtype=torch.{_dt(t)})"
            self.emit(
                Stmt(
                    f"{r}.backward(gradient={g})",
                    (),
                    (r,),
                    grad_checks,
                    "backward.gradient",
                    "bwd1",
                ),
                1.0,
            )
        elif mode == "twice":
            if (
                self.emit(
                    Stmt(
                        "loss.backward(retain_graph=True)",
                        (),
                        ("loss",),
                        grad_checks,
                        "backward.retain",
                        "bwd1",
                    ),
                    1.0,
                )
                and not self.ended
            ):
                self.emit(
                    Stmt("loss.backward()", (), ("loss",), grad_checks, "backward.twice", "bwd1"),
                    1.0,
                )
        elif mode == "grad":
            self.emit(
                Stmt(
                    f"gr = torch.autograd.grad(loss, [{ins}], allow_unused=True)",
                    ("gr",),
                    tuple(inputs) + ("loss",),
                    ("gr",) + tuple(self.hooks),
                    "grad",
                    "bwd1",
                ),
                1.0,
            )
        else:
            ok = self.emit(
                Stmt(
                    f"gr = torch.autograd.grad(loss, [{ins}], create_graph=True, "
                    "allow_unused=True)",
                    ("gr",),
                    tuple(inputs) + ("loss",),
                    ("gr",),
                    "grad.create_graph",
                    "bwd1",
                ),
                1.0,
            )
            if not ok or self.ended:
                return
            gr = self.ns["gr"]
            live = [i for i, g in enumerate(gr) if g is not None and g.requires_grad]
            if not live:
                return
            terms = [
                f"(gr[{i}] * gr[{i}]).sum()" if self.chance(0.6) else f"gr[{i}].sin().sum()"
                for i in live
            ]
            if (
                not self.emit(
                    Stmt(f"s = {' + '.join(terms)}", ("s",), ("gr",), ("s",), "second.sum", "bwd2"),
                    1.0,
                )
                or self.ended
            ):
                return
            if self.chance(0.7):
                self.emit(
                    Stmt(
                        f"gg = torch.autograd.grad(s, [{ins}], allow_unused=True)",
                        ("gg",),
                        ("s",) + tuple(inputs),
                        ("gg",),
                        "second.grad",
                        "bwd2",
                    ),
                    1.0,
                )
            else:
                self.emit(
                    Stmt("s.backward()", (), ("s",), grad_checks, "second.backward", "bwd2"), 1.0
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


def _broadcasts(a: tuple, b: tuple) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _unique_along(t, d) -> bool:
    """No two equal (or NaN) values in any slice along ``d``."""
    if t.numel() == 0:
        return True
    s = t.detach().double().sort(d).values
    if torch.isnan(s).any():
        return False
    n = s.shape[d]
    # (equal neighbours, never a difference: inf - inf is NaN, which a "!= 0" test passes)
    return bool((s.narrow(d, 1, n - 1) != s.narrow(d, 0, n - 1)).all()) if n > 1 else True


def _fits(t, target: str) -> bool:
    """Every value of float tensor ``t`` converts to ``target`` without undefined behaviour."""
    if target == "bool" or t.numel() == 0:
        return True
    v = t.detach().double()
    if not bool(torch.isfinite(v).all()):
        return False
    lo, hi = _INT_RANGE[target]
    return bool((v > float(lo) - 1).all() and (v < float(hi) + 1).all())


def _key_kind(key: str) -> str:
    if "torch.tensor(" in key and "bool" in key or ">" in key or key in ("True", "False"):
        return "mask"
    adv = "[" in key or "torch.tensor(" in key
    basic = ":" in key or "None" in key or "..." in key
    if adv and basic:
        return "mixed"
    if adv:
        return "adv"
    return "basic"


def generate(seed: int, index: int) -> Program:
    """The program number ``index`` of the stream ``seed`` (deterministic)."""
    return Generator(seed, index).build()
