"""RNN, LSTM, GRU and their cells (modules/rnn.py) against torch: the same initial
weights after the same seed, parameter names, reprs, outputs, final states and
gradients in float64, inter-layer dropout masks, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.standard_normal((7, 4, 3))
H0 = R.standard_normal((2, 4, 5))
C0 = R.standard_normal((2, 4, 5))

CASES = {
    "rnn": (lambda L: L.nn.RNN(3, 5), X, None),
    "rnn_relu_2_layers_bidirectional": (
        lambda L: L.nn.RNN(3, 5, 2, nonlinearity="relu", bidirectional=True),
        X,
        None,
    ),
    "lstm": (lambda L: L.nn.LSTM(3, 5), X, None),
    "lstm_2_bidirectional_batch_first": (
        lambda L: L.nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True),
        X,
        None,
    ),
    "lstm_initial_state": (lambda L: L.nn.LSTM(3, 5, 2), X, (H0, C0)),
    "lstm_unbatched": (lambda L: L.nn.LSTM(3, 5, 2), X[:, 0], (H0[:, 0], C0[:, 0])),
    "gru": (lambda L: L.nn.GRU(3, 5), X, None),
    "gru_3_layers_no_bias": (lambda L: L.nn.GRU(3, 5, 3, bias=False), X, None),
    "gru_bidirectional_initial_state": (lambda L: L.nn.GRU(3, 5, bidirectional=True), X, H0),
    "rnn_cell": (lambda L: L.nn.RNNCell(3, 5, nonlinearity="relu"), X[0], H0[0]),
    "lstm_cell": (lambda L: L.nn.LSTMCell(3, 5), X[0], (H0[0], C0[0])),
    "gru_cell_no_bias": (lambda L: L.nn.GRUCell(3, 5, bias=False), X[0], None),
    "gru_cell_unbatched": (lambda L: L.nn.GRUCell(3, 5), X[0, 0], H0[0, 0]),
}


def _flat(o):
    return [t for item in o for t in _flat(item)] if isinstance(o, tuple) else [o]


def run(lib, name, train_dropout=False):
    build, x, state = CASES[name]
    lib.manual_seed(0)
    module = build(lib).double()
    xt = lib.tensor(x, requires_grad=True)
    args = [xt]
    if state is not None:
        args.append(
            tuple(lib.tensor(s) for s in state) if isinstance(state, tuple) else lib.tensor(state)
        )
    outs = _flat(module(*args))
    sum((o * o).sum() for o in outs).backward()
    return (
        repr(module),
        [n for n, _ in module.named_parameters()],
        [o.detach().numpy() for o in outs] + [xt.grad.numpy()],
        [p.grad.numpy() for p in module.parameters()],
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ours, theirs = run(gs, name), run(torch, name)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_inter_layer_dropout_draws_torchs_masks():
    outs = []
    for lib in (gs, torch):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(3, 5, num_layers=3, dropout=0.4).double()
        lib.manual_seed(1)
        out, (h, c) = lstm(lib.tensor(X))
        outs.append((repr(lstm), out.detach().numpy(), h.detach().numpy()))
    assert outs[0][0] == outs[1][0] == "LSTM(3, 5, num_layers=3, dropout=0.4)"
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outs[0][2], outs[1][2], rtol=1e-10, atol=1e-12)


def test_all_weights_and_state_dict_keys():
    a, b = gs.nn.GRU(3, 4, 2, bidirectional=True), torch.nn.GRU(3, 4, 2, bidirectional=True)
    assert list(a.state_dict()) == list(b.state_dict())
    assert [[tuple(w.shape) for w in layer] for layer in a.all_weights] == [
        [tuple(w.shape) for w in layer] for layer in b.all_weights
    ]


ERRORS = {
    "input_size": lambda L: L.nn.LSTM(3, 5)(L.ones(2, 1, 4)),
    "rank": lambda L: L.nn.GRU(3, 5)(L.ones(2, 1, 1, 3)),
    "state_shape": lambda L: L.nn.GRU(3, 5)(L.ones(2, 1, 3), L.ones(2, 1, 5)),
    "nonlinearity": lambda L: L.nn.RNN(3, 5, nonlinearity="sigmoid"),
    "dropout": lambda L: L.nn.LSTM(3, 5, dropout=1.5),
    "cell_input_size": lambda L: L.nn.LSTMCell(3, 5)(L.ones(2, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gs, torch):
        with pytest.raises((RuntimeError, ValueError, TypeError)) as info:
            ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]
