"""random_ of float tensors in one C pass (Note [random_ in one C pass] in
_random_kernels.pyx): torch 2.13's values bit for bit after the same seed, for float32
and float64, 32-bit and 64-bit draws, negative bounds, every layout and 0-size."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _random_kernels
from gradstack_tensor import random as gt_random

torch = pytest.importorskip("torch")

CASES = {
    "f32_from_to": lambda L: L.empty(1000).random_(0, 100),
    "f32_negative": lambda L: L.empty(333).random_(-50, 7),
    "f32_to": lambda L: L.empty(257).random_(9),
    "f32_wide": lambda L: L.empty(300).random_(-(2**20), 2**24),  # 64-bit draws
    "f32_no_args": lambda L: L.empty(100).random_(),
    "f64_from_to": lambda L: L.empty(1000, dtype=L.float64).random_(3, 2**27),
    "f64_wide": lambda L: L.empty(100, dtype=L.float64).random_(-(2**40), 2**45),
    "f64_no_args": lambda L: L.empty(100, dtype=L.float64).random_(),
    "f32_transposed": lambda L: L.empty(30, 20).t().random_(0, 1000),
    "f64_sliced": lambda L: L.empty(40, 6, dtype=L.float64)[::3, 1:].random_(-3, 3),
    "f32_empty": lambda L: L.empty(0, 4).random_(0, 10),
    "f32_threaded_size": lambda L: L.empty(70_000).random_(0, 7),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seed_gives_torchs_values(name):
    for seed in (0, 2**40 + 5):
        torch.manual_seed(seed)
        want = CASES[name](torch).numpy()
        gt.manual_seed(seed)
        got = CASES[name](gt).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_the_kernel_against_numpys_arithmetic():
    rng = np.random.default_rng(5)
    raw = np.concatenate([rng.integers(0, 2**32, 5000, dtype=np.uint64),
                          rng.integers(0, 2**64 - 1, 100, dtype=np.uint64, endpoint=True),
                          np.uint64([0, 2**32 - 1, 2**64 - 1])])  # fmt: skip
    for span in (1, 2, 3, 100, 2**31 + 11, 2**32 - 1, 2**32, 2**53 + 1, 2**63):
        for low in (0, -7, 2**40, -(2**62)):
            want = ((raw % np.uint64(span)) + np.uint64(low % 2**64)).view(np.int64)
            for dtype in (np.float32, np.float64):
                out = np.empty(raw.size, dtype)
                _random_kernels.random_mod(raw, out, span, low)
                np.testing.assert_array_equal(out, want.astype(dtype))


def test_the_kernel_checks_its_arguments():
    out = np.empty(3, np.float32)
    with pytest.raises(ValueError, match="3 raw draws for 2 values"):
        _random_kernels.random_mod(np.zeros(3, np.uint64), out[:2], 10, 0)
    with pytest.raises(ValueError, match="span must be positive"):
        _random_kernels.random_mod(np.zeros(3, np.uint64), out, 0, 0)
    with pytest.raises((TypeError, ValueError)):
        _random_kernels.random_mod(np.zeros(3, np.uint64), np.empty(3, np.int32), 10, 0)


def test_the_stream_continues_as_torchs():
    # the state after random_ (drawn by the C loop, Note [random_ draws in the same pass])
    # is numpy's, hence torch's: later draws and the saved state agree
    for seed in (0, 77):
        torch.manual_seed(seed)
        gt.manual_seed(seed)
        # (from 2**15 elements the twister runs in the C loop: both paths, one stream)
        for n, hi in ((5, 10), (40_000, 100), (623, 3), (2**15 + 1, 7), (2000, 2**24)):
            want = torch.empty(n).random_(-3, hi).numpy()
            np.testing.assert_array_equal(gt.empty(n).random_(-3, hi).numpy(), want)
            np.testing.assert_array_equal(gt.rand(7).numpy(), torch.rand(7).numpy())
        np.testing.assert_array_equal(
            gt_random.get_rng_state().numpy(), torch.get_rng_state().numpy()
        )
        g, tg = gt.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        np.testing.assert_array_equal(
            gt.empty(50_000, dtype=gt.float64).random_(0, 9, generator=g).numpy(),
            torch.empty(50_000, dtype=torch.float64).random_(0, 9, generator=tg).numpy(),
        )
        np.testing.assert_array_equal(gt.randn(3, generator=g).numpy(),
                                      torch.randn(3, generator=tg).numpy())  # fmt: skip


def test_the_twister_kernel_checks_its_arguments():
    key = np.zeros(624, np.uint32)
    out = np.empty(3)
    with pytest.raises(ValueError, match="624 words"):
        _random_kernels.mt_random_mod(key[:10], 0, out, 10, 0)
    with pytest.raises(ValueError, match="position"):
        _random_kernels.mt_random_mod(key, 625, out, 10, 0)
    with pytest.raises(ValueError, match="span"):
        _random_kernels.mt_random_mod(key, 0, out, 2**32, 0)
