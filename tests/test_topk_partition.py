"""topk (``_impl_reduce._topk_by_kernel``, tensor-core's ``topk_rows``: Note [topk breaks
ties as torch]): the same values and indices as torch 2.13, ties, NaN, signed zeros and
integers included, both of torch's selection paths (64 k <= n and not), sorted or not;
every dim, largest and smallest, non-contiguous and 0-size inputs; the gradient
(gradcheck in float64)."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

CASES = [
    ((1000, 300), 30, -1), ((300, 200), 20, 0), ((7, 50), 5, 1), ((50,), 3, 0),
    ((4, 9, 30), 7, 2), ((6, 40, 3), 4, 1),
]  # fmt: skip
DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int8, np.uint8]


def _first_k_of_sort(x, k, dim, largest):
    s = gs.sort(gs.tensor(x), dim, descending=largest)
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(0, k)
    return s.values.numpy()[tuple(sl)], s.indices.numpy()[tuple(sl)]


def _ties(shape, dtype, special):
    x = (np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    if special and np.dtype(dtype).kind == "f":
        flat = x.reshape(-1)
        flat[::17], flat[::13], flat[::11], flat[::7] = np.nan, np.inf, -0.0, 0.0
    if special and np.dtype(dtype).kind != "f":
        x = x // 16  # many ties
    return x


@pytest.mark.parametrize("shape,k,dim", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("ordered", [True, False])
def test_same_answer_as_torch(shape, k, dim, dtype, largest, special, ordered):
    x = _ties(shape, dtype, special)
    r = gs.topk(gs.tensor(x), k, dim, largest, ordered)
    t = torch.topk(torch.tensor(x), k, dim, largest, ordered)
    np.testing.assert_array_equal(r.values.numpy(), t.values.numpy())
    np.testing.assert_array_equal(np.signbit(r.values.numpy()), np.signbit(t.values.numpy()))
    np.testing.assert_array_equal(r.indices.numpy(), t.indices.numpy())
    assert r.indices.dtype == gs.int64


@pytest.mark.parametrize("k", [1, 2, 3, 9, 10, 40, 200, 639, 640])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
def test_rows_of_ties_both_selection_paths(k, dtype):
    """Rows of few distinct values (many ties at the k-th), k on both sides of n / 64."""
    x = np.random.default_rng(k).integers(0, 4, (5, 640)).astype(dtype)
    for largest in (True, False):
        for ordered in (True, False):
            r = gs.topk(gs.tensor(x), k, 1, largest, ordered)
            t = torch.topk(torch.tensor(x), k, 1, largest, ordered)
            np.testing.assert_array_equal(r.indices.numpy(), t.indices.numpy())
            np.testing.assert_array_equal(r.values.numpy(), t.values.numpy())


def test_gradient_of_ties_goes_where_torch_sends_it():
    x = np.random.default_rng(3).integers(0, 3, (4, 50)).astype(np.float32)
    grads = []
    for L in (gs, torch):
        a = L.tensor(x, requires_grad=True)
        v = L.topk(a, 7, 1).values
        (g,) = L.autograd.grad((v * L.arange(7.0)).sum(), a)
        grads.append(g.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("shape,k,dim", CASES)
@pytest.mark.parametrize("largest", [True, False])
def test_distinct_values_match_torch(shape, k, dim, largest):
    x = np.random.default_rng(1).permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    ours = gs.topk(gs.tensor(x), k, dim, largest)
    theirs = torch.topk(torch.tensor(x), k, dim, largest)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


def test_non_contiguous_empty_and_gradients():
    x = np.random.default_rng(2).permutation(60 * 40).reshape(60, 40).astype(np.float64)
    for view in (lambda t: t.T, lambda t: t[:, ::3], lambda t: t[:0]):
        ours = gs.topk(view(gs.tensor(x)), 3, -1)
        theirs = torch.topk(view(torch.tensor(x)), 3, -1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    grads = []
    for L in (gs, torch):
        a = L.tensor(x, requires_grad=True)
        v = L.topk(a, 4, 1).values
        (g,) = L.autograd.grad((v * L.arange(4.0)).sum(), a)
        grads.append(g.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    a = gs.tensor(x[:5, :12] / 7, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: gs.topk(t, 3, 1).values, (a,))


def test_topk_rows_kernel_contract():
    from gradstack_tensor.kernels import topk_rows

    x = np.random.default_rng(4).integers(0, 5, (6, 30)).astype(np.float16)
    for rows in (x, x[:, ::2], x.T.copy().T, x[:0]):
        v, i = topk_rows(rows, 3, largest=False)
        t = torch.topk(torch.tensor(np.ascontiguousarray(rows)), 3, 1, largest=False)
        assert v.dtype == np.float16 and i.dtype == np.int64 and v.flags.c_contiguous
        np.testing.assert_array_equal(v, t.values.numpy())
        np.testing.assert_array_equal(i, t.indices.numpy())
    with pytest.raises(TypeError, match="2-d"):
        topk_rows(np.zeros(3), 1)
    with pytest.raises(TypeError, match="dtype"):
        topk_rows(np.zeros((2, 3), np.complex64), 1)
    with pytest.raises(ValueError, match="out of range"):
        topk_rows(np.zeros((2, 3)), 4)
    assert topk_rows(np.zeros((2, 3)), 0)[0].shape == (2, 0)


def test_topk_refuses_complex_as_torch():
    with pytest.raises(RuntimeError, match="complex"):
        gs.topk(gs.tensor([1 + 2j, 3j]), 1)
