"""The one-pass 2-norm (``kernels.sum_of_squares``, Note [The 2-norm in one pass]) and the
``norm`` it serves, against float64 sums and torch 2.13 (the gradient of ``norm`` is
unchanged: graph-engine's derivative tests cover it)."""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 15, 16, 17, 33, 1000, 300_001])
@pytest.mark.parametrize("avx2", [True, False])
def test_sum_of_squares_is_the_float64_sum(dtype, n, avx2):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    before = _kernels._avx2()
    try:
        _kernels._avx2(avx2)
        got = kernels.sum_of_squares(x)
    finally:
        _kernels._avx2(before)
    want = float(np.sum(x.astype(np.float64) ** 2))
    assert isinstance(got, float)
    assert got == pytest.approx(want, rel=1e-13, abs=0.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_sum_of_squares_threads(threads):
    x = np.random.default_rng(1).standard_normal((1000, 513)).astype(np.float32)
    before = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(threads)
        got = kernels.sum_of_squares(x)
    finally:
        _kernels.set_num_threads(before)
    assert got == pytest.approx(float(np.sum(x.astype(np.float64) ** 2)), rel=1e-13)


def test_sum_of_squares_checks_arguments():
    with pytest.raises(TypeError, match="sum_of_squares"):
        kernels.sum_of_squares(np.ones(3, np.int64))
    with pytest.raises(TypeError, match="sum_of_squares"):
        kernels.sum_of_squares([1.0, 2.0])
    with pytest.raises(ValueError, match="sum_of_squares"):
        kernels.sum_of_squares(np.ones((4, 4))[:, ::2])


def test_sum_of_squares_special_values():
    assert kernels.sum_of_squares(np.array([np.inf, 1.0], np.float32)) == np.inf
    assert np.isnan(kernels.sum_of_squares(np.array([np.nan, 1.0])))
    # float32 squares past float32's range do not overflow in double
    assert kernels.sum_of_squares(np.array([1e30], np.float32)) == pytest.approx(1e60, rel=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 0), (17, 9), (2000, 64), (4, 3, 5)])
@pytest.mark.parametrize("p", ["fro", 2, 2.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_norm_matches_torch(dtype, shape, p, keepdim):
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    got = gt.from_numpy(x.copy()).norm(p, keepdim=keepdim)
    want = torch.from_numpy(x.copy()).norm(p, keepdim=keepdim)
    assert got.dtype == getattr(gt, dtype)
    assert tuple(got.shape) == tuple(want.shape)
    tol = 2e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=0)


def test_norm_of_a_non_contiguous_view_matches_torch():
    x = np.random.default_rng(3).standard_normal((40, 30)).astype(np.float32)
    got = gt.from_numpy(x.copy()).t()[::2].norm()
    want = torch.from_numpy(x.copy()).t()[::2].norm()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)
