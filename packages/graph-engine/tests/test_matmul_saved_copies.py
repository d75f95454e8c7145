"""matmul saves the copies torch saves, not the operands (Note [matmul saves the copies,
not the operands] in ``derivatives/linalg.py``): the transposed ``q``, ``k.mT`` and ``v``
of an attention are copied for bmm, and the projection they are views of is not kept for
the backward.  Checked by what stays alive, by in-place writes after the forward (which
torch allows on a copied operand and refuses on a saved one) and by the gradients, of
every order, against torch 2.13."""

from __future__ import annotations

import gc
import weakref

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor.extension import data_of

torch = pytest.importorskip("torch")

R = np.random.default_rng(5)


def _grad(lib, outputs, inputs, create_graph=False):
    if lib is torch:
        return torch.autograd.grad(outputs, inputs, create_graph=create_graph)
    return ag.grad(outputs, inputs, create_graph=create_graph)


def _no_grad(lib):
    return torch.no_grad() if lib is torch else ag.no_grad()


def _attention_scores(lib, qkv, heads=2):
    """``q @ k.mT`` and ``softmax(...) @ v`` of views of one projection, as GPT's attention."""
    b, t, c3 = qkv.shape
    c = c3 // 3
    q, k, v = qkv.split(c, dim=2)
    q = q.view(b, t, heads, c // heads).transpose(1, 2)
    k = k.view(b, t, heads, c // heads).transpose(1, 2)
    v = v.view(b, t, heads, c // heads).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)).softmax(-1)
    return att @ v


def _base(t):
    a = data_of(t)
    while a.base is not None:
        a = a.base
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_projection_is_not_kept_for_the_backward(dtype):
    x = gt.tensor(R.standard_normal((2, 5, 4)), dtype=getattr(gt, dtype), requires_grad=True)
    w = gt.tensor(R.standard_normal((4, 12)), dtype=getattr(gt, dtype), requires_grad=True)
    qkv = x @ w
    ref = weakref.ref(_base(qkv))
    out = _attention_scores(gt, qkv)
    del qkv
    gc.collect()
    assert ref() is None  # only copies of q, k.mT and v are saved
    out.sum().backward()
    assert x.grad is not None and w.grad is not None


def _run(lib, arrays, dtype, write_after=False, create_graph=False):
    x, w = (lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays)
    qkv = x @ w
    out = _attention_scores(lib, qkv)
    if write_after:
        with _no_grad(lib):
            qkv.mul_(2)  # only copies of its views were saved
    loss = (out * out).sum()
    gx, gw = _grad(lib, loss, (x, w), create_graph)
    if create_graph:
        ggx, ggw = _grad(lib, (gx * gx).sum() + gw.sum(), (x, w))
        return [t.detach().numpy() for t in (out, gx, gw, ggx, ggw)]
    return [t.detach().numpy() for t in (out, gx, gw)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("write_after", [False, True])
def test_attention_gradients_match_torch(dtype, write_after):
    arrays = (R.standard_normal((2, 5, 4)), R.standard_normal((4, 12)))
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for mine, theirs in zip(_run(gt, arrays, dtype, write_after),
                            _run(torch, arrays, dtype, write_after)):  # fmt: skip
        np.testing.assert_allclose(mine, theirs, **tol)


def test_double_backward_through_the_copies_matches_torch():
    arrays = (R.standard_normal((2, 3, 4)), R.standard_normal((4, 6)))
    for mine, theirs in zip(_run(gt, arrays, "float64", create_graph=True),
                            _run(torch, arrays, "float64", create_graph=True)):  # fmt: skip
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_a_contiguous_operand_is_still_saved_itself_as_torch():
    """``att @ v`` with a contiguous ``v``: bmm saves a view of it, so an in-place write
    after the forward is an error in both libraries."""
    for lib in (gt, torch):
        a = lib.ones(2, 3, 4, requires_grad=True)
        b = lib.ones(2, 4, 5, requires_grad=True)
        bb = b * 1
        out = a @ bb
        with _no_grad(lib):
            bb.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_zero_size_operands():
    results = []
    for lib in (gt, torch):
        a0 = lib.ones(2, 0, 3, requires_grad=True)
        b0 = lib.ones(2, 0, 4, requires_grad=True)
        out = a0.transpose(1, 2) @ b0
        ga, gb = _grad(lib, out.sum(), (a0, b0))
        results.append([t.detach().numpy() for t in (out, ga, gb)])
    for mine, theirs in zip(*results):
        assert mine.shape == theirs.shape
        np.testing.assert_array_equal(mine, theirs)


def test_folding_checked_on_the_strides_agrees_with_numpy():
    # Note [Folding checked on the strides]: the fast check against numpy's no-copy reshape,
    # over transposed, sliced, size-1 and negatively strided batch dims
    from gradstack_autograd.derivatives.linalg import _batch_folds, _reshape_copies

    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for _ in range(400):
        ndim = int(rng.integers(3, 6))
        shape = tuple(int(s) for s in rng.integers(1, 4, ndim))
        x = np.zeros(shape, np.float32)
        x = np.transpose(x, rng.permutation(ndim))
        if rng.random() < 0.3:
            axis = int(rng.integers(0, ndim))
            x = np.flip(x, axis) if rng.random() < 0.5 else np.take(x, [0], axis)
        if rng.random() < 0.3 and x.shape[0] > 1:
            x = x[::2]
        batch = x.shape[:-2]
        folded = (int(np.prod(batch)),) + x.shape[-2:]
        expected = not _reshape_copies(x, folded)
        assert _batch_folds(x) == expected, (x.shape, x.strides)
        seen[expected] += 1
    assert seen[True] > 20 and seen[False] > 20


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_with_size_one_batch_dims_matches_torch(dtype):
    # one batch, one head: the size-1 batch dims the stride check skips
    x = R.standard_normal((1, 5, 6)).astype(dtype)
    outs = []
    for lib in (torch, gt):
        qkv = lib.tensor(x, requires_grad=True)
        out = _attention_scores(lib, qkv, heads=1)
        g = _grad(lib, out.sum(), qkv)[0]
        outs.append((out.detach().numpy(), g.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)
