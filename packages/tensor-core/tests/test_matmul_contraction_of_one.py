"""Note [A contraction over one element is a product] (_impl_linalg.py): ``[..., n, 1] @
[..., 1, m]`` is computed as a broadcast product; the numbers must be matmul's exactly.
float32/float64 take one C pass (Note [A batched outer product in one pass], _loops.pyx)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor._loops import batched_outer_product

SHAPES = [
    ((5, 1), (1, 3)),
    ((64, 7, 1), (64, 1, 9)),
    ((2, 3, 4, 1), (3, 1, 2)),  # batch dims broadcast
    ((1, 4, 1), (6, 1, 2)),
    ((0, 3, 1), (0, 1, 2)),  # empty batch
    ((3, 0, 1), (3, 1, 5)),  # empty rows
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize(("sa", "sb"), SHAPES)
def test_equals_numpy_matmul_bit_for_bit(sa, sb, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(sa) * 10).astype(dtype)
    b = (rng.standard_normal(sb) * 10).astype(dtype)
    got = gt.matmul(gt.from_numpy(a), gt.from_numpy(b))
    want = np.matmul(a, b)
    assert got.numpy().dtype == want.dtype
    assert got.numpy().shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    if len(sa) == 3 and len(sb) == 3 and sa[0] == sb[0]:
        np.testing.assert_array_equal(gt.bmm(gt.from_numpy(a), gt.from_numpy(b)).numpy(), want)


def test_shapes_that_do_not_broadcast_still_raise_matmuls_error():
    with pytest.raises(RuntimeError, match="not compatible"):
        gt.matmul(gt.ones(2, 3, 4, 1), gt.ones(4, 1, 2))
    with pytest.raises(RuntimeError, match="expected batch1"):
        gt.bmm(gt.ones(2, 4, 1), gt.ones(3, 1, 2))


def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 5, 1)).astype(np.float32)
    b = rng.standard_normal((8, 1, 4)).astype(np.float32)
    want = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(gt.matmul(gt.from_numpy(a), gt.from_numpy(b)).numpy(), want)


@pytest.mark.parametrize("op", ["matmul", "bmm"])
def test_a_zero_product_is_positive_zero_as_in_a_sum(op):
    """fuzz seed 1 #5370: 0.0 * -2.5 is -0.0, but matmul sums from +0 and gives +0.0."""
    a = gt.tensor([[[0.0], [-0.0], [1.25]]], dtype=gt.float64)
    b = gt.tensor([[[-2.5, 2.5]]], dtype=gt.float64)
    got = getattr(gt, op)(a, b).numpy()
    want = np.matmul(a.numpy(), b.numpy())
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert not np.signbit(got[0, :2]).any()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_c_pass_reads_strided_and_reversed_operands(dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 10, 2)).astype(dtype)[:, ::2, 1:]  # rows strided
    b = rng.standard_normal((6, 3, 9)).astype(dtype)[:, 1:2, ::-1]  # negative stride
    a[0, 0, 0] = -0.0
    got = batched_outer_product(a, b)
    want = np.matmul(a, b)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_the_c_pass_declines_what_it_does_not_compute():
    """None hands the operands back to numpy's path (which raises for bad shapes)."""
    f32, f64 = np.ones((2, 3, 1), np.float32), np.ones((2, 1, 4))
    assert batched_outer_product(f32, f64) is None  # mixed dtypes: numpy promotes
    assert batched_outer_product(f32.astype(np.int64), f64.astype(np.int64)) is None
    assert batched_outer_product(np.ones((2, 3, 2)), f64) is None  # contraction of 2
    assert batched_outer_product(np.ones((2, 3, 1)), np.ones((3, 1, 4))) is None  # batch
    assert batched_outer_product(np.ones(3), f64) is None  # 1-D


def test_the_c_pass_rejects_non_arrays_with_a_type_error():
    with pytest.raises(TypeError):
        batched_outer_product(None, np.ones((1, 2)))
    with pytest.raises(TypeError):
        batched_outer_product(np.ones((2, 1)), [[1.0, 2.0]])
