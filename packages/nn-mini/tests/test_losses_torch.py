"""The losses against torch (functional and modules): values and first-order gradients
for every option (reductions, weights, ignored targets, label smoothing, probability
targets, k-dimensional and unbatched inputs), kl_div to the second order, and errors."""

from __future__ import annotations

import itertools

import gradstack_autograd as ag
import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_first_order_matches_torch,
    assert_program_matches_torch,
)

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(array, requires_grad=True):
    return (
        gt.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4))
Y = RNG.standard_normal((6, 4))
TARGET = np.array([0, 3, 1, 1, 2, 0])
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_and_l1(reduction):
    assert_first_order_matches_torch(
        lambda a, b: F.mse_loss(a, b, reduction=reduction),
        lambda a, b: TF.mse_loss(a, b, reduction=reduction),
        [X, Y],
    )
    assert_first_order_matches_torch(
        lambda a, b: F.l1_loss(a, b, reduction=reduction),
        lambda a, b: TF.l1_loss(a, b, reduction=reduction),
        [X, Y],
    )
    assert_first_order_matches_torch(
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
    assert_first_order_matches_torch(
        lambda a: F.cross_entropy(a, gt.tensor(target), **gkw),
        lambda a: TF.cross_entropy(a, torch.tensor(target), **tkw),
        [X],
    )
    assert_first_order_matches_torch(
        lambda a: F.nll_loss(a.log_softmax(1), gt.tensor(target), **gkw),
        lambda a: TF.nll_loss(a.log_softmax(1), torch.tensor(target), **tkw),
        [X],
    )
    assert_first_order_matches_torch(
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
    assert_first_order_matches_torch(
        lambda a: F.cross_entropy(a, gt.tensor(target), **gkw),
        lambda a: TF.cross_entropy(a, torch.tensor(target), **tkw),
        [X],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_probability_targets(reduction, smoothing):
    probs = np.abs(Y) / np.abs(Y).sum(1, keepdims=True)
    w = np.array([0.5, 2.0, 1.0, 3.0])
    assert_first_order_matches_torch(
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
    assert_first_order_matches_torch(
        lambda a: F.cross_entropy(a, gt.tensor(target), reduction=reduction),
        lambda a: TF.cross_entropy(a, torch.tensor(target), reduction=reduction),
        [x],
    )
    assert_first_order_matches_torch(
        lambda a: F.cross_entropy(a, gt.tensor(2), reduction=reduction),
        lambda a: TF.cross_entropy(a, torch.tensor(2), reduction=reduction),
        [X[0]],
    )


def test_float32_cross_entropy_and_second_order():
    x32 = X.astype(np.float32)
    assert_first_order_matches_torch(
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


# ---------------------------------------------------------------------------------------
# kl_div

_RK = np.random.default_rng(17)
P = _RK.dirichlet(np.ones(5), size=4)
LOGQ = np.log(_RK.dirichlet(np.ones(5), size=4))
P[0, 1] = 0.0  # a zero target: its term is 0

# name -> (fn(L, F, *tensors), arrays)
KL_PROGRAMS = {
    "kl_div_batchmean": (lambda L, F, x: F.kl_div(x, L.tensor(P), reduction="batchmean"), [LOGQ]),
    "kl_div_sum": (lambda L, F, x: F.kl_div(x, L.tensor(P), reduction="sum"), [LOGQ]),
    "kl_div_none_log_target": (
        lambda L, F, x, t: F.kl_div(x, t, reduction="none", log_target=True),
        [LOGQ, np.log(P + 0.1)],
    ),
}


@pytest.mark.parametrize("name", sorted(KL_PROGRAMS))
def test_kl_div_matches_torch(name):
    assert_program_matches_torch(
        *KL_PROGRAMS[name], value=(1e-9, 1e-12), first=(1e-8, 1e-10), second=(1e-8, 1e-10)
    )


def test_kl_div_module_and_mean_warning():
    for lib in (gt, torch):
        KLDivLoss = nn.KLDivLoss if lib is gt else torch.nn.KLDivLoss
        with pytest.warns(UserWarning, match="batchmean"):
            KLDivLoss()(lib.tensor(LOGQ), lib.tensor(P))
    a = nn.KLDivLoss(reduction="batchmean", log_target=True)
    b = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)
    assert repr(a) == repr(b)
    np.testing.assert_allclose(
        a(gt.tensor(LOGQ), gt.tensor(LOGQ[::-1].copy())).item(),
        b(torch.tensor(LOGQ), torch.tensor(LOGQ[::-1].copy())).item(),
        rtol=1e-12,
    )
