"""float32 log_softmax (and softmax) along the last dim with its own vector exp (Note [float32
log_softmax rows with an exp of their own] in ``_norm_kernels.pyx``): row lengths around
the 8-lane step and its tail, small and huge spreads, NaN, +inf and -inf, 0-size, the
threaded path; against the float64 kernel and torch 2.13, and the op and its gradient."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _norm_kernels
from gradstack_tensor import kernels as K

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 16, 17, 100, 1000, 1003])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e4])
def test_rows_match_float64_and_torch(n, scale):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((6, n)) * scale).astype(np.float32)
    got = K.softmax(x, -1, log=True)
    want = K.softmax(x.astype(np.float64), -1, log=True)
    theirs = torch.log_softmax(torch.from_numpy(x), -1).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    err = np.abs(got - want)
    # ~1 ulp of the row's log-sum, as torch's (its own error is the same size)
    bound = 2.5e-7 * np.maximum(1.0, np.abs(want)) + 1.5e-7
    assert np.all(err <= bound), float((err / bound).max())
    np.testing.assert_allclose(got, theirs, rtol=1e-6, atol=3e-7)


def test_special_values_give_torchs_rows():
    x = np.array(
        [
            [1.0, np.nan] + [2.0] * 8,
            [np.inf] + [1.0] * 9,
            [-np.inf] * 10,
            [-np.inf] + [0.0] * 9,
            [3e38, -3e38] + [0.0] * 8,
        ],
        np.float32,
    )
    got = K.softmax(x, -1, log=True)
    want = torch.log_softmax(torch.from_numpy(x), -1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-6)


def test_empty_and_other_dims():
    assert K.softmax(np.zeros((0, 5), np.float32), -1, log=True).shape == (0, 5)
    x = np.random.default_rng(1).standard_normal((4, 6, 5)).astype(np.float32)
    for dim in (0, 1, 2):  # the last dim takes the new rows, the others the passes
        np.testing.assert_allclose(
            K.softmax(x, dim, log=True),
            torch.log_softmax(torch.from_numpy(x), dim).numpy(),
            rtol=1e-6,
            atol=3e-7,
        )


def test_threads_give_the_same_bits(threads):
    x = np.random.default_rng(2).standard_normal((256, 300)).astype(np.float32)
    assert x.size >= _norm_kernels.ROW_THRESHOLD
    results = []
    for count in (1, 2):
        threads(count)
        results.append(K.softmax(x, 1, log=True).tobytes())
    assert results[0] == results[1]


def test_the_op_and_its_backward_kernel():
    x = np.random.default_rng(3).standard_normal((50, 40)).astype(np.float32)
    g = np.random.default_rng(4).standard_normal(x.shape).astype(np.float32)
    out = gt.OPS["log_softmax"](gt.from_numpy(x), -1).numpy()
    t = torch.tensor(x, requires_grad=True)
    tout = t.log_softmax(-1)
    tout.backward(torch.from_numpy(g))
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-6, atol=3e-7)
    grad = K.softmax_backward(g, out, -1, log=True)
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- softmax rows: the same passes, the exps stored and scaled by 1 / sum


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 17, 1000, 1003])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e4])
def test_softmax_rows_match_float64_and_torch(n, scale):
    rng = np.random.default_rng(n + 7)
    x = (rng.standard_normal((6, n)) * scale).astype(np.float32)
    got = K.softmax(x, -1)
    v = x.astype(np.float64) - x.max(-1, keepdims=True)
    want = np.exp(v) / np.exp(v).sum(-1, keepdims=True)
    theirs = torch.softmax(torch.from_numpy(x), -1).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    # a few ulp of each value (the exp's, the sum's, the scale's), subnormals included,
    # and the rounding of x - max in float32 (|v| 2**-24 relatively); torch's own exp of a
    # large negative x - max is less accurate (2e-6 relatively)
    bound = want * (6e-7 + np.abs(v) * 2.0**-24) + 1.5e-45
    assert np.all(np.abs(got - want) <= bound), float((np.abs(got - want) / bound).max())
    np.testing.assert_allclose(got, theirs, rtol=1e-6, atol=1e-8)


def test_softmax_special_values_and_threads(threads):
    x = np.array(
        [
            [1.0, np.nan] + [2.0] * 8,
            [np.inf] + [1.0] * 9,
            [-np.inf] * 10,
            [-np.inf] + [0.0] * 9,
            [3e38, -3e38] + [0.0] * 8,
        ],
        np.float32,
    )
    got = K.softmax(x, -1)
    want = torch.softmax(torch.from_numpy(x), -1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-6)
    assert K.softmax(np.zeros((0, 5), np.float32), -1).shape == (0, 5)
    big = np.random.default_rng(5).standard_normal((256, 300)).astype(np.float32)
    results = []
    for count in (1, 2):
        threads(count)
        results.append(K.softmax(big, 1).tobytes())
    assert results[0] == results[1]
    op = gt.OPS["softmax"](gt.from_numpy(big), -1).numpy()
    np.testing.assert_allclose(op, torch.softmax(torch.from_numpy(big), -1).numpy(), rtol=1e-6)
