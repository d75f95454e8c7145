"""The end of every generated program: a weighted loss and a backward pass
(``backward()``, ``autograd.grad`` or a second-order pass)."""

from __future__ import annotations

from .generate_common import (
    _dt,
    _is_float,
    fmt_nested,
)
from .program import Stmt


class BackwardPhase:
    """A part of :class:`~gsfuzz.generate.Generator` (its bookkeeping: ``emit``, ``op``,
    ``pick`` ..., is in ``generate.py``)."""

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
