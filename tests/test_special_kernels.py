"""The special-function C kernels (``_special_kernels.pyx``: lgamma, digamma, trigamma and
polygamma) and the ops that take them, against torch 2.13: values in float32 and float64
at ordinary points, poles, signed zeros, infinities, NaN and large orders; gradients and
gradcheck in float64; non-contiguous and 0-size inputs; the threaded path; the argument
checks."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

DTYPES = (np.float32, np.float64)
EDGES = np.array([
    0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -2.5, -1.5, -100.3, 1e-30, -1e-30, 1e-8,
    3.7, 9.99, 10.0, 10.01, 1e5, 1e17, 2e17, 1e30, -1e30, np.inf, -np.inf, np.nan, 170.5,
    -7.3, 0.3,
])  # fmt: skip
RANDOM = np.concatenate([
    np.random.default_rng(5).uniform(-20, 20, 3000),
    np.random.default_rng(6).uniform(0, 3, 3000),
])  # fmt: skip


def _same_bits(ours, theirs):
    """Equal values, NaN equal to NaN, and the sign of a zero or infinity kept."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    equal = (ours == theirs) & (np.signbit(ours) == np.signbit(theirs))
    equal |= np.isnan(ours) & np.isnan(theirs)
    return equal


# (our op, torch's op): the ops whose kernels are torch's formulas bit for bit
EXACT = {
    "digamma": (lambda x: x.digamma(), lambda x: x.digamma()),
    "trigamma": (lambda x: gs.polygamma(1, x), lambda x: torch.polygamma(1, x)),
    **{
        f"polygamma {n}": (lambda x, n=n: gs.polygamma(n, x), lambda x, n=n: torch.polygamma(n, x))
        for n in (2, 3, 4, 7, 20, 34, 35, 40, 100)
    },
}


@pytest.mark.parametrize("name", sorted(EXACT))
@pytest.mark.parametrize("dtype", DTYPES)
def test_digamma_and_polygamma_are_torchs_to_the_bit(name, dtype):
    ours_fn, torch_fn = EXACT[name]
    for values in (EDGES, RANDOM):
        a = values.astype(dtype)
        ours = ours_fn(gs.tensor(a)).numpy()
        theirs = torch_fn(torch.tensor(a)).numpy()
        same = _same_bits(ours, theirs)
        if name == "trigamma":
            # two of the 6000 random points are an ulp apart, in either dtype (the
            # compilers' contraction of the arithmetic into fused multiply-adds differs)
            bits = np.int32 if dtype == np.float32 else np.int64
            same |= np.abs(ours.view(bits) - theirs.view(bits)) <= 1
        assert same.all(), (a[~same], ours[~same], theirs[~same])


@pytest.mark.parametrize("dtype", DTYPES)
def test_lgamma_matches_torch_within_an_ulp(dtype):
    # torch's vectorised lgamma is Sleef's (within 1 ulp); ours is libm's lgamma, in double
    # then rounded for float32 (Note [Special kernels follow torch's formulas])
    for values in (EDGES, RANDOM):
        a = values.astype(dtype)
        ours = gs.lgamma(gs.tensor(a)).numpy()
        theirs = torch.lgamma(torch.tensor(a)).numpy()
        assert ours.dtype == theirs.dtype
        special = ~np.isfinite(theirs)
        np.testing.assert_array_equal(ours[special], theirs[special])  # poles, inf, NaN
        # near lgamma's zeros (1 and 2) the relative error of either is large: absolute
        tol = np.finfo(dtype).eps * np.maximum(np.abs(theirs[~special]), 1.0) * 2
        assert (np.abs(ours[~special] - theirs[~special]) <= tol).all()
    ours = gs.lgamma(gs.tensor(np.array([0.0, -0.0, -1.0, -2.0], dtype))).numpy()
    np.testing.assert_array_equal(ours, np.array([np.inf] * 4, dtype))


def test_float32_polygamma_of_a_large_order_overflows_as_torchs():
    # torch's float32 factor exp(lgamma(n + 1)) is inf from n = 35 on
    x = np.array([5.0, 50.0, 1e4], np.float32)
    for n in (34, 35, 60):
        ours = gs.polygamma(n, gs.tensor(x)).numpy()
        theirs = torch.polygamma(n, torch.tensor(x)).numpy()
        assert _same_bits(ours, theirs).all(), (n, ours, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn", [lambda L, x: L.lgamma(x), lambda L, x: L.digamma(x), lambda L, x: L.polygamma(2, x)]
)
def test_non_contiguous_and_empty_inputs(dtype, fn):
    a = np.random.default_rng(1).uniform(0.1, 6, (6, 8)).astype(dtype)
    for view in (lambda t: t.T, lambda t: t[:, ::3], lambda t: t[1:, 2]):
        ours = fn(gs, view(gs.tensor(a))).numpy()
        theirs = fn(torch, view(torch.tensor(a))).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=2e-6 if dtype == np.float32 else 1e-13)
    for shape in ((0,), (3, 0), ()):
        e = np.full(shape, 2.5, dtype)
        ours = fn(gs, gs.tensor(e)).numpy()
        theirs = fn(torch, torch.tensor(e)).numpy()
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_float16_keeps_the_numpy_path():
    a = np.array([0.5, 2.5, -1.5, 7.0], np.float16)
    for name in ("lgamma", "digamma"):
        ours = getattr(gs, name)(gs.tensor(a)).numpy()
        theirs = getattr(torch, name)(torch.tensor(a)).numpy()
        assert ours.dtype == np.float16
        np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=2e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_match_torch(dtype):
    a = np.array([[0.4, 1.3, 2.2], [7.5, -2.6, 12.0]], dtype)
    for fn in (
        lambda L, x: L.lgamma(x),
        lambda L, x: L.digamma(x),
        lambda L, x: L.polygamma(1, x),
        lambda L, x: L.polygamma(3, x),
    ):
        grads = []
        for L in (gs, torch):
            t = L.tensor(a, requires_grad=True)
            (g,) = L.autograd.grad(fn(L, t).sum(), t)
            grads.append(g.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_gradcheck_in_float64():
    x = gs.tensor(np.array([0.4, 1.3, 2.2, 7.5, -2.6]), requires_grad=True)
    for fn in (gs.lgamma, gs.digamma, lambda t: gs.polygamma(2, t)):
        assert gs.autograd.gradcheck(fn, (x,))
        assert gs.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threaded_path_equals_one_thread(dtype):
    a = np.random.default_rng(2).uniform(-8, 8, 4 * kernels.SPECIAL_THRESHOLD + 3).astype(dtype)
    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = [kernels.lgamma(a), kernels.digamma(a), kernels.trigamma(a), kernels.polygamma(a, 3)]
        kernels.set_num_threads(2)
        two = [kernels.lgamma(a), kernels.digamma(a), kernels.trigamma(a), kernels.polygamma(a, 3)]
    finally:
        kernels.set_num_threads(before)
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)


def test_kernels_check_their_arguments():
    with pytest.raises((TypeError, ValueError)):
        kernels.lgamma(np.arange(4))  # int64
    with pytest.raises((TypeError, ValueError)):
        kernels.digamma(np.ones((4, 4), np.float32)[:, ::2])  # non-contiguous
    with pytest.raises((TypeError, ValueError)):
        kernels.trigamma([1.0, 2.0])  # not an array
    with pytest.raises(ValueError, match="at least 2"):
        kernels.polygamma(np.ones(3), 1)
