"""The pointwise kernels (_pointwise_kernels.pyx): torch's sign of float32/float64 (Note
[sign by the bits]) and the float32 exp2 (Note [float32 exp2 in double]), against torch
2.13 and the correctly rounded value, through the ops (sign, sgn, exp2 and their in-place
forms): every SIMD copy, edges, layouts, 0-size, the threaded path, argument checks."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy, ulps

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3434)
EDGES = np.float32([0.0, -0.0, 1e-45, -1e-45, 1e-38, 0.5, -0.5, 1.5, 2.5, -2.5, 127.0,
                    127.99999, 128.0, -126.0, -149.0, -149.5, -150.0, -151.0, 200.0,
                    -200.0, 3e38, -3e38, np.inf, -np.inf, np.nan])  # fmt: skip


def _grid():
    """Every 2999th float32 bit pattern (nan included) in [-160, 140]."""
    x = np.arange(0, 2**32, 2999, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isnan(x) | ((x > -160) & (x < 140))]
    return np.concatenate([x, EDGES])


def _with_simd(avx, fn):
    with simd_copy(avx):
        return fn()


@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_exp2_is_correctly_rounded_and_within_an_ulp_of_torch(avx):
    x = _grid()
    got = _with_simd(avx, lambda: kernels.exp2_f32(x))
    with np.errstate(all="ignore"):
        exact = np.exp2(x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(exact)
    assert np.array_equal(np.isnan(got), nan)
    assert np.count_nonzero(got[~nan] != exact[~nan]) <= 2
    assert ulps(got[~nan], exact[~nan]).max() <= 1
    want = torch.exp2(torch.from_numpy(x)).numpy()
    assert ulps(got[~nan], want[~nan]).max() <= 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_sign_is_torchs_to_the_bit(avx, dtype):
    x = np.concatenate([_grid(), RNG.standard_normal(1000).astype(np.float32)])
    with np.errstate(invalid="ignore"):  # (nan payloads)
        x = x.astype(dtype)
    got = _with_simd(avx, lambda: kernels.sign(x))
    want = torch.sign(torch.from_numpy(x)).numpy()
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))  # +0.0 for -0.0 and nan


@pytest.mark.parametrize("name", ["sign", "sgn", "exp2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_ops_on_layouts_and_in_place(name, dtype):
    base = (RNG.standard_normal((50, 40)) * 4).astype(dtype)
    base[3, 4], base[5, 6], base[7, 8] = -0.0, np.nan, np.inf
    views = [lambda a: a, lambda a: a.t(), lambda a: a[::2, 1:], lambda a: a[:0],
             lambda a: a[3, 4], lambda a: a.reshape(4, 10, 50).permute(2, 0, 1)]  # fmt: skip
    for view in views:
        got = getattr(view(gt.tensor(base)), name)()
        want = getattr(view(torch.tensor(base)), name)()
        assert tuple(got.shape) == tuple(want.shape)
        if got.numel():  # (a 0-size result's strides are (0, ...) here, as before)
            assert got.stride() == want.stride()
        g, w = got.numpy(), want.numpy()
        if name == "exp2":
            np.testing.assert_allclose(g, w, rtol=1.2e-7 if dtype == "float32" else 1e-15)
        else:
            assert np.array_equal(np.signbit(g), np.signbit(w))  # +0.0 for -0.0 and nan
            np.testing.assert_array_equal(g, w)
        t, tt = view(gt.tensor(base)).clone(), view(torch.tensor(base)).clone()
        getattr(t, name + "_")()
        getattr(tt, name + "_")()
        if name == "exp2":
            np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1.2e-7)
        else:
            np.testing.assert_array_equal(t.numpy(), tt.numpy())


def test_threads_give_the_same_bits():
    x = (RNG.standard_normal(300_001) * 30).astype(np.float32)
    old = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(1)
        one = kernels.exp2_f32(x), kernels.sign(x)
        _kernels.set_num_threads(2)
        two = kernels.exp2_f32(x), kernels.sign(x)
    finally:
        _kernels.set_num_threads(old)
    for a, b in zip(one, two):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_the_kernels_check_their_arguments():
    with pytest.raises(TypeError, match="float32"):
        kernels.exp2_f32(np.ones(3))
    with pytest.raises(TypeError):
        kernels.sign(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        kernels.sign(np.ones((4, 4))[:, ::2])
