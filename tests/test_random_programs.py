"""Random programs, run by gradstack and by PyTorch: same values, same gradients.

Each program starts from a few float64 leaves of random broadcast-compatible shapes and
applies a random sequence of ops drawn from ``OPS`` below (unary, binary with
broadcasting, reductions, shape ops, matmul, in-place on non-leaf intermediates), then
reduces to a scalar.  Both frameworks run the same program text on the same data; the
test compares the forward value, the first-order gradients of every leaf, and (for half of
the programs) second-order gradients through ``create_graph=True``.

Note [Why random programs]
The derivative table is tested op by op elsewhere; what breaks in practice is the
combination: broadcasting into in-place ops, views of views, a tensor used twice, a
reduction feeding a matmul.  Seeds are fixed so a failure reproduces; the failing
program's text is in the assertion message.
"""

from __future__ import annotations

import random

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

N_PROGRAMS = 300


def _unary(name, domain=None):
    return ("unary", name, domain)


# (kind, op, domain): domain maps the input into the op's domain (text applied in both)
OPS = [
    _unary("sin"),
    _unary("cos"),
    _unary("tanh"),
    _unary("sigmoid"),
    _unary("exp", "clip"),
    _unary("log", "pos"),
    _unary("sqrt", "pos"),
    _unary("abs"),
    _unary("neg"),
    _unary("relu"),
    _unary("reciprocal", "pos"),
    _unary("atan"),
    _unary("log1p", "pos"),
    _unary("expm1", "clip"),
    _unary("square"),
    ("binary", "add", None),
    ("binary", "sub", None),
    ("binary", "mul", None),
    ("binary", "div", "pos"),
    ("binary", "maximum", None),
    ("binary", "minimum", None),
    ("scalar", "mul", None),
    ("scalar", "add", None),
    ("scalar", "rsub", None),
    ("scalar", "rdiv", "pos"),
    ("scalar", "pow", "pos"),
    ("reduce", "sum", None),
    ("reduce", "mean", None),
    ("reduce", "amax", None),
    ("reduce", "softmax", None),
    ("reduce", "log_softmax", None),
    ("reduce", "logsumexp", None),
    ("shape", "t", None),
    ("shape", "flip", None),
    ("shape", "unsqueeze_sum", None),
    ("shape", "getitem", None),
    ("shape", "reshape", None),
    ("shape", "cat", None),
    ("shape", "stack_sum", None),
    ("matmul", "matmul", None),
    ("where", "where", None),
    ("inplace", "mul_", None),
    ("inplace", "add_", None),
    ("clamp", "clamp", None),
]


def _domain(expr, domain):
    if domain == "pos":
        return f"({expr}.abs() + 0.5)"
    if domain == "clip":
        return f"({expr}.clamp(-3.0, 3.0))"
    return expr


