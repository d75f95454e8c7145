"""``F.embedding_bag`` by the fused kernels (tensor-core's ``_embedding_bag_kernels``,
Note [A bag in one pass]) against torch 2.13: every mode and option, float32 and float64,
non-contiguous tables, empty bags and 0-size inputs, the threaded forward, the kernels'
argument checks, gradcheck and double backward through the composed backward, and the
paths that must not take the kernels (vmap, forward AD)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import functional as F
from gradstack_tensor import _kernels, kernels

torch = pytest.importorskip("torch")

TOL = {np.float32: dict(rtol=2e-6, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _run(lib, w, text, offsets, upstream, psw=None, **kw):
    """Output, table gradient and per-sample weights' gradient of one embedding_bag."""
    wt = lib.tensor(w, requires_grad=True)
    pt = lib.tensor(psw, requires_grad=True) if psw is not None else None
    off = lib.tensor(offsets) if offsets is not None else None
    fn = torch.nn.functional.embedding_bag if lib is torch else F.embedding_bag
    y = fn(lib.tensor(text), wt, off, per_sample_weights=pt, **kw)
    if y.numel():
        (y * lib.tensor(upstream[: y.shape[0]], dtype=y.dtype)).sum().backward()
    gw = wt.grad.numpy() if wt.grad is not None else np.zeros_like(w)
    gp = pt.grad.numpy() if pt is not None and pt.grad is not None else None
    return y.detach().numpy(), gw, gp


def _compare(w, text, offsets, psw=None, **kw):
    dtype = w.dtype.type
    upstream = np.random.default_rng(7).standard_normal((128, w.shape[1])).astype(dtype)
    ours = _run(gt, w, text, offsets, upstream, psw, **kw)
    theirs = _run(torch, w, text, offsets, upstream, psw, **kw)
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **TOL[dtype])


