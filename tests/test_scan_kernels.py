"""The scan C kernel (``_scan_kernels.pyx``: cumsum, forward and reversed) and the op
``cumsum`` with its first-order gradient, against torch 2.13: float32 and float64, every
dim, -0.0, inf and NaN, non-contiguous and 0-size inputs, integer inputs (numpy's
path), the threaded path, gradcheck in float64, the argument checks."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

SHAPES = [(7,), (5, 9), (3, 4, 6), (2, 0, 3), (1, 1), (2, 3, 4, 5)]


def _same(u, v):
    assert u.dtype == v.dtype and u.shape == v.shape
    same = ((u == v) & (np.signbit(u) == np.signbit(v))) | (np.isnan(u) & np.isnan(v))
    assert same.all(), (u[~same][:5], v[~same][:5])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_are_torchs(shape, dtype):
    r = np.random.default_rng(len(shape))
    x = r.standard_normal(shape).astype(dtype)
    if x.size > 3:
        x.reshape(-1)[:3] = [-0.0, np.inf, np.nan]
    for dim in range(-len(shape), len(shape)):
        for view in (lambda t: t, lambda t: t.transpose(0, -1), lambda t: t.flip(0)):
            a, b = gs.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            out_a, out_b = view(a).cumsum(dim), view(b).cumsum(dim)
            g = r.standard_normal(tuple(out_b.shape)).astype(dtype)
            (ga,) = gs.autograd.grad(out_a, a, gs.tensor(g))
            (gb,) = torch.autograd.grad(out_b, b, torch.tensor(g))
            _same(out_a.detach().numpy(), out_b.detach().numpy())
            _same(ga.numpy(), gb.numpy())


def test_integers_and_a_dtype_argument_keep_their_path():
    x = np.arange(-5, 7).reshape(3, 4)
    for kw in ({}, {"dtype": gs.float64}):
        ours = gs.tensor(x).cumsum(1, **kw).numpy()
        theirs = torch.tensor(x).cumsum(1, **{k: torch.float64 for k in kw}).numpy()
        np.testing.assert_array_equal(ours, theirs)
        assert ours.dtype == theirs.dtype


def test_gradcheck_in_float64():
    x = gs.tensor(np.random.default_rng(3).standard_normal((3, 5)), requires_grad=True)
    for dim in (0, 1):
        assert gs.autograd.gradcheck(lambda t, dim=dim: t.cumsum(dim), (x,))
        assert gs.autograd.gradgradcheck(lambda t, dim=dim: t.cumsum(dim), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_path_equals_one_thread(dtype):
    x = np.random.default_rng(4).standard_normal((kernels.SCAN_THRESHOLD // 50 + 3, 60))
    x = x.astype(dtype)
    before = kernels.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            kernels.set_num_threads(threads)
            results.append([kernels.cumsum(x, a, r) for a in (0, 1) for r in (False, True)])
    finally:
        kernels.set_num_threads(before)
    for u, v in zip(*results):
        np.testing.assert_array_equal(u, v)


def test_kernel_checks_its_arguments():
    with pytest.raises(ValueError, match="out of range"):
        kernels.cumsum(np.ones(3), 1)
    with pytest.raises(ValueError, match="0-d"):
        kernels.cumsum(np.array(1.0), 0)
    with pytest.raises((TypeError, ValueError)):
        kernels.cumsum(np.arange(3), 0)
    with pytest.raises((TypeError, ValueError)):
        kernels.cumsum(np.ones((4, 4))[:, ::2], 0)
    np.testing.assert_array_equal(kernels.cumsum(np.array([3.0, 1.0]), -1, True), [4.0, 1.0])