def generate(seed):
    """A random program: (leaf shapes, list of lines computing v0..vN, result variable)."""
    rng = random.Random(seed)
    base = [rng.randint(1, 4) for _ in range(2)]
    shapes = []
    for _ in range(rng.randint(1, 3)):
        s = list(base)
        if rng.random() < 0.3:
            s[rng.randrange(2)] = 1
        if rng.random() < 0.2:
            s = s[1:]
        shapes.append(tuple(s))
    lines = []
    values = [f"x{i}" for i in range(len(shapes))]
    for step in range(rng.randint(2, 7)):
        kind, name, domain = rng.choice(OPS)
        a = rng.choice(values)
        arg = _domain(a, domain) if kind in ("unary", "scalar") else a
        out = f"v{step}"
        if kind == "unary":
            expr = f"{arg}.{name}()" if name != "square" else f"({arg} * {arg})"
        elif kind == "binary":
            b = rng.choice(values)
            expr = (
                f"{a}.{name}({_domain(b, domain)})"
                if name in ("maximum", "minimum")
                else f"({a} {dict(add='+', sub='-', mul='*', div='/')[name]} {_domain(b, domain)})"
            )
        elif kind == "scalar":
            c = round(rng.uniform(0.5, 2.0), 3)
            expr = {
                "mul": f"({arg} * {c})",
                "add": f"({arg} + {c})",
                "rsub": f"({c} - {arg})",
                "rdiv": f"({c} / {arg})",
                "pow": f"({arg} ** {c})",
            }[name]
        elif kind == "reduce":
            expr = (
                f"{a}.{name}(-1, keepdim=True)"
                if name in ("sum", "mean", "amax", "logsumexp")
                else f"{a}.{name}(-1)"
            )
        elif kind == "shape":
            expr = {
                "t": f"({a}.t() if {a}.dim() == 2 else {a})",
                "flip": f"{a}.flip(0)",
                "unsqueeze_sum": f"{a}.unsqueeze(0).sum(0)",
                "getitem": f"{a}[..., :1]",
                "reshape": f"{a}.reshape(-1)",
                "cat": f"cat([{a}, {a} * 2], 0)",
                "stack_sum": f"stack([{a}, {a}.exp()], 0).sum(0)",
            }[name]
        elif kind == "matmul":
            expr = f"({a} @ {a}.t() if {a}.dim() == 2 else ({a} * {a}).sum())"
        elif kind == "where":
            b = rng.choice(values)
            expr = f"where({a} > 0, {a}, {b} * 0.5)"
        elif kind == "clamp":
            expr = f"{a}.clamp(-0.5, 0.7)"
        else:  # in-place on a fresh non-leaf intermediate
            c = round(rng.uniform(0.5, 2.0), 3)
            lines.append(f"{out} = {a} * 1.0")
            expr = f"{out}.{name}({c})"
        lines.append(f"{out} = {expr}")
        values.append(out)
    lines.append(f"result = ({values[-1]} * {values[-1]}).sum() + {values[-1]}.sum()")
    return shapes, lines


def run(lib, shapes, lines, data, second_order):
    xs = [lib.tensor(d, dtype=lib.float64, requires_grad=True) for d in data]
    env = {f"x{i}": x for i, x in enumerate(xs)}
    env.update(cat=lib.cat, stack=lib.stack, where=lib.where)
    exec("\n".join(lines), {}, env)
    result = env["result"]
    grad_fn = ag.grad if lib is gt else torch.autograd.grad
    grads = grad_fn(result, xs, create_graph=second_order, allow_unused=True)
    out = {
        "value": float(result.detach().numpy()),
        "grads": [None if g is None else g.detach().numpy().copy() for g in grads],
    }
    if second_order:
        used = [(x, g) for x, g in zip(xs, grads) if g is not None and g.requires_grad]
        if used:
            total = sum((g * g).sum() for _, g in used)
            hg = grad_fn(total, xs, allow_unused=True)
            out["second"] = [None if h is None else h.detach().numpy().copy() for h in hg]
    return out


def _close(a, b):
    if a is None or b is None:
        return (a is None or not np.any(a)) and (b is None or not np.any(b))
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_random_program_matches_torch(seed):
    shapes, lines = generate(seed)
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal(s) for s in shapes]
    second = seed % 2 == 0
    program = "\n".join(lines)
    try:
        ref = run(torch, shapes, lines, data, second)
    except RuntimeError:
        # an invalid program (e.g. shapes that do not broadcast): gradstack must refuse too
        with pytest.raises(RuntimeError):
            run(gt, shapes, lines, data, second)
        return
    ours = run(gt, shapes, lines, data, second)
    assert np.isclose(ours["value"], ref["value"], rtol=1e-9, equal_nan=True), program
    for i, (g, r) in enumerate(zip(ours["grads"], ref["grads"])):
        assert _close(g, r), f"grad of x{i} differs\n{program}\nours={g}\ntorch={r}"
    if "second" in ref:
        for i, (g, r) in enumerate(zip(ours.get("second", []), ref["second"])):
            assert _close(g, r), f"second-order grad of x{i} differs\n{program}"
