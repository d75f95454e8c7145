"""ctc_loss and CTCLoss (functional/ctc.py, modules/loss.py) against torch: losses and
gradients (through a log_softmax, and with respect to ``log_probs`` themselves, torch's
formula: Note [torch's CTC gradient]) in float64 and float32, every reduction, padded and
concatenated targets, tensor and list lengths, unbatched input, another blank, repeated
labels, empty targets, infinite losses with and without ``zero_infinity``, repr, errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import assert_same_error
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

_R = np.random.default_rng(35)
T, N, C = 12, 5, 6
X = _R.standard_normal((T, N, C))
TARGETS = np.array([[1, 2, 2, 3], [1, 1, 5, 5], [4, 3, 2, 1], [2, 5, 5, 5], [3, 3, 3, 3]])
IL, TL = [12, 10, 12, 3, 7], [4, 2, 4, 1, 0]
# sample 1 cannot fit: 4 repeated labels need 7 steps, it has 6
IL_INF, TL_INF = [12, 6, 12, 3, 7], [4, 4, 4, 1, 3]

CASES = {
    "none": dict(reduction="none"),
    "mean": dict(reduction="mean"),
    "sum": dict(reduction="sum"),
    "blank_last": dict(blank=5, targets=TARGETS % 5),
    "concatenated": dict(concatenated=True),
    "tensor_lengths": dict(tensor_lengths=True),
    "infinite": dict(reduction="none", lengths=(IL_INF, TL_INF), finite_grad=False),
    "infinite_zeroed": dict(reduction="none", lengths=(IL_INF, TL_INF), zero_infinity=True),
    "infinite_zeroed_mean": dict(reduction="mean", lengths=(IL_INF, TL_INF), zero_infinity=True),
    "unbatched": dict(unbatched=True),
    "zero_input_length": dict(reduction="none", lengths=([12, 0, 12, 3, 7], [4, 0, 4, 1, 0])),
    "full_width_targets": dict(lengths=([12, 12, 12, 12, 12], [4, 4, 4, 4, 4])),
}


def _run(lib, dtype, case, through_softmax):
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    il, tl = case.get("lengths", (IL, TL))
    targets = case.get("targets", TARGETS)
    lp = x.log_softmax(2) if through_softmax else x
    if case.get("concatenated"):
        targets = np.concatenate([t[:n] for t, n in zip(targets, tl)])
    if case.get("unbatched"):
        lp, targets, il, tl = lp[:, 0], targets[0], il[0:1], tl[0:1]
        il, tl = lib.tensor(il[0]), lib.tensor(tl[0])
    if case.get("tensor_lengths"):
        il, tl = lib.tensor(il), lib.tensor(tl)
    loss = lib.nn.functional.ctc_loss(
        lp, lib.tensor(targets), il, tl, blank=case.get("blank", 0),
        reduction=case.get("reduction", "mean"), zero_infinity=case.get("zero_infinity", False),
    )  # fmt: skip
    w = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)), dtype=x.dtype)
    (grad,) = lib.autograd.grad((loss * w).sum(), x)
    return loss.detach().numpy(), grad.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("through_softmax", [True, False], ids=["logits", "log_probs"])
def test_ctc_loss_matches_torch(name, dtype, through_softmax):
    case = CASES[name]
    (a, ga), (b, gb) = (_run(L, dtype, case, through_softmax) for L in (gs, torch))
    tol = 1e-10 if dtype == "float64" else 2e-5
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    if case.get("finite_grad", True):
        np.testing.assert_allclose(ga, gb, rtol=tol, atol=tol)
        assert np.abs(ga).max() > 1e-3
    else:  # an infinite loss: torch's formula, infinities and NaNs where torch has them
        np.testing.assert_allclose(ga, gb, rtol=tol, atol=tol)


@pytest.mark.parametrize("args", [(), (3, "sum", True)], ids=str)
def test_ctc_module_matches_torch(args):
    layers = [L.nn.CTCLoss(*args) for L in (gs, torch)]
    assert repr(layers[0]) == repr(layers[1])
    outs = []
    for L, layer in zip((gs, torch), layers):
        lp = L.tensor(X).log_softmax(2)
        outs.append(layer(lp, L.tensor(TARGETS % 3), L.tensor(IL), L.tensor(TL)).item())
    assert outs[0] == pytest.approx(outs[1], rel=1e-12)


ERRORS = {
    "reduction": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 1, 2), L.tensor([[1]]), [3], [1], reduction="avg"
    ),
    "lengths_size": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 2, 2), L.tensor([[1], [1]]), [3], [1, 1]
    ),
    "target_lengths_size": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 2, 2), L.tensor([[1], [1]]), [3, 3], [1]
    ),
    "blank": lambda L: L.nn.functional.ctc_loss(L.zeros(3, 1, 2), L.tensor([[1]]), [3], [1], 2),
    "negative_input_length": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 1, 2), L.tensor([[1]]), [-1], [1]
    ),
    "negative_target_length": lambda L: L.nn.functional.ctc_loss(
        L.zeros(3, 1, 2), L.tensor([[1]]), [3], [-1]
    ),
    "empty": lambda L: L.nn.functional.ctc_loss(L.zeros(0, 1, 2), L.tensor([[1]]), [0], [1]),
    "target_width": lambda L: L.nn.functional.ctc_loss(L.zeros(3, 1, 2), L.tensor([[1]]), [3], [2]),
    "input_length": lambda L: L.nn.functional.ctc_loss(L.zeros(3, 1, 2), L.tensor([[1]]), [4], [1]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ctc_errors_match_torch(name):
    assert_same_error(ERRORS[name])


def test_ctc_refuses_a_label_out_of_range():
    """(torch reads past the classes: an arbitrary loss)"""
    with pytest.raises(RuntimeError, match="target label 3 is out of range for 2 classes"):
        gs.nn.functional.ctc_loss(gs.zeros(3, 1, 2), gs.tensor([[3]]), [3], [1])


def test_ctc_second_order_raises_as_torch():
    """torch's CTC gradient cannot be differentiated: neither can gradstack's (no silent
    zeros), the first-order gradient under ``create_graph`` being torch's."""
    results = []
    for L in (gs, torch):
        lp = L.tensor(X[:, :2], requires_grad=True)
        loss = L.nn.functional.ctc_loss(lp.log_softmax(2), L.tensor(TARGETS[:2]), IL[:2], TL[:2])
        (g,) = L.autograd.grad(loss, lp, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward"):
            L.autograd.grad((g * g).sum(), lp)
        results.append(g.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)
