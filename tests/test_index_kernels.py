"""The indexing kernels (``_index_kernels.pyx``) and the ops they serve, against torch 2.13.

* the kernels on arrays: ``take_rows``, ``embedding_backward`` and ``scatter_add_`` against
  numpy (``np.add.at``, fancy indexing), float32/float64, int32/int64 indices, repeated
  indices, non-contiguous operands, 0-size, every dim, the threaded path, the errors;
* the ops whose forward or backward they run (embedding with padding_idx and
  scale_grad_by_freq, embedding_bag, index_select, gather, getitem with an integer tensor,
  scatter_add, index_add, narrow, unfold, trace): values and gradients against torch, and
  gradcheck / gradgradcheck in float64 (create_graph keeps the differentiable formulas);
* out-of-range and negative indices raise torch's exception and words, before any write.
"""

# ruff: noqa: B023 (the lambdas of a loop are called in their own iteration, by compare)

from __future__ import annotations

import gradstack as gs
import gradstack_tensor as gt
import numpy as np
import pytest
import torch
from gradstack_autograd import gradcheck, gradgradcheck
from gradstack_tensor import kernels as K

FLOATS = [np.float32, np.float64]
INDEX_TYPES = [np.int32, np.int64]
BIG = 1 << 17  # above PARALLEL_THRESHOLD


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


def add_at_along(out, dim, index, src):
    key = list(np.indices(index.shape, sparse=True))
    key[dim] = index
    np.add.at(out, tuple(key), src)


# ---------------------------------------------------------------------------------------
# the kernels on arrays


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
def test_take_rows_is_fancy_indexing(dtype, itype):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((7, 5)).astype(dtype)
    for shape in [(), (0,), (4,), (3, 6), (2, 0, 3)]:
        idx = rng.integers(0, 7, shape).astype(itype)
        got = K.take_rows(w, idx)
        assert got.shape == idx.shape + (5,) and got.dtype == dtype
        np.testing.assert_array_equal(got, w[idx])


def test_take_rows_checks_before_copying():
    w = np.zeros((3, 2))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        K.take_rows(w, np.array([0, 3]))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        K.take_rows(w, np.array([-1]))
    with pytest.raises(TypeError, match="int32 or int64"):
        K.take_rows(w, np.array([0.0]))
    with pytest.raises(ValueError, match="C-contiguous"):
        K.take_rows(np.zeros((2, 3)).T, np.array([0]))
    with pytest.raises(ValueError, match="2-d"):
        K.take_rows(np.zeros(3), np.array([0]))
    assert K.take_rows(np.zeros((0, 2)), np.zeros(0, np.int64)).shape == (0, 2)


def embedding_backward_reference(grad, idx, n, padding_idx=-1, scale=False):
    out = np.zeros((n, grad.shape[-1]), grad.dtype)
    flat = idx.reshape(-1)
    g = grad.reshape(-1, grad.shape[-1])
    counts = np.bincount(flat, minlength=n)
    for i, k in enumerate(flat):  # torch's loop: in index order, add_(grad[i], alpha)
        if k == padding_idx:
            continue
        alpha = grad.dtype.type(1.0 / counts[k]) if scale else grad.dtype.type(1)
        out[k] = out[k] + alpha * g[i]
    return out


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize(("padding_idx", "scale"), [(-1, False), (2, False), (-1, True), (2, True)])
def test_embedding_backward_is_torchs_loop(dtype, itype, padding_idx, scale):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 6, (5, 4)).astype(itype)  # repeated indices
    idx[0, :2] = 2
    grad = rng.standard_normal((5, 4, 3)).astype(dtype)
    got = K.embedding_backward(grad, idx, 6, padding_idx, scale)
    want = embedding_backward_reference(grad, idx, 6, padding_idx, scale)
    np.testing.assert_array_equal(got, want)
    # a non-contiguous gradient and index give the same
    g2 = np.asfortranarray(grad)
    i2 = np.asfortranarray(idx)
    np.testing.assert_array_equal(K.embedding_backward(g2, i2, 6, padding_idx, scale), want)


