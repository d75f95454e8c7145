"""The float32 exact GELU and its backward by torch's own erf (Note [float32 exact GELU in
torch's erf]): against torch 2.13 on a dense sweep and edge values, with the AVX2 copies
and without, on one and two threads; the erf op keeps its correctly rounded double erf."""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels

torch = pytest.importorskip("torch")

EDGES = [0.0, -0.0, 1e-40, -1e-40, 1e-30, 3.5, -3.5, 5.8, -5.8, 9.3, -9.3, 13.2, -13.2,
         10.0, -10.0, 60.0, -60.0, 1e20, -1e20, 3e38, -3e38, np.inf, -np.inf, np.nan]  # fmt: skip
SWEEP = np.concatenate(
    [np.linspace(-15, 15, 60_001), np.random.default_rng(0).standard_normal(20_000) * 4, EDGES]
).astype(np.float32)


def _compare(got, want):
    assert got.dtype == want.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    # ~1e-7 absolutely (erf's error carried through where 1 + erf cancels), an ulp or two
    np.testing.assert_allclose(got[fin], want[fin], rtol=3e-7, atol=1.5e-6)


@pytest.mark.parametrize("avx2", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_gelu_and_backward_match_torch(avx2, threads):
    g = np.random.default_rng(1).standard_normal(SWEEP.size).astype(np.float32)
    before, threads_before = _kernels._avx2(), _kernels.get_num_threads()
    try:
        _kernels._avx2(avx2)
        _kernels.set_num_threads(threads)
        fwd = kernels.gelu(SWEEP)
        bwd = kernels.gelu_backward(g, SWEEP)
    finally:
        _kernels._avx2(before)
        _kernels.set_num_threads(threads_before)
    x = torch.from_numpy(SWEEP.copy())
    _compare(fwd, torch.nn.functional.gelu(x).numpy())
    _compare(bwd, torch.ops.aten.gelu_backward(torch.from_numpy(g), x).numpy())


def test_gelu_signs_zeros_and_the_far_tails():
    x = np.array([-0.0, 0.0, -20.0, -1e20, 20.0, 1e20], np.float32)
    y = kernels.gelu(x)
    want = torch.nn.functional.gelu(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(want))
    d = kernels.gelu_backward(np.ones_like(x), x)
    np.testing.assert_array_equal(d, torch.ops.aten.gelu_backward(
        torch.ones(6), torch.from_numpy(x)).numpy())  # fmt: skip


def test_gelu_op_and_its_gradient_match_torch():
    x = np.random.default_rng(2).standard_normal((16, 64, 33)).astype(np.float32) * 3
    a = gt.tensor(x)
    got = gt.OPS["gelu"](a, "none").numpy()
    _compare(got.reshape(-1), torch.nn.functional.gelu(torch.from_numpy(x)).numpy().reshape(-1))
    # a transposed layout takes the kernel in memory order
    t = gt.tensor(x).transpose(0, 2)
    got = gt.OPS["gelu"](t, "none").numpy()
    want = torch.nn.functional.gelu(torch.from_numpy(x).transpose(0, 2)).numpy()
    _compare(got.reshape(-1), want.reshape(-1))


def test_erf_op_keeps_the_double_erf():
    # the erf op is not torch's A&S formula: it is within an ulp of the true erf
    x = np.float32(-2.9)
    got = float(kernels.erf(np.array([x]))[0])
    assert abs(got - (-0.99995892)) < 1e-7
