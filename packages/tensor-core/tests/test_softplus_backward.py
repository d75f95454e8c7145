"""softplus_backward in one pass (Note [softplus_backward in one pass] in
_activation_kernels.pyx) against torch 2.13: float32 on a dense grid of inputs in every
SIMD copy, betas and thresholds, float64, 0-size, the threaded path, argument checks."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _grid():
    x = np.arange(0, 2**32, 2999, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = [0.0, -0.0, 20.0, 20.000002, 19.999998, 88.7, -88.7, -104.0, 104.0, np.inf,
             -np.inf, np.nan]  # fmt: skip
    return np.concatenate([x[~np.isnan(x)], np.float32(edges)])


def _torch_backward(g, x, beta, threshold):
    t = torch.from_numpy(x).requires_grad_()
    F.softplus(t, beta, threshold).backward(torch.from_numpy(g))
    return t.grad.numpy()


@pytest.mark.parametrize("avx", SIMD_COPIES)
@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 100.0)])
def test_float32_matches_torch(avx, beta, threshold):
    x = _grid()
    g = np.random.default_rng(1).standard_normal(x.size).astype(np.float32)
    with simd_copy(avx):
        got = kernels.softplus_backward(g, x, beta, threshold)
    want = _torch_backward(g, x, beta, threshold)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    # float exps within an ulp of each other, then z / (z + 1): a few ulps
    np.testing.assert_allclose(got[ok], want[ok], rtol=5e-7, atol=1e-44)
    above = x * np.float32(beta) > threshold
    assert np.array_equal(got[above], g[above])  # the gradient itself, to the bit


def test_float64_zero_size_and_threads():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(200_001) * 30
    g = rng.standard_normal(x.size)
    got = kernels.softplus_backward(g, x, 1.5, 20.0)
    np.testing.assert_allclose(got, _torch_backward(g, x, 1.5, 20.0), rtol=1e-14, atol=0)
    x32, g32 = x.astype(np.float32), g.astype(np.float32)
    old = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(1)
        one = kernels.softplus_backward(g32, x32)
        _kernels.set_num_threads(2)
        two = kernels.softplus_backward(g32, x32)
    finally:
        _kernels.set_num_threads(old)
    np.testing.assert_array_equal(one, two)
    empty = np.zeros((0, 3), np.float32)
    assert kernels.softplus_backward(empty, empty).shape == (0, 3)


def test_the_kernel_checks_its_arguments():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="shape"):
        kernels.softplus_backward(x, np.ones((4, 3), np.float32))
    with pytest.raises(TypeError, match="same dtype"):
        kernels.softplus_backward(x, x.astype(np.float64))
    with pytest.raises(ValueError):
        kernels.softplus_backward(x.T, x.T)
