"""The float32 sum over every element (_sum_kernels.pyx, Note [float32 sum in float lanes
and double blocks]) and the ``sum`` op that takes it: values against the exact sum and
torch 2.13, sizes around its blocks and chunks, layouts, keepdim and dims, nan/inf,
0-size, the threaded path (the same bits on any number of threads), argument checks."""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3434)


def _close_to_exact(got, x):
    """Within 4 float32 ulps of sum(|x|) of the exact sum (no cancellation in the data
    below makes that a few ulps of the result)."""
    exact = math.fsum(x.astype(np.float64).ravel().tolist())
    scale = float(np.abs(x.astype(np.float64)).sum())
    assert abs(float(got) - exact) <= 4 * np.spacing(np.float32(scale)) + 1e-30, (got, exact)


@pytest.mark.parametrize(
    "n", [4097, 5000, 511, 512, 513, 65535, 65536, 65537, 3 * 65536 + 700, 1_000_003]
)
def test_values_against_the_exact_sum_and_torch(n):
    x = RNG.uniform(-2, 3, n).astype(np.float32)
    got = kernels.sum_all(x)
    _close_to_exact(got, x)
    op = gt.tensor(x).sum().numpy()
    assert op.dtype == np.float32 and op.shape == ()
    if n > 4096:  # (up to 4096 elements the op sums in one double: small_sum)
        assert op == got
    want = torch.from_numpy(x).sum().item()
    assert abs(float(op) - want) <= 8 * np.spacing(np.float32(np.abs(x).sum()))


def test_layouts_dims_and_keepdim():
    base = RNG.standard_normal((300, 70)).astype(np.float32)
    t = gt.tensor(base)
    tt = torch.tensor(base)
    for ours, theirs in [
        (t.sum(), tt.sum()),
        (t.t().sum(), tt.t().sum()),  # F-contiguous: the kernel
        (t[::2, 1:].sum(), tt[::2, 1:].sum()),  # strided: numpy's
        (t.sum((0, 1)), tt.sum((0, 1))),
        (t.sum((-1, 0), keepdim=True), tt.sum((-1, 0), keepdim=True)),
        (t.sum((0, 1), True), tt.sum((0, 1), True)),
    ]:
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.dtype == gt.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-4)
    assert t.t().sum().item() == t.sum().item()  # the same memory, the same bits
    three = gt.tensor(RNG.standard_normal((20, 30, 40)).astype(np.float32))
    assert three.sum((0, 1, 2), keepdim=True).shape == (1, 1, 1)
    assert three.sum((2, 0, 1)).item() == three.sum().item()


def test_nan_inf_and_zero_size():
    x = RNG.standard_normal(10_000).astype(np.float32)
    for bad, want in ((np.nan, np.nan), (np.inf, np.inf), (-np.inf, -np.inf)):
        y = x.copy()
        y[7777] = bad
        got = kernels.sum_all(y)
        assert (np.isnan(got) and np.isnan(want)) or got == want
    y = x.copy()
    y[3], y[9000] = np.inf, -np.inf
    assert np.isnan(kernels.sum_all(y))
    assert kernels.sum_all(np.zeros((0, 5), np.float32)) == 0
    assert gt.zeros(0, 5000).sum().item() == 0.0


def test_threads_give_the_same_bits():
    x = RNG.uniform(-1, 1, 3 * 2**18 + 123).astype(np.float32)
    old = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(1)
        one = kernels.sum_all(x)
        _kernels.set_num_threads(2)
        two = kernels.sum_all(x)
    finally:
        _kernels.set_num_threads(old)
    assert one == two
    _close_to_exact(one, x)


@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_every_simd_copy(avx):
    x = RNG.uniform(0, 1, 200_000).astype(np.float32)
    with simd_copy(avx):
        got = kernels.sum_all(x)
    _close_to_exact(got, x)


def test_float64_and_other_dtypes_keep_numpys_sum():
    x = RNG.standard_normal((100, 100))
    assert gt.tensor(x).sum().item() == np.add.reduce(x, axis=None)
    h = RNG.standard_normal(5000).astype(np.float16)
    np.testing.assert_allclose(
        gt.tensor(h).sum().item(), torch.from_numpy(h).sum().item(), rtol=1e-3
    )


def test_the_kernel_checks_its_arguments():
    with pytest.raises(TypeError, match="float32"):
        kernels.sum_all(np.ones(5))
    with pytest.raises(TypeError):
        kernels.sum_all([1.0, 2.0])
    with pytest.raises(ValueError, match="contiguous"):
        kernels.sum_all(np.ones((4, 6), np.float32)[:, ::2])
