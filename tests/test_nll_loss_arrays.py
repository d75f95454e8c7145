"""NLL loss's gather and scatter by flat indices (forward in tensor-core's ``_impl_nn``,
gradient in ``derivatives/nn.py``, Note [A scattered gradient is zeroed by a fill]),
against torch 2.13: 1-D, 2-D, 3-D and 4-D inputs, every reduction, class weights,
ignore_index (inside and outside the classes), out-of-range targets, non-contiguous and
0-size inputs, float32 and float64; gradcheck and gradgradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

SHAPES = [(7,), (6, 5), (4, 5, 7), (3, 4, 5, 6), (2, 3, 1, 9)]


def _case(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(dtype)
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = r.integers(0, c, tshape)
    return x, t, c


def _both(x, t, grad=None, **kw):
    results = []
    for L in (gs, torch):
        a = L.tensor(x, requires_grad=True)
        args = dict(kw)
        if args.get("weight") is not None:
            args["weight"] = L.tensor(args["weight"])
        out = L.nn.functional.nll_loss(a, L.tensor(t), **args)
        g = L.ones_like(out) if grad is None else L.tensor(grad)
        (ga,) = L.autograd.grad(out, a, g)
        results.append((out.detach().numpy(), ga.numpy()))
    return results


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("variant", ["plain", "weight", "ignored", "ignore inside"])
def test_values_and_gradients_match_torch(shape, dtype, reduction, variant):
    x, t, c = _case(shape, dtype)
    kw = {"reduction": reduction}
    if variant == "weight":
        kw["weight"] = np.random.default_rng(1).uniform(0.5, 2, c).astype(dtype)
    if variant == "ignored" and t.ndim:
        t = t.copy()
        t.reshape(-1)[::3] = -100
    if variant == "ignore inside":
        kw["ignore_index"] = 1  # a class index: those targets count for nothing
    grad = None
    if reduction == "none":
        grad = np.random.default_rng(2).uniform(-1, 1, t.shape).astype(dtype)
    (o1, g1), (o2, g2) = _both(x, t, grad, **kw)
    rtol = 1e-5 if dtype == np.float32 else 1e-12  # (the order of the sums differs)
    np.testing.assert_allclose(o1, o2, rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(g1, g2, rtol=rtol, atol=1e-9)


def test_non_contiguous_and_empty_inputs():
    x, t, _ = _case((6, 5), np.float32)
    results = []
    for L in (gs, torch):
        a = L.tensor(np.ascontiguousarray(x.T), requires_grad=True)
        out = L.nn.functional.nll_loss(a.T, L.tensor(t))  # a transposed view
        (g,) = L.autograd.grad(out, a)
        results.append((out.detach().numpy(), g.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    # a non-contiguous 4-D input gives its contiguous copy's values and gradient
    x4, t4, _ = _case((3, 4, 5, 6), np.float32)
    a = gs.tensor(np.ascontiguousarray(x4.transpose(0, 1, 3, 2)), requires_grad=True)
    out = gs.nn.functional.nll_loss(a.transpose(2, 3), gs.tensor(t4))
    (g,) = gs.autograd.grad(out, a)
    ((o2, g2), _) = _both(x4, t4)
    np.testing.assert_allclose(out.detach().numpy(), o2, rtol=1e-6)
    np.testing.assert_allclose(g.numpy().transpose(0, 1, 3, 2), g2, rtol=1e-6)
    x0 = np.zeros((0, 4, 5, 6), np.float32)
    t0 = np.zeros((0, 5, 6), np.int64)
    for reduction in ("sum", "none"):
        (o1, g1), (o2, g2) = _both(x0, t0, reduction=reduction)
        assert o1.shape == o2.shape and g1.shape == g2.shape


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5, 6)])
def test_targets_out_of_range_raise(shape):
    x, t, c = _case(shape, np.float32)
    for bad in (c, -1, -100):
        t2 = t.copy()
        t2.reshape(-1)[0] = bad
        with pytest.raises(IndexError):
            gs.nn.functional.nll_loss(gs.tensor(x), gs.tensor(t2), ignore_index=-5)


def test_gradcheck_in_float64():
    x, t, _ = _case((3, 4, 5, 6), np.float64)
    a = gs.tensor(x, requires_grad=True)
    target = gs.tensor(t)
    for reduction in ("mean", "sum", "none"):
        fn = lambda v, reduction=reduction: gs.nn.functional.nll_loss(  # noqa: E731
            v, target, reduction=reduction
        )
        assert gs.autograd.gradcheck(fn, (a,))
        assert gs.autograd.gradgradcheck(fn, (a,))
