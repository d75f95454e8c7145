"""bfloat16 ``pow`` by a number rounds as torch 2.13's kernel does, bit for bit (Note
[bfloat16 pow by a number rounds as torch's] in ``_bfloat16.py``): the exponent rounded to
bfloat16, ``x ** 3`` and ``x ** -2`` with their square rounded to bfloat16."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _pair(n=4096, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(n, generator=g) * 3
    if positive:
        t = t.abs() + 0.01
    t = t.bfloat16()
    return t, gt.tensor(t.float().numpy()).to(gt.bfloat16)


def _bits(t) -> np.ndarray:
    return t.float().numpy() if hasattr(t, "numpy") else np.asarray(t)


@pytest.mark.parametrize("exponent", [3, 3.0, -2, 2, 4, -3, 1.1, 2.3, -1.7, 1 / 3, 0, 1, -1, 0.5])
def test_pow_by_number_bit_equal(exponent):
    t, x = _pair(positive=True)
    want = torch.pow(t, exponent)
    got = gt.pow(x, exponent)
    assert got.dtype == gt.bfloat16
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("exponent", [3, -2])
def test_pow_by_number_negative_and_special_values(exponent):
    t = torch.tensor([-2.5, -0.0, 0.0, float("inf"), -float("inf"), float("nan"), 1e-30, 3e38])
    t = t.bfloat16()
    x = gt.tensor(t.float().numpy()).to(gt.bfloat16)
    want = torch.pow(t, exponent).float().numpy()
    got = gt.pow(x, exponent).float().numpy()
    np.testing.assert_array_equal(got, want)


def test_pow_in_place_and_operator():
    t, x = _pair(n=33, seed=1)
    want = t.clone()
    want.pow_(3)
    got = x.clone()
    before = got._version
    out = got.pow_(3)
    assert out is got and got._version == before + 1
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    np.testing.assert_array_equal((x**3).float().numpy(), (t**3).float().numpy())
    np.testing.assert_array_equal((x**-2).float().numpy(), (t**-2).float().numpy())


def test_pow_non_contiguous_and_zero_size():
    t, x = _pair(n=64, seed=2)
    tv, xv = t.reshape(8, 8).t(), x.reshape(8, 8).t()
    np.testing.assert_array_equal(gt.pow(xv, 3).float().numpy(), torch.pow(tv, 3).float().numpy())
    empty = gt.pow(gt.zeros(0, 3, dtype=gt.bfloat16), 3)
    assert tuple(empty.shape) == (0, 3) and empty.dtype == gt.bfloat16