CASES = {
    "plain": dict(),
    "padding": dict(padding_idx=3),
    "negative padding": dict(padding_idx=-1),
    "last offset": dict(include_last_offset=True),
    "padding, last offset": dict(padding_idx=0, include_last_offset=True),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_offsets_match_torch(dtype, mode, case):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((12, 5)).astype(dtype)
    text = rng.integers(0, 12, 30)
    text[[2, 5, 9, 10]] = 3
    text[[20, 21, 22]] = 11
    offsets = np.array([0, 4, 4, 9, 17, 17, 30])  # empty bags, one at the end
    _compare(w, text, offsets, mode=mode, **CASES[case])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pad", [None, 2])
def test_per_sample_weights_match_torch(dtype, pad):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((9, 6)).astype(dtype)
    text = rng.integers(0, 9, 25)
    text[[0, 7]] = 2
    psw = rng.uniform(-2, 2, 25).astype(dtype)
    _compare(w, text, np.array([0, 6, 6, 20]), psw=psw, mode="sum", padding_idx=pad)
    # 2-d input, weights of its shape
    _compare(w, text[:24].reshape(4, 6), None, psw=psw[:24].reshape(4, 6), mode="sum")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("pad", [None, 1])
def test_2d_bags_match_torch(dtype, mode, pad):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((7, 4)).astype(dtype)
    text = rng.integers(0, 7, (5, 3))
    text[2] = 1  # a bag of padding only
    _compare(w, text, None, mode=mode, padding_idx=pad)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_max_ties_and_int32_indices_match_torch(mode):
    w = np.array([[1.0, 5.0], [1.0, 2.0], [3.0, 5.0], [0.0, 0.0]])
    text = np.array([0, 1, 2, 1, 0, 3, 3], dtype=np.int32)
    _compare(w, text, np.array([0, 3, 5], dtype=np.int32), mode=mode)


def test_scale_grad_by_freq_is_embeddings():
    # Note [torch's embedding_bag frequencies]: each index's own count, as F.embedding
    rng = np.random.default_rng(4)
    w = rng.standard_normal((6, 3))
    text = np.array([1, 2, 4, 5, 4, 3, 4, 4])
    for mode in ("sum", "mean"):
        wg = gt.tensor(w, requires_grad=True)
        y = F.embedding_bag(gt.tensor(text), wg, gt.tensor([0, 2, 5]), mode=mode,
                            scale_grad_by_freq=True)  # fmt: skip
        up = rng.standard_normal((3, 3))
        (y * gt.tensor(up)).sum().backward()
        wt = torch.tensor(w, requires_grad=True)
        rows = torch.nn.functional.embedding(torch.tensor(text), wt, scale_grad_by_freq=True)
        parts = [rows[0:2], rows[2:5], rows[5:]]
        bags = torch.stack([p.sum(0) if mode == "sum" else p.mean(0) for p in parts])
        (bags * torch.tensor(up)).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), bags.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(wg.grad.numpy(), wt.grad.numpy(), rtol=1e-12)
    # max: the winning element's gradient over its index's count
    wg = gt.tensor(w, requires_grad=True)
    y = F.embedding_bag(gt.tensor(text), wg, gt.tensor([0, 5]), mode="max",
                        scale_grad_by_freq=True)  # fmt: skip
    y.sum().backward()
    out, rows = kernels.embedding_bag_forward(w, text, np.array([0, 5]), np.array([5, 8]), "max")
    counts = np.bincount(text, minlength=6)
    want = np.zeros_like(w)
    for b in range(2):
        for d in range(3):
            want[rows[b, d], d] += 1.0 / counts[rows[b, d]]
    np.testing.assert_allclose(wg.grad.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_non_contiguous_table_matches_torch(dtype, mode):
    rng = np.random.default_rng(5)
    big = rng.standard_normal((8, 20)).astype(dtype)
    text = rng.integers(0, 10, 16)
    offsets = np.array([0, 5, 11])
    up = rng.standard_normal((3, 8)).astype(dtype)
    results = []
    for lib in (gt, torch):
        base = lib.tensor(big, requires_grad=True)
        w = base.t()[::2]  # (10, 8), strided
        fn = torch.nn.functional.embedding_bag if lib is torch else F.embedding_bag
        y = fn(lib.tensor(text), w, lib.tensor(offsets), mode=mode)
        (y * lib.tensor(up)).sum().backward()
        results.append((y.detach().numpy(), base.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_zero_size(mode):
    w = gt.randn(5, 3, requires_grad=True)
    # (no bags at all, offsets [], crashes torch 2.13's CPU kernel: checked without it)
    none = F.embedding_bag(gt.tensor([1, 2]), w, gt.tensor([], dtype=gt.int64), mode=mode)
    assert tuple(none.shape) == (0, 3)
    for text, offsets in [([], [0]), ([], [0, 0, 0])]:
        t = gt.tensor(text, dtype=gt.int64)
        y = F.embedding_bag(t, w, gt.tensor(offsets, dtype=gt.int64), mode=mode)
        ref = torch.nn.functional.embedding_bag(
            torch.tensor(text, dtype=torch.int64),
            torch.tensor(w.detach().numpy()),
            torch.tensor(offsets, dtype=torch.int64),
            mode=mode,
        )
        assert tuple(y.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(y.detach().numpy(), ref.numpy())
    empty = gt.randn(5, 0, requires_grad=True)  # rows of width 0
    y = F.embedding_bag(gt.tensor([1, 2, 3]), empty, gt.tensor([0, 1]), mode=mode)
    assert tuple(y.shape) == (2, 0)
    y.sum().backward()
    assert tuple(empty.grad.shape) == (5, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_threaded_forward_matches_one_thread_and_torch(dtype, mode):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((2000, 64)).astype(dtype)
    text = rng.integers(0, 2000, 6000)
    offsets = np.sort(rng.choice(6000, 99, replace=False))
    offsets[0] = 0
    before = _kernels.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            _kernels.set_num_threads(threads)
            outs.append(F.embedding_bag(gt.tensor(text), gt.tensor(w), gt.tensor(offsets),
                                        mode=mode).numpy())  # fmt: skip
    finally:
        _kernels.set_num_threads(before)
    np.testing.assert_array_equal(outs[0], outs[1])
    want = torch.nn.functional.embedding_bag(
        torch.tensor(text), torch.tensor(w), torch.tensor(offsets), mode=mode
    )
    np.testing.assert_allclose(outs[0], want.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)  # fmt: skip
    _compare(w, text, offsets, mode=mode)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck_and_double_backward(mode):
    rng = np.random.default_rng(8)
    w = gt.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    text, offsets = gt.tensor([0, 2, 2, 5, 1, 3, 4]), gt.tensor([0, 3, 3, 5])
    psw = gt.tensor(rng.uniform(0.5, 1.5, 7), requires_grad=True)

    def fn(w, p):
        return F.embedding_bag(text, w, offsets, mode=mode, padding_idx=1,
                               per_sample_weights=p if mode == "sum" else None)  # fmt: skip

    assert ag.gradcheck(fn, (w, psw if mode == "sum" else psw.detach()))
    assert ag.gradgradcheck(fn, (w, psw if mode == "sum" else psw.detach()))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_create_graph_matches_first_order(mode):
    rng = np.random.default_rng(9)
    w = gt.tensor(rng.standard_normal((8, 4)), requires_grad=True)
    text, offsets = gt.tensor([0, 7, 2, 7, 1, 3, 4, 5, 5]), gt.tensor([0, 3, 3, 6])
    up = gt.tensor(rng.standard_normal((4, 4)), requires_grad=True)  # the gradient's input
    got = []
    for create_graph in (False, True):
        y = F.embedding_bag(text, w, offsets, mode=mode, padding_idx=7, scale_grad_by_freq=True)
        (g,) = ag.grad((y * up).sum(), w, create_graph=create_graph)
        assert g.requires_grad == create_graph
        got.append(g.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12, atol=1e-15)


def test_kernels_check_their_arguments():
    w = np.ones((4, 2), np.float32)
    idx, st, en = np.array([0, 1, 3]), np.array([0, 1]), np.array([1, 3])
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        kernels.embedding_bag_forward(w, np.array([0, 4, 1]), st, en, "sum")
    with pytest.raises(IndexError, match="index -1"):
        kernels.embedding_bag_backward(w[:2], np.array([0, -1, 1]), st, en, 4, "sum")
    with pytest.raises(ValueError, match="outside the 3 indices"):
        kernels.embedding_bag_forward(w, idx, st, np.array([1, 4]), "sum")
    with pytest.raises(ValueError, match="outside the 3 indices"):
        kernels.embedding_bag_forward(w, idx, np.array([-1, 1]), en, "sum")
    with pytest.raises(ValueError, match="one entry per bag"):
        kernels.embedding_bag_forward(w, idx, st, en[:1], "sum")
    with pytest.raises(ValueError, match="mode"):
        kernels.embedding_bag_forward(w, idx, st, en, "min")
    with pytest.raises(TypeError, match="int64"):
        kernels.embedding_bag_forward(w, idx.astype(np.int32), st, en, "sum")
    with pytest.raises(TypeError, match="float32 or float64|dtype"):
        kernels.embedding_bag_forward(w.astype(np.int64), idx, st, en, "sum")
    with pytest.raises(ValueError, match="2-d"):
        kernels.embedding_bag_forward(w.reshape(-1), idx, st, en, "sum")
    with pytest.raises(TypeError, match="table's dtype"):
        kernels.embedding_bag_forward(w, idx, st, en, "sum", np.ones(3))
    with pytest.raises(ValueError, match="one entry per index"):
        kernels.embedding_bag_forward(w, idx, st, en, "sum", np.ones(2, np.float32))
    with pytest.raises(ValueError, match="only supported with mode='sum'"):
        kernels.embedding_bag_forward(w, idx, st, en, "mean", np.ones(3, np.float32))
    with pytest.raises(ValueError, match="one row per bag"):
        kernels.embedding_bag_backward(w, idx, st, en, 4, "sum")
    with pytest.raises(ValueError, match="needs max_rows"):
        kernels.embedding_bag_backward(w[:2], idx, st, en, 4, "max")
    with pytest.raises(IndexError, match="max_rows"):
        kernels.embedding_bag_backward(w[:2], idx, st, en, 4, "max",
                                       max_rows=np.full((2, 2), 4))  # fmt: skip
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        kernels.embedding_bag_per_sample_weights_backward(w[:2, :1], w, idx, st, en)
