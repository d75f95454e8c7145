"""log_sigmoid and its backward in one pass (``_log_sigmoid_kernels.pyx``, Note
[log_sigmoid in one pass]) against torch 2.13: float32 within a few ulp over a sweep of
float32 values (inf, nan, subnormal tails included), float64 to rounding, non-contiguous
and 0-size tensors, every shape the threads split; gradients by gradcheck and
gradgradcheck in float64 (the second order keeps the gradstack formula)."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _ulps(a, b):
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def test_float32_values_across_the_line_are_torchs():
    x = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate(
        [x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 88.0, 104.5], np.float32)]
    )
    ours = kernels.log_sigmoid(x)
    theirs = F.logsigmoid(torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(theirs)
    assert _ulps(ours[ok], theirs[ok]).max() <= 4
    g = np.random.default_rng(0).standard_normal(x.shape).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    (tg,) = torch.autograd.grad(F.logsigmoid(xt), xt, torch.from_numpy(g))
    ours_b = kernels.log_sigmoid_backward(g, x)
    theirs_b = tg.numpy()
    assert np.array_equal(np.isnan(ours_b), np.isnan(theirs_b))
    ok = ~np.isnan(theirs_b)
    np.testing.assert_allclose(ours_b[ok], theirs_b[ok], rtol=4e-7, atol=1e-37)


def test_float64_is_torchs():
    x = np.random.default_rng(1).uniform(-40, 40, 5000)
    x[:4] = [0.0, -0.0, 800.0, -800.0]
    np.testing.assert_allclose(
        kernels.log_sigmoid(x), F.logsigmoid(torch.from_numpy(x)).numpy(), rtol=1e-15, atol=0
    )
    g = np.random.default_rng(2).standard_normal(x.shape)
    xt = torch.from_numpy(x).requires_grad_()
    (tg,) = torch.autograd.grad(F.logsigmoid(xt), xt, torch.from_numpy(g))
    np.testing.assert_allclose(kernels.log_sigmoid_backward(g, x), tg.numpy(), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape", [(0,), (3, 0), (1,), (7, 5), (63,), (65,), (3, 4, 5), (300, 301), (1 << 17,)]
)
def test_op_and_gradient_are_torchs(dtype, shape):
    r = np.random.default_rng(3)
    x = r.uniform(-6, 6, shape).astype(dtype)
    g = r.standard_normal(shape).astype(dtype)
    a = gs.from_numpy(x).requires_grad_()
    t = torch.from_numpy(x).requires_grad_()
    ours, theirs = gs.nn.functional.logsigmoid(a), F.logsigmoid(t)
    tol = 4e-7 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    (ga,) = gs.autograd.grad(ours, a, gs.from_numpy(g))
    (gt,) = torch.autograd.grad(theirs, t, torch.from_numpy(g))
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_inputs(dtype):
    x = np.random.default_rng(4).uniform(-5, 5, (6, 40, 30)).astype(dtype)
    for view in (lambda t: t.transpose(0, 2), lambda t: t[:, ::3, 1:], lambda t: t[2]):
        a = view(gs.from_numpy(x)).requires_grad_()
        t = view(torch.from_numpy(x)).requires_grad_()
        ours, theirs = gs.nn.functional.logsigmoid(a), F.logsigmoid(t)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=4e-7)
        g = np.random.default_rng(5).standard_normal(tuple(ours.shape)).astype(dtype)
        (ga,) = gs.autograd.grad(ours, a, gs.from_numpy(g))
        (gt,) = torch.autograd.grad(theirs, t, torch.from_numpy(g))
        np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=4e-7, atol=1e-7)


def test_float16_keeps_the_numpy_path():
    x = np.linspace(-5, 5, 11).astype(np.float16)
    ours = gs.nn.functional.logsigmoid(gs.from_numpy(x)).numpy()
    theirs = F.logsigmoid(torch.from_numpy(x)).numpy()
    assert ours.dtype == np.float16
    np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=2e-3)


def test_gradcheck_and_gradgradcheck():
    x = gs.from_numpy(np.random.default_rng(6).uniform(-4, 4, (3, 5))).requires_grad_()
    assert gs.autograd.gradcheck(gs.nn.functional.logsigmoid, (x,))
    assert gs.autograd.gradgradcheck(gs.nn.functional.logsigmoid, (x,))


def test_threaded_path_is_the_serial_one():
    x = np.random.default_rng(7).uniform(-8, 8, 300_001).astype(np.float32)
    g = np.ones_like(x)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.log_sigmoid(x), kernels.log_sigmoid_backward(g, x)
        gs.set_num_threads(2)
        threaded = kernels.log_sigmoid(x), kernels.log_sigmoid_backward(g, x)
    finally:
        gs.set_num_threads(before)
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_arguments_are_checked():
    with pytest.raises(TypeError):
        kernels.log_sigmoid(np.zeros(3, np.int64))
    with pytest.raises(ValueError):
        kernels.log_sigmoid(np.zeros((3, 4)).T)
    with pytest.raises((TypeError, ValueError)):
        kernels.log_sigmoid_backward(np.zeros(3, np.float32), np.zeros(3))
    with pytest.raises(ValueError):
        kernels.log_sigmoid_backward(np.zeros(4), np.zeros(3))


# ---- softplus, log_sigmoid's mirror (Note [softplus as log_sigmoid's mirror])


@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 10.0), (0.5, 5.0), (-1.0, 20.0)])
def test_softplus_float32_values_are_torchs(beta, threshold):
    x = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 20.0, 10.0], np.float32)])
    ours = kernels.softplus(x, beta, threshold)
    theirs = F.softplus(torch.from_numpy(x), beta, threshold).numpy()
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(theirs)
    assert _ulps(ours[ok], theirs[ok]).max() <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (7, 5), (65,), (3, 4, 5), (1 << 17,)])
def test_softplus_op_and_gradient_are_torchs(dtype, shape):
    r = np.random.default_rng(8)
    x = r.uniform(-30, 30, shape).astype(dtype)
    g = r.standard_normal(shape).astype(dtype)
    a, t = gs.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    ours, theirs = gs.nn.functional.softplus(a, 1.5, 15.0), F.softplus(t, 1.5, 15.0)
    tol = 5e-7 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    (ga,) = gs.autograd.grad(ours, a, gs.from_numpy(g))
    (gt,) = torch.autograd.grad(theirs, t, torch.from_numpy(g))
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softplus_non_contiguous_and_float16(dtype):
    x = np.random.default_rng(9).uniform(-5, 5, (6, 40, 30)).astype(dtype)
    for view in (lambda t: t.transpose(0, 2), lambda t: t[:, ::3, 1:]):
        ours = gs.nn.functional.softplus(view(gs.from_numpy(x))).numpy()
        theirs = F.softplus(view(torch.from_numpy(x))).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=5e-7)
    h = np.linspace(-5, 5, 11).astype(np.float16)
    ours = gs.nn.functional.softplus(gs.from_numpy(h)).numpy()
    assert ours.dtype == np.float16
    np.testing.assert_allclose(
        ours.astype(np.float32),
        F.softplus(torch.from_numpy(h)).numpy().astype(np.float32),
        rtol=2e-3,
    )


def test_softplus_gradcheck_and_threads():
    x = gs.from_numpy(np.random.default_rng(10).uniform(-4, 4, (3, 5))).requires_grad_()
    assert gs.autograd.gradcheck(gs.nn.functional.softplus, (x,))
    assert gs.autograd.gradgradcheck(gs.nn.functional.softplus, (x,))
    y = np.random.default_rng(11).uniform(-30, 30, 300_001).astype(np.float32)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.softplus(y, 2.0, 10.0)
        gs.set_num_threads(2)
        threaded = kernels.softplus(y, 2.0, 10.0)
    finally:
        gs.set_num_threads(before)
    np.testing.assert_array_equal(serial, threaded)