def test_embedding_backward_sizes_and_errors():
    assert K.embedding_backward(np.zeros((0, 3)), np.zeros(0, np.int64), 4).shape == (4, 3)
    assert K.embedding_backward(np.zeros((2, 0)), np.zeros(2, np.int64), 4).shape == (4, 0)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        K.embedding_backward(np.zeros((2, 3)), np.array([0, 4]), 4)
    with pytest.raises(IndexError, match="index -2 is out of bounds"):
        K.embedding_backward(np.zeros((2, 3)), np.array([0, -2]), 4)
    with pytest.raises(ValueError, match="plus one last dim"):
        K.embedding_backward(np.zeros((2, 3)), np.array([0, 1, 2]), 4)
    with pytest.raises(TypeError, match="float32 or float64|dtype"):
        K.embedding_backward(np.zeros((2, 3), np.int64), np.array([0, 1]), 4)


def test_embedding_backward_threads_give_the_same_bits(threads):
    rng = np.random.default_rng(2)
    idx = rng.integers(0, 300, 4 * BIG // 64)
    grad = rng.standard_normal((idx.size, 64)).astype(np.float32)
    results = []
    for count in (1, 2, 3):
        threads(count)
        results.append(K.embedding_backward(grad, idx, 300, 7, True))
    assert all(r.tobytes() == results[0].tobytes() for r in results)
    np.testing.assert_array_equal(results[0], embedding_backward_reference(grad, idx, 300, 7, True))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize(
    ("out_shape", "index_shape", "dim"),
    [
        ((5,), (9,), 0),
        ((4, 5), (6, 5), 0),
        ((4, 5), (4, 7), 1),
        ((4, 5), (2, 3), 1),  # an index smaller than out in the other dim
        ((3, 4, 5), (3, 6, 5), 1),
        ((3, 4, 5), (2, 4, 9), 2),
        ((3, 4, 5), (7, 2, 1), 0),
        ((3, 4, 5), (3, 0, 5), 1),
        ((), (), 0),
    ],
)
def test_scatter_add_is_add_at(dtype, itype, out_shape, index_shape, dim):
    rng = np.random.default_rng(3)
    n = out_shape[dim] if out_shape else 1
    idx = rng.integers(0, n, index_shape).astype(itype)
    src = rng.standard_normal(index_shape).astype(dtype)
    out = rng.standard_normal(out_shape).astype(dtype)
    want = out.copy()
    if out_shape:
        add_at_along(want, dim, idx, src)
    else:
        want += src
    K.scatter_add_(out, dim, idx, src)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_add_takes_any_layout(dtype):
    rng = np.random.default_rng(4)
    base = rng.standard_normal((6, 8)).astype(dtype)
    out = base[::2, ::-1]  # a strided, reversed view, written in place
    src = rng.standard_normal((5, 3)).astype(dtype).T  # (3, 5), transposed
    idx = rng.integers(0, 3, (5, 3)).T
    want = base.copy()
    add_at_along(want[::2, ::-1], 0, idx, src)
    K.scatter_add_(out, 0, idx, src)
    np.testing.assert_array_equal(base, want)
    # index_add's form: a 1-d index broadcast along the other dims (stride 0)
    out2 = np.zeros((3, 4), dtype)
    rows = np.array([2, 0, 2, 2, 1])
    src2 = rng.standard_normal((3, 5)).astype(dtype)
    K.scatter_add_(out2, 1, np.broadcast_to(rows, (3, 5)), src2)
    want2 = np.zeros((3, 4), dtype)
    np.add.at(want2, (slice(None), rows), src2)
    np.testing.assert_array_equal(out2, want2)


def test_scatter_add_errors_before_writing():
    out = np.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        K.scatter_add_(out, 1, np.array([[0, 3]]), np.ones((1, 2)))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        K.scatter_add_(out, 1, np.array([[0, -1]]), np.ones((1, 2)))
    assert not out.any()  # nothing written
    K.scatter_add_(out, 1, np.array([[0, -1]]), np.ones((1, 2)), wrap_negative=True)
    assert out.tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match="read-only"):
        K.scatter_add_(
            np.broadcast_to(np.zeros(3), (2, 3)), 1, np.zeros((1, 1), int), np.ones((1, 1))
        )
    with pytest.raises(ValueError, match="no larger"):
        K.scatter_add_(np.zeros((2, 3)), 1, np.zeros((3, 1), int), np.ones((3, 1)))
    with pytest.raises(ValueError, match="src's"):
        K.scatter_add_(np.zeros((2, 3)), 1, np.zeros((1, 2), int), np.ones((1, 1)))
    with pytest.raises(TypeError, match="same dtype"):
        K.scatter_add_(np.zeros((2, 3)), 1, np.zeros((1, 1), int), np.ones((1, 1), np.float32))
    with pytest.raises(TypeError, match="int32 or int64"):
        K.scatter_add_(np.zeros((2, 3)), 1, np.zeros((1, 1), np.uint8), np.ones((1, 1)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
def test_gather_is_take_along_axis(dtype, itype):
    rng = np.random.default_rng(17)
    x = rng.standard_normal((4, 5, 6)).astype(dtype)
    for dim in range(3):
        shape = [3, 4, 5]
        shape[dim] = 7
        idx = rng.integers(0, x.shape[dim], shape).astype(itype)
        want = x[
            tuple(np.indices(idx.shape, sparse=True)[:dim])
            + (idx,)
            + tuple(np.indices(idx.shape, sparse=True)[dim + 1 :])
        ]
        np.testing.assert_array_equal(K.gather(x, dim, idx), want)
        np.testing.assert_array_equal(K.gather(x, dim - 3, idx), want)
        # non-contiguous x and index
        xt = np.asfortranarray(x)
        it = np.asfortranarray(idx)
        np.testing.assert_array_equal(K.gather(xt, dim, it), want)
    assert K.gather(np.array(2.0, dtype), 0, np.array(0, itype)).tolist() == 2.0
    assert K.gather(x, 1, np.zeros((4, 0, 6), itype)).shape == (4, 0, 6)


def test_gather_errors():
    x = np.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        K.gather(x, 1, np.array([[0, 3]]))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        K.gather(x, 1, np.array([[-1]]))
    with pytest.raises(ValueError, match="no larger"):
        K.gather(x, 1, np.zeros((3, 1), np.int64))
    with pytest.raises(ValueError, match="as many dims"):
        K.gather(x, 1, np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="float32 or float64|dtype"):
        K.gather(x.astype(np.int64), 1, np.zeros((1, 1), np.int64))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        gt.zeros(2, 3).gather(1, gt.tensor([[0, 3]]))
    with pytest.raises(RuntimeError, match="index -2 is out of bounds for dimension 0 with size 2"):
        gt.zeros(2, 3).gather(0, gt.tensor([[-2]]))


# ---------------------------------------------------------------------------------------
# the ops, against torch


def pair(array, requires_grad=True):
    return (
        gt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def compare(fn_gs, fn_torch, arrays, dtype, grad_seed=5):
    """Values and gradients of ``fn(*tensors)`` with a random incoming gradient."""
    ours = [gt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = fn_gs(*ours), fn_torch(*theirs)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol(dtype))
    g = np.random.default_rng(grad_seed).standard_normal(tuple(yt.shape)).astype(dtype)
    y.backward(gt.tensor(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize("padding_idx", [None, 1, -2])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_matches_torch(dtype, itype, padding_idx, scale):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((8, 5)).astype(dtype)
    for shape in [(6,), (3, 4), (0,), (2, 0, 3)]:
        idx = rng.integers(0, 8, shape).astype(itype)
        if idx.size:
            idx.reshape(-1)[0] = 1  # padding_idx present, and repeated
            idx.reshape(-1)[-1] = 1
        compare(
            lambda w: gs.nn.functional.embedding(
                gt.tensor(idx), w, padding_idx=padding_idx, scale_grad_by_freq=scale
            ),
            lambda w: torch.nn.functional.embedding(
                torch.tensor(idx), w, padding_idx=padding_idx, scale_grad_by_freq=scale
            ),
            [w],
            dtype,
        )


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_non_contiguous_weight_and_grad(dtype):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((5, 8)).astype(dtype)
    idx = np.array([[7, 0, 7], [3, 3, 1]])
    compare(
        lambda w: gs.nn.functional.embedding(gt.tensor(idx), w.t()).transpose(0, 2),
        lambda w: torch.nn.functional.embedding(torch.tensor(idx), w.t()).transpose(0, 2),
        [w],
        dtype,
    )


def test_embedding_large_threaded(threads):
    threads(2)
    rng = np.random.default_rng(8)
    w = rng.standard_normal((1000, 128)).astype(np.float32)
    idx = rng.integers(0, 1000, (40, 60))
    compare(
        lambda w: gs.nn.functional.embedding(gt.tensor(idx), w, padding_idx=3),
        lambda w: torch.nn.functional.embedding(torch.tensor(idx), w, padding_idx=3),
        [w],
        np.float32,
    )


def test_embedding_double_backward_and_gradcheck():
    rng = np.random.default_rng(9)
    idx = np.array([[0, 2, 2], [3, 0, 1]])
    w0 = rng.standard_normal((4, 3))
    w = gt.tensor(w0, requires_grad=True)

    def f(w):
        return gs.nn.functional.embedding(gt.tensor(idx), w)

    assert gradcheck(f, (w,))
    assert gradgradcheck(f, (w,))
    # padding_idx and scale_grad_by_freq are not the Jacobian (gradcheck fails in torch
    # too): the differentiable formula of create_graph=True gives the kernel's values
    g0 = rng.standard_normal((2, 3, 3))
    wt = torch.tensor(w0, requires_grad=True)
    yt = torch.nn.functional.embedding(torch.tensor(idx), wt, 2, scale_grad_by_freq=True)
    (want,) = torch.autograd.grad(yt, wt, torch.tensor(g0))
    for create_graph in (False, True):
        y = gs.nn.functional.embedding(gt.tensor(idx), w, 2, scale_grad_by_freq=True)
        (got,) = gs.autograd.grad(y, w, gt.tensor(g0), create_graph=create_graph)
        np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_torch(dtype, mode):
    rng = np.random.default_rng(10)
    w = rng.standard_normal((10, 4)).astype(dtype)
    text = rng.integers(0, 10, 13)
    offsets = np.array([0, 3, 3, 8])  # an empty bag
    psw = rng.standard_normal(13).astype(dtype) if mode == "sum" else None
    for pad in (None, 2):
        compare(
            lambda w: gs.nn.functional.embedding_bag(
                gt.tensor(text),
                w,
                gt.tensor(offsets),
                mode=mode,
                padding_idx=pad,
                per_sample_weights=None if psw is None else gt.tensor(psw),
            ),
            lambda w: torch.nn.functional.embedding_bag(
                torch.tensor(text),
                w,
                torch.tensor(offsets),
                mode=mode,
                padding_idx=pad,
                per_sample_weights=None if psw is None else torch.tensor(psw),
            ),
            [w],
            dtype,
        )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_layouts_match_torch(dtype, mode):
    rng = np.random.default_rng(16)
    w = rng.standard_normal((12, 3)).astype(dtype)
    text = rng.integers(0, 12, (4, 5))  # 2-d: bags of equal size
    text[0, 0] = text[1, 1] = 3
    # (not scale_grad_by_freq: torch's embedding_bag scales by counts that are not the
    # indices' frequencies, before and after these kernels alike)
    for pad, scale in [(None, False), (3, False), (-1, False)]:
        compare(
            lambda w: gs.nn.functional.embedding_bag(
                gt.tensor(text), w, mode=mode, padding_idx=pad, scale_grad_by_freq=scale
            ),
            lambda w: torch.nn.functional.embedding_bag(
                torch.tensor(text), w, mode=mode, padding_idx=pad, scale_grad_by_freq=scale
            ),
            [w],
            dtype,
        )
    flat = text.reshape(-1)
    offsets = np.array([0, 2, 9, 9, 20])
    compare(
        lambda w: gs.nn.functional.embedding_bag(
            gt.tensor(flat), w, gt.tensor(offsets), mode=mode, include_last_offset=True
        ),
        lambda w: torch.nn.functional.embedding_bag(
            torch.tensor(flat), w, torch.tensor(offsets), mode=mode, include_last_offset=True
        ),
        [w],
        dtype,
    )
    if mode == "sum":  # the per-sample weights' gradient too
        psw = rng.standard_normal(flat.size).astype(dtype)
        compare(
            lambda w, p: gs.nn.functional.embedding_bag(
                gt.tensor(flat),
                w,
                gt.tensor(offsets[:-1]),
                per_sample_weights=p,
                mode="sum",
                padding_idx=3,
            ),
            lambda w, p: torch.nn.functional.embedding_bag(
                torch.tensor(flat),
                w,
                torch.tensor(offsets[:-1]),
                per_sample_weights=p,
                mode="sum",
                padding_idx=3,
            ),
            [w, psw],
            dtype,
        )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("itype", INDEX_TYPES)
def test_index_ops_match_torch(dtype, itype):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 5, 6)).astype(dtype)
    for dim in (0, 1, 2, -1):
        n = x.shape[dim]
        idx = rng.integers(0, n, 7).astype(itype)
        compare(
            lambda x: x.index_select(dim, gt.tensor(idx)),
            lambda x: x.index_select(dim, torch.tensor(idx)),
            [x],
            dtype,
        )
        shape = list(x.shape)
        shape[dim] = 3
        shape[(dim + 1) % 3] -= 1  # an index smaller than the input in another dim
        gidx = rng.integers(0, n, shape).astype(itype)
        compare(
            lambda x: x.gather(dim, gt.tensor(gidx)),
            lambda x: x.gather(dim, torch.tensor(gidx)),
            [x],
            dtype,
        )
        compare(lambda x: x.narrow(dim, 1, 2), lambda x: x.narrow(dim, 1, 2), [x], dtype)
        compare(lambda x: x.unfold(dim, 2, 1), lambda x: x.unfold(dim, 2, 1), [x], dtype)
        compare(lambda x: x.unfold(dim, 2, 3), lambda x: x.unfold(dim, 2, 3), [x], dtype)
    rows = rng.integers(-4, 4, (2, 3)).astype(itype)  # negative ints count from the end
    compare(lambda x: x[gt.tensor(rows)], lambda x: x[torch.tensor(rows)], [x], dtype)
    cols = np.array([4, 0, 4], dtype=itype)
    compare(lambda x: x[:, gt.tensor(cols)], lambda x: x[:, torch.tensor(cols)], [x], dtype)
    compare(
        lambda x: x[1:3, :, gt.tensor(cols)], lambda x: x[1:3, :, torch.tensor(cols)], [x], dtype
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_add_and_index_add_match_torch(dtype):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 5)).astype(dtype)
    src = rng.standard_normal((3, 5)).astype(dtype)
    idx = rng.integers(0, 5, (3, 4))
    compare(  # (torch gives src a gradient of index's shape: src must have it)
        lambda x, s: x.scatter_add(1, gt.tensor(idx), s),
        lambda x, s: x.scatter_add(1, torch.tensor(idx), s),
        [x, src[:, :4].copy()],
        dtype,
    )
    rows = np.array([3, 0, 3])
    compare(
        lambda x, s: x.index_add(0, gt.tensor(rows), s, alpha=2.0),
        lambda x, s: x.index_add(0, torch.tensor(rows), s, alpha=2.0),
        [x, src],
        dtype,
    )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (0, 3)])
