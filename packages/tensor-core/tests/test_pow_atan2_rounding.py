"""Note [float32 pow and atan2 are computed in double] and Note [float64 pow by a number
takes libm's pow]: results that do not depend on the CPU numpy dispatches to."""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest

RNG = np.random.default_rng(3)
A = RNG.uniform(0.01, 30, 4000).astype(np.float32)
B = RNG.uniform(-20, 20, 4000).astype(np.float32)


def test_float32_pow_of_tensors_is_the_double_result_rounded_once():
    got = gt.from_numpy(A).pow(gt.from_numpy(B)).numpy()
    want = np.power(A.astype(np.float64), B.astype(np.float64)).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_float32_pow_in_place_and_transposed_agree_with_out_of_place():
    a, b = A.reshape(40, 100), B.reshape(40, 100)
    want = gt.from_numpy(a).pow(gt.from_numpy(b)).numpy()
    t = gt.from_numpy(a.copy())
    t.pow_(gt.from_numpy(b))
    np.testing.assert_array_equal(t.numpy(), want)
    transposed = gt.from_numpy(a.T.copy()).t().pow(gt.from_numpy(b)).numpy()
    np.testing.assert_array_equal(transposed, want)


def test_float32_atan2_is_the_double_result_rounded_once():
    y, x = A - 15, B
    got = gt.from_numpy(y).atan2(gt.from_numpy(x)).numpy()
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert gt.tensor([1.0]).atan2(gt.tensor([1.0])).item() == np.float32(math.pi / 4)


@pytest.mark.parametrize("exponent", [7, 1.7, -2.5, 0.3])
def test_float64_pow_by_a_number_is_libm_pow(exponent):
    a = RNG.uniform(0.01, 10, 500)
    got = gt.from_numpy(a).pow(exponent).numpy()
    np.testing.assert_array_equal(got, [math.pow(v, exponent) for v in a])
    f = np.asfortranarray(a.reshape(20, 25))
    got_f = gt.from_numpy(f).pow(exponent).numpy()
    np.testing.assert_array_equal(got_f, np.array(got).reshape(20, 25))
    assert gt.tensor([1.1], dtype=gt.float64).pow(7).item() == 1.1**7


def test_pow_then_sin_of_a_large_result_matches_torch():
    # fuzz seed 22 #11233: one ulp of a float32 pow near 1.5e26 is a different sine
    torch = pytest.importorskip("torch")

    def program(lib):
        v = lib.exp(lib.tensor([[-3, 2, 3, 3]], dtype=lib.int16))
        v.pow_(v.detach())
        return v.repeat(1, 1).sin_().tolist()

    assert program(gt) == program(torch)


UNARY_DOMAINS = {
    "exp": (-20, 20), "exp2": (-20, 20), "expm1": (-5, 5), "log": (1e-3, 100),
    "log2": (1e-2, 100), "log10": (1e-2, 100), "log1p": (-0.9, 10), "tan": (-3, 3),
    "asin": (-1, 1), "acos": (-1, 1), "atan": (-10, 10), "sinh": (-15, 15), "cosh": (-15, 15),
}  # fmt: skip
_NUMPY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan}


@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
@pytest.mark.parametrize("n", [100, 20000])  # the small C loop and numpy's path
def test_float32_transcendentals_are_rounded_from_double(name, n):
    # Note [float32 transcendental functions are computed in double]: the same numbers
    # whatever the array's size, and correctly rounded in all but rare double-rounding cases
    lo, hi = UNARY_DOMAINS[name]
    x = np.random.default_rng(5).uniform(lo, hi, n).astype(np.float32)
    expected = _NUMPY.get(name, getattr(np, name))(x.astype(np.float64)).astype(np.float32)
    got = getattr(gt, name)(gt.tensor(x)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    # in place, and through a transposed (F-ordered) view
    y = gt.tensor(x.reshape(-1, 4).T.copy().T)
    getattr(y, name + "_")()
    np.testing.assert_array_equal(y.numpy().reshape(-1), expected)


@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_pow_by_two_is_the_square_rounded_once(dtype, exponent):
    """torch's shortcut ``x * x`` (one rounding of the exact square) gives the bits of the
    power computed in double and rounded once, specials included, without warnings."""
    specials = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 3e38, -3e38, 6e4]
    with np.errstate(all="ignore"):  # (3e38 is inf in float16)
        x = np.concatenate([RNG.uniform(-300, 300, 2000), specials]).astype(dtype)
        want = np.power(x.astype(np.float64), 2.0).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = gt.from_numpy(x).pow(exponent).numpy()
        out = gt.empty(x.shape, dtype=gt.from_numpy(x).dtype)
        gt.pow(gt.from_numpy(x), exponent, out=out)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out.numpy(), want)
