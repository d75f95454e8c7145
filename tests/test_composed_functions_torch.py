"""torch's functions that tensor-core composes from its ops, against torch 2.13: the matrix
builders (diag_embed, diagflat, block_diag, vander), combinatorics (cartesian_prod,
combinations), covariance (cov, corrcoef), integration (trapezoid/trapz,
cumulative_trapezoid), counting (bincount), scans (logcumsumexp), the number functions of
elementwise_composites.py (hypot, gcd, lcm, heaviside) and the indexed writes (index_put(_),
masked_scatter): values, dtypes, shapes, float64 first- and second-order gradients, edge
cases, errors.

Cross-package: the values come from tensor-core, the gradients from graph-engine.
"""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(20260611)
A = R.standard_normal((2, 3))
B = R.standard_normal((3, 5))
V = R.standard_normal(4)
W = R.standard_normal(3)
I23 = R.integers(-5, 6, (2, 3))
WIDE = np.array(
    [[-1000.0, 3.0, 1000.0, -np.inf, 999.0, -1000.0], [-2.0, -np.inf, -np.inf, 5.0, 700.0, -700.0]]
)
# (no prefix of -inf only: there torch's gradient is NaN, Note in logcumsumexp's docstring)


def _tensors(lib, arrays):
    return [
        lib.tensor(a, requires_grad=a.dtype == np.float64) if isinstance(a, np.ndarray) else a
        for a in arrays
    ]


def _run(lib, fn, arrays, order=2):
    """[value, first-order grads ..., second-order grads ...] as numpy (None for none)."""
    xs = _tensors(lib, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *xs)
    res = [out.detach().numpy()]
    diff = [x for x in xs if isinstance(x, lib.Tensor) and x.requires_grad]
    if not diff or not out.requires_grad or order == 0:
        return res
    w = lib.tensor(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)))
    g1 = lib.autograd.grad((out * w).sum(), diff, create_graph=order > 1, allow_unused=True)
    res += [None if g is None else g.detach().numpy() for g in g1]
    if order < 2:
        return res
    # (a function of the gradients only: a linear op's gradients do not depend on its
    # inputs, and then neither library has a second order; None and zeros compare equal)
    parts = [(g * g * 0.75).sum() for g in g1 if g is not None and g.requires_grad]
    if not parts:
        return res + [None] * len(diff)
    g2 = lib.autograd.grad(sum(parts), diff, allow_unused=True)
    res += [None if g is None else g.numpy() for g in g2]
    return res


def _same(ours, theirs, rtol=0.0, atol=0.0, grad_tol=None):
    """Values to (rtol, atol) (exact by default); gradients, whose sums may be grouped
    differently from torch's backward, to ``grad_tol`` (an ulp or so by default)."""
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        if i:
            rtol, atol = grad_tol or (max(rtol, 1e-14), max(atol, 1e-14))
        if o is None or t is None:
            assert o is None and t is None or not np.any(o if o is not None else t)
            continue
        assert o.shape == t.shape, (o.shape, t.shape)
        assert o.dtype == t.dtype, (o.dtype, t.dtype)
        if rtol == 0 and atol == 0:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


EXACT = (0.0, 0.0)
TIGHT = (1e-13, 1e-13)
# torch's logcumsumexp_backward goes through exp(log|grad| - result ...): its gradients
# are good to ~1e-10 relative, ours (logaddexp's) to a few ulps
LCSE = (1e-13, 1e-13, (1e-9, 1e-9))

