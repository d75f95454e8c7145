"""The first-order backward of softmax, log_softmax and layer_norm by tensor-core's row
kernels (``kernels.softmax_backward``, ``kernels.layer_norm_backward``), against torch 2.13
and against the formula in gradstack ops (which ``create_graph=True`` runs): every dim,
float32 and float64, non-contiguous gradients and inputs, empty tensors, gradcheck, and
the loss of ``F.cross_entropy`` (log_softmax then nll_loss) on a (1024, 65) batch."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd.derivatives import nn as nn_rows
from gradstack_autograd.derivatives import reductions as reduction_rows

torch = pytest.importorskip("torch")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _grads(fn, arrays, grad, create_graph=False):
    ts = [gt.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    gs = ag.grad(out, ts, gt.tensor(grad), create_graph=create_graph)
    return out.detach().numpy(), [g.detach().numpy() for g in gs]


def _torch_grads(fn, arrays, grad):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.backward(torch.tensor(grad))
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(4, 9), (2, 3, 5), (1024, 65), (0, 3), (6,)], ids=str)
def test_softmax_gradients_match_torch_and_the_formula(dtype, op, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    for dim in range(-len(shape), len(shape)):
        out, (gx,) = _grads(lambda t, dim=dim: getattr(t, op)(dim), [x], g)
        tout, (tgx,) = _torch_grads(lambda t, dim=dim: getattr(torch, op)(t, dim), [x], g)
        _, (fgx,) = _grads(lambda t, dim=dim: getattr(t, op)(dim), [x], g, create_graph=True)
        tol = dict(TOL[dtype])
        if dtype == np.float32:  # sums along dim: double here, float32 in torch
            tol["atol"] = 1e-5 * max(1, shape[dim])
        np.testing.assert_allclose(out, tout, **tol)
        np.testing.assert_allclose(gx, tgx, **tol)
        np.testing.assert_allclose(gx, fgx, **tol)


def test_the_fused_path_runs(monkeypatch):
    calls = []
    real = reduction_rows._softmax_backward_kernel
    monkeypatch.setattr(
        reduction_rows,
        "_softmax_backward_kernel",
        lambda *a: (calls.append(a[2:]), real(*a))[1],
    )
    x = gt.tensor(np.ones((2, 3)), requires_grad=True)
    ag.grad(x.log_softmax(0).sum(), x)
    ag.grad(x.softmax(1).sum(), x, create_graph=True)  # the formula: no kernel
    assert calls == [(0, True)]


def test_softmax_non_contiguous_gradient_and_input():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((5, 6))
    x = gt.tensor(base, requires_grad=True)
    xt = x.t()  # a non-contiguous input
    y = xt.softmax(1)
    g = gt.tensor(rng.standard_normal((5, 6))).t()  # a non-contiguous gradient
    (gx,) = ag.grad(y, x, g)
    tx = torch.tensor(base, requires_grad=True)
    torch.softmax(tx.t(), 1).backward(torch.tensor(g.numpy()))
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "normalized"), [((4, 32), (32,)), ((2, 3, 4, 5), (4, 5)), ((1024, 128), (128,))]
)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_gradients_match_torch_and_the_formula(dtype, shape, normalized, affine):
    rng = np.random.default_rng(2)
    arrays = [(rng.standard_normal(shape) * 2 + 3).astype(dtype)]
    if affine:
        arrays += [rng.standard_normal(normalized).astype(dtype) for _ in range(2)]
    g = rng.standard_normal(shape).astype(dtype)

    def gs(x, *wb):
        return gt.OPS["layer_norm"](x, normalized, *(wb or (None, None)), 1e-5)

    def ts(x, *wb):
        return torch.nn.functional.layer_norm(x, normalized, *(wb or (None, None)), 1e-5)

    out, grads = _grads(gs, arrays, g)
    tout, tgrads = _torch_grads(ts, arrays, g)
    _, fgrads = _grads(gs, arrays, g, create_graph=True)
    tol = dict(TOL[dtype])
    if dtype == np.float32:  # the weight and bias sum over the rows
        tol = dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, tout, **tol)
    for a, b, c in zip(grads, tgrads, fgrads, strict=True):
        np.testing.assert_allclose(a, b, **tol)
        np.testing.assert_allclose(a, c, **tol)


def test_layer_norm_only_the_wanted_gradients(monkeypatch):
    calls = []
    real = nn_rows._layer_norm_backward_kernel
    monkeypatch.setattr(
        nn_rows,
        "_layer_norm_backward_kernel",
        lambda *a, **k: (calls.append(k), real(*a, **k))[1],
    )
    x = gt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    w = gt.tensor(np.ones(3))
    b = gt.tensor(np.zeros(3), requires_grad=True)
    (gb,) = ag.grad(gt.OPS["layer_norm"](x.detach(), (3,), w, b, 1e-5).sum(), b)
    np.testing.assert_allclose(gb.numpy(), [2.0, 2.0, 2.0])
    assert calls == [dict(input_grad=False, weight_grad=False, bias_grad=True)]


def test_gradcheck_and_gradgradcheck_float64():
    rng = np.random.default_rng(3)
    x = gt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = gt.tensor(rng.standard_normal(4), requires_grad=True)
    b = gt.tensor(rng.standard_normal(4), requires_grad=True)
    assert ag.gradcheck(lambda x, w, b: gt.OPS["layer_norm"](x, (4,), w, b, 1e-5), (x, w, b))
    assert ag.gradgradcheck(lambda x, w, b: gt.OPS["layer_norm"](x, (4,), w, b, 1e-5), (x, w, b))
    for dim in (0, 1):
        assert ag.gradcheck(lambda x, dim=dim: x.softmax(dim), (x,))
        assert ag.gradcheck(lambda x, dim=dim: x.log_softmax(dim), (x,))
        assert ag.gradgradcheck(lambda x, dim=dim: x.log_softmax(dim), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_batch_matches_torch(dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1024, 65)).astype(dtype)
    target = rng.integers(0, 65, size=1024)
    target[::7] = -100
    weight = rng.uniform(0.5, 2, 65).astype(dtype)
    for w in (None, weight):
        for reduction in ("mean", "sum", "none"):
            xt = gt.tensor(x, requires_grad=True)
            loss = gt.OPS["nll_loss"](
                xt.log_softmax(1),
                gt.tensor(target),
                None if w is None else gt.tensor(w),
                reduction,
                -100,
            )
            g = np.ones(loss.shape, dtype)
            (gx,) = ag.grad(loss, xt, gt.tensor(g))
            tx = torch.tensor(x, requires_grad=True)
            tloss = torch.nn.functional.cross_entropy(
                tx,
                torch.tensor(target),
                None if w is None else torch.tensor(w),
                reduction=reduction,
            )
            tloss.backward(torch.tensor(g))
            tol = TOL[dtype] if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(loss.detach().numpy(), tloss.detach().numpy(), **tol)
            np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), **tol)


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 2, 2)], ids=str)
def test_nll_every_target_ignored_gives_zero_gradients_as_torch(shape):
    x = np.random.default_rng(5).standard_normal(shape)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    target = np.full(tshape, -100)
    op = "nll_loss2d" if len(shape) == 4 else "nll_loss"
    xt = gt.tensor(x, requires_grad=True)
    loss = gt.OPS[op](xt, gt.tensor(target), None, "mean", -100)
    (gx,) = ag.grad(loss, xt)
    tx = torch.tensor(x, requires_grad=True)
    tloss = torch.nn.functional.nll_loss(tx, torch.tensor(target))
    tloss.backward()
    assert np.isnan(loss.item()) and np.isnan(tloss.item())
    np.testing.assert_array_equal(gx.numpy(), tx.grad.numpy())
