"""nextafter by the bits (``_nextafter_kernels.pyx``, Note [nextafter by the bits])
against torch 2.13, bit for bit: float32 and float64, the special values (+-0, +-inf, nan,
the largest and smallest values, subnormals) against each other, random bit patterns, the
in-place form, broadcasting and non-contiguous operands (numpy's loop), 0-size tensors,
the threaded path; the gradient (grad for self, zero for other) by gradcheck."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

UINT = {np.float32: np.uint32, np.float64: np.uint64}


def _pairs(dtype, seed=0):
    f = np.finfo(dtype)
    special = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            1.0,
            -1.0,
            f.max,
            -f.max,
            f.tiny,
            f.smallest_subnormal,
            -f.smallest_subnormal,
            2.5,
        ],
        dtype,
    )
    xs, ys = np.meshgrid(special, special)
    r = np.random.default_rng(seed)
    u = UINT[dtype]
    bits = r.integers(0, np.iinfo(u).max, (2, 5000), dtype=u).view(dtype)
    near = r.standard_normal((2, 5000)).astype(dtype)
    x = np.concatenate([xs.ravel(), bits[0], near[0], near[0]])
    y = np.concatenate([ys.ravel(), bits[1], near[1], near[0]])
    return x, y


def _same_bits(ours, theirs, dtype):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    nan = np.isnan(theirs)
    assert np.array_equal(np.isnan(ours), nan)
    assert np.array_equal(ours[~nan].view(UINT[dtype]), theirs[~nan].view(UINT[dtype]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bits_are_torchs(dtype):
    x, y = _pairs(dtype)
    theirs = torch.nextafter(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    _same_bits(kernels.nextafter(x, y), theirs, dtype)
    _same_bits(gs.nextafter(gs.from_numpy(x), gs.from_numpy(y)).numpy(), theirs, dtype)
    t = gs.from_numpy(x.copy())
    assert t.nextafter_(gs.from_numpy(y)) is t
    _same_bits(t.numpy(), theirs, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_other_layouts_and_sizes(dtype):
    x, y = _pairs(dtype, 1)
    x, y = x[: 96 * 50].reshape(96, 50), y[: 96 * 50].reshape(96, 50)
    for a, b in [(x.T, y.T), (x[::2], y[1::2]), (x, y[:1]), (x[:0], y[:0]), (x[3], y[3, 0])]:
        theirs = torch.nextafter(
            torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(b))
        ).numpy()
        ours = gs.nextafter(
            gs.from_numpy(np.ascontiguousarray(a)), gs.from_numpy(np.ascontiguousarray(b))
        ).numpy()
        _same_bits(ours, theirs, dtype)
        ours = gs.nextafter(
            gs.from_numpy(x).t() if a is x.T else gs.from_numpy(np.ascontiguousarray(a)),
            gs.from_numpy(np.ascontiguousarray(b)) if a is not x.T else gs.from_numpy(y).t(),
        ).numpy()
        _same_bits(np.ascontiguousarray(ours), theirs, dtype)


def test_gradient():
    x = gs.from_numpy(np.random.default_rng(2).standard_normal(6)).requires_grad_()
    y = gs.from_numpy(np.random.default_rng(3).standard_normal(6)).requires_grad_()
    gx, gy = gs.autograd.grad(gs.nextafter(x, y).sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), np.ones(6))
    np.testing.assert_array_equal(gy.numpy(), np.zeros(6))


def test_threaded_path_is_the_serial_one():
    x, y = _pairs(np.float32, 4)
    x, y = np.tile(x, 20), np.tile(y[::-1], 20)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.nextafter(x, y)
        gs.set_num_threads(2)
        threaded = kernels.nextafter(x, y)
    finally:
        gs.set_num_threads(before)
    _same_bits(threaded, serial, np.float32)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.nextafter(np.zeros(3, np.int64), np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="one dtype"):
        kernels.nextafter(np.zeros(3, np.float32), np.zeros(3))
    with pytest.raises(ValueError, match="one shape"):
        kernels.nextafter(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.nextafter(np.zeros((3, 4)).T, np.zeros((4, 3)))
    out = np.zeros(3)
    assert kernels.nextafter_ufunc(np.zeros(3), np.ones(3), out=out) is out
    assert out[0] > 0
