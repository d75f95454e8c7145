"""``batch_norm_backward_batch_stats`` (Note [Batch norm's backward makes its statistics
channel by channel] in ``_batch_norm_kernels.pyx``): the same bits as
``batch_norm_stats`` followed by ``batch_norm_backward`` in float32 and float64 over
(N, C), (N, C, L) and (N, C, H, W) inputs, short and long rows, with and without a
weight, NaN and inf, an empty batch, two threads; the gradients against torch 2.13; the
argument checks."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

SHAPES = [(6, 5), (4, 3, 7), (4, 3, 70), (3, 4, 9, 8), (32, 16, 12, 12), (1, 2, 1, 1)]


def _two_kernels(g, x, eps, w, need):
    mean64, var64 = kernels.batch_norm_stats(x)
    with np.errstate(all="ignore"):
        mean = mean64.astype(x.dtype)
        invstd = (1.0 / np.sqrt(var64 + eps)).astype(x.dtype)
    return kernels.batch_norm_backward(g, x, mean, invstd, w, True, need)


def _arrays(shape, dtype, seed=0, special=False):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype)
    if special:
        x.reshape(-1)[3] = np.nan
        g.reshape(-1)[-2] = np.inf
    return g, x, w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [True, False])
def test_same_bits_as_stats_then_backward(shape, dtype, weighted):
    g, x, w = _arrays(shape, dtype)
    w = w if weighted else None
    for need in (True, False):
        got = kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w, need)
        ref = _two_kernels(g, x, 1e-5, w, need)
        for a, b in zip(got, ref):
            if b is None:
                assert a is None
            else:
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)


def test_nan_inf_and_empty_batch():
    g, x, w = _arrays((3, 4, 5, 6), np.float32, special=True)
    with np.errstate(all="ignore"):
        got = kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w, True)
        ref = _two_kernels(g, x, 1e-5, w, True)
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)
    e = np.zeros((0, 3, 4, 4), np.float32)
    dx, gw, gb = kernels.batch_norm_backward_batch_stats(e, e, 1e-5, None, True)
    assert dx.shape == e.shape and gb.shape == (3,) and not gb.any()


def test_threads_give_the_same_bits():
    g, x, w = _arrays((32, 16, 12, 12), np.float32)
    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w, True)
        kernels.set_num_threads(2)
        two = kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w, True)
    finally:
        kernels.set_num_threads(before)
    assert x.size >= kernels.PARALLEL_THRESHOLD
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-4), (np.float64, 1e-10)])
def test_gradients_match_torch(dtype, rtol):
    g, x, w = _arrays((8, 6, 7, 5), dtype)
    dx, gw, gb = kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w, True)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.zeros(6, dtype=tw.dtype, requires_grad=True)
    out = torch.nn.functional.batch_norm(tx, None, None, tw, tb, True, 0.1, 1e-5)
    rx, rw, rb = torch.autograd.grad(out, (tx, tw, tb), torch.tensor(g))
    np.testing.assert_allclose(dx, rx.numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(gw, rw.numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(gb, rb.numpy(), rtol=rtol, atol=rtol)


def test_argument_checks():
    g, x, w = _arrays((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="one shape and dtype"):
        kernels.batch_norm_backward_batch_stats(g[:1], x, 1e-5, w, True)
    with pytest.raises(ValueError, match="contiguous"):
        kernels.batch_norm_backward_batch_stats(g[:, :, ::2], x[:, :, ::2], 1e-5, w, True)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        kernels.batch_norm_backward_batch_stats(g, x, 1e-5, w[:2].copy(), True)
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.batch_norm_backward_batch_stats(g.astype(np.int32), x.astype(np.int32),
                                                1e-5, None, True)  # fmt: skip
    with pytest.raises(TypeError):
        kernels.batch_norm_backward_batch_stats(g, x, "eps", w, True)
