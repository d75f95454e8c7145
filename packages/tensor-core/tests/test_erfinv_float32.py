"""The float32 erfinv loop (Note [float32 erfinv by one polynomial] in
_activation_kernels.pyx) against torch 2.13 and the correctly rounded value: a dense grid
of float32 inputs in every SIMD copy, the edges (+-1, beyond, nan, +-0, subnormals), the
backward kernel, layouts, 0-size and the threaded path (the gradients through autograd,
and gradcheck in float64: graph-engine's test_activation_backward.py)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy, ulps

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3434)


def _grid():
    """Every 389th float32 in [0, 1), subnormals included, and their negatives."""
    y = np.arange(0, 0x3F800000, 389, dtype=np.uint32).view(np.float32)
    return np.concatenate([y, -y, np.float32([0.99999994, -0.99999994, 0.5, 0.7])])


def _torch_erfinv(y):
    return torch.erfinv(torch.from_numpy(y)).numpy()


@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_every_simd_copy_is_within_an_ulp_of_torch(avx):
    y = _grid()
    with simd_copy(avx):
        got = kernels.erfinv(y)
    assert ulps(got, _torch_erfinv(y)).max() <= 1
    assert np.array_equal(np.signbit(got), np.signbit(y))  # -0.0 and -1e-45 keep the sign


def test_within_an_ulp_of_the_correctly_rounded_value():
    exact = pytest.importorskip("scipy.special").erfinv  # (float64, a few double ulps)

    y = _grid()
    got = kernels.erfinv(y)
    d = ulps(got, exact(y.astype(np.float64)).astype(np.float32))
    assert d.max() <= 1
    assert np.count_nonzero(d) <= y.size // 100_000  # 6e-14 relative: nearly always exact


def test_edges():
    y = np.float32([1, -1, 1.0000001, -1.0000001, 3, -np.inf, np.inf, np.nan, 0.0, -0.0,
                    1e-45, -1e-45, 1e-38, 0.99999994, -0.99999994])  # fmt: skip
    got = kernels.erfinv(y)
    want = _torch_erfinv(y)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert (ulps(got[finite], want[finite]) <= 1).all()
    assert got[0] == np.inf and got[1] == -np.inf
    assert np.array_equal(np.signbit(got[8:12]), [False, True, False, True])


@pytest.mark.parametrize("n", [5, 63, 64, 65, 1000, 5000])
def test_backward_matches_torch(n):
    # edges in the middle of a vector: the scalar pass redoes only those elements
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    y[n // 2] = 1.0
    y[n // 3] = np.nan
    g = RNG.standard_normal(n).astype(np.float32)
    got = kernels.erfinv_backward(g, y)
    t = torch.from_numpy(y).requires_grad_()
    torch.erfinv(t).backward(torch.from_numpy(g))
    want = t.grad.numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    ok = np.isfinite(want)
    # an ulp of erfinv(y) = x moves exp(x**2) by 2 x**2 ulps (~30 near +-1)
    np.testing.assert_allclose(got[ok], want[ok], rtol=4e-6, atol=0)
    forward = kernels.erfinv(y)
    assert (
        np.array_equal(forward, _torch_erfinv(y))
        or ulps(forward[ok], _torch_erfinv(y)[ok]).max() <= 1
    )


def test_the_op_on_layouts():
    base = RNG.uniform(-0.99, 0.99, (40, 30)).astype(np.float32)
    for view in (lambda a: a.t(), lambda a: a[::2, 1:], lambda a: a[:0], lambda a: a[3, 4]):
        out = gt.erfinv(view(gt.tensor(base)))
        want = torch.erfinv(view(torch.tensor(base)))
        assert tuple(out.shape) == tuple(want.shape)
        assert (ulps(out.numpy(), want.numpy()) <= 1).all()


def test_threads_give_the_same_bits():
    y = RNG.uniform(-1, 1, 100_003).astype(np.float32)
    y[::997] = 1.0
    g = RNG.standard_normal(y.size).astype(np.float32)
    old = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(1)
        one = kernels.erfinv(y), kernels.erfinv_backward(g, y)
        _kernels.set_num_threads(2)
        two = kernels.erfinv(y), kernels.erfinv_backward(g, y)
    finally:
        _kernels.set_num_threads(old)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    assert ulps(one[0], _torch_erfinv(y)).max() <= 1


def test_float64_keeps_calc_erfinv():
    y = RNG.uniform(-0.999, 0.999, 3000)
    want = torch.erfinv(torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(kernels.erfinv(y), want, rtol=1e-13, atol=0)
