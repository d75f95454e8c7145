"""Batch norm's kernels on the ``(N, C)`` layout (Note [Batch norm over (N, C): a pass along
the rows]): loops along the rows that add every channel's sums in the column loops' order,
so the results are the column reference's to the bit, at one thread and at two."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor.kernels import (
    batch_norm_apply,
    batch_norm_backward,
    batch_norm_stats,
    get_num_threads,
    set_num_threads,
)


def _column_stats(x):
    n, c = x.shape
    xd = x.astype(np.float64)
    mean = np.zeros(c)
    for i in range(n):
        mean += xd[i]
    mean = mean / n if n else mean
    var = np.zeros(c)
    for i in range(n):
        var += (xd[i] - mean) ** 2
    return mean, (var / n if n else var)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    before = get_num_threads()
    set_num_threads(request.param)
    yield request.param
    set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 512), (3, 7), (1, 300), (0, 5), (5, 0), (64, 1000)])
def test_rows_match_the_column_order(dtype, shape, threads):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    mean, var = batch_norm_stats(x)
    ref_mean, ref_var = _column_stats(x)
    assert np.array_equal(mean, ref_mean) and np.array_equal(var, ref_var)
    c = shape[1]
    invstd = (1 / np.sqrt(var + 1e-5)).astype(dtype)
    weight = rng.standard_normal(c).astype(dtype)
    beta = rng.standard_normal(c).astype(dtype)
    alpha = (invstd * weight).astype(dtype)
    assert np.array_equal(batch_norm_apply(x, alpha, beta), x * alpha + beta)
    m = mean.astype(dtype)
    sum_dy, dotp = np.zeros(c), np.zeros(c)
    for i in range(shape[0]):
        sum_dy += dy[i].astype(np.float64)
        dotp += (x[i].astype(np.float64) - m) * dy[i]
    for train in (True, False):
        for w in (weight, None):
            gx, gw, gb = batch_norm_backward(dy, x, m, invstd, w, train, True)
            assert np.array_equal(gb, sum_dy)
            assert np.array_equal(gw, dotp * invstd.astype(np.float64))
            scale = (invstd * (w if w is not None else 1)).astype(dtype)
            if train and shape[0]:
                k = (dotp * invstd * invstd / shape[0]).astype(dtype)
                ref = (dy - (sum_dy / shape[0]).astype(dtype) - (x - m) * k) * scale
            else:
                ref = dy * scale
            assert gx.dtype == dtype and np.array_equal(gx, ref.astype(dtype))
            assert batch_norm_backward(dy, x, m, invstd, w, train, False)[0] is None


def test_rows_match_torch_batch_norm_1d():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    dy = rng.standard_normal((64, 300)).astype(np.float32)
    mean, var = batch_norm_stats(x)
    xt = torch.from_numpy(x)
    torch_var, torch_mean = torch.var_mean(xt.double(), 0, unbiased=False)
    np.testing.assert_allclose(mean, torch_mean.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, torch_var.numpy(), rtol=1e-12, atol=1e-12)
    xt.requires_grad_(True)
    w = torch.from_numpy(rng.standard_normal(300).astype(np.float32)).requires_grad_(True)
    b = torch.zeros(300, requires_grad=True)
    y = torch.nn.functional.batch_norm(xt, None, None, w, b, training=True, eps=1e-5)
    y.backward(torch.from_numpy(dy))
    invstd = (1 / np.sqrt(var + 1e-5)).astype(np.float32)
    gx, gw, gb = batch_norm_backward(
        dy, x, mean.astype(np.float32), invstd, w.detach().numpy(), True, True
    )
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw.astype(np.float32), w.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb.astype(np.float32), b.grad.numpy(), rtol=1e-5, atol=1e-5)