CASES = {
    # name: (fn(lib, *tensors), [input tuples], (rtol, atol))
    "diag_embed": (
        lambda L, x: L.diag_embed(x),
        [(A,), (V,), (I23,), (np.array([True, False]),), (np.array([np.inf, np.nan]),)],
        EXACT,
    ),
    "diag_embed offsets": (
        lambda L, x: L.diag_embed(x, 2) + L.diag_embed(x, -2)[..., :5, :5].sum(),
        [(A,), (V,)],
        TIGHT,  # (the sum of all elements: gradstack's sum, grouped differently)
    ),
    "diag_embed offset beyond the size": (
        lambda L, x: L.diag_embed(x, -7, 0, 2),
        [(A,)],
        EXACT,
    ),
    "diag_embed dims reversed": (
        lambda L, x: L.diag_embed(x, 1, 2, 0) * L.diag_embed(x, -1, -1, 1).sum(),
        [(A,)],
        EXACT,
    ),
    "diag_embed empty": (
        lambda L, x: L.diag_embed(x, 1),
        [(np.zeros(0),), (np.zeros((2, 0)),)],
        EXACT,
    ),
    "diagflat": (
        lambda L, x: L.diagflat(x, -1) + L.diagflat(x, 1).sum(),
        [(A,), (V,), (np.array(2.5),), (np.zeros(0),)],
        TIGHT,
    ),
    "block_diag": (
        lambda L, a, b, c: L.block_diag(a, b, c),
        [(A, V, np.array(3.0)), (I23, V, np.array(True)), (np.zeros((0, 2)), V, np.zeros((2, 0)))],
        EXACT,
    ),
    "block_diag promotes as torch's result_type": (
        lambda L, a, b: L.block_diag(a.float(), b),
        [(A, np.array(2.0)), (A, np.array(2))],
        EXACT,
    ),
    "cartesian_prod": (
        lambda L, a, b, c: L.cartesian_prod(a, b, c) * 1.5,
        [(V, W, np.array([0.5, -1.0])), (V, np.zeros(0), W)],
        EXACT,
    ),
    "combinations": (
        lambda L, x: L.combinations(x) * L.combinations(x, 3).sum(),
        [(V,), (np.arange(5),)],
        TIGHT,
    ),
    "combinations with replacement": (
        lambda L, x: L.combinations(x, 3, with_replacement=True).exp(),
        [(W,)],
        EXACT,
    ),
    "combinations r > n and r = 0": (
        lambda L, x: L.cat([L.combinations(x, 5).reshape(-1), L.combinations(x, 0), x]),
        [(V,), (np.zeros(0),)],
        EXACT,
    ),
    "cov": (lambda L, x: L.cov(x), [(B,), (V,), (I23,), (np.array(1.5),)], TIGHT),
    "cov correction": (
        lambda L, x: L.cov(x, correction=0) + L.cov(x, correction=3),
        [(B,)],
        TIGHT,
    ),
    "cov weights": (
        lambda L, x, a: L.cov(x, fweights=L.tensor([1, 2, 0, 3, 1]), aweights=a),
        [(B, np.array([0.5, 1.0, 2.0, 0.25, 1.5]))],
        TIGHT,
    ),
    "cov aweights correction": (
        lambda L, x, a: L.cov(x, aweights=a, correction=2),
        [(B, np.array([0.5, 1.0, 2.0, 0.25, 1.5]))],
        TIGHT,
    ),
    "cov fweights": (
        lambda L, x: L.cov(x, fweights=L.tensor([1, 2, 0, 3, 1])),
        [(B,)],
        TIGHT,
    ),
    "cov no degrees of freedom": (
        lambda L, x: L.cov(x, correction=5),
        [(B,), (np.zeros((2, 0)),)],
        EXACT,
    ),
    "corrcoef": (
        lambda L, x: L.corrcoef(x),
        [(B,), (V,), (I23,), (np.array([[1.0, 1.0, 1.0], [3.0, 1.0, 0.0]]),)],
        TIGHT,
    ),
    "vander": (
        lambda L, x: L.vander(x),
        [(V,), (np.array([1, 2, 3]),), (np.array([True, False]),), (np.zeros(0),)],
        EXACT,
    ),
    "vander N increasing": (
        lambda L, x: L.vander(x, 5, True) + L.vander(x, N=1).sum() + L.vander(x, 0).sum(),
        [(V,)],
        EXACT,
    ),
    "trapezoid": (
        lambda L, y: L.trapezoid(y) + L.trapezoid(y, dx=0.5) * 2.0 + L.trapz(y, dx=3),
        [(B,), (I23,), (np.zeros((3, 1)),)],
        EXACT,
    ),
    "trapezoid along dim 0": (
        lambda L, y: L.trapezoid(y, dim=0) + L.trapezoid(y, dx=L.tensor(2.0), dim=-2),
        [(B,)],
        EXACT,
    ),
    "trapezoid with x": (
        lambda L, y, x: L.trapezoid(y, x) + L.trapz(y, x=x),
        [(B, np.array([0.0, 0.5, 1.5, 1.75, 3.0])), (np.array([1, 5, 10]), np.array([1, 3, 6]))],
        EXACT,
    ),
    "trapezoid with x of y's rank": (
        lambda L, y, x: L.trapezoid(y, x, dim=0) + L.trapezoid(y, x[:1], dim=1).sum(),
        [(B, np.cumsum(np.abs(B), 0))],
        TIGHT,
    ),
    "trapezoid of no samples": (
        lambda L, y: L.trapezoid(y, dim=1),
        [(np.zeros((2, 0)),), (np.zeros((2, 0), np.int64),)],
        EXACT,
    ),
    "cumulative_trapezoid": (
        lambda L, y: L.cumulative_trapezoid(y) + L.cumulative_trapezoid(y, dx=0.25),
        [(B,), (I23,), (np.zeros((2, 1)),), (np.zeros((2, 0)),)],
        EXACT,
    ),
    "cumulative_trapezoid with x": (
        lambda L, y, x: L.cumulative_trapezoid(y, x, dim=0),
        [(B, np.array([0.0, 0.5, 2.0])), (B, np.cumsum(np.abs(B), 0))],
        TIGHT,
    ),
    "bincount": (
        lambda L, x: L.bincount(x) + L.bincount(x, minlength=12)[:9].sum(),
        [(np.array([0, 1, 1, 3, 8, 3]),), (np.array([2, 0, 2], np.int32),)],
        EXACT,
    ),
    "bincount of nothing": (
        lambda L, x: L.bincount(x, minlength=3),
        [(np.zeros(0, np.int64),)],
        EXACT,
    ),
    "bincount weights": (
        lambda L, x: L.cat(
            [
                L.bincount(x, L.tensor([0.5, 1.25, 2.0, 0.125], dtype=L.float64), 6),
                L.bincount(x, L.tensor([1, 2, 3, 4])),
                L.bincount(x, L.tensor([True, False, True, True])),
                L.bincount(x, L.tensor([0.1, 0.2, 0.3, 0.4], dtype=L.float16)),
            ]
        ),
        [(np.array([4, 1, 1, 0]),)],
        EXACT,
    ),
    "bincount float32 weights": (
        lambda L, x: L.bincount(x, L.tensor([0.1, 0.2, 0.3, 0.4, 1e-8])),
        [(np.array([1, 1, 1, 1, 1]),)],
        EXACT,
    ),
    "logcumsumexp": (
        lambda L, x: L.logcumsumexp(x, 1) + L.logcumsumexp(x, 0).sum(),
        [(B,), (B * 800.0,)],
        LCSE,
    ),
    "logcumsumexp wide range": (
        lambda L, x: L.logcumsumexp(x, -1),
        [(WIDE,)],
        LCSE,
    ),
    "logcumsumexp 0-d and empty": (
        lambda L, x: L.logcumsumexp(x, -1),
        [(np.array(2.5),), (np.zeros((2, 0)),)],
        EXACT,
    ),
    "hypot": (
        lambda L, a, b: L.hypot(a, b),
        [(A, W), (A * 1e300, A[::-1] * 1e300), (A, np.array(0.0))],
        (4.5e-16, 0.0, (1e-13, 1e-13)),  # (torch's second order where it is 0: 3e-14)
    ),
    "hypot at zero and infinities": (
        lambda L, a, b: L.hypot(a, b),
        [(np.array([0.0, np.inf, np.nan, -np.inf]), np.array([0.0, np.nan, np.inf, 1.0]))],
        (0.0, 0.0),
    ),
    "gcd": (
        lambda L, a, b: L.gcd(a, b),
        [(np.array([12, -18, 0, 0, 7, 35]), np.array([8, 12, 0, -5, 0, -49])), (I23, I23[:1] + 3)],
        EXACT,
    ),
    "lcm": (
        lambda L, a, b: L.lcm(a, b),
        [(np.array([4, -6, 0, 3, 21]), np.array([6, 4, 5, 0, -6])), (I23, I23[:1] + 3)],
        EXACT,
    ),
    "heaviside": (
        lambda L, x, v: L.heaviside(x, v),
        [
            (np.array([-1.5, 0.0, -0.0, 2.0, np.nan, np.inf]), np.array([0.5])),
            (np.array([-1, 0, 2]), np.array([[7], [9]])),
            (np.array([True, False]), np.array(False)),
        ],
        EXACT,
    ),
    "index_put accumulate": (
        lambda L, x, v: L.index_put(x, (L.tensor([0, 1, 0, -1]), L.tensor([2, 2, 2, 0])), v, True),
        [(A, np.array([1.0, 2.0, 4.0, 8.0])), (A, np.array(0.5))],
        EXACT,
    ),
    "index_put": (
        lambda L, x, v: L.index_put(x, (L.tensor([1, 0]),), v),
        [(A, np.array([1.0, 2.0, 4.0])), (A, np.array([[1.0], [2.0]]))],
        EXACT,
    ),
    "index_put masks and broadcast indices": (
        lambda L, x, v: (
            L.index_put(x, [L.tensor([True, False, True])], v, accumulate=True)
            + L.index_put(x.t(), (L.tensor([[0], [1]]), L.tensor([0, 2], dtype=L.int32)), v[:1]).t()
        ),
        [(A.T.copy(), np.array([1.0, 2.0])), (np.ones((3, 2)), np.array([3.0, -1.0]))],
        EXACT,
    ),
    "index_put of nothing": (
        lambda L, x, v: L.index_put(x, (L.tensor([], dtype=L.int64),), v, True),
        [(A, np.array(2.0))],
        EXACT,
    ),
    "masked_scatter": (
        lambda L, x, s: L.masked_scatter(
            x, L.tensor([[True, False, True], [False, True, True]]), s
        ),
        [(A, np.arange(10.0).reshape(2, 5) + 0.5), (I23, np.arange(4))],
        EXACT,
    ),
    "masked_scatter broadcasts": (
        lambda L, x, s: (
            L.masked_scatter(x, L.tensor([True, False, True]), s)
            + L.masked_scatter(x[0], L.tensor([[True], [False]]), s).sum()
        ),
        [(A, np.arange(10.0) - 3.0)],
        EXACT,
    ),
    "masked_scatter of no position": (
        lambda L, x, s: L.masked_scatter(x, L.zeros(3, dtype=L.bool), s),
        [(A, np.zeros(0)), (np.array(1.0), np.ones(2))],
        EXACT,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, inputs, tol = CASES[name]
    # (torch's bincount and heaviside have no derivative, and its vander's backward
    # fails: test_vander_gradients below)
    order = 0 if name.startswith(("bincount", "heaviside", "vander")) else 2
    for arrays in inputs:
        _same(_run(gs, fn, arrays, order), _run(torch, fn, arrays, order), *tol)


def test_float32_values_match_torch():
    a = R.standard_normal((3, 5)).astype(np.float32)
    programs = [
        lambda L, x: L.diag_embed(x, 1, 0, 2),
        lambda L, x: L.block_diag(x, x[0]),
        lambda L, x: L.cartesian_prod(x[0], x[1]),
        lambda L, x: L.combinations(x[0], 3),
        lambda L, x: L.vander(x[0], 4),
        lambda L, x: L.cumulative_trapezoid(x, dim=0),
        lambda L, x: L.masked_scatter(x, x > 0, -x),
        lambda L, x: L.index_put(x, (L.tensor([0, 0, 2]),), x[1], accumulate=True),
    ]
    for fn in programs:
        _same(_run(gs, fn, [a], 0), _run(torch, fn, [a], 0))
    for fn in (
        lambda L, x: L.trapezoid(x, dx=0.5),  # (a float32 sum: grouped differently)
        lambda L, x: L.cov(x),
        lambda L, x: L.corrcoef(x),
        lambda L, x: L.logcumsumexp(x * 300, 1),
        lambda L, x: L.hypot(x * 3e30, x.flip(0) * 4e30),
    ):
        _same(_run(gs, fn, [a], 0), _run(torch, fn, [a], 0), rtol=3e-7, atol=1e-6)


def test_logcumsumexp_is_stable_over_a_wide_range():
    # log(cumsum(exp(x))) with one shift would give -inf at the start and inf later
    x = np.concatenate([np.linspace(-1000, 1000, 41), [-np.inf, 5.0, np.nan, 0.0]])
    ours = gs.logcumsumexp(gs.tensor(x), 0).numpy()
    theirs = torch.logcumsumexp(torch.tensor(x), 0).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)
    assert ours[0] == -1000.0 and np.isfinite(ours[:42]).all() and np.isnan(ours[-1])
    assert ours[40] == pytest.approx(1000 + np.log1p(np.exp(-50.0)), rel=1e-15)
    x = np.array([-np.inf, -np.inf, 1.0, np.inf, 2.0])
    np.testing.assert_array_equal(
        gs.logcumsumexp(gs.tensor(x), 0).numpy(), [-np.inf, -np.inf, 1.0, np.inf, np.inf]
    )


def test_long_logcumsumexp_matches_torch_and_its_gradient():
    x = R.standard_normal((2, 300)) * 50
    _same(
        _run(gs, lambda L, t: L.logcumsumexp(t, 1), [x]),
        _run(torch, lambda L, t: L.logcumsumexp(t, 1), [x]),
        1e-13,
        1e-13,
        grad_tol=(1e-9, 1e-12),  # (torch's logcumsumexp_backward: ~1e-10 relative)
    )


def test_hypot_does_not_overflow_or_underflow():
    f64 = gs.float64
    big = gs.hypot(gs.tensor([1e300, 3e-300], dtype=f64), gs.tensor([1e300, 4e-300], dtype=f64))
    big = big.numpy()
    np.testing.assert_allclose(big, [np.sqrt(2) * 1e300, 5e-300], rtol=4.5e-16)
    f32 = gs.hypot(gs.tensor([3e30]), gs.tensor([4e30]))
    assert f32.dtype == gs.float32 and np.isfinite(f32.item())
    # mixed dtypes promote; the gradient is a / hypot
    a = gs.tensor([3.0, -5.0], dtype=gs.float64, requires_grad=True)
    r = gs.hypot(a, gs.tensor([4, 12]))
    assert r.dtype == gs.float64 and r.tolist() == [5.0, 13.0]
    (g,) = gs.autograd.grad(r.sum(), a)
    np.testing.assert_allclose(g.numpy(), [0.6, -5.0 / 13.0], rtol=1e-15)


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8"], ids=lambda d: f"dtype={d}"
)
def test_gcd_and_lcm_wrap_as_torch(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, 5, info.max, 100, -100, 0, info.max // 3])
    b = np.array([0, info.min, info.min, 2, 3, 7, 0, 3])
    if dtype == "uint8":
        a, b = np.array([255, 100, 0, 85, 12]), np.array([2, 3, 0, 3, 18])
    a, b = a.astype(dtype), b.astype(dtype)
    if dtype == "int64":  # torch's a / gcd * b traps on INT64_MIN / -1 there
        a, b = a[[0, 1, 3, 4, 5, 6, 7]], b[[0, 1, 3, 4, 5, 6, 7]]
    for name in ("gcd", "lcm"):
        ours = getattr(gs, name)(gs.tensor(a), gs.tensor(b)).numpy()
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_gcd_and_lcm_promote_and_write_in_place():
    a, b = np.array([12, 9], np.int32), np.array([[8], [6]], np.int64)
    for name in ("gcd", "lcm"):
        ours = getattr(gs, name)(gs.tensor(a), gs.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == "int64"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        x = gs.tensor([12, 9])
        assert getattr(gs, name + "_")(x, gs.tensor([8, 6])) is x
        np.testing.assert_array_equal(x.numpy(), getattr(np, name)([12, 9], [8, 6]))


def test_bincount_weights_take_a_gradient():
    # Note [bincount with weights is differentiable] (torch raises at backward)
    w = gs.tensor([0.5, 1.5, 2.0, 4.0], dtype=gs.float64, requires_grad=True)
    r = gs.bincount(gs.tensor([3, 1, 1, 0]), w)
    assert r.tolist() == [4.0, 3.5, 0.0, 0.5]
    (g,) = gs.autograd.grad((r * gs.tensor([1.0, 10.0, 100.0, 1000.0], dtype=gs.float64)).sum(), w)
    assert g.tolist() == [1000.0, 10.0, 10.0, 1.0]
    assert not gs.bincount(gs.tensor([3, 1])).requires_grad


def test_heaviside_result_does_not_require_grad():
    # Note [heaviside carries no gradient] (torch's node raises at backward instead)
    x = gs.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    r = gs.heaviside(x, gs.tensor([0.5]))
    assert r.tolist() == [0.0, 0.5, 1.0] and not r.requires_grad


def test_index_put_in_place_sums_duplicates_and_records_the_write():
    for lib in (gs, torch):
        leaf = lib.tensor(A, requires_grad=True)
        v = lib.tensor([1.0, 2.0, 4.0], dtype=lib.float64, requires_grad=True)
        x = leaf * 1.0
        version = x._version
        idx = (lib.tensor([0, 0, 1]), lib.tensor([1, 1, -1]))
        if lib is gs:
            assert gs.index_put_(x, idx, v, accumulate=True) is x
        else:
            assert x.index_put_(idx, v, accumulate=True) is x
        assert x._version > version
        (x * x).sum().backward()
        if lib is gs:
            ours = [x.detach().numpy(), leaf.grad.numpy(), v.grad.numpy()]
        else:
            theirs = [x.detach().numpy(), leaf.grad.numpy(), v.grad.numpy()]
    _same(ours, theirs)


def test_index_put_in_place_without_accumulate_matches_torch():
    outs = []
    for lib in (gs, torch):
        leaf = lib.tensor(A, requires_grad=True)
        v = lib.tensor([[5.0], [7.0]], dtype=lib.float64, requires_grad=True)
        x = leaf.t() * 2.0  # (non-contiguous)
        fn = gs.index_put_ if lib is gs else lambda t, i, val: t.index_put_(i, val)
        assert fn(x, (lib.tensor([2, 0]), lib.tensor([1, 1])), v.reshape(2)) is x
        (x.exp() * lib.tensor(B[:, :2])).sum().backward()
        outs.append([x.detach().numpy(), leaf.grad.numpy(), v.grad.numpy()])
    _same(*outs)


def test_index_put_on_a_leaf_that_requires_grad_raises():
    x = gs.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        gs.index_put_(x, (gs.tensor([0]),), gs.tensor(1.0), accumulate=True)
    with pytest.raises(RuntimeError, match="leaf"):
        torch.zeros(3, requires_grad=True).index_put_((torch.tensor([0]),), torch.tensor(1.0))


def test_masked_scatter_in_place():
    x = gs.zeros(2, 3)
    mask = gs.tensor([True, False, True])
    from gradstack_tensor.indexed_writes import masked_scatter_

    assert masked_scatter_(x, mask, gs.arange(1.0, 6.0)) is x
    expected = torch.zeros(2, 3).masked_scatter_(
        torch.tensor([True, False, True]), torch.arange(1.0, 6.0)
    )
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    with pytest.raises(RuntimeError):
        masked_scatter_(gs.zeros(3), gs.tensor([[True], [False]]), gs.ones(6))


def test_cov_warns_without_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = gs.cov(gs.tensor([[1.0, 2.0]]), correction=2)
    assert np.isinf(r.item())


def test_cartesian_prod_of_one_tensor_is_that_tensor():
    x = gs.tensor([1.0, 2.0])
    assert gs.cartesian_prod(x) is x
    assert torch.cartesian_prod(torch.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_top_level_names():
    for name in (
        "diag_embed diagflat block_diag cartesian_prod combinations cov corrcoef vander "
        "trapezoid trapz cumulative_trapezoid bincount logcumsumexp hypot gcd gcd_ lcm lcm_ "
        "heaviside index_put index_put_ masked_scatter"
    ).split():
        assert hasattr(torch, name) and callable(getattr(gs, name)), name
    assert not hasattr(gs, "hypot_") and not hasattr(torch, "hypot_")


ERRORS = [
    lambda L: L.diag_embed(L.tensor(1.0)),
    lambda L: L.diag_embed(L.ones(3), 0, 0, 0),
    lambda L: L.diag_embed(L.ones(3), 0, -1, 1),
    lambda L: L.diag_embed(L.ones(3), 0, 0, 3),
    lambda L: L.diag_embed([1.0]),
    lambda L: L.diag_embed(L.ones(3), 1.5),
    lambda L: L.block_diag(L.ones(1, 1, 1)),
    lambda L: L.block_diag([1, 2]),
    lambda L: L.cartesian_prod(),
    lambda L: L.cartesian_prod(L.ones(2, 2)),
    lambda L: L.cartesian_prod(L.tensor(1.0), L.ones(2)),
    lambda L: L.cartesian_prod(L.tensor([1, 2]), L.tensor([1.0])),
    lambda L: L.combinations(L.ones(3), -1),
    lambda L: L.combinations(L.ones(2, 2)),
    lambda L: L.combinations(L.ones(3), True),
    lambda L: L.cov(L.ones(2, 2, 2)),
    lambda L: L.cov(L.tensor([[True, False]])),
    lambda L: L.cov(L.ones(2, 3), correction=0.5),
    lambda L: L.cov(L.ones(2, 3), fweights=L.ones(3)),
    lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([1, -2, 3])),
    lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([[1, 2, 3]])),
    lambda L: L.cov(L.ones(2, 3), aweights=L.tensor([1, 2, 3])),
    lambda L: L.cov(L.ones(2, 3), aweights=L.tensor([1.0, -2.0, 3.0])),
    lambda L: L.cov(L.ones(2, 3), aweights=L.ones(2)),
    lambda L: L.cov(L.ones(2, 3), aweights=L.zeros(3)),
    lambda L: L.corrcoef(L.ones(2, 2, 2)),
    lambda L: L.vander(L.ones(2, 2)),
    lambda L: L.vander(L.tensor(2.0)),
    lambda L: L.vander(L.ones(2), -1),
    lambda L: L.trapezoid(L.tensor(1.0)),
    lambda L: L.trapezoid(L.ones(3), dim=1),
    lambda L: L.trapezoid(L.tensor([True, False])),
    lambda L: L.trapezoid(L.ones(3), dx=True),
    lambda L: L.trapezoid(L.ones(3), L.ones(2)),
    lambda L: L.trapezoid(L.ones(3), L.ones(3), dx=2),
    lambda L: L.trapezoid(L.ones(3), 2.0),
    lambda L: L.trapezoid(L.ones(3), L.tensor([True, True, False])),
    lambda L: L.cumulative_trapezoid(L.tensor(1.0)),
    lambda L: L.cumulative_trapezoid(L.ones(3), L.ones(2)),
    lambda L: L.cumulative_trapezoid(L.tensor([True, False])),
    lambda L: L.bincount(L.tensor([0, -1])),
    lambda L: L.bincount(L.tensor([0.0, 1.0])),
    lambda L: L.bincount(L.tensor([True, False])),
    lambda L: L.bincount(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.bincount(L.tensor(1)),
    lambda L: L.bincount(L.tensor([0, 1]), minlength=-1),
    lambda L: L.bincount(L.tensor([0, 1]), L.ones(3)),
    lambda L: L.bincount(L.tensor([0, 1]), L.ones(1, 2)),
    lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    lambda L: L.logcumsumexp(L.tensor([True]), 0),
    lambda L: L.logcumsumexp(L.tensor(1.0), 1),
    lambda L: L.logcumsumexp(L.ones(2), 2),
    lambda L: L.hypot(L.tensor([3]), L.tensor([4])),
    lambda L: L.hypot(L.tensor([3.0]), 4.0),
    lambda L: L.hypot(L.ones(2), L.ones(3)),
    lambda L: L.gcd(L.tensor([12.0]), L.tensor([8.0])),
    lambda L: L.gcd(L.tensor([True]), L.tensor([True])),
    lambda L: L.gcd(L.tensor([12]), 8),
    lambda L: L.lcm(L.tensor([4.0]), L.tensor([6])),
    lambda L: L.heaviside(L.tensor([-1, 0]), L.tensor([0.5])),
    lambda L: L.heaviside(L.tensor([-1.0, 0.0]), L.tensor([0.5], dtype=L.float64)),
    lambda L: L.heaviside(L.tensor([-1.0, 0.0]), 0.5),
    lambda L: L.heaviside(L.ones(2), L.ones(3)),
    lambda L: L.index_put(L.zeros(3, 4), L.tensor([0]), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (None, L.tensor([0])), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0.0]),), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0]),), L.tensor(1.0, dtype=L.float64)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0]),), L.tensor(1)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([5]),), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([-4]),), L.tensor(1.0), accumulate=True),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0]),) * 3, L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0, 1]),), L.ones(3)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0, 1]),), L.ones(3), accumulate=True),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([True, False]),), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0]),), 1.0),
    lambda L: L.masked_scatter(L.zeros(3), L.tensor([1, 0, 1], dtype=L.uint8), L.ones(3)),
    lambda L: L.masked_scatter(L.zeros(3), L.ones(3), L.ones(3)),
    lambda L: L.masked_scatter(L.zeros(3), L.tensor([True, True, True]), L.ones(2)),
    lambda L: L.masked_scatter(
        L.zeros(3), L.tensor([True, True, True]), L.ones(3, dtype=L.float64)
    ),
    lambda L: L.masked_scatter(L.zeros(3), L.tensor([True, False]), L.ones(3)),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    fn = ERRORS[index]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(gs)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)


