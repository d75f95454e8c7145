"""AdaptiveLogSoftmaxWithLoss (modules/adaptive.py) against torch: the initial draws and
repr, ``forward``'s named tuple (batched and not), ``log_prob``, ``predict`` (all in the
shortlist, none, and mixed), first and second-order gradients of the parameters and the
input in float64, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import error_of
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

_R = np.random.default_rng(35)
X = _R.standard_normal((7, 8))
TARGET = [0, 3, 4, 6, 9, 1, 7]
CONFIGS = [
    (8, 10, [4, 7], 4.0, False),
    (8, 10, [2], 2.0, True),
    (8, 12, [1, 5, 9], 1.5, False),
]


def _program(lib, config, dtype):
    lib.manual_seed(0)
    asm = lib.nn.AdaptiveLogSoftmaxWithLoss(*config)
    if dtype == "float64":
        asm = asm.double()
    log = [repr(asm), [(k, v.detach().numpy().copy()) for k, v in asm.state_dict().items()]]
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    n = config[1]
    target = lib.tensor([t % n for t in TARGET])
    out = asm(x, target)
    log.append((type(out).__name__, out._fields, out.output.detach().numpy(), out.loss.item()))
    params = [x] + list(asm.parameters())
    grads = lib.autograd.grad(out.loss, params, create_graph=dtype == "float64")
    log.append([g.detach().numpy() for g in grads])
    if dtype == "float64":
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), params, allow_unused=True)
        log.append([None if g is None else g.numpy() for g in second])
    single = asm(x[2], target[2])
    log.append((tuple(single.output.shape), single.output.item(), single.loss.item()))
    log.append(asm.log_prob(x).detach().numpy())
    with lib.no_grad():
        log.append(asm.predict(x).tolist())
        log.append(asm.predict(x * 100).tolist())
        head = asm.head.weight
        head[asm.shortlist_size :] = 50.0  # every row's best is a cluster
        log.append(asm.predict(x.abs()).tolist())
        head[: asm.shortlist_size] = 500.0  # every row's best is in the shortlist
        log.append(asm.predict(x.abs()).tolist())
    return log


def _assert_same(a, b, tol):
    if isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    elif isinstance(a, (list, tuple)) and not isinstance(a, str):
        assert len(a) == len(b)
        for p, q in zip(a, b):
            _assert_same(p, q, tol)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=tol, abs=tol)
    else:
        assert a == b


@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_adaptive_log_softmax_matches_torch(config, dtype):
    ours, theirs = _program(gs, config, dtype), _program(torch, config, dtype)
    _assert_same(ours, theirs, 1e-10 if dtype == "float64" else 1e-5)
    np.testing.assert_array_equal(ours[1][0][1], theirs[1][0][1])  # the draws, bit for bit


def _errors(lib):
    nn = lib.nn
    asm = lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7])  # noqa: E731
    return [
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [7, 4]),
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 10]),
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 4]),
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [0, 4]),
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5]),
        lambda: asm()(lib.ones(3, 8), lib.tensor([0, 1])),
        lambda: asm()(lib.ones(3, 2, 8), lib.tensor([0, 1, 2])),
        lambda: asm()(lib.ones(3, 8), lib.tensor(1)),
        lambda: asm()(lib.ones(3, 8), lib.zeros(3, 1, dtype=lib.int64)),
        lambda: asm()(lib.ones(3, 8), lib.tensor([0, 10, 2])),
        lambda: asm()(lib.ones(3, 8), lib.tensor([-1, 3, 2])),
    ]


def test_adaptive_log_softmax_errors_match_torch():
    ours = [error_of(f) for f in _errors(gs)]
    theirs = [error_of(f) for f in _errors(torch)]
    assert ours == theirs
    assert all(e is not None for e in ours)
