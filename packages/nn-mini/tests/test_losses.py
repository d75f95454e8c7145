"""Losses and nn.functional against torch: values and gradients, every option."""

from __future__ import annotations

import itertools

import gradstack_autograd as ag
import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(array, requires_grad=True):
    return (
        gt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def check(fg, ft, inputs, rtol=1e-10, atol=1e-12):
    """Value and input gradients of ``fg`` (gradstack) and ``ft`` (torch) agree."""
    gs = [pair(a) for a in inputs]
    outg = fg(*[g for g, _ in gs])
    outt = ft(*[t for _, t in gs])
    np.testing.assert_allclose(outg.detach().numpy(), outt.detach().numpy(), rtol=rtol, atol=atol)
    upstream = np.random.default_rng(3).standard_normal(tuple(outt.shape))
    outg.backward(gt.tensor(upstream, dtype=outg.dtype))
    outt.backward(torch.tensor(upstream, dtype=outt.dtype))
    for g, t in gs:
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4))
Y = RNG.standard_normal((6, 4))
TARGET = np.array([0, 3, 1, 1, 2, 0])
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_and_l1(reduction):
    check(
        lambda a, b: F.mse_loss(a, b, reduction=reduction),
        lambda a, b: TF.mse_loss(a, b, reduction=reduction),
        [X, Y],
    )
    check(
        lambda a, b: F.l1_loss(a, b, reduction=reduction),
        lambda a, b: TF.l1_loss(a, b, reduction=reduction),
        [X, Y],
    )
    check(
        lambda a, b: nn.MSELoss(reduction=reduction)(a, b),
        lambda a, b: torch.nn.MSELoss(reduction=reduction)(a, b),
        [X, Y],
    )


def test_mse_broadcast_warns_and_legacy_args():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(gt.zeros(3, 2), gt.zeros(2))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        out = F.mse_loss(gt.ones(2), gt.zeros(2), size_average=False)
    assert out.item() == 2.0
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(gt.ones(2), gt.zeros(2), reduction="avg")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_nll_and_cross_entropy(reduction, weighted, ignore):
    w = np.array([0.5, 2.0, 1.0, 3.0])
    target = TARGET.copy()
    if ignore:
        target[[1, 4]] = -100
    kw = {"reduction": reduction}
    gkw, tkw = dict(kw), dict(kw)
    if weighted:
        gkw["weight"], tkw["weight"] = gt.tensor(w), torch.tensor(w)
    check(
        lambda a: F.cross_entropy(a, gt.tensor(target), **gkw),
        lambda a: TF.cross_entropy(a, torch.tensor(target), **tkw),
        [X],
    )
    check(
        lambda a: F.nll_loss(a.log_softmax(1), gt.tensor(target), **gkw),
        lambda a: TF.nll_loss(a.log_softmax(1), torch.tensor(target), **tkw),
        [X],
    )
    check(
        lambda a: nn.CrossEntropyLoss(**gkw)(a, gt.tensor(target)),
        lambda a: torch.nn.CrossEntropyLoss(**tkw)(a, torch.tensor(target)),
        [X],
    )


