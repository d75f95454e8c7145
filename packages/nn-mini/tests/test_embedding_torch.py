"""Embeddings (functional/embeddings.py, modules/sparse.py) against torch:
``embedding_bag`` in every mode (offsets, 2-d bags, per-sample weights, padding,
``max_norm``, ``scale_grad_by_freq``) to the second order in float64, ``EmbeddingBag``'s
initial weights, outputs and gradients, ``from_pretrained``, and errors.  (``embedding``
and ``one_hot`` are compared node by node in test_functional_nn_torch.py, ``Embedding``
in test_layers_torch.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import assert_program_matches_torch, assert_same_error
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

_R = np.random.default_rng(14)
TABLE = _R.standard_normal((10, 4))
PSW = _R.uniform(0.5, 1.5, 7)

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "embedding_bag_mean": (
        lambda L, F, w: F.embedding_bag(L.tensor([1, 2, 4, 5, 4, 3, 2]), w, L.tensor([0, 2, 2, 5])),
        [TABLE],
    ),  # fmt: skip
    "embedding_bag_sum_weights": (
        lambda L, F, w, p: F.embedding_bag(
            L.tensor([1, 2, 4, 5, 4, 3, 2]),
            w,
            L.tensor([0, 3]),
            mode="sum",
            per_sample_weights=p,
        ),
        [TABLE, PSW],
    ),  # fmt: skip
    "embedding_bag_max_padding": (
        lambda L, F, w: F.embedding_bag(
            L.tensor([1, 2, 4, 5, 4, 3, 2]),
            w,
            L.tensor([0, 1, 3, 5]),
            mode="max",
            padding_idx=1,
        ),
        [TABLE],
    ),  # fmt: skip
    "embedding_bag_2d_padding_mean": (
        lambda L, F, w: F.embedding_bag(
            L.tensor([[1, 2, 2], [4, 4, 9], [2, 2, 2]]), w, padding_idx=2
        ),
        [TABLE],
    ),
    "embedding_bag_last_offset": (
        lambda L, F, w: F.embedding_bag(
            L.tensor([1, 2, 4, 5, 4, 3, 2]),
            w,
            L.tensor([0, 3, 3, 6]),
            mode="sum",
            include_last_offset=True,
        ),
        [TABLE],
    ),  # fmt: skip
    # (repeats of the largest index only: Note [torch's embedding_bag frequencies])
    "embedding_bag_scale_grad_by_freq": (
        lambda L, F, w: F.embedding_bag(
            L.tensor([1, 2, 4, 5, 5, 3, 5]),
            w,
            L.tensor([0, 2, 5]),
            mode="mean",
            scale_grad_by_freq=True,
        ),
        [TABLE],
    ),  # fmt: skip
}

# torch has no double backward for per_sample_weights ("derivative for
# aten::_embedding_bag_per_sample_weights_backward is not implemented"); gradstack's is
# checked numerically in test_embedding_bag_second_order_numerically
_FIRST_ORDER_ONLY = {"embedding_bag_sum_weights"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    order = 1 if name in _FIRST_ORDER_ONLY else 2
    assert_program_matches_torch(*PROGRAMS[name], order=order, second=(1e-8, 1e-9))


BAGS = [
    ((10, 3), {}),
    ((10, 3), dict(mode="sum", padding_idx=2)),
    ((10, 3), dict(mode="max", max_norm=1.0, padding_idx=-1)),
    ((10, 3), dict(norm_type=1.0, scale_grad_by_freq=True, include_last_offset=True)),
]


@pytest.mark.parametrize("args, kwargs", BAGS, ids=[str(k) for _, k in BAGS])
def test_embedding_bag_module_matches_torch(args, kwargs):
    inp, offsets = [1, 2, 4, 5, 9, 3, 9, 9], [0, 2, 2, 5]
    results = []
    for lib in (gs, torch):
        lib.manual_seed(3)
        bag = lib.nn.EmbeddingBag(*args, **kwargs)
        init = bag.weight.detach().numpy().copy()
        bag = bag.double()
        y = bag(lib.tensor(inp), lib.tensor(offsets))
        (y * lib.tensor(np.arange(y.numel(), dtype=float).reshape(tuple(y.shape)))).sum().backward()
        results.append(
            (repr(bag), list(bag.state_dict()), init, bag.weight.detach().numpy(),
             y.detach().numpy(), bag.weight.grad.numpy())
        )  # fmt: skip
    (r1, k1, i1, *a), (r2, k2, i2, *b) = results
    assert r1 == r2 and k1 == k2 == ["weight"]
    np.testing.assert_array_equal(i1, i2)  # N(0, 1) after the same seed, padding row zero
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-12)


def test_embedding_bag_from_pretrained():
    for freeze in (True, False):
        reprs, outs = [], []
        for lib in (gs, torch):
            bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(TABLE), freeze, mode="max")
            reprs.append((repr(bag), bag.weight.requires_grad))
            outs.append(bag(lib.tensor([[1, 2], [3, 3]])).detach().numpy())
        assert reprs[0] == reprs[1]
        np.testing.assert_array_equal(outs[0], outs[1])


# the exception type and words, as torch's
ERRORS = {
    "embedding_bag_1d_no_offsets": lambda L: L.nn.functional.embedding_bag(
        L.tensor([1, 2]), L.ones(4, 2)
    ),
    "embedding_bag_padding_idx": lambda L: L.nn.EmbeddingBag(4, 2, padding_idx=4),
    "embedding_bag_weight_rank": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


# the exception type, as torch's (gradstack's words say more: which argument, what shape)
ERROR_TYPES = {
    "embedding_bag_mode": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="median"
    ),
    "embedding_bag_2d_offsets": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), L.tensor([0])
    ),
    "embedding_bag_weights_max": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="max", per_sample_weights=L.ones(1, 2)
    ),
    "embedding_bag_weights_shape": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="sum", per_sample_weights=L.ones(2)
    ),
}


@pytest.mark.parametrize("name", sorted(ERROR_TYPES))
def test_error_types_match_torch(name):
    assert_same_error(ERROR_TYPES[name], words=False)


# Note [torch's embedding_bag frequencies]
# With scale_grad_by_freq, torch's CPU backward of embedding_bag divides the gradient of
# the i-th distinct index (in sorted order) by the count of the i-th *sorted* index, not
# its own: input [1, 2, 4, 5, 4, 3, 4] divides index 5's gradient by 3 (index 4's count).
# gradstack divides each index's gradient by its own count, as torch's F.embedding does.


def test_embedding_bag_frequencies_are_embeddings():
    inp, offsets = [1, 2, 4, 5, 4, 3, 4], [0, 2, 5]
    w = np.random.default_rng(2).standard_normal((3, 4))
    ours = gs.tensor(TABLE, requires_grad=True)
    y = gs.nn.functional.embedding_bag(
        gs.tensor(inp), ours, gs.tensor(offsets), mode="sum", scale_grad_by_freq=True
    )
    (y * gs.tensor(w)).sum().backward()
    ref = torch.tensor(TABLE, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(inp), ref, scale_grad_by_freq=True)
    bags = torch.stack([rows[0:2].sum(0), rows[2:5].sum(0), rows[5:].sum(0)])
    (bags * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), bags.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-12)
    assert ours.grad[5].abs().sum().item() > 0.1


def test_embedding_bag_second_order_numerically():
    # per_sample_weights' double backward, which torch lacks, by central differences
    table = gs.tensor(TABLE, requires_grad=True)
    psw = gs.tensor(PSW, requires_grad=True)
    inp, offsets = gs.tensor([1, 2, 4, 5, 4, 3, 2]), gs.tensor([0, 3])

    def first(t, p):
        y = gs.nn.functional.embedding_bag(inp, t, offsets, mode="sum", per_sample_weights=p)
        g = gs.autograd.grad((y * y).sum(), (t, p), create_graph=True)
        return (g[0] * g[0]).sum() + (g[1] * g[1]).sum()

    analytic = gs.autograd.grad(first(table, psw), psw)[0].numpy()
    numeric = np.zeros_like(PSW)
    for i in range(PSW.size):
        e = np.zeros_like(PSW)
        e[i] = 1e-6
        hi = first(gs.tensor(TABLE, requires_grad=True), gs.tensor(PSW + e, requires_grad=True))
        lo = first(gs.tensor(TABLE, requires_grad=True), gs.tensor(PSW - e, requires_grad=True))
        hi, lo = hi.item(), lo.item()
        numeric[i] = (hi - lo) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)
    assert np.abs(analytic).sum() > 1
