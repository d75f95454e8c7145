"""The order statistics (tensor-core's order_statistics.py: median, nanmedian, kthvalue,
mode, quantile, nanquantile, cummax, cummin) and ``diagonal`` against torch 2.13: values,
indices, dtypes, float64 gradients, second order, errors.

Cross-package: the values come from tensor-core, the gradients from graph-engine.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(11)
A = R.standard_normal((3, 5))
AN = A.copy()
AN[1, 2] = np.nan  # a row with one NaN
AN[2, 0] = AN[2, 3] = np.nan  # and one with two
TIES = np.array([[1.0, 2.0, 2.0, 2.0, 3.0], [0.0, -0.0, 0.0, 1.0, 1.0], [4.0, 4.0, 1.0, 1.0, 4.0]])
INTS = R.integers(0, 3, (4, 6))
ALL_NAN = np.full((2, 3), np.nan)
INF = np.array([np.inf, np.inf, 1.0, -np.inf])


def _run(lib, fn, a):
    x = lib.tensor(a, requires_grad=a.dtype.kind == "f")
    r = fn(lib, x)
    parts = tuple(r) if isinstance(r, tuple) else (r,)
    out = [p.detach().numpy() for p in parts]
    if x.requires_grad and parts[0].requires_grad:
        w = lib.tensor(np.linspace(0.5, 2.0, parts[0].numel()).reshape(tuple(parts[0].shape)))
        (parts[0] * w).sum().backward()
        out.append(x.grad.numpy())
    return out


def _same(ours, theirs, exact=True):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape and o.dtype == t.dtype
        if exact:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o, t, rtol=1e-15, atol=1e-15)


def _quantiles(lib):
    return lib.tensor([0.0, 0.3, 0.5, 0.75, 1.0], dtype=lib.float64)


CASES = {
    # name: (fn(lib, x), arrays)
    "median": (lambda L, x: L.median(x), [A, AN, TIES, INTS, INF, ALL_NAN]),
    "median dim": (lambda L, x: L.median(x, 1), [A, AN, INTS]),
    "median dim keepdim": (lambda L, x: x.median(0, keepdim=True), [A, AN]),
    "nanmedian": (lambda L, x: L.nanmedian(x), [A, AN, TIES, ALL_NAN]),
    "nanmedian dim": (lambda L, x: L.nanmedian(x, 1, True), [A, AN]),
    "nanmedian dim of NaN only": (lambda L, x: L.nanmedian(x.detach(), 1).values, [ALL_NAN]),
    "kthvalue": (lambda L, x: L.kthvalue(x, 2, 1), [A]),
    "kthvalue keepdim": (lambda L, x: x.kthvalue(3, 0, True), [A, AN]),
    "mode": (lambda L, x: L.mode(x, 1), [A, TIES, INTS]),
    "mode dim 0": (lambda L, x: x.mode(0), [TIES, INTS]),
    "cummax": (lambda L, x: L.cummax(x, 1), [A, AN, TIES, INTS]),
    "cummin": (lambda L, x: x.cummin(0), [A, AN, TIES, INTS]),
    "0-d median dim": (lambda L, x: L.median(x, 0), [np.array(2.5)]),
    "0-d cummax": (lambda L, x: L.cummax(x, 0), [np.array(2.5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_order_statistics_match_torch(name):
    fn, arrays = CASES[name]
    for a in arrays:
        _same(_run(gs, fn, a), _run(torch, fn, a))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("nan", [False, True])
def test_quantile_matches_torch(interpolation, nan):
    name = "nanquantile" if nan else "quantile"
    programs = [
        lambda L, x: getattr(L, name)(x, _quantiles(L), dim=1, interpolation=interpolation),
        lambda L, x: getattr(x, name)(0.37, dim=0, keepdim=True, interpolation=interpolation),
        lambda L, x: getattr(L, name)(x, 0.6, interpolation=interpolation),
        lambda L, x: getattr(L, name)(x, _quantiles(L), keepdim=True, interpolation=interpolation),
    ]
    for fn in programs:
        for a in (A, AN, ALL_NAN):
            # torch's lerp rounds once (an fma): the last bit may differ (Note in the module)
            _same(_run(gs, fn, a), _run(torch, fn, a), exact=False)


def test_median_of_all_elements_spreads_its_gradient_and_keeps_its_bits():
    # torch gives every element equal to the median an equal share; -0.0 stays -0.0
    for a in (TIES, np.array([0.0, -0.0, 0.0]), np.array([-0.0, 1.0, -0.0])):
        ours, theirs = (
            _run(gs, lambda L, x: L.median(x), a),
            _run(torch, lambda L, x: L.median(x), a),
        )
        _same(ours, theirs)
        assert np.signbit(ours[0]) == np.signbit(theirs[0])


def test_order_statistics_second_order_matches_torch():
    def program(lib, x):
        q = lib.quantile(x * x, 0.3, dim=1)
        m = lib.median(x.sin(), 0).values
        c = lib.cummax(x.exp(), 1).values
        return (q.sum() + (m * m).sum() + (c * x).sum()) * 1.5

    outs = []
    for lib in (gs, torch):
        x = lib.tensor(A, requires_grad=True)
        (g,) = lib.autograd.grad(program(lib, x), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        outs.append([g.detach().numpy(), gg.numpy()])
    _same(*outs, exact=False)


ERRORS = {
    "median of an empty dim": (lambda L: L.median(L.zeros(0, 3), 0), IndexError),
    "kthvalue k out of range": (lambda L: L.kthvalue(L.ones(3), 4), RuntimeError),
    "kthvalue k zero": (lambda L: L.kthvalue(L.ones(3), 0), RuntimeError),
    "quantile of ints": (lambda L: L.quantile(L.ones(3, dtype=L.int64), 0.5), RuntimeError),
    "quantile q out of range": (lambda L: L.quantile(L.ones(3), 1.5), RuntimeError),
    "quantile q dtype": (
        lambda L: L.quantile(L.ones(3), L.tensor([0.5], dtype=L.float64)),
        RuntimeError,
    ),
    "quantile q 2-d": (lambda L: L.quantile(L.ones(3), L.ones(1, 1)), RuntimeError),
    "quantile empty": (lambda L: L.quantile(L.ones(0), 0.5), RuntimeError),
    "quantile interpolation": (
        lambda L: L.quantile(L.ones(3), 0.5, interpolation="x"),
        RuntimeError,
    ),
    "median dim out of range": (lambda L: L.median(L.ones(3), 1), IndexError),
    "cummax dim out of range": (lambda L: L.cummax(L.ones(3), 2), IndexError),
    "diagonal same dims": (lambda L: L.diagonal(L.ones(3, 3), 0, 1, -1), RuntimeError),
    "diagonal of a vector": (lambda L: L.ones(3).diagonal(), IndexError),
    "diagonal float offset": (lambda L: L.ones(3, 3).diagonal(1.5), TypeError),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, error = ERRORS[name]
    for lib in (gs, torch):
        with pytest.raises(error):
            fn(lib)


def test_diagonal_is_a_view_written_through_as_in_torch():
    outs = []
    for lib in (gs, torch):
        x = lib.tensor(A[:, :3], requires_grad=True)
        y = x * 1.0
        y.diagonal(1).mul_(3.0)  # an in-place write through the view: recorded on y
        y.diagonal().add_(1.0)
        z = y.diagonal(-1, 1, 0)  # dims swapped
        (y.sum() + (z * z).sum()).backward()
        outs.append([y.detach().numpy(), x.grad.numpy(), np.array(z.shape)])
    _same(*outs)


@pytest.mark.parametrize(
    "shape, wrap",
    [((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False), ((5, 4), True)],
)
def test_fill_diagonal_matches_torch(shape, wrap):
    ours = gs.zeros(*shape).fill_diagonal_(2.0, wrap=wrap)
    theirs = torch.zeros(*shape).fill_diagonal_(2.0, wrap=wrap)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    grads = []
    for lib in (gs, torch):
        x = lib.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        y = x * 2
        y.fill_diagonal_(-1.0)
        (y * y).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)
    for bad in ((3,), (2, 3, 3)):
        for lib in (gs, torch):
            with pytest.raises(RuntimeError):
                lib.zeros(*bad).fill_diagonal_(1.0)
