"""The floating-point division C kernels (``_division_kernels.pyx``: fmod, remainder and
floor division) and the ops that take them (``fmod``, ``remainder``, ``floor_divide``,
``div(rounding_mode="floor")`` and their in-place forms), against torch 2.13: values in
float32 and float64 at signed zeros, infinities, NaN, subnormals, huge quotients, zero
and negative divisors; integer operands (numpy's loops); gradients and gradcheck in
float64; non-contiguous, broadcast and 0-size operands; the threaded path; the argument
checks."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

DTYPES = (np.float32, np.float64)
EDGES = [
    0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.5, -3.5, 7.0, -7.0, 1e-40, -1e-45, 1e30, -1e30, 3e38,
    np.inf, -np.inf, np.nan, 0.1, 1 / 3, 4.0, -4.0, 16777217.0, 1e7, 5e-39,
]  # fmt: skip

OPS = {
    "fmod": (lambda L, a, b: L.fmod(a, b)),
    "remainder": (lambda L, a, b: L.remainder(a, b)),
    "floor_divide": (lambda L, a, b: L.floor_divide(a, b)),
    "div floor": (lambda L, a, b: L.div(a, b, rounding_mode="floor")),
    "div trunc": (lambda L, a, b: L.div(a, b, rounding_mode="trunc")),
}


def _pairs(dtype):
    a, b = np.meshgrid(np.array(EDGES, dtype), np.array(EDGES, dtype))
    r = np.random.default_rng(4)
    n = 20011  # above the threshold of threads, not a multiple of a vector
    big = lambda: (r.standard_normal(n) * 10.0 ** r.integers(-30, 30, n)).astype(dtype)  # noqa: E731
    return [
        (a.ravel().copy(), b.ravel().copy()),
        (r.uniform(-100, 100, n).astype(dtype), r.uniform(-3, 3, n).astype(dtype)),
        (big(), big()),
    ]


def _agree(ours, theirs, a, b, name):
    """Same values, NaN for NaN, zeros' signs kept; torch's vectorised float32 fmod (Sleef)
    gives NaN where a / b overflows float32, where C's fmod (ours, numpy's, torch's scalar
    loop) is exact (Note [Division kernels follow torch's formulas])."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    same = (ours == theirs) & (np.signbit(ours) == np.signbit(theirs))
    same |= np.isnan(ours) & np.isnan(theirs)
    if ours.dtype == np.float32 and name in ("fmod", "remainder"):
        with np.errstate(all="ignore"):
            q = np.abs(np.broadcast_to(a, ours.shape).astype(np.float64) / b)
            expected = np.fmod(np.broadcast_to(a, ours.shape), b)
        overflow = np.isnan(theirs) & (q > np.finfo(np.float32).max)
        if name == "remainder":
            expected = torch.remainder(
                torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
            ).numpy()
            expected = expected.astype(np.float32)
        same |= overflow & ((ours == expected) | np.isnan(expected))
    return same


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_are_torchs(name, dtype):
    fn = OPS[name]
    for a, b in _pairs(dtype):
        ours = fn(gs, gs.tensor(a), gs.tensor(b)).numpy()
        theirs = fn(torch, torch.tensor(a), torch.tensor(b)).numpy()
        same = _agree(ours, theirs, a, b, name)
        assert same.all(), (a[~same][:5], b[~same][:5], ours[~same][:5], theirs[~same][:5])


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("divisor", [2.5, -2.5, 0.0, -0.0, 3, float("inf")])
def test_a_number_or_one_element_divisor(name, dtype, divisor):
    a = np.random.default_rng(2).uniform(-50, 50, 1003).astype(dtype)
    a[:4] = [0.0, -0.0, np.inf, np.nan]
    fn = OPS[name]
    theirs = fn(torch, torch.tensor(a), divisor).numpy()
    for b in (divisor, gs.tensor(np.array(divisor, dtype)), gs.tensor(np.array([divisor], dtype))):
        ours = fn(gs, gs.tensor(a), b).numpy()
        assert _agree(ours, theirs, a, np.float64(divisor), name).all()


@pytest.mark.parametrize("name", ["fmod", "remainder"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_forms(name, dtype):
    a = np.random.default_rng(3).uniform(-10, 10, (7, 9)).astype(dtype)
    b = np.random.default_rng(4).uniform(-3, 3, (7, 9)).astype(dtype)
    ours, theirs = gs.tensor(a), torch.tensor(a)
    getattr(ours, name + "_")(gs.tensor(b))
    getattr(theirs, name + "_")(torch.tensor(b))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours, theirs = gs.tensor(a), torch.tensor(a)
    getattr(ours, name + "_")(-1.5)
    getattr(theirs, name + "_")(-1.5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_broadcast_and_empty_operands(name, dtype):
    fn = OPS[name]
    r = np.random.default_rng(5)
    a = r.uniform(-10, 10, (6, 8)).astype(dtype)
    b = r.uniform(-3, 3, (8, 6)).astype(dtype)
    for x, y in [
        (lambda L: L.tensor(a), lambda L: L.tensor(b).T),
        (lambda L: L.tensor(a)[:, ::2], lambda L: L.tensor(b).T[:, 1::2]),
        (lambda L: L.tensor(a), lambda L: L.tensor(b[:, 0].copy())),  # a row: broadcast
        (lambda L: L.tensor(a[:, :1]), lambda L: L.tensor(b[:, 0].copy())),
        (lambda L: L.tensor(a[:0]), lambda L: L.tensor(b[:, 0].copy())),
        (lambda L: L.tensor(a[0, 0]), lambda L: L.tensor(b[0, 0])),
    ]:
        ours = fn(gs, x(gs), y(gs)).numpy()
        theirs = fn(torch, x(torch), y(torch)).numpy()
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_integers_keep_torchs_rules(dtype):
    a = np.array([-7, -4, -1, 0, 1, 4, 7], dtype)
    b = np.array([2, -2, 3, -3, 5, -5, 2], dtype)
    for name in ("fmod", "remainder", "floor_divide", "div floor", "div trunc"):
        ours = OPS[name](gs, gs.tensor(a), gs.tensor(b)).numpy()
        theirs = OPS[name](torch, torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_array_equal(ours, theirs)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            OPS[name](gs, gs.tensor(a), gs.tensor(np.zeros_like(b)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_match_torch(dtype):
    a = np.array([[5.3, -5.3, 2.2], [-7.1, 0.4, 9.9]], dtype)
    b = np.array([[2.0, 2.0, -1.5], [-2.5, 3.0, 0.7]], dtype)
    for name in ("fmod", "remainder"):
        grads = []
        for L in (gs, torch):
            x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
            out = OPS[name](L, x, y)
            gx, gy = L.autograd.grad((out * L.tensor(a)).sum(), (x, y))
            grads.append((gx.numpy(), gy.numpy()))
        np.testing.assert_array_equal(grads[0][0], grads[1][0])
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)


def test_gradcheck_in_float64():
    x = gs.tensor(np.array([5.3, -5.3, 2.2, -7.1, 0.4]), requires_grad=True)
    y = gs.tensor(np.array([2.0, 2.0, -1.5, -2.5, 3.0]), requires_grad=True)
    assert gs.autograd.gradcheck(gs.remainder, (x, y))
    assert gs.autograd.gradcheck(gs.fmod, (x, y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threaded_path_equals_one_thread(dtype):
    r = np.random.default_rng(6)
    n = 3 * kernels.DIVISION_THRESHOLD + 5
    a, b = r.uniform(-100, 100, n).astype(dtype), r.uniform(-3, 3, n).astype(dtype)
    b[::97] = 0.0  # some elements take the scalar functions
    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = [kernels.fmod(a, b), kernels.remainder(a, b), kernels.floor_divide(a, b)]
        kernels.set_num_threads(2)
        two = [kernels.fmod(a, b), kernels.remainder(a, b), kernels.floor_divide(a, b)]
    finally:
        kernels.set_num_threads(before)
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)


def test_kernels_check_their_arguments():
    a = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="same dtype"):
        kernels.fmod(a, np.ones(4))
    with pytest.raises(ValueError, match="one element"):
        kernels.remainder(a, np.ones(3, np.float32))
    with pytest.raises((TypeError, ValueError)):
        kernels.floor_divide(np.ones((4, 4), np.float32)[:, ::2], np.ones(2, np.float32))
    with pytest.raises((TypeError, ValueError)):
        kernels.fmod(np.arange(4), np.arange(4))
