"""The six functions against torch.autograd.functional on random programs.

Each program is a seeded random composition of ops from ``OPS`` below, written once for a
library namespace ``L`` (gradstack_tensor or torch, whose APIs have the same shape), on
inputs of shape (2, 3); it returns one or two tensors.  Every function is compared in
float64 over every option torch supports (create_graph, vectorize, strategy).
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch = pytest.importorskip("torch")
import torch.autograd.functional as TF  # noqa: E402

# torch's vmap (vectorize=True) scripts helpers with the deprecated torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

SHAPE = (2, 3)
_M = np.array([[0.5, -1.0, 0.25], [1.5, 0.5, -0.75], [-0.25, 1.0, 0.5]])

# (name, arity, fn(L, *tensors)); each keeps the shape (2, 3)
OPS = [
    ("sin", 1, lambda L, a: a.sin()),
    ("cos", 1, lambda L, a: a.cos()),
    ("tanh", 1, lambda L, a: a.tanh()),
    ("sigmoid", 1, lambda L, a: a.sigmoid()),
    ("exp", 1, lambda L, a: (a * 0.5).exp()),
    ("square", 1, lambda L, a: a * a),
    ("cube", 1, lambda L, a: a**3),
    ("log1p_sq", 1, lambda L, a: (a * a + 1).log()),
    ("rational", 1, lambda L, a: a / (a * a + 1)),
    ("sqrt", 1, lambda L, a: (a * a + 0.5).sqrt()),
    ("softmax", 1, lambda L, a: a.softmax(-1)),
    ("log_softmax", 1, lambda L, a: a.log_softmax(0)),
    ("cumsum", 1, lambda L, a: a.cumsum(1)),
    ("flip", 1, lambda L, a: a.flip(0)),
    ("matmul", 1, lambda L, a: a @ L.from_numpy(_M.copy())),
    ("logsumexp", 1, lambda L, a: a.logsumexp(1, keepdim=True) + a),
    ("sum_keep", 1, lambda L, a: a.sum(0, keepdim=True) * a),
    ("mean", 1, lambda L, a: a - a.mean()),
    ("t_reshape", 1, lambda L, a: a.reshape(3, 2).t() * 2),
    ("transpose", 1, lambda L, a: a.transpose(0, 1).reshape(2, 3)),
    ("index", 1, lambda L, a: a[:, L.from_numpy(np.array([2, 0, 1]))]),
    ("slices_cat", 1, lambda L, a: L.cat([a[:, :1] * 3, a[:, 1:]], 1)),
    ("stack_rows", 1, lambda L, a: L.stack([a[1], a[0] * a[1]], 0)),
    ("expand", 1, lambda L, a: a[0].expand(2, 3) * a),
    ("var", 1, lambda L, a: a.var(1, keepdim=True) + a),
    ("prod", 1, lambda L, a: a.prod(0, keepdim=True) + a),
    ("add", 2, lambda L, a, b: a + b * 2),
    ("mul", 2, lambda L, a, b: a * b),
    ("sub", 2, lambda L, a, b: a - b),
    ("div", 2, lambda L, a, b: a / (b * b + 1)),
    ("atan2", 2, lambda L, a, b: L.atan2(a, b * b + 0.5)),
    ("where", 2, lambda L, a, b: L.where(a > b, a * b, b)),
    ("mm_t", 2, lambda L, a, b: (a @ b.t()) @ a),
    ("broadcast", 2, lambda L, a, b: a * b.sum(1, keepdim=True)),
]


class Program:
    """A random straight-line program over ``n_in`` inputs with ``n_out`` outputs."""

    def __init__(self, seed, n_in, n_out, length=5):
        rng = np.random.default_rng(seed)
        self.steps = []
        n = n_in
        for _ in range(length):
            k = int(rng.integers(len(OPS)))
            arity = OPS[k][1]
            args = [int(rng.integers(n)) for _ in range(arity)]
            # prefer the newest value so that the program is a real composition
            args[0] = n - 1
            self.steps.append((k, args))
            n += 1
        self.outs = [n - 1 - i for i in range(n_out)]
        self.n_in, self.n_out = n_in, n_out
        self.names = [OPS[k][0] for k, _ in self.steps]

    def __call__(self, L, *xs):
        vals = list(xs)
        for k, args in self.steps:
            vals.append(OPS[k][2](L, *(vals[a] for a in args)))
        outs = tuple(vals[i] for i in self.outs)
        return outs if self.n_out > 1 else outs[0]

    def scalar(self, L, *xs):
        outs = self(L, *xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        w = np.linspace(0.5, 1.5, 6).reshape(SHAPE)
        return sum(((o * L.from_numpy(w.copy())) ** 2).sum() for o in outs)


def _programs():
    params = []
    for seed in range(12):
        n_in, n_out = 1 + seed % 2, 1 + (seed // 2) % 2
        p = Program(seed, n_in, n_out)
        params.append(pytest.param(p, id=f"{seed}-in{n_in}-out{n_out}-" + "-".join(p.names)))
    return params


def _inputs(p, seed=0):
    rng = np.random.default_rng(100 + seed)
    arrays = [rng.uniform(-1.0, 1.0, SHAPE) for _ in range(p.n_in)]
    g = tuple(gt.from_numpy(a.copy()) for a in arrays)
    t = tuple(torch.from_numpy(a.copy()) for a in arrays)
    return (g if p.n_in > 1 else g[0]), (t if p.n_in > 1 else t[0])


def _compare(ours, theirs, path="result"):
    if isinstance(theirs, (tuple, list)):  # torch's forward-mode jacobian nests lists
        assert isinstance(ours, tuple) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, f"{path}[{i}]")
        return
    assert isinstance(ours, gt.Tensor), f"{path}: {type(ours).__name__}"
    assert tuple(ours.shape) == tuple(theirs.shape), path
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-10, err_msg=path
    )


@pytest.mark.parametrize("p", _programs())
@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(vectorize=True),
        dict(vectorize=True, strategy="forward-mode"),
        dict(create_graph=True),
        dict(strict=False, vectorize=False),
    ],
    ids=["default", "vectorize", "forward", "create_graph", "explicit"],
)
def test_jacobian(p, options):
    g, t = _inputs(p)
    try:
        theirs = TF.jacobian(lambda *x: p(torch, *x), t, **options)
    except RuntimeError as e:  # torch's vmap misses some ops (index_put): same numbers
        assert "vmap" in str(e)
        theirs = TF.jacobian(lambda *x: p(torch, *x), t)
    _compare(jacobian(lambda *x: p(gt, *x), g, **options), theirs)


@pytest.mark.parametrize("p", _programs())
@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(vectorize=True),
        dict(vectorize=True, outer_jacobian_strategy="forward-mode"),
        dict(create_graph=True),
    ],
    ids=["default", "vectorize", "forward", "create_graph"],
)
def test_hessian(p, options):
    g, t = _inputs(p)
    try:
        theirs = TF.hessian(lambda *x: p.scalar(torch, *x), t, **options)
    except RuntimeError as e:  # torch's vmap misses some ops (index_put): same numbers
        assert "vmap" in str(e)
        theirs = TF.hessian(lambda *x: p.scalar(torch, *x), t)
    _compare(hessian(lambda *x: p.scalar(gt, *x), g, **options), theirs)


def _v(p, like, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(SHAPE) for _ in range(like)]
    g = tuple(gt.from_numpy(a.copy()) for a in arrays)
    t = tuple(torch.from_numpy(a.copy()) for a in arrays)
    return (g, t) if like > 1 else (g[0], t[0])


@pytest.mark.parametrize("p", _programs())
@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
def test_vjp_and_jvp(p, create_graph):
    g, t = _inputs(p)
    vg, vt = _v(p, p.n_out, 1)
    _compare(
        vjp(lambda *x: p(gt, *x), g, vg, create_graph=create_graph),
        TF.vjp(lambda *x: p(torch, *x), t, vt, create_graph=create_graph),
    )
    vg, vt = _v(p, p.n_in, 2)
    _compare(
        jvp(lambda *x: p(gt, *x), g, vg, create_graph=create_graph),
        TF.jvp(lambda *x: p(torch, *x), t, vt, create_graph=create_graph),
    )


@pytest.mark.parametrize("p", _programs())
@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
def test_vhp_and_hvp(p, create_graph):
    g, t = _inputs(p)
    vg, vt = _v(p, p.n_in, 3)
    _compare(
        vhp(lambda *x: p.scalar(gt, *x), g, vg, create_graph=create_graph),
        TF.vhp(lambda *x: p.scalar(torch, *x), t, vt, create_graph=create_graph),
    )
    _compare(
        hvp(lambda *x: p.scalar(gt, *x), g, vg, create_graph=create_graph),
        TF.hvp(lambda *x: p.scalar(torch, *x), t, vt, create_graph=create_graph),
    )


@pytest.mark.parametrize("p", _programs()[:4])
def test_create_graph_results_differentiate_like_torchs(p):
    g, t = _inputs(p)
    g = tuple(x.requires_grad_() for x in (g if isinstance(g, tuple) else (g,)))
    t = tuple(x.requires_grad_() for x in (t if isinstance(t, tuple) else (t,)))
    h = hessian(lambda *x: p.scalar(gt, *x), g, create_graph=True)
    th = TF.hessian(lambda *x: p.scalar(torch, *x), t, create_graph=True)
    flat = [b for row in h for b in row] if isinstance(h[0], tuple) else list(h)
    tflat = [b for row in th for b in row] if isinstance(th[0], tuple) else list(th)
    ours = ag.grad(sum((b**2).sum() for b in flat), g, allow_unused=True)
    theirs = torch.autograd.grad(sum((b**2).sum() for b in tflat), t, allow_unused=True)
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None or not a.detach().numpy().any()
        else:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exp_adder_like_the_tutorial(dtype):
    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y

    rng = np.random.default_rng(0)
    for n in (1, 3):
        a, b = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
        ours = jacobian(exp_adder, (gt.from_numpy(a.copy()), gt.from_numpy(b.copy())))
        theirs = TF.jacobian(exp_adder, (torch.from_numpy(a.copy()), torch.from_numpy(b.copy())))
        for o, t in zip(ours, theirs):
            assert str(o.dtype).endswith(dtype)
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("n_in,n_out", [(4, 400), (3, 5)])
def test_tall_and_wide_jacobians(n_in, n_out):
    """4 -> 400 takes the transposed pass (Note [Tall jacobians by the transposed pass])."""
    w = np.linspace(-1.0, 1.0, n_in * n_out).reshape(n_in, n_out)
    xn = np.linspace(0.1, 0.4, n_in)

    def f(L, x):
        return (x @ L.from_numpy(w.copy())).tanh() * x.sum()

    ours = jacobian(lambda x: f(gt, x), gt.from_numpy(xn.copy()))
    theirs = TF.jacobian(lambda x: f(torch, x), torch.from_numpy(xn.copy()))
    _compare(ours, theirs)
