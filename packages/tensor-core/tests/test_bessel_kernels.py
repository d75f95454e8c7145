"""The kernels of ``_bessel_kernels.pyx`` against torch 2.13, bit for bit on dense grids.

torch's CPU kernels of these functions come from its AVX2/AVX-512 build on this machine,
whose multiply-adds are fused (Note [Bessel kernels contract as torch's]): with our FMA
copies on, the values are torch's bits (float32 ``igamma``: within 2e-4, the note's few
tiny values).  With the copies off (a CPU without FMA, where torch too runs its
default build) they are compared within a relative tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import _bessel_kernels, _kernels
from gradstack_tensor._bessel_kernels import BINARY, UNARY, binary, unary

torch = pytest.importorskip("torch")

FMA_LIKE_TORCH = _kernels._avx2() and torch.backends.cpu.get_cpu_capability() in (
    "AVX2",
    "AVX512",
)

# (function, dtype) -> the most ulps our FMA copy may differ from torch's AVX-512 build
ALLOWED_ULPS: dict[tuple[str, str], int] = {}  # (none: every function is torch's bits)

RNG = np.random.default_rng(35)
EDGES = [0.0, -0.0, 1e-6, -1e-6, 1e-30, 0.5, 1.0, -1.0, 2.0, 2.09, -2.09, 5.0, 8.0, -8.0,
         8.3203353, 26.7, -26.7, 50.0, 51.0, 103.9, 1e5, 5e7, 6e7, 1e10, -1e10, 1e30,
         np.inf, -np.inf, np.nan]  # fmt: skip
GRID = np.concatenate(
    [np.linspace(-30, 30, 3001), RNG.standard_normal(1000) * 50, RNG.uniform(-1, 1, 500), EDGES]
)


def _torch_unary(name):
    return torch.i0 if name == "i0" else getattr(torch.special, name)


def _ulps(ours, ref):
    """Per element: 0 where equal (NaN equal to NaN), else the difference in ulps of
    ``ref``."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    same = (ours == ref) | (np.isnan(ours) & np.isnan(ref))
    with np.errstate(all="ignore"):
        d = np.abs(ours.astype(np.float64) - ref.astype(np.float64)) / np.spacing(
            np.abs(ref)
        ).astype(np.float64)
    return np.where(same, 0.0, np.nan_to_num(d, nan=np.inf))


def _check(name, dtype, ours, ref):
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    if FMA_LIKE_TORCH:
        worst = _ulps(ours, ref).max(initial=0.0)
        assert worst <= ALLOWED_ULPS.get((name, dtype), 0), f"{name} {dtype}: {worst} ulps"
    else:  # pragma: no cover - a CPU without FMA
        rtol = 1e-4 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(ours, ref, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_are_torchs(name, dtype):
    with np.errstate(over="ignore"):
        x = GRID.astype(dtype)
    ref = _torch_unary(name)(torch.from_numpy(x)).numpy()
    _check(name, dtype, unary(name, x), ref)


# degrees: negative, small, where torch switches to cos(n acos x) (6, 8), Hermite's limits
# (128, 512), non-integers (truncated), NaN and infinities (0, as torch's int64 cast)
DEGREES = [*range(-2, 40), 100, 127, 128, 129, 200, 511, 512, 513, 2.5, 7.9, -0.5, 1e20,
           np.nan, np.inf, -np.inf]  # fmt: skip
XS = [*np.linspace(-2, 2, 81), 0.0, 1.0, -1.0, 0.5, 10.0, -10.0, 1e-3, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", [n for n in BINARY if "polynomial" in n])
def test_polynomial_values_are_torchs(name, dtype):
    x, n = (a.ravel().astype(dtype) for a in np.meshgrid(XS, DEGREES))
    ref = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n)).numpy()
    _check(name, dtype, binary(name, x, n), ref)


def test_polynomial_of_nan_is_nan():
    # torch's loop returns an uninitialised value there; ours is NaN for every degree >= 2
    for name in (n for n in BINARY if "polynomial" in n):
        r = binary(name, np.full(5, np.nan), np.array([2.0, 3.0, 9.0, 20.0, 100.0]))
        assert np.isnan(r).all(), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_values_are_torchs(name, dtype):
    a = np.concatenate([RNG.uniform(0, 5, 2000), RNG.uniform(0, 300, 2000), RNG.uniform(0, 1, 500)])
    x = np.concatenate([RNG.uniform(0, 5, 2000), RNG.uniform(0, 300, 2000), RNG.uniform(0, 3, 500)])
    edges = [(0, 0), (0, 1), (1, 0), (np.inf, 1), (1, np.inf), (np.inf, np.inf), (np.nan, 1),
             (1, np.nan), (-1, 1), (1, -1), (25, 25.5), (250, 251), (1e-3, 1e-3)]  # fmt: skip
    a = np.concatenate([a, [e[0] for e in edges]]).astype(dtype)
    x = np.concatenate([x, [e[1] for e in edges]]).astype(dtype)
    ref = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x)).numpy()
    ours = binary(name, a, x)
    if name == "igamma" and dtype == "float32" and FMA_LIKE_TORCH:
        # a few tiny values of the series (Note [Bessel kernels contract as torch's])
        np.testing.assert_allclose(ours, ref, rtol=2e-4, atol=1e-30, equal_nan=True)
        return
    _check(name, dtype, ours, ref)


def test_both_copies_agree_closely():
    x = GRID[np.isfinite(GRID)]
    was = _kernels._avx2()
    try:
        fma = {n: unary(n, x) for n in UNARY}
        _kernels._avx2(False)
        for n in UNARY:
            np.testing.assert_allclose(unary(n, x), fma[n], rtol=1e-12, atol=1e-300, err_msg=n)
    finally:
        _kernels._avx2(was)


def test_one_element_operand_is_repeated_and_layouts():
    x = np.linspace(-1, 1, 7)
    np.testing.assert_array_equal(
        binary("legendre_polynomial_p", x, np.array([3.0])),
        binary("legendre_polynomial_p", x, np.full(7, 3.0)),
    )
    np.testing.assert_array_equal(
        binary("legendre_polynomial_p", np.array([0.5]), np.arange(5.0)),
        binary("legendre_polynomial_p", np.full(5, 0.5), np.arange(5.0)),
    )
    assert unary("i0", np.zeros((0, 3))).shape == (0, 3)
    assert unary("i0", np.array(2.0)).shape == ()
    big = np.linspace(-5, 5, 10_000)  # (past the threads' threshold)
    np.testing.assert_array_equal(unary("bessel_j0", big), np.concatenate(
        [unary("bessel_j0", big[:5000]), unary("bessel_j0", big[5000:])]))  # fmt: skip


def test_arguments_are_checked_before_memory():
    with pytest.raises(ValueError, match="no function 'nope'"):
        unary("nope", np.zeros(3))
    with pytest.raises(TypeError):
        unary("i0", np.zeros(3, np.int64))
    with pytest.raises(ValueError):
        unary("i0", np.zeros((3, 4))[:, ::2])
    with pytest.raises(TypeError, match="one dtype"):
        binary("igamma", np.zeros(3), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="one shape"):
        binary("igamma", np.zeros(3), np.zeros(2))
    assert _bessel_kernels.UNARY[0] == "airy_ai"