def test_error_messages_match_torch_where_they_can():
    # (the messages are torch's where practical: spot-check a few exactly)
    cases = [
        lambda L: L.diag_embed(L.ones(3), 0, -1, 1),
        lambda L: L.cov(L.ones(2, 3), aweights=L.ones(2)),
        lambda L: L.bincount(L.tensor([0, -1])),
        lambda L: L.index_put(L.zeros(3, 4), (L.tensor([0]),), L.tensor(1.0, dtype=L.float64)),
        lambda L: L.masked_scatter(L.zeros(3), L.tensor([True, True, True]), L.ones(2)),
        lambda L: L.heaviside(L.tensor([-1, 0]), L.tensor([0.5])),
        lambda L: L.vander(L.ones(2), -1),
        lambda L: L.trapezoid(L.ones(3), L.ones(2)),
        lambda L: L.combinations(L.ones(2, 2)),
        lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    ]
    for fn in cases:
        with pytest.raises(Exception) as theirs:
            fn(torch)
        with pytest.raises(Exception) as ours:
            fn(gs)
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_vander_gradients():
    # torch 2.13's vander writes its cumprod in place, and its backward raises; compare
    # with torch's ops of the same formula (ones, then a running product, flipped)
    def reference(x, n):
        powers = torch.cumprod(x.unsqueeze(1).expand(x.shape[0], n - 1), 1)
        return torch.cat([torch.ones(x.shape[0], 1, dtype=x.dtype), powers], 1).flip(1)

    outs = []
    for lib, fn in ((gs, lambda x: gs.vander(x, 5)), (torch, lambda x: reference(x, 5))):
        x = lib.tensor(V, requires_grad=True)
        w = lib.tensor(np.linspace(0.5, 2.0, 20).reshape(4, 5))
        (g,) = lib.autograd.grad((fn(x) * w).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g * x).sum(), x)
        outs.append([fn(x).detach().numpy(), g.detach().numpy(), gg.numpy()])
    np.testing.assert_array_equal(outs[0][0], torch.vander(torch.tensor(V), 5).numpy())
    _same(*outs, 0.0, 0.0, (1e-14, 1e-14))
