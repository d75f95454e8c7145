"""``bernoulli_(p)`` with a number ``p`` through ``kernels.bernoulli_scalar_fill_`` (Note
[Dropout's mask in one pass]): torch 2.13's draws bit for bit after the same seed, in
float32 and float64, for contiguous, non-contiguous (the numpy path), 0-size and float16
tensors, the generator's position after the fill, and the kernel's argument checks."""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _dropout_kernels, kernels

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(4, 6, 128, 128), (7,), (0, 3), (3, 5), ()])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli_scalar_matches_torch(dtype, shape, p):
    gt.manual_seed(11)
    torch.manual_seed(11)
    a = gt.empty(shape, dtype=getattr(gt, dtype)).bernoulli_(p)
    b = torch.empty(shape, dtype=getattr(torch, dtype)).bernoulli_(p)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the generators are at the same place afterwards, in the same state
    np.testing.assert_array_equal(gt.random.get_rng_state().numpy(), torch.get_rng_state().numpy())
    np.testing.assert_array_equal(gt.rand(5).numpy(), torch.rand(5).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_tensor_matches_torch(dtype):
    gt.manual_seed(12)
    torch.manual_seed(12)
    a = gt.zeros((6, 8), dtype=getattr(gt, dtype))
    b = torch.zeros((6, 8), dtype=getattr(torch, dtype))
    a[:, ::2].bernoulli_(0.4)
    b[:, ::2].bernoulli_(0.4)
    a.t().bernoulli_(0.7)
    b.t().bernoulli_(0.7)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_dropout_mask_matches_torch():
    # nn-mini's dropout draws its mask as empty_like(x).bernoulli_(1 - p).div_(1 - p)
    x = np.random.default_rng(3).standard_normal((16, 64, 128)).astype(np.float32)
    gt.manual_seed(5)
    torch.manual_seed(5)
    got = gt.empty_like(gt.from_numpy(x)).bernoulli_(0.9).div_(0.9)
    want = torch.empty_like(torch.from_numpy(x)).bernoulli_(0.9).div_(0.9)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("blocks", [True, False])
@pytest.mark.parametrize("n", [0, 1, 311, 312, 313, 1024, 1025, 5000])
@pytest.mark.parametrize("skip", [0, 1, 623, 624])
def test_draw_leaves_numpy_s_stream_where_random_raw_would(blocks, n, skip):
    # Note [MT19937 in blocks]: the state twisted and the position moved as numpy's own
    try:
        assert _dropout_kernels._mt_blocks(blocks) == blocks
        a, b = np.empty(n, np.float32), np.empty(n, np.float32)
        bits, ref = np.random.MT19937(n + skip), np.random.MT19937(n + skip)
        bits.random_raw(skip)
        ref.random_raw(skip)
        kernels.bernoulli_scalar_draw_(a, bits, 0.6)
        kernels.bernoulli_scalar_fill_(b, ref.random_raw(2 * n), 0.6)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(bits.random_raw(1300), ref.random_raw(1300))
    finally:
        _dropout_kernels._mt_blocks(True)


def test_draw_is_fill_of_random_raw():
    for dtype in (np.float32, np.float64):
        a, b = np.empty(1001, dtype), np.empty(1001, dtype)
        bits = np.random.MT19937(3)
        kernels.bernoulli_scalar_draw_(a, bits, 0.25)
        after = bits.random_raw(4)
        ref = np.random.MT19937(3)
        kernels.bernoulli_scalar_fill_(b, ref.random_raw(2002), 0.25)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(after, ref.random_raw(4))
    with pytest.raises(TypeError, match="BitGenerator"):
        kernels.bernoulli_scalar_draw_(a, np.random.default_rng(0), 0.5)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(3)
        ro.flags.writeable = False
        kernels.bernoulli_scalar_draw_(ro, np.random.MT19937(0), 0.5)


def test_kernel_checks_its_arguments():
    out = np.empty(3, np.float32)
    with pytest.raises(ValueError, match="two draws per element"):
        kernels.bernoulli_scalar_fill_(out, np.zeros(5, np.uint64), 0.5)
    with pytest.raises(TypeError, match="uint64"):
        kernels.bernoulli_scalar_fill_(out, np.zeros(6, np.int64), 0.5)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.bernoulli_scalar_fill_(out, np.zeros(12, np.uint64)[::2], 0.5)
    with pytest.raises(TypeError, match="bernoulli_scalar_fill_"):
        kernels.bernoulli_scalar_fill_(np.empty(3, np.int32), np.zeros(6, np.uint64), 0.5)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(3, np.float64)
        ro.flags.writeable = False
        kernels.bernoulli_scalar_fill_(ro, np.zeros(6, np.uint64), 0.5)
    with pytest.raises(ValueError, match="bernoulli_scalar_fill_"):
        kernels.bernoulli_scalar_fill_(np.empty((3, 2), np.float64).T, np.zeros(12, np.uint64), 0.5)
