"""The generator's indexing, linear-algebra, join, index-op, conversion, factory and
autograd statements (``f_getitem`` ... ``f_autograd``)."""

from __future__ import annotations

import warnings

import torch

from .generate_common import (
    FLOATS,
    MAX_NUMEL,
    _broadcasts,
    _dt,
    _fits,
    _is_float,
    _key_kind,
    _prod,
    _unique_along,
    fmt_nested,
    fmt_scalar,
)
from .program import Stmt


class IndexFamilies:
    """A part of :class:`~gsfuzz.generate.Generator` (its bookkeeping: ``emit``, ``op``,
    ``pick`` ..., is in ``generate.py``)."""

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
