"""The NLL loss C kernels (tensor-core's ``_nll_kernels.pyx``: ``nll_loss_forward`` and
``nll_loss_backward``) and the ops that take them (``nll_loss``, ``nll_loss2d``,
``F.cross_entropy``), against torch 2.13: values and gradients equal to torch's bits in
float32 and float64 (Note [The NLL kernels follow torch's loops]: the cascade sums of
torch's loops, over enough targets for several levels), every reduction, class weights,
ignore_index, every target ignored, uint8 targets, non-contiguous and 0-size inputs (the
numpy path), out-of-range targets, the kernels' argument checks; gradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

DTYPES = (np.float32, np.float64)
# (N, C), (N, C, S) and (N, C, H, W); 5000 and 4800 targets take 4 levels of the cascade
SHAPES = [(6, 5), (5000, 3), (4, 5, 7), (3, 4, 5, 6), (2, 3, 40, 60), (1, 1, 1, 1)]


def _case(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(dtype)
    t = r.integers(0, shape[1], (shape[0],) + shape[2:])
    return x, t


def _run(L, x, t, grad=None, fn="nll_loss", **kw):
    a = L.tensor(x, requires_grad=True)
    if kw.get("weight") is not None:
        kw = dict(kw, weight=L.tensor(kw["weight"]))
    out = getattr(L.nn.functional, fn)(a, L.tensor(t), **kw)
    g = L.ones_like(out) if grad is None else L.tensor(grad)
    (ga,) = L.autograd.grad(out, a, g)
    return out.detach().numpy(), ga.numpy()


def _same(ours, theirs):
    for u, v in zip(ours, theirs):
        assert u.dtype == v.dtype and u.shape == v.shape
        np.testing.assert_array_equal(u, v)  # NaN equals NaN here


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("variant", ["plain", "weight", "ignored", "weight ignored"])
def test_values_and_gradients_are_torchs_bits(shape, dtype, reduction, variant):
    x, t = _case(shape, dtype)
    kw = {"reduction": reduction}
    if "weight" in variant:
        kw["weight"] = np.random.default_rng(1).uniform(0.5, 2, shape[1]).astype(dtype)
    if "ignored" in variant:
        t = t.copy()
        t.reshape(-1)[::3] = 1
        kw["ignore_index"] = 1
    grad = None
    if reduction == "none":
        grad = np.random.default_rng(2).uniform(-1, 1, t.shape).astype(dtype)
    else:
        grad = np.asarray(0.7, dtype)
    _same(_run(gs, x, t, grad, **kw), _run(torch, x, t, grad, **kw))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(64, 10), (8, 10, 5, 5)])
def test_cross_entropy_is_torchs(dtype, shape):
    x, t = _case(shape, dtype, seed=4)
    for reduction in ("mean", "sum", "none"):
        grad = None if reduction != "none" else np.ones(t.shape, dtype)
        ours = _run(gs, x, t, grad, fn="cross_entropy", reduction=reduction)
        theirs = _run(torch, x, t, grad, fn="cross_entropy", reduction=reduction)
        tol = 2e-6 if dtype == np.float32 else 1e-14  # (log_softmax: a few ulps)
        for u, v in zip(ours, theirs):
            np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_target_ignored_and_empty_batches(dtype):
    x, t = _case((4, 3), dtype)
    t = np.full_like(t, -100)
    for reduction in ("mean", "sum", "none"):
        _same(_run(gs, x, t, reduction=reduction), _run(torch, x, t, reduction=reduction))
    for shape in [(0, 3), (0, 3, 4, 5), (2, 3, 0, 5)]:
        x0, t0 = _case(shape, dtype)
        for reduction in ("mean", "sum", "none"):
            _same(_run(gs, x0, t0, reduction=reduction), _run(torch, x0, t0, reduction=reduction))


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_inputs_and_uint8_targets(dtype):
    x, t = _case((5, 6), dtype)
    results = []
    for L in (gs, torch):
        a = L.tensor(np.ascontiguousarray(x.T), requires_grad=True)
        out = L.nn.functional.nll_loss(a.T, L.tensor(t))  # a transposed view: numpy path
        (g,) = L.autograd.grad(out, a)
        results.append((out.detach().numpy(), g.numpy()))
    for u, v in zip(*results):
        np.testing.assert_allclose(u, v, rtol=1e-6)
    tu = t.astype(np.uint8)  # (torch's 2-D loss takes Byte targets, its 2d loss not)
    _same(_run(gs, x, tu, reduction="sum"), _run(torch, x, tu, reduction="sum"))
    # a non-contiguous target and weight take copies
    w = np.random.default_rng(3).uniform(0.5, 2, 6).astype(dtype)
    t2 = np.stack([t, t], 1)[:, 0]
    assert not t2.flags.c_contiguous
    _same(
        _run(gs, x, t2, weight=np.repeat(w, 2)[::2]),
        _run(torch, x, t2, weight=np.repeat(w, 2)[::2]),
    )


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5, 6)])
def test_targets_out_of_range_raise_torchs_error(shape):
    x, t = _case(shape, np.float32)
    for bad in (shape[1], -1, 2**40):
        t2 = t.copy()
        t2.reshape(-1)[-1] = bad
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            gs.nn.functional.nll_loss(gs.tensor(x), gs.tensor(t2))
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            kernels.nll_loss_backward(np.array(1.0, np.float32), shape, t2, None, "mean", -100)


def test_gradcheck_in_float64():
    x, t = _case((3, 4, 5, 6), np.float64)
    w = gs.tensor(np.random.default_rng(1).uniform(0.5, 2, 4))
    a = gs.tensor(x, requires_grad=True)
    target = gs.tensor(np.where(t == 2, -100, t))
    for reduction in ("mean", "sum", "none"):
        for weight in (None, w):

            def fn(v, reduction=reduction, weight=weight):
                return gs.nn.functional.nll_loss(v, target, weight, reduction=reduction)

            assert gs.autograd.gradcheck(fn, (a,))
            assert gs.autograd.gradgradcheck(fn, (a,))


def test_kernel_results_and_checks():
    logp = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    loss, total = kernels.nll_loss_forward(logp, np.array([0, 2]), None, "sum", -100)
    assert loss.shape == () and total.shape == () and float(total) == 2.0
    np.testing.assert_allclose(loss, -(logp[0, 0] + logp[1, 2]))
    per, _ = kernels.nll_loss_forward(logp, np.array([0, 2]), None, "none", -100)
    assert per.shape == (2,)
    g = kernels.nll_loss_backward(np.array([1.0, 2.0]), (2, 3), np.array([1, 0]), None, "none", 0)
    np.testing.assert_array_equal(g, [[0, -1, 0], [0, 0, 0]])
    t = np.array([0, 2])
    with pytest.raises(TypeError, match="int64"):
        kernels.nll_loss_forward(logp, t.astype(np.int32), None, "sum", -100)
    with pytest.raises(ValueError, match="elements"):
        kernels.nll_loss_forward(logp, np.array([0, 1, 2]), None, "sum", -100)
    with pytest.raises(ValueError, match="reduction"):
        kernels.nll_loss_forward(logp, t, None, "avg", -100)
    with pytest.raises(ValueError, match="at least 2 dims"):
        kernels.nll_loss_forward(logp[0], np.array([0]), None, "sum", -100)
    with pytest.raises(TypeError, match="float16"):
        kernels.nll_loss_forward(logp.astype(np.float16), t, None, "sum", -100)
    with pytest.raises(ValueError, match="C-contiguous|contiguous"):
        kernels.nll_loss_forward(np.asfortranarray(logp), t, None, "sum", -100)
    with pytest.raises(TypeError, match="weight"):
        kernels.nll_loss_forward(logp, t, np.ones(3, np.float32), "sum", -100)
    with pytest.raises(ValueError, match="C = 3"):
        kernels.nll_loss_forward(logp, t, np.ones(4), "sum", -100)
    with pytest.raises(TypeError, match="ignore_index"):
        kernels.nll_loss_forward(logp, t, None, "sum", -100.0)
    with pytest.raises(ValueError, match="one element"):
        kernels.nll_loss_backward(np.ones(2), (2, 3), t, None, "mean", -100)
    with pytest.raises(ValueError, match="N \\* S"):
        kernels.nll_loss_backward(np.ones(3), (2, 3), t, None, "none", -100)
