"""``utils.rnn`` (packed and padded sequences) and the recurrent layers on packed input,
against torch 2.13: values, lengths, batch sizes and permutations, float64 gradients,
initial states in the batch's order, inter-layer dropout on the packed data, errors."""

from __future__ import annotations

import gradstack_nn.utils.rnn as grnn
import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")
trnn = pytest.importorskip("torch.nn.utils.rnn")

R = np.random.default_rng(0)
X = R.standard_normal((5, 3, 3))
SEQS = [R.standard_normal((n, 2)) for n in (3, 1, 2)]

LAYERS = {
    "LSTM bidirectional 2 layers": ("LSTM", dict(num_layers=2, bidirectional=True)),
    "GRU 2 layers": ("GRU", dict(num_layers=2)),
    "RNN bidirectional": ("RNN", dict(bidirectional=True)),
    "RNN relu": ("RNN", dict(nonlinearity="relu")),
    "LSTM dropout": ("LSTM", dict(num_layers=2, dropout=0.3)),
    "GRU batch_first": ("GRU", dict(batch_first=True)),
}


def _layer_run(lib, rnn_mod, kind, kwargs, lengths, sorted_input, with_state):
    lib.manual_seed(0)
    m = getattr(lib.nn, kind)(3, 4, **kwargs).double()
    x = lib.tensor(X.transpose(1, 0, 2) if kwargs.get("batch_first") else X, requires_grad=True)
    packed = rnn_mod.pack_padded_sequence(
        x, lengths, batch_first=kwargs.get("batch_first", False), enforce_sorted=sorted_input
    )
    hx = None
    if with_state:
        n = m.num_layers * (2 if m.bidirectional else 1)
        h0 = lib.tensor(np.linspace(-0.5, 0.5, n * 12).reshape(n, 3, 4))
        hx = (h0, h0 * 2) if kind == "LSTM" else h0
    out, state = m(packed, hx)
    padded, lens = rnn_mod.pad_packed_sequence(out, batch_first=True)
    hn = state[0] if kind == "LSTM" else state
    ((padded**2).sum() + (hn * 1.5).sum()).backward()
    return [padded.detach().numpy(), lens.numpy(), hn.detach().numpy(), x.grad.numpy(),
            m.weight_hh_l0.grad.numpy(), out.batch_sizes.numpy()]  # fmt: skip


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("sorted_input, with_state", [(False, True), (True, False)])
def test_recurrent_layers_on_packed_input_match_torch(name, sorted_input, with_state):
    kind, kwargs = LAYERS[name]
    lengths = [5, 4, 2] if sorted_input else [5, 2, 4]
    ours = _layer_run(gs, grnn, kind, kwargs, lengths, sorted_input, with_state)
    theirs = _layer_run(torch, trnn, kind, kwargs, lengths, sorted_input, with_state)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


FUNCTIONS = {
    "pad_sequence batch_first": lambda m, L: m.pad_sequence(
        [L.tensor(s) for s in SEQS], batch_first=True, padding_value=-1.0
    ),
    "pad_sequence left": lambda m, L: m.pad_sequence(
        [L.tensor(s) for s in SEQS], padding_side="left"
    ),
    "pack_sequence data": lambda m, L: (
        m.pack_sequence([L.tensor(s) for s in SEQS], enforce_sorted=False).data
    ),
    "unpack_sequence": lambda m, L: m.unpack_sequence(
        m.pack_sequence([L.tensor(s) for s in SEQS], enforce_sorted=False)
    )[1],
    "unpad_sequence": lambda m, L: m.unpad_sequence(
        m.pad_sequence([L.tensor(s) for s in SEQS]), L.tensor([3, 1, 2])
    )[2],
    "pad_packed total_length": lambda m, L: m.pad_packed_sequence(
        m.pack_sequence([L.tensor(s) for s in SEQS], enforce_sorted=False), total_length=5
    )[0],
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_sequence_functions_match_torch(name):
    ours, theirs = FUNCTIONS[name](grnn, gs), FUNCTIONS[name](trnn, torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_packing_records_the_permutations_and_passes_gradients():
    lengths = [2, 5, 4]
    for lib, mod in ((gs, grnn), (torch, trnn)):
        x = lib.tensor(X, requires_grad=True)
        p = mod.pack_padded_sequence(x, lengths, enforce_sorted=False)
        (
            p.data * lib.tensor(np.arange(p.data.numel(), dtype=float).reshape(tuple(p.data.shape)))
        ).sum().backward()
        if lib is gs:
            ours = (
                p.batch_sizes.tolist(),
                p.sorted_indices.tolist(),
                p.unsorted_indices.tolist(),
                x.grad.numpy(),
            )
        else:
            theirs = (
                p.batch_sizes.tolist(),
                p.sorted_indices.tolist(),
                p.unsorted_indices.tolist(),
                x.grad.numpy(),
            )
    assert ours[:3] == theirs[:3]
    np.testing.assert_array_equal(ours[3], theirs[3])


ERRORS = {
    "unsorted lengths": lambda m, L: m.pack_padded_sequence(L.tensor(X), [5, 2, 4]),
    "zero length": lambda m, L: m.pack_padded_sequence(L.tensor(X), [5, 2, 0]),
    "too few lengths": lambda m, L: m.pack_padded_sequence(L.tensor(X), [5, 2]),
    "total_length too short": lambda m, L: m.pad_packed_sequence(
        m.pack_padded_sequence(L.tensor(X), [5, 4, 2]), total_length=3
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    errors = []
    for mod, lib in ((grnn, gs), (trnn, torch)):
        with pytest.raises((RuntimeError, ValueError)) as info:
            ERRORS[name](mod, lib)
        errors.append(info.type)
    assert errors[0] is errors[1]
