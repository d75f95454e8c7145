"""vjp, jvp, vhp and hvp on float64 vectors of N = 10,000 elements (the size of the
VectorProducts benchmark), against analytic results, finite differences and
torch.autograd.functional; and the shape of the work they do: O(N) memory, no jacobian or
hessian, no batched pass, no pass per element.

The functions (written once for a library namespace ``L``, gradstack_tensor or torch):

- ``sin_cos_cube``: (sin x cos x).sum() + (x^3).sum(), the issue's workload; its Hessian is
  diagonal, diag(6x - 2 sin 2x);
- ``coupled``: tanh(x).sum() * (x^2).sum(), a dense Hessian (never formed here: the
  reference ``H v`` is computed in O(N));
- ``dense_map``: tanh(x) * x.sum() + x^2, R^N -> R^N with a dense Jacobian.
"""

from __future__ import annotations

import tracemalloc

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional import functional, hvp, jvp, vhp, vjp

N = 10_000
OPTIONS = [dict(), dict(create_graph=True), dict(strict=True), dict(create_graph=True, strict=True)]
OPTION_IDS = ["default", "create_graph", "strict", "create_graph-strict"]


def sin_cos_cube(L, x):
    return (x.sin() * x.cos()).sum() + (x**3).sum()


def coupled(L, x):
    return x.tanh().sum() * (x * x).sum()


def dense_map(L, x):
    return x.tanh() * x.sum() + x**2


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, N), rng.standard_normal(N)


def _np(t):
    return t if isinstance(t, np.ndarray) else t.detach().numpy()


def _g(a, requires_grad=False):
    return gt.from_numpy(a.copy()).requires_grad_(requires_grad)


def _close(got, want, rtol=1e-10):
    """float64 agreement up to summation order over N terms (relative to the largest entry)."""
    want = np.asarray(want)
    np.testing.assert_allclose(
        _np(got), want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max()))
    )


# -------------------------------------------------------------------------------------
# analytic references, all O(N)


def _hvp_sin_cos_cube(x, v):
    return (6 * x - 2 * np.sin(2 * x)) * v


def _grad_coupled(x):
    t = np.tanh(x)
    return (1 - t**2) * (x**2).sum() + 2 * x * t.sum()


def _hvp_coupled(x, v):
    """H v for f = a b, a = sum tanh x, b = sum x^2:
    H = diag(a'' b + 2 a) + a' b'^T + b' a'^T with a' = sech^2, a'' = -2 tanh sech^2, b' = 2x."""
    t = np.tanh(x)
    a, b = t.sum(), (x**2).sum()
    da, db = 1 - t**2, 2 * x
    dda = -2 * t * da
    return (dda * b + 2 * a) * v + da * (db @ v) + db * (da @ v)


def _jvp_dense_map(x, v):
    """J = diag(sech^2 x * S + 2x) + tanh(x) 1^T, S = sum x."""
    t = np.tanh(x)
    return ((1 - t**2) * x.sum() + 2 * x) * v + t * v.sum()


def _vjp_dense_map(x, v):
    t = np.tanh(x)
    return ((1 - t**2) * x.sum() + 2 * x) * v + (v @ t)


def _dense_map_np(x):
    return np.tanh(x) * x.sum() + x**2


# -------------------------------------------------------------------------------------
# numbers: analytic and finite differences


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn", [vhp, hvp], ids=["vhp", "hvp"])
def test_vhp_hvp_of_sin_cos_cube(fn, options):
    xa, va = _arrays()
    out, r = fn(lambda x: sin_cos_cube(gt, x), _g(xa), _g(va), **options)
    _close(out, 0.5 * np.sin(2 * xa).sum() + (xa**3).sum(), rtol=1e-12)
    _close(r, _hvp_sin_cos_cube(xa, va), rtol=1e-12)
    assert tuple(r.shape) == (N,) and r.dtype == gt.float64


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn", [vhp, hvp], ids=["vhp", "hvp"])
def test_vhp_hvp_of_a_dense_hessian(fn, options):
    """v^T H = H v (H symmetric), against the analytic product and a central difference of
    the gradient along v (the gradient by one backward pass: vjp)."""
    xa, va = _arrays(1)
    _, r = fn(lambda x: coupled(gt, x), _g(xa), _g(va), **options)
    want = _hvp_coupled(xa, va)
    _close(r, want, rtol=1e-11)
    h = 1e-5

    def gradient(p):
        return _np(vjp(lambda x: coupled(gt, x), _g(p))[1])

    fd = (gradient(xa + h * va) - gradient(xa - h * va)) / (2 * h)
    _close(fd, want, rtol=1e-6)  # the reference itself, checked by differences
    _close(r, fd, rtol=1e-6)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_vjp_jvp_of_a_dense_jacobian(options):
    xa, va = _arrays(2)
    out, r = jvp(lambda x: dense_map(gt, x), _g(xa), _g(va), **options)
    _close(out, _dense_map_np(xa), rtol=1e-12)
    _close(r, _jvp_dense_map(xa, va))
    h = 1e-5
    fd = (_dense_map_np(xa + h * va) - _dense_map_np(xa - h * va)) / (2 * h)
    _close(r, fd, rtol=1e-6)
    out, r = vjp(lambda x: dense_map(gt, x), _g(xa), _g(va), **options)
    _close(out, _dense_map_np(xa), rtol=1e-12)
    _close(r, _vjp_dense_map(xa, va))


