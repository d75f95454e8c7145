"""The elementwise loss C kernels (``_loss_kernels.pyx``: smooth L1 and Huber, forward and
backward) and the ops that take them, against torch 2.13: values and gradients in float32
and float64 for every reduction, beta/delta below, at and above the differences, NaN and
infinities; gradcheck in float64; non-contiguous, broadcast and 0-size operands (the
other path); the threaded path; the argument checks."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

DTYPES = (np.float32, np.float64)
LOSSES = {"smooth_l1_loss": "beta", "huber_loss": "delta"}


def _operands(dtype, shape=(40, 50), seed=0):
    r = np.random.default_rng(seed)
    x = r.uniform(-3, 3, shape).astype(dtype)
    y = r.uniform(-3, 3, shape).astype(dtype)
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)
    if flat_x.size >= 8:
        flat_x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.5, -0.5]
        flat_y[:8] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5]  # |d| = 1: at beta
    return x, y


def _run(L, name, x, y, reduction, param, grad):
    a, b = L.tensor(x, requires_grad=True), L.tensor(y, requires_grad=True)
    out = getattr(L.nn.functional, name)(a, b, reduction=reduction, **{LOSSES[name]: param})
    g = L.tensor(grad) if reduction == "none" else L.ones_like(out)
    ga, gb = L.autograd.grad(out, (a, b), g)
    return [t.detach().numpy() for t in (out, ga, gb)]


def _same(ours, theirs):
    for u, v in zip(ours, theirs):
        assert u.dtype == v.dtype and u.shape == v.shape
        np.testing.assert_array_equal(u, v)  # NaN equals NaN here


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("param", [1.0, 0.5, 2.0, 1e-3])
def test_values_and_gradients_are_torchs(name, dtype, reduction, param):
    x, y = _operands(dtype)
    grad = np.random.default_rng(1).uniform(-1, 1, x.shape).astype(dtype)
    _same(
        _run(gs, name, x, y, reduction, param, grad),
        _run(torch, name, x, y, reduction, param, grad),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_smooth_l1_with_beta_zero_is_l1(dtype):
    x, y = _operands(dtype)
    grad = np.ones_like(x)
    ours = _run(gs, "smooth_l1_loss", x, y, "sum", 0.0, grad)
    theirs = _run(torch, "smooth_l1_loss", x, y, "sum", 0.0, grad)
    for u, v in zip(ours, theirs):
        np.testing.assert_allclose(u, v, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_broadcast_and_empty_operands(name, dtype):
    x, y = _operands(dtype, (6, 8), seed=3)
    cases = [
        (x.T, y.T),  # transposed views
        (x[:, ::2], y[:, ::2]),
        (x, y[:1]),  # broadcast target (torch warns)
        (x[:0], y[:0]),
    ]
    for a, b in cases:
        for reduction in ("mean", "sum", "none"):
            grad = np.ones(np.broadcast_shapes(a.shape, b.shape), dtype)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (torch's broadcast-target warning)
                ours = _run(gs, name, a, b, reduction, 1.0, grad)
                theirs = _run(torch, name, a, b, reduction, 1.0, grad)
            for u, v in zip(ours, theirs):
                assert u.shape == v.shape
                np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradcheck_in_float64(name):
    r = np.random.default_rng(4)
    x = gs.tensor(r.uniform(-3, 3, 12), requires_grad=True)
    y = gs.tensor(r.uniform(-3, 3, 12), requires_grad=True)
    fn = getattr(gs.nn.functional, name)
    for reduction in ("mean", "sum", "none"):
        loss = lambda a, b, reduction=reduction: fn(a, b, reduction=reduction)  # noqa: E731
        assert gs.autograd.gradcheck(loss, (x, y))
        assert gs.autograd.gradgradcheck(loss, (x, y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threaded_path_equals_one_thread(dtype):
    n = 2 * kernels.LOSS_THRESHOLD + 7
    x, y = _operands(dtype, (n,), seed=5)
    g = np.random.default_rng(6).uniform(-1, 1, n).astype(dtype)
    before = kernels.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            kernels.set_num_threads(threads)
            results.append([
                kernels.smooth_l1(x, y, 0.7), kernels.huber(x, y, 0.7),
                kernels.smooth_l1_backward(g, x, y, 0.7), kernels.huber_backward(g, x, y, 0.7, 0.5),
            ])  # fmt: skip
    finally:
        kernels.set_num_threads(before)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_kernels_check_their_arguments():
    a = np.ones(4, np.float32)
    with pytest.raises(TypeError):
        kernels.smooth_l1(a, np.ones(4), 1.0)
    with pytest.raises(ValueError):
        kernels.huber(a, np.ones(3, np.float32), 1.0)
    with pytest.raises(ValueError, match="positive"):
        kernels.smooth_l1(a, a, 0.0)
    with pytest.raises(ValueError, match="one element"):
        kernels.huber_backward(np.ones(2, np.float32), a, a, 1.0)
    with pytest.raises(TypeError):
        kernels.smooth_l1_backward(np.ones(1), a, a, 1.0)
    with pytest.raises((TypeError, ValueError)):
        kernels.huber(np.ones((4, 4), np.float32)[:, ::2], np.ones((4, 2), np.float32), 1.0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sign_and_sgn_of_floats_are_torchs(dtype):
    # (the one-pass numpy formulation of _ufuncs._sign_ufunc: 0 for NaN, +0.0 for -0.0)
    a = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45], dtype)
    views = (lambda t: t, lambda t: t.reshape(3, 3).T, lambda t: t[::2], lambda t: t[:0])
    for view in (*views, lambda t: t[6]):
        for method in ("sign", "sgn"):
            ours = getattr(view(gs.tensor(a)), method)().numpy()
            theirs = getattr(view(torch.tensor(a)), method)().numpy()
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            assert np.array_equal(ours, theirs) and (np.signbit(ours) == np.signbit(theirs)).all()
    t = gs.tensor(a.copy())
    t.sign_()
    np.testing.assert_array_equal(t.numpy(), torch.tensor(a).sign().numpy())
