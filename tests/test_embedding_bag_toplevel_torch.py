"""torch.embedding_bag (aten's form, the facade's ``_nn_functions.py``) against torch 2.13:
the bags and torch's by-products (offset2bag, bag_size, max_indices) for every mode,
padding_idx, per-sample weights, include_last_offset, empty bags and inputs, index dtypes;
the gradients of the table against torch's; torch's errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

W = np.random.default_rng(5).standard_normal((6, 3))
IDX = np.array([0, 1, 5, 2, 3, 3, 4])


def _call(L, *, mode, dtype="float32", offsets=(0, 3, 3, 5), padding_idx=None, psw=False,
          last=False, itype="int64", otype="int64", weight=None, idx=IDX):  # fmt: skip
    w = L.tensor(W if weight is None else weight, dtype=getattr(L, dtype))
    p = L.linspace(0.5, 2.0, len(idx), dtype=getattr(L, dtype)) if psw else None
    return L.embedding_bag(
        w,
        L.tensor(idx, dtype=getattr(L, itype)),
        L.tensor(list(offsets), dtype=getattr(L, otype)),
        False,
        mode,
        False,
        p,
        last,
        padding_idx,
    )


def _same(got, want, exact_first=True):
    assert len(got) == len(want) == 4
    g0, t0 = got[0].detach().numpy(), want[0].detach().numpy()
    if exact_first:
        np.testing.assert_allclose(g0, t0, rtol=1e-6, atol=1e-7)
    for g, t in zip(got[1:], want[1:]):
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(g.numpy(), t.numpy())


CASES = [
    {},
    {"dtype": "float64"},
    {"padding_idx": 3},
    {"padding_idx": -1},
    {"last": True, "offsets": (0, 3, 5, 7)},
    {"itype": "int32", "otype": "int32"},
    {"itype": "int32"},
    {"offsets": (0, 0, 7)},
    {"idx": np.array([], dtype=np.int64), "offsets": (0, 0)},
]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_outputs_and_byproducts_are_torchs(mode, case):
    kwargs = CASES[case]
    _same(_call(gs, mode=mode, **kwargs), _call(torch, mode=mode, **kwargs))


def test_per_sample_weights_and_ties():
    _same(_call(gs, mode=0, psw=True), _call(torch, mode=0, psw=True))
    _same(_call(gs, mode=0, psw=True, padding_idx=2), _call(torch, mode=0, psw=True, padding_idx=2))
    tied = np.array([[1.0, 2.0], [1.0, 3.0], [0.0, 3.0], [1.0, 3.0]])
    got = _call(gs, mode=2, weight=tied, idx=np.array([0, 1, 2, 3]), offsets=(0, 2))
    want = _call(torch, mode=2, weight=tied, idx=np.array([0, 1, 2, 3]), offsets=(0, 2))
    _same(got, want)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_table_gradients_are_torchs(mode):
    grads = []
    for L in (gs, torch):
        w = L.tensor(W, dtype=L.float64, requires_grad=True)
        out = L.embedding_bag(w, L.tensor(IDX), L.tensor([0, 3, 3, 5]), False, mode)
        assert out[0].requires_grad and not any(o.requires_grad for o in out[1:])
        (out[0] * L.arange(12.0, dtype=L.float64).reshape(4, 3)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    return None


ERRORS = {
    "offsets None": lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 1]), None),
    "mode 3": lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0, 1]), L.tensor([0]), False, 3),
    "mode str": lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0]), L.tensor([0]), False, "sum"),
    "long weight": lambda L: L.embedding_bag(
        L.ones(5, 2, dtype=L.int64), L.tensor([0]), L.tensor([0])
    ),
    "float indices": lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0.0]), L.tensor([0])),
    "2-d offsets": lambda L: L.embedding_bag(L.ones(5, 2), L.tensor([0]), L.tensor([[0]])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    got, want = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert want is not None
    assert got is not None and got[0] is want[0], (got, want)
    if want[0] is not TypeError and name not in ("long weight", "float indices"):
        assert got[1] == want[1]
