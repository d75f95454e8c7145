"""float32 exp and sigmoid in one pass (``_exp_kernels.pyx``, Note [float32 exp and
sigmoid in one pass]): exp is the correctly rounded value (float64 exp rounded once, as
the small-array loops give) over a sweep of float32 values, sigmoid within 2 ulp of the
true value (3 of torch's); the ops, their in-place forms (the same bits), non-contiguous
and 0-size tensors, float64 and float16 (their own paths), the threaded path; gradients
by gradcheck in float64 and against torch in float32."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

SWEEP = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _ulps(a, b):
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def test_exp_is_correctly_rounded():
    x = np.concatenate([SWEEP, np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.73])])
    ours = kernels.exp_float32(x)
    with np.errstate(all="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(np.float32)
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(ours[ok].view(np.uint32), ref[ok].view(np.uint32))


def test_sigmoid_is_torchs_within_three_ulp():
    x = np.concatenate([SWEEP, np.float32([0.0, -0.0, np.inf, -np.inf, np.nan])])
    ours = kernels.sigmoid_float32(x)
    theirs = torch.sigmoid(torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    normal = ~np.isnan(theirs) & (np.abs(theirs) >= np.finfo(np.float32).tiny)
    assert _ulps(ours[normal], theirs[normal]).max() <= 3
    with np.errstate(all="ignore"):  # within 2 ulp of the true value (torch's too)
        ref = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    assert _ulps(ours[normal], ref[normal]).max() <= 2
    assert kernels.sigmoid_float32(np.float32([-100.0]))[0] == np.float32(3.7835059e-44)


@pytest.mark.parametrize("name", ["exp", "sigmoid"])
@pytest.mark.parametrize("shape", [(0,), (3, 0), (600,), (70, 90), (2, 300, 301)])
def test_ops_in_place_and_views(name, shape):
    x = np.random.default_rng(0).uniform(-20, 20, shape).astype(np.float32)
    out = getattr(gs, name)(gs.from_numpy(x)).numpy()
    t = gs.from_numpy(x.copy())
    assert getattr(t, name + "_")() is t
    np.testing.assert_array_equal(t.numpy(), out)
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, theirs, rtol=3e-7, atol=1e-38)
    if len(shape) >= 2 and x.size:
        for view in (lambda v: v.transpose(0, -1), lambda v: v[..., ::2]):
            ours = getattr(gs, name)(view(gs.from_numpy(x))).numpy()
            np.testing.assert_allclose(
                ours,
                getattr(torch, name)(view(torch.from_numpy(x))).numpy(),
                rtol=3e-7,
                atol=1e-38,
            )
            base = gs.from_numpy(x.copy())
            getattr(view(base), name + "_")()
            twin = torch.from_numpy(x.copy())
            getattr(view(twin), name + "_")()
            np.testing.assert_allclose(base.numpy(), twin.numpy(), rtol=3e-7, atol=1e-38)


@pytest.mark.parametrize("name", ["exp", "sigmoid"])
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_keep_their_paths(name, dtype):
    x = np.random.default_rng(1).uniform(-8, 8, 5000).astype(dtype)
    ours = getattr(gs, name)(gs.from_numpy(x)).numpy()
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert ours.dtype == dtype
    tol = 1e-15 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(ours, theirs, rtol=tol)


@pytest.mark.parametrize("name", ["exp", "sigmoid"])
def test_gradients(name):
    x = gs.from_numpy(np.random.default_rng(2).uniform(-3, 3, (3, 4))).requires_grad_()
    assert gs.autograd.gradcheck(getattr(gs, name), (x,))
    assert gs.autograd.gradgradcheck(getattr(gs, name), (x,))
    v = np.random.default_rng(3).uniform(-5, 5, (300, 200)).astype(np.float32)
    g = np.random.default_rng(4).standard_normal(v.shape).astype(np.float32)
    a, t = gs.from_numpy(v).requires_grad_(), torch.from_numpy(v).requires_grad_()
    (ga,) = gs.autograd.grad(getattr(gs, name)(a), a, gs.from_numpy(g))
    (gt,) = torch.autograd.grad(getattr(torch, name)(t), t, torch.from_numpy(g))
    # (sigmoid's gradient g (1 - y) y carries an ulp of y near 1 as 1e-6 absolutely)
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=1e-6, atol=1e-6 * np.abs(g).max())


def test_threaded_path_is_the_serial_one():
    x = np.random.default_rng(5).uniform(-90, 90, 300_001).astype(np.float32)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.exp_float32(x), kernels.sigmoid_float32(x)
        gs.set_num_threads(2)
        threaded = kernels.exp_float32(x), kernels.sigmoid_float32(x)
    finally:
        gs.set_num_threads(before)
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="float32"):
        kernels.exp_float32(np.zeros(3))
    with pytest.raises(ValueError):
        kernels.sigmoid_float32(np.zeros((3, 4), np.float32).T)
    with pytest.raises(TypeError, match="out"):
        kernels.exp_float32(np.zeros(3, np.float32), out=np.zeros(3, np.float32))
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.exp_float32(ro, out=ro)


def test_log1p_is_correctly_rounded():
    specials = [0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -0.999]
    x = np.concatenate([SWEEP, np.float32(specials)])
    ours = kernels.log1p_float32(x)
    with np.errstate(all="ignore"):
        ref = np.log1p(x.astype(np.float64)).astype(np.float32)
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(ours[ok].view(np.uint32), ref[ok].view(np.uint32))


@pytest.mark.parametrize("shape", [(0,), (600,), (70, 90)])
def test_log1p_op_in_place_and_views(shape):
    x = np.random.default_rng(6).uniform(-0.99, 5, shape).astype(np.float32)
    out = gs.log1p(gs.from_numpy(x)).numpy()
    t = gs.from_numpy(x.copy())
    t.log1p_()
    np.testing.assert_array_equal(t.numpy(), out)
    np.testing.assert_allclose(out, torch.log1p(torch.from_numpy(x)).numpy(), rtol=3e-7)
    if len(shape) == 2:
        ours = gs.log1p(gs.from_numpy(x).t()).numpy()
        np.testing.assert_array_equal(ours, out.T)


HYPERBOLIC = ("expm1", "cosh", "sinh")


@pytest.mark.parametrize("name", HYPERBOLIC)
def test_expm1_cosh_sinh_are_correctly_rounded(name):
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-30, -1e-8, 0.3465,
                -0.3466, 88.72, 88.73, 89.4, 89.5, -89.5, -103.0, -105.0, 3e38, -3e38]  # fmt: skip
    x = np.concatenate([SWEEP, np.float32(specials)])
    ours = getattr(kernels, name + "_float32")(x)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(ours[ok].view(np.uint32), ref[ok].view(np.uint32))
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    normal = ok & (np.abs(theirs) >= np.finfo(np.float32).tiny) & np.isfinite(theirs)
    assert _ulps(ours[normal], theirs[normal]).max() <= 1


@pytest.mark.parametrize("name", HYPERBOLIC)
@pytest.mark.parametrize("shape", [(0,), (3, 0), (600,), (70, 90), (2, 300, 301)])
def test_hyperbolic_ops_in_place_and_views(name, shape):
    x = np.random.default_rng(9).uniform(-20, 20, shape).astype(np.float32)
    out = getattr(gs, name)(gs.from_numpy(x)).numpy()
    t = gs.from_numpy(x.copy())
    assert getattr(t, name + "_")() is t
    np.testing.assert_array_equal(t.numpy(), out)
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, theirs, rtol=2.4e-7)
    if len(shape) >= 2 and x.size:
        for view in (lambda v: v.transpose(0, -1), lambda v: v[..., ::2]):
            ours = getattr(gs, name)(view(gs.from_numpy(x))).numpy()
            want = getattr(torch, name)(view(torch.from_numpy(x))).numpy()
            np.testing.assert_allclose(ours, want, rtol=2.4e-7)
            base, twin = gs.from_numpy(x.copy()), torch.from_numpy(x.copy())
            getattr(view(base), name + "_")()
            getattr(view(twin), name + "_")()
            np.testing.assert_allclose(base.numpy(), twin.numpy(), rtol=2.4e-7)


@pytest.mark.parametrize("name", HYPERBOLIC)
def test_hyperbolic_gradients_and_threads(name):
    x = gs.from_numpy(np.random.default_rng(10).uniform(-3, 3, (3, 4))).requires_grad_()
    assert gs.autograd.gradcheck(getattr(gs, name), (x,))
    assert gs.autograd.gradgradcheck(getattr(gs, name), (x,))
    v = np.random.default_rng(11).uniform(-5, 5, (300, 200)).astype(np.float32)
    g = np.random.default_rng(12).standard_normal(v.shape).astype(np.float32)
    a, t = gs.from_numpy(v).requires_grad_(), torch.from_numpy(v).requires_grad_()
    (ga,) = gs.autograd.grad(getattr(gs, name)(a), a, gs.from_numpy(g))
    (gt,) = torch.autograd.grad(getattr(torch, name)(t), t, torch.from_numpy(g))
    np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=1e-6)
    kernel = getattr(kernels, name + "_float32")
    big = np.random.default_rng(13).uniform(-90, 90, 300_001).astype(np.float32)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernel(big)
        gs.set_num_threads(2)
        threaded = kernel(big)
    finally:
        gs.set_num_threads(before)
    np.testing.assert_array_equal(serial, threaded)