@pytest.mark.parametrize(
    "reduction,weighted,ignore", list(itertools.product(REDUCTIONS, [False, True], [False, True]))
)
def test_label_smoothing(reduction, weighted, ignore):
    w = np.array([0.5, 2.0, 1.0, 3.0])
    target = TARGET.copy()
    if ignore:
        target[2] = 7
    gkw = {"reduction": reduction, "label_smoothing": 0.2, "ignore_index": 7}
    tkw = dict(gkw)
    if weighted:
        gkw["weight"], tkw["weight"] = gt.tensor(w), torch.tensor(w)
    check(
        lambda a: F.cross_entropy(a, gt.tensor(target), **gkw),
        lambda a: TF.cross_entropy(a, torch.tensor(target), **tkw),
        [X],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_probability_targets(reduction, smoothing):
    probs = np.abs(Y) / np.abs(Y).sum(1, keepdims=True)
    w = np.array([0.5, 2.0, 1.0, 3.0])
    check(
        lambda a, p: F.cross_entropy(
            a, p, weight=gt.tensor(w), reduction=reduction, label_smoothing=smoothing
        ),
        lambda a, p: TF.cross_entropy(
            a, p, weight=torch.tensor(w), reduction=reduction, label_smoothing=smoothing
        ),
        [X, probs],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_k_dimensional_and_unbatched(reduction):
    x = RNG.standard_normal((2, 4, 3, 5))
    target = RNG.integers(0, 4, (2, 3, 5))
    check(
        lambda a: F.cross_entropy(a, gt.tensor(target), reduction=reduction),
        lambda a: TF.cross_entropy(a, torch.tensor(target), reduction=reduction),
        [x],
    )
    check(
        lambda a: F.cross_entropy(a, gt.tensor(2), reduction=reduction),
        lambda a: TF.cross_entropy(a, torch.tensor(2), reduction=reduction),
        [X[0]],
    )


def test_float32_cross_entropy_and_second_order():
    x32 = X.astype(np.float32)
    check(
        lambda a: F.cross_entropy(a, gt.tensor(TARGET)),
        lambda a: TF.cross_entropy(a, torch.tensor(TARGET)),
        [x32],
        rtol=1e-5,
        atol=1e-6,
    )
    # the losses are made of differentiable ops: second derivatives agree with torch
    xg, xt = pair(X)
    (gg,) = ag.grad(F.cross_entropy(xg, gt.tensor(TARGET)), [xg], create_graph=True)
    (gtt,) = torch.autograd.grad(
        TF.cross_entropy(xt, torch.tensor(TARGET)), [xt], create_graph=True
    )
    (hg,) = ag.grad((gg**2).sum(), [xg])
    (ht,) = torch.autograd.grad((gtt**2).sum(), [xt])
    np.testing.assert_allclose(hg.numpy(), ht.numpy(), rtol=1e-9, atol=1e-12)


def test_loss_errors():
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(gt.tensor(X), gt.tensor([0, 1, 2, 3, 4, 0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        F.nll_loss(gt.tensor(X), gt.tensor(TARGET.astype(np.float64)))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(6\) to match target"):
        F.cross_entropy(gt.tensor(X), gt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(gt.tensor(X), gt.tensor(TARGET), weight=gt.ones(3, dtype=gt.float64))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(gt.tensor(X), gt.tensor(TARGET), label_smoothing=1.5)


def test_activations_match_torch():
    for gfn, tfn in [
        (F.relu, TF.relu),
        (F.sigmoid, torch.sigmoid),
        (F.tanh, torch.tanh),
        (lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2)),
        (lambda a: F.softmax(a, dim=1), lambda a: TF.softmax(a, dim=1)),
        (lambda a: F.log_softmax(a, dim=0), lambda a: TF.log_softmax(a, dim=0)),
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.Sigmoid(), torch.nn.Sigmoid()),
        (nn.Tanh(), torch.nn.Tanh()),
        (nn.Softmax(1), torch.nn.Softmax(1)),
        (nn.LogSoftmax(1), torch.nn.LogSoftmax(1)),
        (nn.LeakyReLU(0.1), torch.nn.LeakyReLU(0.1)),
        (nn.Flatten(0), torch.nn.Flatten(0)),
    ]:
        check(gfn, tfn, [X])
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(gt.tensor(X))
    check(
        lambda a, w, b: F.linear(a, w, b), lambda a, w, b: TF.linear(a, w, b), [X, Y[:3], Y[0, :3]]
    )


def test_dropout():
    gt.manual_seed(0)
    x = gt.ones(1000, 10)
    out = F.dropout(x, 0.3)
    kept = out.numpy() != 0
    assert 0.65 < kept.mean() < 0.75
    np.testing.assert_allclose(out.numpy()[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