def test_vhp_hvp_create_graph_differentiate_again():
    """With create_graph the products are differentiable in x and in v (third derivatives of
    sin_cos_cube: d/dx of w . (H v) = w * v * (6 - 4 cos 2x); d/dv = H w)."""
    xa, va = _arrays(3)
    wa = np.linspace(-1.0, 1.0, N)
    for fn in (vhp, hvp):
        x, v = _g(xa, True), _g(va, True)
        _, r = fn(lambda x: sin_cos_cube(gt, x), x, v, create_graph=True)
        assert r.requires_grad
        gx, gv = ag.grad((r * _g(wa)).sum(), (x, v))
        _close(gx, wa * va * (6 - 4 * np.cos(2 * xa)), rtol=1e-12)
        _close(gv, _hvp_sin_cos_cube(xa, wa), rtol=1e-12)


# -------------------------------------------------------------------------------------
# against torch.autograd.functional (float64, same arrays)


@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
@pytest.mark.parametrize("f", [sin_cos_cube, coupled], ids=["sin_cos_cube", "coupled"])
@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp_against_torch(name, f, create_graph):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF

    xa, va = _arrays(4)
    ours = getattr(functional, name)(lambda x: f(gt, x), _g(xa), _g(va), create_graph=create_graph)
    theirs = getattr(TF, name)(
        lambda x: f(torch, x),
        torch.from_numpy(xa.copy()),
        torch.from_numpy(va.copy()),
        create_graph=create_graph,
    )
    assert isinstance(ours, tuple) and len(ours) == 2
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b.detach().numpy())


@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp_against_torch(name, create_graph):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF

    xa, va = _arrays(5)
    ours = getattr(functional, name)(
        lambda x: dense_map(gt, x), _g(xa), _g(va), create_graph=create_graph
    )
    theirs = getattr(TF, name)(
        lambda x: dense_map(torch, x),
        torch.from_numpy(xa.copy()),
        torch.from_numpy(va.copy()),
        create_graph=create_graph,
    )
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b.detach().numpy())


# -------------------------------------------------------------------------------------
# the shape of the work: one pass, O(N) memory

_JACOBIAN_HELPERS = (
    "_batched_rows",
    "_batched_backward",
    "_basis",
    "_reverse_jacobian",
    "_transposed_jacobian",
    "_forward_jacobian",
)
_CASES = [
    (vjp, dense_map, 1),  # one backward
    (jvp, dense_map, 0),  # one forward pass with dual inputs
    (vhp, sin_cos_cube, 2),  # a backward with create_graph, a backward through it
    (hvp, sin_cos_cube, 1),  # one backward on dual tensors (forward-over-reverse)
]


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn,f,passes", _CASES, ids=["vjp", "jvp", "vhp", "hvp"])
def test_products_take_single_unbatched_passes(monkeypatch, fn, f, passes, options):
    """No jacobian/hessian is built, nothing is batched, no pass per element."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a vector product went through the jacobian machinery")

    for name in _JACOBIAN_HELPERS:
        monkeypatch.setattr(functional, name, forbidden)
    calls = []
    real_grad = ag.grad

    def counting_grad(*args, **kwargs):
        calls.append(kwargs.get("is_grads_batched", False))
        return real_grad(*args, **kwargs)

    monkeypatch.setattr(ag, "grad", counting_grad)
    xa, va = _arrays(6)
    fn(lambda x: f(gt, x), _g(xa), _g(va), **options)
    assert calls == [False] * passes


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize(
    "fn,f",
    [(vjp, dense_map), (jvp, dense_map), (vhp, coupled), (hvp, coupled)],
    ids=["vjp", "jvp", "vhp", "hvp"],
)
def test_products_use_memory_linear_in_n(fn, f, options):
    """Peak numpy/Python allocation of one call stays within 100 vectors of N float64 (about
    8 MB; today's peaks are 10-40): an N x N matrix would be 800 MB, and even one chunk of
    a batched jacobian (Note [Bounding a batched jacobian's memory]) 32 MB."""
    xa, va = _arrays(7)
    x, v = _g(xa), _g(va)
    fn(lambda x: f(gt, x), x, v, **options)  # warm caches outside the measurement
    tracemalloc.start()
    try:
        fn(lambda x: f(gt, x), x, v, **options)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 8 * N, f"peak {peak / (8 * N):.1f} vectors of N float64"
