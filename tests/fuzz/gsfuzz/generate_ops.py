"""The generator's elementwise, reduction and view statements (``f_unary`` ...
``f_view``)."""

from __future__ import annotations

from .generate_common import (
    BINARY,
    BINARY_INPLACE,
    INPLACE_SYMBOL,
    MAX_NUMEL,
    SYMBOL,
    UNARY_FLOAT,
    UNARY_INPLACE,
    _is_float,
    _prod,
)


class OpFamilies:
    """A part of :class:`~gsfuzz.generate.Generator` (its bookkeeping: ``emit``, ``op``,
    ``pick`` ..., is in ``generate.py``)."""

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
