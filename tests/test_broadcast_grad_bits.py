"""A broadcast input's gradient has the bits of the same ``sum`` written by hand.

torch reduces the gradient of a broadcast input with ``grad.sum(dims, keepdim=True)``, so
``(-g).sum(1, keepdim=True)`` written by hand equals ``logit_maxes.grad`` bit for bit
(karpathy's makemore backprop notebook checks it with ``torch.all(dt == t.grad)``).
gradstack must give the same answer, with and without ``create_graph``
(graph-engine Note [sum_to adds as sum does]).
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

# (input shape, broadcast-to shape, dims the gradient is summed over, keepdim)
CASES = [
    ((32, 1), (32, 27), (1,), True),  # row sums: x - x.max(1, keepdim=True).values
    ((27,), (32, 27), (0,), False),  # column sums: the bias of a linear layer
    ((1, 64), (32, 64), (0,), True),  # batchnorm's gain and bias
    ((1, 5, 1), (4, 5, 6), (0, 2), True),  # neither a row nor a column sum
    ((), (7, 9), (0, 1), False),  # a scalar broadcast to a matrix
]


def _grads(lib, shape, full, dtype, create_graph):
    """(gradient of the broadcast input, the same sum of the upstream gradient by hand)."""
    rng = np.random.default_rng(sum(full))
    x = lib.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)
    up = lib.tensor(rng.standard_normal(full), dtype=dtype)
    (g,) = lib.autograd.grad(x + lib.zeros(full, dtype=dtype), x, up, create_graph=create_graph)
    return g.detach().numpy(), up


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("shape", "full", "dims", "keepdim"), CASES)
def test_broadcast_grad_equals_sum_by_hand(shape, full, dims, keepdim, dtype, create_graph):
    got, up = _grads(gs, shape, full, getattr(gs, dtype), create_graph)
    by_hand = up.sum(dims, keepdim=keepdim).reshape(shape).numpy()
    assert got.dtype == by_hand.dtype == np.dtype(dtype)
    assert np.array_equal(got, by_hand)  # the same bits, not just close

    want, up_t = _grads(torch, shape, full, getattr(torch, dtype), create_graph)
    assert np.array_equal(want, up_t.sum(dims, keepdim=keepdim).reshape(shape).numpy())
    # torch's float32 sum adds in another order than numpy's: close, not the same bits
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_makemore_logit_maxes_check():
    """The notebook's check: the hand-written gradient of ``logit_maxes`` is exact."""
    for lib in (gs, torch):
        g = lib.Generator().manual_seed(2147483647)
        logits = lib.randn((32, 27), generator=g, requires_grad=True)
        logit_maxes = logits.max(1, keepdim=True).values
        norm_logits = logits - logit_maxes
        norm_logits.retain_grad()
        logit_maxes.retain_grad()
        (norm_logits.exp().sum(1).log().mean()).backward()
        dlogit_maxes = (-norm_logits.grad).sum(1, keepdim=True)
        assert lib.all(dlogit_maxes == logit_maxes.grad).item(), lib.__name__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "full"),
    [
        ((100,), (16, 100)),  # a bias: the C loop (Note [Summing leading rows in C])
        ((1, 100), (16, 100)),
        ((9, 4), (3, 50, 9, 4)),  # two leading dims
        ((2,), (4097, 2)),  # many rows, the narrowest width the loop takes
        ((1,), (1000, 1)),  # width 1: numpy's pairwise sum, not the loop
        ((3, 1), (3, 700)),  # a trailing sum: numpy
        ((5,), (0, 5)),  # no rows: numpy's zeros
    ],
)
def test_broadcast_grad_has_numpys_bits_for_every_layout(shape, full, dtype):
    """The no-graph reduction of a broadcast gradient is numpy's ``add.reduce`` bit for bit,
    nans and infs included, whichever path (C loop or numpy) takes it."""
    rng = np.random.default_rng(len(full))
    up = rng.standard_normal(full) * 10.0 ** rng.integers(-4, 5, size=full)
    if up.size > 3:
        up.flat[0], up.flat[1], up.flat[2] = np.inf, -np.inf, np.nan
    up = up.astype(dtype)
    x = gs.zeros(shape, dtype=getattr(gs, dtype), requires_grad=True)
    (g,) = gs.autograd.grad(x + gs.zeros(full, dtype=getattr(gs, dtype)), x, gs.tensor(up))
    lead = len(full) - len(shape)
    padded = (1,) * lead + shape
    axes = tuple(i for i, (s, f) in enumerate(zip(padded, full)) if s == 1 and f != 1)
    with np.errstate(all="ignore"):
        want = np.add.reduce(up, axis=axes, keepdims=True).reshape(shape)
    assert g.numpy().tobytes() == want.tobytes()
