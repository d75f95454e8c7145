"""``masked_fill`` through ``kernels.masked_fill_block`` (Note [A mask repeated over the
leading dims]) against torch 2.13: masks repeated over leading dims and of the tensor's
shape, float32/float64, fill values that round, non-contiguous tensors and masks (the
numpy path), 0-size, threads, and the kernel's argument checks.  (masked_fill's gradient
is a masked_fill of the gradient: graph-engine's derivative tests cover it.)"""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _kernels, kernels

torch = pytest.importorskip("torch")

SHAPES = [
    ((16, 4, 64, 64), (1, 1, 64, 64)),  # attention's causal mask
    ((16, 4, 8, 8), (8, 8)),
    ((3, 5), (3, 5)),
    ((3, 5), (5,)),
    ((2, 3, 5), (1, 3, 5)),
    ((2, 3, 5), ()),
    ((7,), (1,)),
    ((2, 1, 5), (1, 5)),
    ((2, 3, 5), (3, 1)),  # not a block: numpy's path
    ((2, 3, 5), (2, 1, 5)),  # not a block
    ((1, 3), (4, 3)),  # the mask broadcasts the tensor: numpy's path
    ((0, 3), (3,)),
    ((2, 0), (2, 0)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("value", [float("-inf"), 0.0, 0.1, 1e30, float("nan")])
def test_masked_fill_matches_torch(dtype, shapes, value):
    xs, ms = shapes
    rng = np.random.default_rng(len(xs) + len(ms))
    x = rng.standard_normal(xs).astype(dtype)
    m = np.asarray(rng.random(ms) < 0.4)
    got = gt.from_numpy(x.copy()).masked_fill(gt.from_numpy(m.copy()), value)
    want = torch.from_numpy(x.copy()).masked_fill(torch.from_numpy(m.copy()), value)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype == getattr(gt, dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_operands_match_torch(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 8, 10)).astype(dtype)
    m = rng.random((10, 8)) < 0.5
    for xt, mt in [
        (lambda L, a: L.from_numpy(a).transpose(1, 2), lambda L, b: L.from_numpy(b)),
        (lambda L, a: L.from_numpy(a)[:, ::2, :8], lambda L, b: L.from_numpy(b)[:8, :4].t()),
        (lambda L, a: L.from_numpy(a)[:, :, :8], lambda L, b: L.from_numpy(b)[:8, :8].t()),
    ]:
        got = xt(gt, x.copy()).masked_fill(mt(gt, m.copy()), -2.5)
        want = xt(torch, x.copy()).masked_fill(mt(torch, m.copy()), -2.5)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_threads_give_the_same_result():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 4, 64, 64)).astype(np.float32)
    m = rng.random((64, 64)) < 0.5
    before = _kernels.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            _kernels.set_num_threads(threads)
            outs.append(kernels.masked_fill_block(x, m.reshape(-1), 7.0))
    finally:
        _kernels.set_num_threads(before)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], np.where(m, np.float32(7.0), x))


def test_kernel_checks_its_arguments():
    x = np.zeros((4, 6), np.float32)
    with pytest.raises(TypeError, match="bool"):
        kernels.masked_fill_block(x, np.ones(6, np.int64), 1.0)
    with pytest.raises(ValueError, match="divide"):
        kernels.masked_fill_block(x, np.ones(5, bool), 1.0)
    with pytest.raises(ValueError, match="divide"):
        kernels.masked_fill_block(x, np.ones(0, bool), 1.0)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.masked_fill_block(x, np.ones((6, 2), bool)[:, 0], 1.0)
    with pytest.raises(ValueError, match="masked_fill_block"):
        kernels.masked_fill_block(x.T, np.ones(6, bool), 1.0)
    with pytest.raises(TypeError, match="masked_fill_block"):
        kernels.masked_fill_block(x.astype(np.int32), np.ones(6, bool), 1.0)
    assert kernels.masked_fill_block(np.zeros((0, 3)), np.ones(3, bool), 1.0).shape == (0, 3)