def test_trace_matches_torch(dtype, shape):
    x = np.random.default_rng(13).standard_normal(shape).astype(dtype)
    compare(lambda x: x.trace(), lambda x: x.trace(), [x], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_unbind_with_missing_gradients_matches_torch(dtype):
    x = np.random.default_rng(18).standard_normal((3, 4, 5)).astype(dtype)
    for dim in (0, 1, 2, -1):
        ours = gt.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        a = [p * (i + 1.0) for i, p in enumerate(ours.unbind(dim)) if i != 1]
        b = [p * (i + 1.0) for i, p in enumerate(theirs.unbind(dim)) if i != 1]
        sum(p.sum() for p in a).backward()
        sum(p.sum() for p in b).backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_index_backwards_gradcheck():
    rng = np.random.default_rng(14)
    x = gt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    idx = gt.tensor([2, 0, 2])
    gidx = gt.tensor([[0, 3, 3], [1, 1, 0]])
    for f in (
        lambda x: x.index_select(1, idx),
        lambda x: x.gather(1, gidx),
        lambda x: x[idx],
        lambda x: x.narrow(1, 1, 2),
        lambda x: x.unfold(1, 2, 1),
        lambda x: x.trace(),
        lambda x: x.unbind(1)[2],
        lambda x: x.scatter_add(1, gidx, x[:2, :3]),
    ):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_large_index_backwards_match_torch():
    rng = np.random.default_rng(15)
    x = rng.standard_normal((300, 500)).astype(np.float32)
    idx = rng.integers(0, 300, 700)
    gidx = rng.integers(0, 500, (300, 500))
    compare(
        lambda x: x.index_select(0, gt.tensor(idx)),
        lambda x: x.index_select(0, torch.tensor(idx)),
        [x],
        np.float32,
    )
    compare(
        lambda x: x.gather(1, gt.tensor(gidx)),
        lambda x: x.gather(1, torch.tensor(gidx)),
        [x],
        np.float32,
    )


# ---------------------------------------------------------------------------------------
# errors: torch's exception and words, before any write


def test_out_of_range_indices_raise_torchs_errors():
    w = gt.zeros(4, 3, requires_grad=True)
    for bad in ([0, 4], [-1, 0]):
        with pytest.raises(IndexError, match="index out of range in self"):
            gs.nn.functional.embedding(gt.tensor(bad), w)
        with pytest.raises(IndexError, match="index out of range in self"):
            gs.nn.functional.embedding(gt.tensor(bad, dtype=gt.int32), w.t().contiguous().t())
    x = gt.zeros(3, 4)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.scatter_add(1, gt.tensor([[0, 4]]), gt.ones(1, 2))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
        x.scatter_add(1, gt.tensor([[0, -1]]), gt.ones(1, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_add(0, gt.tensor([-1]), gt.ones(1, 4))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.index_add(0, gt.tensor([3]), gt.ones(1, 4))
    assert not x.numpy().any()


def test_unaligned_arrays_take_the_numpy_path():
    raw = np.zeros(8 * 6 + 1, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float64, count=6, offset=1).reshape(2, 3)
    assert not x.flags.aligned
    t = gt.from_numpy(x) if not x.flags.writeable else gt.tensor(x)
    out = t.gather(1, gt.tensor([[0, 2]]))
    assert out.tolist() == [[0.0, 0.0]]
    assert gt.zeros(2, 3).scatter_add(1, gt.tensor([[2, 2]]), gt.ones(1, 2)).tolist() == [
        [0.0, 0.0, 2.0],
        [0.0, 0.0, 0.0],
    ]
