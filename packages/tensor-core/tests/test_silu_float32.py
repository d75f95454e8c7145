"""The float32 SiLU loops with a float exp (Note [float32 SiLU with a float exp] in
_activation_kernels.pyx) against torch 2.13: a dense grid of float32 inputs in every SIMD
copy, the exp's overflow and underflow edges, and the backward loop."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy, ulps

torch = pytest.importorskip("torch")
F = torch.nn.functional

EDGES = np.float32([0.0, -0.0, 1e-45, -1e-45, 1.0, -1.0, -1.2784634, 87.0, -87.0, -87.5,
                    88.72, -88.72, 88.7229, -88.7229, 89.0, -89.0, 103.9, -103.9, 104.5,
                    -104.5, 200.0, -200.0, 3e38, -3e38, np.inf, -np.inf, np.nan])  # fmt: skip


def _grid():
    x = np.arange(0, 2**32, 1999, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([x[~np.isnan(x)], EDGES])


@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_silu_and_its_backward_match_torch(avx):
    x = _grid()
    g = np.random.default_rng(1).standard_normal(x.size).astype(np.float32)
    with simd_copy(avx):
        got, got_b = kernels.silu(x), kernels.silu_backward(g, x)
    want = F.silu(torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    d = ulps(got[ok], want[ok])
    assert d.max() <= 4
    assert np.count_nonzero(d) <= x.size // 200
    t = torch.from_numpy(x).requires_grad_()
    F.silu(t).backward(torch.from_numpy(g))
    want_b = t.grad.numpy()
    assert np.array_equal(np.isnan(got_b), np.isnan(want_b))
    ok = ~np.isnan(want_b)
    # 1 + x (1 - s) cancels near x = -1.28: an absolute tolerance of the gradient's size
    err = np.abs(got_b[ok].astype(np.float64) - want_b[ok])
    assert (err <= 3e-6 * np.abs(want_b[ok]) + 2e-7 * np.abs(g[ok])).all()


def test_the_exp_edges():
    x = EDGES
    got = kernels.silu(x)
    want = F.silu(torch.from_numpy(x)).numpy()
    # -0.0 for x below -88.72, x far above 0, nan for -inf (-inf / inf) and nan
    assert np.array_equal(got, want, equal_nan=True)
    ok = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
