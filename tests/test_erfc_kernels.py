"""float32 erfc by erfcx and erfc's backward in one pass (``_erfc_kernels.pyx``, Note
[float32 erfc by erfcx]) against torch 2.13: float32 within 2 ulp over a sweep of float32
values (inf, nan, the tails), float64 (libm) to rounding, non-contiguous and 0-size
tensors, the threaded path; gradients by gradcheck and gradgradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")


def _ulps(a, b):
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def test_float32_values_across_the_line_are_torchs():
    x = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate(
        [
            x,
            np.array(
                [0.0, -0.0, np.inf, -np.inf, np.nan, 10.05, 10.1, -4.0, 1e-45, 9.3], np.float32
            ),
        ]
    )
    ours = kernels.erfc_float32(x)
    theirs = torch.erfc(torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(theirs)
    assert _ulps(ours[ok], theirs[ok]).max() <= 2
    g = np.random.default_rng(0).standard_normal(x.shape).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    (tg,) = torch.autograd.grad(torch.erfc(xt), xt, torch.from_numpy(g))
    ours_b, theirs_b = kernels.erfc_backward(g, x), tg.numpy()
    assert np.array_equal(np.isnan(ours_b), np.isnan(theirs_b))
    ok = ~np.isnan(theirs_b)
    assert _ulps(ours_b[ok], theirs_b[ok]).max() <= 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (2, 0), (1,), (7, 5), (65,), (3, 4, 5), (1 << 17,)])
def test_op_and_gradient_are_torchs(dtype, shape):
    r = np.random.default_rng(1)
    x = r.uniform(-5, 5, shape).astype(dtype)
    g = r.standard_normal(shape).astype(dtype)
    a, t = gs.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    ours, theirs = gs.erfc(a), torch.erfc(t)
    tol = 3e-7 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=0)
    (ga,) = gs.autograd.grad(ours, a, gs.from_numpy(g))
    (gt,) = torch.autograd.grad(theirs, t, torch.from_numpy(g))
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=tol, atol=1e-30)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_inputs(dtype):
    x = np.random.default_rng(2).uniform(-4, 4, (6, 40, 30)).astype(dtype)
    for view in (lambda t: t.transpose(0, 2), lambda t: t[:, ::3, 1:], lambda t: t[2]):
        a, t = view(gs.from_numpy(x)).requires_grad_(), view(torch.from_numpy(x)).requires_grad_()
        ours, theirs = gs.erfc(a), torch.erfc(t)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=3e-7)
        g = np.random.default_rng(3).standard_normal(tuple(ours.shape)).astype(dtype)
        (ga,) = gs.autograd.grad(ours, a, gs.from_numpy(g))
        (gt,) = torch.autograd.grad(theirs, t, torch.from_numpy(g))
        np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=3e-7, atol=1e-30)


def test_float16_keeps_its_path():
    x = np.linspace(-3, 3, 13).astype(np.float16)
    ours = gs.erfc(gs.from_numpy(x)).numpy()
    assert ours.dtype == np.float16
    np.testing.assert_array_equal(ours, torch.erfc(torch.from_numpy(x)).numpy())


def test_gradcheck_and_gradgradcheck():
    x = gs.from_numpy(np.random.default_rng(4).uniform(-2, 2, (3, 4))).requires_grad_()
    assert gs.autograd.gradcheck(gs.erfc, (x,))
    assert gs.autograd.gradgradcheck(gs.erfc, (x,))


def test_threaded_path_is_the_serial_one():
    x = np.random.default_rng(5).uniform(-6, 6, 300_001).astype(np.float32)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.erfc_float32(x), kernels.erfc_backward(x, x)
        gs.set_num_threads(2)
        threaded = kernels.erfc_float32(x), kernels.erfc_backward(x, x)
    finally:
        gs.set_num_threads(before)
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="float32"):
        kernels.erfc_float32(np.zeros(3))
    with pytest.raises(ValueError):
        kernels.erfc_float32(np.zeros((3, 4), np.float32).T)
    with pytest.raises((TypeError, ValueError)):
        kernels.erfc_backward(np.zeros(3, np.float32), np.zeros(3))
