"""torch.special's Bessel functions, orthogonal polynomials, ``erfcx``, ``zeta``,
``gammainc``/``gammaincc`` (``igamma``/``igammac``), ``i0`` and ``nextafter`` through
gradstack's API, against torch 2.13: values (float32 and float64 over dense grids with the
edges; integer inputs; numbers for either polynomial argument; broadcasting,
non-contiguous, 0-d and empty tensors; ``out=``; the in-place forms), float16, errors,
and gradients (gradcheck in float64, torch's values, torch's NotImplementedError for the
arguments torch does not differentiate, no gradient for the Bessel functions and the
polynomials).  The kernels themselves are compared bit for bit in tensor-core's
test_bessel_kernels.py.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

UNARY = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "i0",
    "i0e", "i1", "i1e", "erfcx",
]  # fmt: skip
POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]  # fmt: skip
HALF = {"i0", "i0e", "i1", "i1e"}  # torch's kernels that take float16
TOL = {"float32": dict(rtol=2e-6, atol=0), "float64": dict(rtol=1e-14, atol=0)}

RNG = np.random.default_rng(350)
GRID = np.concatenate(
    [
        np.linspace(-20, 20, 801),
        RNG.standard_normal(200) * 30,
        [0.0, -0.0, 1e-7, 5.0, 8.0, -8.0, 60.0, 1e6, -1e6, np.inf, -np.inf, np.nan],
    ]
)


def _pair(array):
    return gs.from_numpy(array.copy()), torch.from_numpy(array.copy())


def _same(ours, theirs, dtype=None, **tol):
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape and str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(a, b, equal_nan=True, **(tol or TOL[dtype or str(a.dtype)]))


def test_every_name_is_there():
    for name in [*UNARY, *POLYNOMIALS, "zeta", "gammainc", "gammaincc"]:
        assert callable(getattr(gs.special, name)), name
        assert name in gs.special.__all__
    for name in ("i0", "i0_", "igamma", "igammac", "nextafter"):
        assert callable(getattr(gs, name)), name
    for name in ("i0", "i0_", "igamma", "igamma_", "igammac", "igammac_", "nextafter",
                 "nextafter_"):  # fmt: skip
        assert callable(getattr(gs.Tensor, name)), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values(name, dtype):
    with np.errstate(over="ignore"):
        x = GRID.astype(dtype)
    a, b = _pair(x)
    _same(getattr(gs.special, name)(a), getattr(torch.special, name)(b), dtype)


@pytest.mark.parametrize("name", UNARY)
def test_unary_integer_layouts_empty_and_out(name):
    ours, theirs = getattr(gs.special, name), getattr(torch.special, name)
    _same(ours(gs.tensor([1, 2, 3])), theirs(torch.tensor([1, 2, 3])))  # (the default float)
    _same(ours(gs.tensor(True)), theirs(torch.tensor(True)))
    x = RNG.uniform(0.1, 6, (4, 5))
    a, b = _pair(x)
    _same(ours(a.t()), theirs(b.t()))  # non-contiguous
    _same(ours(a[:, ::2]), theirs(b[:, ::2]))
    _same(ours(a[0, 0]), theirs(b[0, 0]))  # 0-d
    assert ours(gs.zeros(0, 3)).shape == (0, 3)
    out = gs.empty(4, 5, dtype=gs.float64)
    assert ours(a, out=out) is out
    _same(out, theirs(b))


@pytest.mark.parametrize("name", UNARY)
def test_unary_float16(name):
    # float16 computes in float32 and rounds once, as torch's vectorized loop does (its
    # scalar loop, for the last elements of a tensor, computes i0e in float16 throughout:
    # Note [torch's half loops disagree] in test_float16_gradients.py); 256 elements keep
    # torch on its vectorized loop
    x = np.linspace(-6, 6, 256).astype(np.float16)
    a, b = _pair(x)
    if name in HALF:
        _same(getattr(gs.special, name)(a), getattr(torch.special, name)(b), rtol=0, atol=0)
        return
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch.special, name)(b)
    with pytest.raises(NotImplementedError) as ours:
        getattr(gs.special, name)(a)
    assert str(theirs.value) in str(ours.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values(name, dtype):
    xs = [*np.linspace(-2, 2, 41), 0.0, 1.0, -1.0, 10.0, np.inf, -np.inf]
    ns = [*range(-1, 30), 64, 128, 129, 512, 513, 3.7, np.inf, np.nan]
    x, n = (v.ravel().astype(dtype) for v in np.meshgrid(xs, ns))
    (a, ta), (m, tm) = _pair(x), _pair(n)
    ours = getattr(gs.special, name)(a, m)
    theirs = getattr(torch.special, name)(ta, tm)
    # (large degrees of |x| > 1 grow to 1e30 and beyond: relative tolerance)
    _same(ours, theirs, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-30)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_numbers_and_broadcasting(name):
    ours, theirs = getattr(gs.special, name), getattr(torch.special, name)
    x = RNG.uniform(-1, 1, (3, 1))
    n = np.arange(5.0)
    (a, ta), (m, tm) = _pair(x), _pair(n)
    _same(ours(a, m), theirs(ta, tm))  # (3, 1) with (5,)
    _same(ours(a, 3), theirs(ta, 3))  # a number degree
    _same(ours(0.25, m), theirs(0.25, tm))  # a number x
    _same(
        ours(gs.tensor([1, 2]), gs.tensor([3, 4])),
        theirs(torch.tensor([1, 2]), torch.tensor([3, 4])),
    )
    _same(ours(a.t(), 2), theirs(ta.t(), 2))
    out = gs.empty(3, 5, dtype=gs.float64)
    assert ours(a, m, out=out) is out
    _same(out, theirs(ta, tm))
    with pytest.raises(TypeError):
        ours(0.5, 2)
    with pytest.raises(NotImplementedError, match=f"{name}_cpu"):
        ours(gs.tensor([0.5], dtype=gs.float16), 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_values(dtype):
    x = np.concatenate([RNG.uniform(0.5, 8, 300), [1.0, 2.0, 0.5, np.inf, np.nan, 3.0, 4.0]])
    q = np.concatenate([RNG.uniform(-3, 5, 300), [1.0, 0.0, 2.0, 1.0, 1.0, -2.0, -1.5]])
    (a, ta), (b, tb) = _pair(x.astype(dtype)), _pair(q.astype(dtype))
    _same(gs.special.zeta(a, b), torch.special.zeta(ta, tb), dtype)
    _same(gs.special.zeta(a, 2.0), torch.special.zeta(ta, 2.0), dtype)
    _same(gs.special.zeta(3, b), torch.special.zeta(3, tb), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_values(name, dtype):
    a = np.concatenate([RNG.uniform(0, 5, 500), RNG.uniform(0, 300, 500), [0, 1, np.inf, -1]])
    x = np.concatenate([RNG.uniform(0, 5, 500), RNG.uniform(0, 300, 500), [1, 0, 2, 1]])
    (p, tp), (q, tq) = _pair(a.astype(dtype)), _pair(x.astype(dtype))
    # float32 igamma differs from torch's at a few tiny values (Note [Bessel kernels
    # contract as torch's]): relative tolerance
    tol = dict(rtol=2e-4 if dtype == "float32" else 1e-13, atol=1e-30)
    _same(getattr(gs, name)(p, q), getattr(torch, name)(tp, tq), **tol)
    _same(getattr(p, name)(q), getattr(tp, name)(tq), **tol)
    special = {"igamma": "gammainc", "igammac": "gammaincc"}[name]
    _same(getattr(gs.special, special)(p, q), getattr(torch.special, special)(tp, tq), **tol)
    p2, tp2 = p.clone(), tp.clone()
    getattr(p2, name + "_")(q)
    getattr(tp2, name + "_")(tq)
    _same(p2, tp2, **tol)
    h = np.array([0.5, 2.0, 3.0], np.float16)
    ha, hb = _pair(h)
    _same(getattr(gs, name)(ha, ha), getattr(torch, name)(hb, hb), rtol=0, atol=0)


def test_incomplete_gamma_errors():
    for lib in (gs, torch):
        with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
            lib.igamma(lib.tensor([1, 2]), lib.tensor([1, 2]))
        with pytest.raises(TypeError):
            lib.igamma(lib.tensor([1.0]), 2.0)
        with pytest.raises(TypeError):
            lib.special.gammainc(lib.tensor([1.0]), 2.0)
        with pytest.raises(RuntimeError):  # (shapes that do not broadcast)
            lib.igamma(lib.ones(2), lib.ones(3))


def test_i0_forms():
    x = RNG.uniform(-4, 4, (3, 4))
    a, b = _pair(x)
    _same(gs.i0(a), torch.i0(b))
    _same(a.i0(), b.i0())
    _same(gs.special.i0(a), torch.special.i0(b))
    a2, b2 = a.clone(), b.clone()
    assert a2.i0_() is a2
    b2.i0_()
    _same(a2, b2)
    a3, b3 = a.clone(), b.clone()
    gs.i0_(a3)
    torch.i0_(b3)
    _same(a3, b3)


def test_nextafter():
    x = np.array([0.0, 1.0, -1.0, 1e-300, np.inf, np.nan, 2.0])
    y = np.array([1.0, 0.0, -2.0, 0.0, 0.0, 1.0, 2.0])
    for dtype in ("float16", "float32", "float64"):
        (a, ta), (b, tb) = _pair(x.astype(dtype)), _pair(y.astype(dtype))
        _same(gs.nextafter(a, b), torch.nextafter(ta, tb), rtol=0, atol=0)
        _same(a.nextafter(b), ta.nextafter(tb), rtol=0, atol=0)
        a.nextafter_(b)
        ta.nextafter_(tb)
        _same(a, ta, rtol=0, atol=0)
    for lib in (gs, torch):
        with pytest.raises(NotImplementedError, match="nextafter_cpu"):
            lib.nextafter(lib.tensor([1, 2]), lib.tensor([1, 2]))


# ---- gradients


def _grads(fn, arrays, lib):
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    out.backward(lib.ones_like(out))
    return out, [t.grad for t in ts]


GRADIENT_CASES = {
    "i0": (lambda L, x: L.i0(x), [RNG.uniform(-4, 4, 6)]),
    "i0e": (lambda L, x: L.special.i0e(x), [RNG.uniform(-10, 10, 6)]),
    "i1": (lambda L, x: L.special.i1(x), [[0.0, 1e-20, -2.5, 3.0, 9.0, -12.0]]),
    "i1e": (lambda L, x: L.special.i1e(x), [[0.0, 1e-20, -2.5, 3.0, 9.0, -12.0]]),
    "erfcx": (lambda L, x: L.special.erfcx(x), [RNG.uniform(-3, 30, 6)]),
    "nextafter": (lambda L, x, y: L.nextafter(x, y), [RNG.uniform(-2, 2, 4), [3.0, -3, 0, 1]]),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients_match_torch(case):
    fn, arrays = GRADIENT_CASES[case]
    out, grads = _grads(fn, arrays, gs)
    tout, tgrads = _grads(fn, arrays, torch)
    assert out.grad_fn.name() == tout.grad_fn.name()
    _same(out, tout)
    for g, tg in zip(grads, tgrads, strict=True):
        _same(g, tg, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradcheck(case):
    fn, arrays = GRADIENT_CASES[case]
    if case == "nextafter":
        return  # (its gradient is not the derivative of its values: torch's convention)
    x = gs.tensor(np.asarray(arrays[0], dtype=np.float64) + 0.01, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: fn(gs, t), (x,))
    assert gs.autograd.gradgradcheck(lambda t: fn(gs, t), (x,))


@pytest.mark.parametrize(
    "name, call",
    [
        ("igamma", lambda L, a, x: L.igamma(a, x)),
        ("igammac", lambda L, a, x: L.igammac(a, x)),
        ("zeta", lambda L, a, x: L.special.zeta(a, x)),
    ],
)
def test_second_argument_gradients(name, call):
    a = RNG.uniform(1.5, 4, 5)
    x = RNG.uniform(0.5, 4, 5)
    results = []
    for lib in (gs, torch):
        ta = lib.tensor(a, dtype=lib.float64)
        tx = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        out = call(lib, ta, tx)
        out.sum().backward()
        results.append((out, tx.grad))
        # the first argument: torch's NotImplementedError when its gradient is wanted
        ta2 = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="is not implemented"):
            call(lib, ta2, tx.detach()).sum().backward()
    (o, g), (to, tg) = results
    assert o.grad_fn.name() == to.grad_fn.name()
    _same(g, tg, rtol=1e-12, atol=1e-300)
    xg = gs.tensor(x, dtype=gs.float64, requires_grad=True)
    const = gs.tensor(a, dtype=gs.float64)
    assert gs.autograd.gradcheck(lambda t: call(gs, const, t), (xg,))
    assert gs.autograd.gradgradcheck(lambda t: call(gs, const, t), (xg,))


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("i0", "i0e", "i1", "i1e", "erfcx")])
def test_bessel_functions_carry_no_gradient(name):
    for lib in (gs, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x)
        assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_carry_no_gradient(name):
    for lib in (gs, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        n = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x, n)
        assert not y.requires_grad and y.grad_fn is None


def test_frexp():
    x = np.array([1.5, 8.0, 0.0, -0.0, -3.0, 1e-310, 5e-324, 1e308, np.inf, -np.inf, np.nan])
    for dtype in ("float16", "float32", "float64"):
        with np.errstate(over="ignore"):
            a, b = _pair(x.astype(dtype))
        for ours, theirs in ((gs.frexp(a), torch.frexp(b)), (a.frexp(), b.frexp())):
            _same(ours.mantissa, theirs.mantissa, rtol=0, atol=0)
            _same(ours.exponent, theirs.exponent, rtol=0, atol=0)
            assert type(ours).__name__ == "frexp" and ours._fields == ("mantissa", "exponent")
    for lib in (gs, torch):
        with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
            lib.frexp(lib.tensor([1, 2]))
    v = np.array([1.5, 8.0, 0.0, -3.0, 1e-310, 0.3])
    results = []
    for lib in (gs, torch):
        t = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        m, e = lib.frexp(t)
        assert m.grad_fn.name() == "FrexpBackward0" and not e.requires_grad
        (m * lib.arange(6.0, dtype=lib.float64)).sum().backward()
        results.append(t.grad)
    _same(results[0], results[1], rtol=0, atol=0)  # (inf at 1e-310: 2 ** -1029 is 0 in float32)
    xg = gs.tensor([0.6, -1.7, 3.3, 0.2], dtype=gs.float64, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: gs.frexp(t)[0], (xg,))
