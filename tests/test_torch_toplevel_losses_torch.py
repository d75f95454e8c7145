"""torch's top-level loss functions (``torch.kl_div``, ``torch.margin_ranking_loss`` ...)
and ``torch.max_pool1d_with_indices`` against torch 2.13: aten's signatures, with an int
``reduction`` (Note [torch's top-level losses take aten's reduction] in the facade's
``_nn_functions.py``): values and float64 gradients, for each reduction.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(11)
X = R.standard_normal((4, 5))
Y = R.standard_normal((4, 5))
Z = R.standard_normal((4, 5))
P = R.uniform(0.05, 0.95, (4, 5))
SIGNS = np.where(R.standard_normal(4) > 0, 1.0, -1.0)
SIGNS5 = np.where(R.standard_normal((4, 5)) > 0, 1.0, -1.0)
COUNTS = R.integers(0, 5, (4, 5)).astype(np.float64)
LOGITS = R.standard_normal((6, 2, 5))  # (T, N, C) for ctc_loss


def _run(lib, fn, arrays):
    ts = [
        lib.tensor(a, requires_grad=i == 0 or fn.__name__ == "both") for i, a in enumerate(arrays)
    ]
    out = fn(lib, *ts)
    if isinstance(out, tuple):
        return [o.detach().numpy() for o in out]
    res = [out.detach().numpy()]
    weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
    (out * weight).sum().backward()
    return res + [t.grad.numpy() for t in ts if t.grad is not None]


def _cases():
    for r in (0, 1, 2):
        yield f"bce_with_logits r={r}", (
            lambda L, x, p, r=r: L.binary_cross_entropy_with_logits(
                x, p, L.tensor(np.linspace(0.5, 2, 5)), L.tensor(np.linspace(1, 3, 5)), r
            ), [X, P])  # fmt: skip
        yield (
            f"cosine_embedding_loss r={r}",
            (lambda L, a, b, t, r=r: L.cosine_embedding_loss(a, b, t, 0.1, r), [X, Y, SIGNS]),
        )
        yield (
            f"hinge_embedding_loss r={r}",
            (lambda L, a, t, r=r: L.hinge_embedding_loss(a, t, 0.5, r), [X, SIGNS5]),
        )
        yield f"kl_div r={r}", (lambda L, a, p, r=r: L.kl_div(a, p, r), [X, P])
        yield (
            f"kl_div log_target r={r}",
            (lambda L, a, b, r=r: L.kl_div(a, b, r, log_target=True), [X, Y]),
        )
        yield f"margin_ranking_loss r={r}", (
            lambda L, a, b, t, r=r: L.margin_ranking_loss(a, b, t, 0.2, r),
            [X[:, 0], Y[:, 0], SIGNS])  # fmt: skip
        yield (
            f"poisson_nll_loss r={r}",
            (lambda L, a, c, r=r: L.poisson_nll_loss(a, c, True, True, 1e-8, r), [X, COUNTS]),
        )
        yield f"poisson_nll_loss rate r={r}", (
            lambda L, a, c, r=r: L.poisson_nll_loss(a.abs(), c, False, False, 1e-6, r),
            [X, COUNTS])  # fmt: skip
        yield f"triplet_margin_loss r={r}", (
            lambda L, a, b, c, r=r: L.triplet_margin_loss(a, b, c, 1.0, 2, 1e-6, True, r),
            [X, Y, Z])  # fmt: skip
    # (torch 2.13's binding passes reduction 0, none, by default: Note [torch's top-level
    # losses take aten's reduction])
    yield "defaults", (lambda L, a, p: L.kl_div(a, p) + L.hinge_embedding_loss(a, p), [X, P])
    yield "defaults bce", (lambda L, a, p: L.binary_cross_entropy_with_logits(a, p), [X, P])
    yield (
        "defaults rows",
        (
            lambda L, a, b, c: (
                L.cosine_embedding_loss(a, b, L.ones(4))
                + L.margin_ranking_loss(a[:, 0], b[:, 0], L.ones(4))
                + L.triplet_margin_loss(a, b, c)
            ),
            [X, Y, Z],
        ),
    )
    for r in (0, 1, 2):
        yield f"ctc_loss r={r}", (
            lambda L, lp, r=r: L.ctc_loss(
                lp.log_softmax(2), L.tensor([[1, 2], [3, 1]]), [6, 5], [2, 2], 0, r
            ), [LOGITS])  # fmt: skip
    yield "ctc_loss zero_infinity", (
        lambda L, lp: L.ctc_loss(lp.log_softmax(2), L.tensor([[1, 2, 3, 4]]), [2], [4], 0, 1, True),
        [LOGITS[:, :1]])  # fmt: skip
    yield (
        "max_pool1d_with_indices",
        (lambda L, x: L.max_pool1d_with_indices(x.unsqueeze(0), 2), [X]),
    )
    yield (
        "max_pool1d_with_indices strided",
        (lambda L, x: L.max_pool1d_with_indices(x.unsqueeze(0), 3, 1, 1, 1, True), [X]),
    )


CASES = dict(_cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    fn, arrays = CASES[name]
    ours, theirs = _run(gs, fn, arrays), _run(torch, fn, arrays)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.kl_div(L.ones(2), L.ones(2), "mean"),
        lambda L: L.poisson_nll_loss(L.ones(2), L.ones(2)),
        lambda L: L.margin_ranking_loss(L.ones(2), L.ones(2), L.ones(2), 0.0, 1.5),
    ],
)
def test_argument_errors_match_torch(call):
    kinds = []
    for lib in (gs, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared
            call(lib)
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1]
