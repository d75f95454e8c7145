"""The margin, embedding and likelihood losses (functional/margin_losses.py, the Poisson
and Gaussian NLL of functional/losses.py, and their modules in modules/loss.py) against
torch: values and float64 first- and second-order gradients for every reduction, the
margins exactly at their boundary, 1-D and 2-D inputs, empty batches, module reprs and
options, the legacy ``size_average``/``reduce`` and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
N, C, D = 5, 4, 3

# margin_ranking_loss: two entries exactly at the margin 0.5 (target 1 and -1)
X1 = R.standard_normal((N, C))
X2 = R.standard_normal((N, C))
Y = R.choice([-1.0, 1.0], (N, C))
X1[0, :2], X2[0, :2], Y[0, :2] = [2.0, 1.0], [1.5, 1.5], [1.0, -1.0]

# hinge_embedding_loss: a distance exactly at the margin 1, a target of 0 (both terms)
DIST = R.uniform(0.0, 2.0, (N, C))
DIST[0, 0] = 1.0
YH = Y.copy()
YH[0, 0], YH[1, 1] = -1.0, 0.0

# cosine_embedding_loss
A = R.standard_normal((N, D))
B = R.standard_normal((N, D))
B[1] = 2.0 * A[1]  # cos == 1 exactly up to rounding
YC = np.array([1.0, -1.0, 1.0, -1.0, -1.0])

# multilabel_soft_margin_loss
YB = (R.random((N, C)) < 0.5).astype(np.float64)
WC = R.uniform(0.5, 2.0, C)

# multi_margin_loss: x[y] - x[1] == margin 1 exactly in the first sample
XM = R.standard_normal((N, C))
XM[0, :2] = [1.5, 0.5]
TM = np.array([0, 1, 2, 3, 1])

# multilabel_margin_loss: targets ended by -1, a repeated class, no target, all targets;
# in the first sample x[3] - x[2] == 1 exactly (3 a target, 2 not)
XL = R.standard_normal((N, C))
XL[0, 2:] = [0.5, 1.5]
TL = np.array([[3, 0, -1, 1], [1, 1, -1, 0], [-1, 0, 0, 0], [0, 1, 2, 3], [2, -1, 3, 3]])

# triplets
TA = R.standard_normal((N, D))
TP = TA + 0.3 * R.standard_normal((N, D))
TN = R.standard_normal((N, D))

# poisson_nll_loss: counts (0 included) and targets above 0 (torch's gradient of the
# target is NaN at 0 with full=True: Note [A finite Stirling term below 1])
LOG_RATE = R.standard_normal((N, C))
RATE = R.uniform(0.1, 3.0, (N, C))
COUNTS = R.poisson(2.0, (N, C)).astype(np.float64)
COUNTS[0, :3] = [0.0, 1.0, 2.0]
POSITIVE = R.choice([0.5, 1.0, 2.0, 3.0, 7.5], (N, C))

# gaussian_nll_loss: variances of every accepted shape, some below eps
MEAN = R.standard_normal((N, C))
OBS = R.standard_normal((N, C))
VAR = R.uniform(0.2, 2.0, (N, C))
VAR_SMALL = VAR.copy()
VAR_SMALL[0, :2] = [1e-8, 0.0]


def _long(L, a):
    return L.tensor(a, dtype=L.int64)


# name -> (fn(L, F, reduction, *tensors), arrays with gradients, torch has a double backward)
PROGRAMS = {
    "margin_ranking": (
        lambda L, F, r, a, b, y: F.margin_ranking_loss(a, b, y, 0.5, reduction=r),
        [X1, X2, Y],
        True,
    ),
    "margin_ranking_1d_broadcast": (
        lambda L, F, r, a, b, y: F.margin_ranking_loss(a[0], b[:1, 0], y[0], 1.0, reduction=r),
        [X1, X2, Y],
        True,
    ),
    "hinge_embedding": (
        lambda L, F, r, x: F.hinge_embedding_loss(x, L.tensor(YH), reduction=r),
        [DIST],
        True,
    ),
    "hinge_embedding_margin_broadcast": (
        lambda L, F, r, x: F.hinge_embedding_loss(x - 1.0, L.tensor(YH[0]), 0.3, reduction=r),
        [DIST],
        True,
    ),
    "cosine_embedding": (
        lambda L, F, r, a, b: F.cosine_embedding_loss(a, b, L.tensor(YC), reduction=r),
        [A, B],
        True,
    ),
    "cosine_embedding_margin": (
        lambda L, F, r, a, b: F.cosine_embedding_loss(a, b, L.tensor(YC), -0.2, reduction=r),
        [A, B],
        True,
    ),
    "cosine_embedding_1d": (
        lambda L, F, r, a, b: F.cosine_embedding_loss(a[0], b[0], L.tensor(-1.0), reduction=r),
        [A, B],
        True,
    ),
    "soft_margin": (
        lambda L, F, r, x: F.soft_margin_loss(x, L.tensor(Y), reduction=r),
        [X1],
        True,
    ),
    "soft_margin_broadcast_target": (
        lambda L, F, r, x: F.soft_margin_loss(3.0 * x, L.tensor(Y[0]), reduction=r),
        [X1],
        True,
    ),
    "multilabel_soft_margin": (
        lambda L, F, r, x, y: F.multilabel_soft_margin_loss(x, y, reduction=r),
        [X1, YB],
        True,
    ),
    "multilabel_soft_margin_weight": (
        lambda L, F, r, x, y, w: F.multilabel_soft_margin_loss(x, y, w, reduction=r),
        [X1, YB, WC],
        True,
    ),
    "multilabel_soft_margin_1d": (
        lambda L, F, r, x, y: F.multilabel_soft_margin_loss(x[0], y[0], reduction=r),
        [X1, YB],
        True,
    ),
    "multi_margin": (
        lambda L, F, r, x: F.multi_margin_loss(x, _long(L, TM), reduction=r),
        [XM],
        False,
    ),
    "multi_margin_p2": (
        lambda L, F, r, x: F.multi_margin_loss(x, _long(L, TM), p=2, reduction=r),
        [XM],
        False,
    ),
    "multi_margin_options": (
        lambda L, F, r, x: F.multi_margin_loss(
            x, _long(L, TM), p=2, margin=0.7, weight=L.tensor(WC), reduction=r
        ),
        [XM],
        False,
    ),
    "multi_margin_weight_p1": (
        lambda L, F, r, x: F.multi_margin_loss(x, _long(L, TM), weight=L.tensor(WC), reduction=r),
        [XM],
        False,
    ),
    "multi_margin_1d": (
        lambda L, F, r, x: F.multi_margin_loss(x[0], _long(L, TM[1:2]), reduction=r),
        [XM],
        False,
    ),
    "multi_margin_1d_scalar_target": (
        lambda L, F, r, x: F.multi_margin_loss(x[2], _long(L, TM[1]), reduction=r),
        [XM],
        False,
    ),
    "multilabel_margin": (
        lambda L, F, r, x: F.multilabel_margin_loss(x, _long(L, TL), reduction=r),
        [XL],
        False,
    ),
    "multilabel_margin_1d": (
        lambda L, F, r, x: F.multilabel_margin_loss(x[4], _long(L, TL[4]), reduction=r),
        [XL],
        False,
    ),
    "triplet": (
        lambda L, F, r, a, p, n: F.triplet_margin_loss(a, p, n, reduction=r),
        [TA, TP, TN],
        True,
    ),
    "triplet_p1_swap": (
        lambda L, F, r, a, p, n: F.triplet_margin_loss(
            a, p, n, margin=2.0, p=1, swap=True, reduction=r
        ),
        [TA, TP, TN],
        True,
    ),
    "triplet_p3_eps": (
        lambda L, F, r, a, p, n: F.triplet_margin_loss(a, p, n, 1.5, 3, 1e-3, reduction=r),
        [TA, TP, TN],
        True,
    ),
    "triplet_1d": (
        lambda L, F, r, a, p, n: F.triplet_margin_loss(a[0], p[0], n[0], 5.0, reduction=r),
        [TA, TP, TN],
        True,
    ),
    "triplet_with_distance_default": (
        lambda L, F, r, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, reduction=r),
        [TA, TP, TN],
        True,
    ),
    "triplet_with_distance_cosine_swap": (
        lambda L, F, r, a, p, n: F.triplet_margin_with_distance_loss(
            a,
            p,
            n,
            distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y),
            margin=0.8,
            swap=True,
            reduction=r,
        ),
        [TA, TP, TN],
        True,
    ),  # fmt: skip
    "poisson": (
        lambda L, F, r, x, t: F.poisson_nll_loss(x, t, reduction=r),
        [LOG_RATE, COUNTS],
        True,
    ),
    "poisson_rate": (
        lambda L, F, r, x, t: F.poisson_nll_loss(x, t, log_input=False, reduction=r),
        [RATE, COUNTS],
        True,
    ),
    "poisson_rate_eps": (
        lambda L, F, r, x, t: F.poisson_nll_loss(x - 0.1, t, False, eps=0.05, reduction=r),
        [RATE, COUNTS],
        True,
    ),
    "poisson_full": (
        lambda L, F, r, x, t: F.poisson_nll_loss(x, t, full=True, reduction=r),
        [LOG_RATE, POSITIVE],
        True,
    ),
    "poisson_full_rate": (
        lambda L, F, r, x, t: F.poisson_nll_loss(x, t, False, True, reduction=r),
        [RATE, POSITIVE],
        True,
    ),
    "poisson_full_zero_counts": (
        lambda L, F, r, x: F.poisson_nll_loss(x, L.tensor(COUNTS), full=True, reduction=r),
        [LOG_RATE],
        True,
    ),
    "gaussian": (
        lambda L, F, r, x, t, v: F.gaussian_nll_loss(x, t, v, reduction=r),
        [MEAN, OBS, VAR],
        True,
    ),
    "gaussian_full_small_var": (
        lambda L, F, r, x, t, v: F.gaussian_nll_loss(x, t, v, full=True, eps=1e-3, reduction=r),
        [MEAN, OBS, VAR_SMALL],
        True,
    ),
    "gaussian_var_per_sample": (
        lambda L, F, r, x, t, v: F.gaussian_nll_loss(x, t, v[:, 0], reduction=r),
        [MEAN, OBS, VAR],
        True,
    ),
    "gaussian_var_column": (
        lambda L, F, r, x, t, v: F.gaussian_nll_loss(x, t, v[:, :1], reduction=r),
        [MEAN, OBS, VAR],
        True,
    ),
    "gaussian_var_row": (
        lambda L, F, r, x, t, v: F.gaussian_nll_loss(x, t, v[:1], reduction=r),
        [MEAN, OBS, VAR],
        True,
    ),
    "gaussian_var_float_target_broadcast": (
        lambda L, F, r, x, t: F.gaussian_nll_loss(x, t[:1], 0.7, reduction=r),
        [MEAN, OBS],
        True,
    ),
}
REDUCTIONS = ("none", "mean", "sum")
CASES = [(name, r) for name in sorted(PROGRAMS) for r in REDUCTIONS]


def run(lib, name, reduction, second_order=True):
    fn, arrays, _ = PROGRAMS[name]
    F = lib.nn.functional
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, F, reduction, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grad = gs.autograd.grad if lib is gs else torch.autograd.grad
    first = grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    first = [g if g is not None else lib.zeros_like(x) for g, x in zip(first, xs)]
    total = sum((g * g).sum() for g in first)
    if second_order and total.requires_grad:
        second = grad(total, xs, allow_unused=True)
    else:
        second = [None] * len(xs)
    second = [np.zeros(a.shape) if g is None else _array(g) for g, a in zip(second, arrays)]
    return _array(out), [_array(g) for g in first], second


def _array(t):
    # (torch may return its ZeroTensor, which only clone() materializes)
    return t.detach().clone().numpy()


@pytest.mark.parametrize("name, reduction", CASES)
def test_values_and_gradients_match_torch(name, reduction):
    double_backward = PROGRAMS[name][2]
    (a, ga, sa), (b, gb, sb) = (
        run(gs, name, reduction),
        run(torch, name, reduction, second_order=double_backward),
    )
    assert a.shape == b.shape
    assert np.isfinite(a).all()
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for p, q in zip(ga, gb):
        assert np.isfinite(q).all()
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-10)
    if double_backward:
        for p, q in zip(sa, sb):
            np.testing.assert_allclose(p, q, rtol=1e-8, atol=1e-10)


def test_the_gradients_are_not_all_zero():
    """The comparisons above see inputs where every loss is active."""
    for name in PROGRAMS:
        _, first, _ = run(gs, name, "sum", second_order=False)
        assert any(np.abs(g).sum() > 1e-3 for g in first), name


def test_margins_exactly_at_the_boundary():
    """At the margin, the composites' clamp_min passes the gradient (as torch's); the
    kernels of multi_margin_loss and multilabel_margin_loss do not (Note [Hinge kernels
    are strict at the margin])."""
    x1 = gs.tensor([2.0, 1.0], dtype=gs.float64, requires_grad=True)
    loss = gs.nn.functional.margin_ranking_loss(
        x1, gs.tensor([1.5, 1.5], dtype=gs.float64), gs.tensor([1.0, -1.0]), 0.5, reduction="sum"
    )
    assert loss.item() == 0.0
    assert gs.autograd.grad(loss, x1)[0].tolist() == [-1.0, 1.0]

    x = gs.tensor([[1.5, 0.5, -5.0]], dtype=gs.float64, requires_grad=True)
    loss = gs.nn.functional.multi_margin_loss(x, gs.tensor([0]), reduction="sum")
    assert loss.item() == 0.0
    assert gs.autograd.grad(loss, x)[0].tolist() == [[0.0, 0.0, 0.0]]
    xt = torch.tensor([[1.5, 0.5, -5.0]], dtype=torch.float64, requires_grad=True)
    tloss = torch.nn.functional.multi_margin_loss(xt, torch.tensor([0]), reduction="sum")
    assert torch.autograd.grad(tloss, xt)[0].tolist() == [[0.0, 0.0, 0.0]]

    x = gs.tensor([[0.5, 1.5]], dtype=gs.float64, requires_grad=True)
    loss = gs.nn.functional.multilabel_margin_loss(x, gs.tensor([[1, -1]]), reduction="sum")
    assert loss.item() == 0.0
    assert gs.autograd.grad(loss, x)[0].tolist() == [[0.0, 0.0]]


def test_hinge_embedding_targets():
    x = gs.tensor([0.25, 0.25, 0.25, 2.0])
    out = gs.nn.functional.hinge_embedding_loss(
        x, gs.tensor([1.0, -1.0, 0.0, -1.0]), reduction="none"
    )
    assert out.tolist() == [0.25, 0.75, 1.0, 0.0]


GRADGRAD = {
    "multi_margin_p1": lambda F, x: F.multi_margin_loss(x, gs.tensor(TM), margin=0.5),
    "multi_margin_p2": lambda F, x: F.multi_margin_loss(x, gs.tensor(TM), p=2, reduction="sum"),
    "multi_margin_weight": lambda F, x: F.multi_margin_loss(
        x, gs.tensor(TM), p=2, weight=gs.tensor(WC, dtype=gs.float64), reduction="none"
    ),
    "multilabel_margin": lambda F, x: F.multilabel_margin_loss(x, gs.tensor(TL), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(GRADGRAD))
def test_second_order_where_torch_has_no_double_backward(name):
    """torch raises "derivative for aten::multi_margin_loss_backward is not implemented";
    gradstack's composites differentiate again: checked numerically (no input sits at a
    kink: the margins are at least 1e-3 away)."""
    x = gs.tensor(R.standard_normal((N, C)), dtype=gs.float64, requires_grad=True)
    F = gs.nn.functional
    assert gs.autograd.gradcheck(lambda t: GRADGRAD[name](F, t), (x,))
    assert gs.autograd.gradgradcheck(lambda t: GRADGRAD[name](F, t), (x,))
    if name == "multi_margin_p2":  # p=2: 2 / C per active term and sample, on the diagonal
        g = gs.autograd.grad(GRADGRAD[name](F, x), x, create_graph=True)[0]
        h = gs.autograd.grad(g[0, 1], x)[0].numpy()
        xn = x.detach().numpy()
        active = 1.0 - xn[0, TM[0]] + xn[0, 1] > 0
        assert h[0, 1] == pytest.approx(2.0 / C if active else 0.0)


EMPTY = {
    "margin_ranking": lambda L, F, r: F.margin_ranking_loss(
        L.zeros(0), L.zeros(0), L.zeros(0), reduction=r
    ),
    "soft_margin": lambda L, F, r: F.soft_margin_loss(L.zeros(0, 3), L.zeros(0, 3), reduction=r),
    "poisson": lambda L, F, r: F.poisson_nll_loss(L.zeros(0, 2), L.zeros(0, 2), reduction=r),
    "gaussian": lambda L, F, r: F.gaussian_nll_loss(L.zeros(0, 2), L.zeros(0, 2), 1.0, reduction=r),
    "triplet": lambda L, F, r: F.triplet_margin_loss(
        L.zeros(0, 2), L.zeros(0, 2), L.zeros(0, 2), reduction=r
    ),
    "cosine_embedding": lambda L, F, r: F.cosine_embedding_loss(
        L.zeros(0, 2), L.zeros(0, 2), L.zeros(0), reduction=r
    ),
}
# (torch's multi-class kernels return uninitialised memory for the mean and the sum of no
# samples: test_empty_multi_class_reductions below)
EMPTY_NO_MEAN = {
    "multi_margin": lambda L, F, r: F.multi_margin_loss(
        L.zeros(0, 3), L.zeros(0, dtype=L.int64), reduction=r
    ),
    "multilabel_margin": lambda L, F, r: F.multilabel_margin_loss(
        L.zeros(0, 3), L.zeros(0, 3, dtype=L.int64), reduction=r
    ),
}
EMPTY_CASES = [(n, r) for n in sorted(EMPTY) for r in REDUCTIONS]
EMPTY_CASES += [(n, "none") for n in sorted(EMPTY_NO_MEAN)]


@pytest.mark.parametrize("name, reduction", EMPTY_CASES)
def test_empty_batches_match_torch(name, reduction):
    fn = EMPTY.get(name) or EMPTY_NO_MEAN[name]
    a = fn(gs, gs.nn.functional, reduction).numpy()
    b = fn(torch, torch.nn.functional, reduction).numpy()
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # (NaN for 'mean', as torch)


def test_empty_multi_class_reductions():
    """gradstack reduces no samples as torch's composites do: a sum of 0, a NaN mean."""
    for fn in EMPTY_NO_MEAN.values():
        assert fn(gs, gs.nn.functional, "sum").item() == 0.0
        assert np.isnan(fn(gs, gs.nn.functional, "mean").item())


def test_zero_dim_inputs_match_torch():
    for fn in (
        lambda L: L.nn.functional.multi_margin_loss(L.tensor(0.3), L.tensor(0), reduction="none"),
        lambda L: L.nn.functional.multilabel_margin_loss(
            L.tensor(0.3), L.tensor(0), reduction="none"
        ),
        lambda L: L.nn.functional.multilabel_margin_loss(
            L.tensor(0.3), L.tensor([-1]), reduction="none"
        ),
        lambda L: L.nn.functional.soft_margin_loss(L.tensor(0.3), L.tensor(-1.0)),
        lambda L: L.nn.functional.margin_ranking_loss(L.tensor(0.3), L.tensor(1.0), L.tensor(1.0)),
    ):
        a, b = fn(gs), fn(torch)
        assert tuple(a.shape) == tuple(b.shape)
        assert a.item() == pytest.approx(b.item(), rel=1e-6)


def test_poisson_full_target_gradient_is_finite_at_zero():
    """Note [A finite Stirling term below 1]: torch's gradient of a zero target is NaN
    with full=True; gradstack's is the input's part alone, -input (the masked term is
    constant 0), as torch's is for the other targets at or below 1."""
    x = gs.tensor([0.5, 0.5, 0.5], dtype=gs.float64)
    t = gs.tensor([0.0, 0.5, 1.0], dtype=gs.float64, requires_grad=True)
    g = gs.autograd.grad(gs.nn.functional.poisson_nll_loss(x, t, full=True, reduction="sum"), t)
    assert g[0].tolist() == [-0.5, -0.5, -0.5]
    tt = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.poisson_nll_loss(
        torch.tensor([0.5] * 3, dtype=torch.float64), tt, full=True, reduction="sum"
    )
    gt_ = torch.autograd.grad(loss, tt)[0]
    assert np.isnan(gt_[0].item()) and gt_[1:].tolist() == [-0.5, -0.5]


def test_gaussian_variance_clamp_passes_the_gradient():
    for lib in (gs, torch):
        v = lib.tensor([0.0, 1e-9, 2.0], dtype=lib.float64, requires_grad=True)
        loss = lib.nn.functional.gaussian_nll_loss(
            lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64),
            lib.tensor([1.0, 1.0, 0.0], dtype=lib.float64),
            v,
            eps=0.5,
            reduction="sum",
        )
        grad = (gs.autograd.grad if lib is gs else torch.autograd.grad)(loss, v)[0]
        # 0.5 / max(v, eps) - 0.5 * d**2 / max(v, eps)**2
        np.testing.assert_allclose(grad.numpy(), [1.0, 1.0, 0.25 - 0.125], rtol=1e-12)


# -------------------------------------------------------------------------------------
# modules


MODULES = [
    ("MarginRankingLoss", (), {}), ("MarginRankingLoss", (0.5,), {"reduction": "sum"}),
    ("HingeEmbeddingLoss", (), {}), ("HingeEmbeddingLoss", (0.3,), {"reduction": "none"}),
    ("CosineEmbeddingLoss", (), {}), ("CosineEmbeddingLoss", (0.2,), {}),
    ("SoftMarginLoss", (), {}), ("SoftMarginLoss", (), {"reduction": "none"}),
    ("MultiLabelSoftMarginLoss", (), {}), ("MultiLabelSoftMarginLoss", ("weight",), {}),
    ("MultiMarginLoss", (), {}), ("MultiMarginLoss", (2, 0.7, "weight"), {"reduction": "sum"}),
    ("MultiLabelMarginLoss", (), {}), ("MultiLabelMarginLoss", (), {"reduction": "none"}),
    ("TripletMarginLoss", (), {}), ("TripletMarginLoss", (2.0, 1.0, 1e-3, True), {}),
    ("TripletMarginWithDistanceLoss", (), {}),
    ("TripletMarginWithDistanceLoss", (), {"margin": 0.5, "swap": True, "reduction": "sum"}),
    ("PoissonNLLLoss", (), {}), ("PoissonNLLLoss", (False, True), {"eps": 1e-3}),
    ("GaussianNLLLoss", (), {}), ("GaussianNLLLoss", (), {"full": True, "eps": 1e-3}),
]  # fmt: skip


def _inputs(L, name):
    t = lambda a: L.tensor(a, dtype=L.float64)  # noqa: E731
    return {
        "MarginRankingLoss": lambda: (t(X1), t(X2), t(Y)),
        "HingeEmbeddingLoss": lambda: (t(DIST), t(YH)),
        "CosineEmbeddingLoss": lambda: (t(A), t(B), t(YC)),
        "SoftMarginLoss": lambda: (t(X1), t(Y)),
        "MultiLabelSoftMarginLoss": lambda: (t(X1), t(YB)),
        "MultiMarginLoss": lambda: (t(XM), _long(L, TM)),
        "MultiLabelMarginLoss": lambda: (t(XL), _long(L, TL)),
        "TripletMarginLoss": lambda: (t(TA), t(TP), t(TN)),
        "TripletMarginWithDistanceLoss": lambda: (t(TA), t(TP), t(TN)),
        "PoissonNLLLoss": lambda: (t(RATE), t(COUNTS)),
        "GaussianNLLLoss": lambda: (t(MEAN), t(OBS), t(VAR)),
    }[name]()


@pytest.mark.parametrize("name, args, kwargs", MODULES, ids=[f"{n}{a}{k}" for n, a, k in MODULES])
def test_modules_match_torch(name, args, kwargs):
    def build(L):
        a = tuple(L.tensor(WC) if v == "weight" else v for v in args)
        return getattr(L.nn, name)(*a, **kwargs)

    ours, theirs = build(gs), build(torch)
    assert repr(ours) == repr(theirs)
    assert ours.reduction == theirs.reduction
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    for attr in ("margin", "p", "eps", "swap", "full", "log_input"):
        assert getattr(ours, attr, None) == getattr(theirs, attr, None), attr
    a = ours(*_inputs(gs, name))
    b = theirs(*_inputs(torch, name))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_triplet_with_distance_module_keeps_its_distance():
    for lib in (gs, torch):
        loss = lib.nn.TripletMarginWithDistanceLoss(distance_function=lib.nn.PairwiseDistance(p=1))
        assert "(distance_function): PairwiseDistance()" in repr(loss)
    ours = gs.nn.TripletMarginWithDistanceLoss(distance_function=gs.nn.PairwiseDistance(p=1))
    theirs = torch.nn.TripletMarginWithDistanceLoss(
        distance_function=torch.nn.PairwiseDistance(p=1)
    )
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(
        ours(*_inputs(gs, "TripletMarginLoss")).item(),
        theirs(*_inputs(torch, "TripletMarginLoss")).item(),
        rtol=1e-12,
    )
    plain = gs.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: (x - y).abs().sum(-1)
    )
    assert repr(plain) == "TripletMarginWithDistanceLoss()"


LEGACY = [
    ("margin_ranking_loss", lambda L: (L.tensor(X1), L.tensor(X2), L.tensor(Y))),
    ("hinge_embedding_loss", lambda L: (L.tensor(DIST), L.tensor(YH))),
    ("cosine_embedding_loss", lambda L: (L.tensor(A), L.tensor(B), L.tensor(YC))),
    ("soft_margin_loss", lambda L: (L.tensor(X1), L.tensor(Y))),
    ("multilabel_soft_margin_loss", lambda L: (L.tensor(X1), L.tensor(YB))),
    ("multi_margin_loss", lambda L: (L.tensor(XM), L.tensor(TM))),
    ("multilabel_margin_loss", lambda L: (L.tensor(XL), L.tensor(TL))),
    ("triplet_margin_loss", lambda L: (L.tensor(TA), L.tensor(TP), L.tensor(TN))),
    ("poisson_nll_loss", lambda L: (L.tensor(LOG_RATE), L.tensor(COUNTS))),
]


@pytest.mark.parametrize("name, inputs", LEGACY, ids=[n for n, _ in LEGACY])
@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True)])
def test_legacy_size_average_and_reduce(name, inputs, size_average, reduce):
    results = []
    for lib in (gs, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(
                *inputs(lib), size_average=size_average, reduce=reduce
            )
        messages = [str(w.message) for w in caught]
        results.append((out.numpy(), messages))
    (a, ma), (b, mb) = results
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-10)
    assert ma == mb and len(ma) == 1 and "will be deprecated" in ma[0]


def test_legacy_arguments_of_the_modules():
    for lib in (gs, torch):
        with pytest.warns(UserWarning, match="reduction='sum'"):
            assert lib.nn.SoftMarginLoss(size_average=False).reduction == "sum"
        with pytest.warns(UserWarning, match="reduction='none'"):
            assert lib.nn.MultiMarginLoss(reduce=False).reduction == "none"
        assert lib.nn.PoissonNLLLoss(reduction="sum").reduction == "sum"


# -------------------------------------------------------------------------------------
# errors


def _fl(L, *shape):
    return L.ones(*shape, dtype=L.float64)


ERRORS = {
    "margin_ranking_reduction": lambda L, F: F.margin_ranking_loss(
        _fl(L, 3), _fl(L, 3), _fl(L, 3), reduction="avg"
    ),
    "margin_ranking_dims": lambda L, F: F.margin_ranking_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 3)
    ),
    "margin_ranking_shapes": lambda L, F: F.margin_ranking_loss(_fl(L, 3), _fl(L, 4), _fl(L, 3)),
    "hinge_reduction": lambda L, F: F.hinge_embedding_loss(_fl(L, 3), _fl(L, 3), reduction="x"),
    "hinge_shapes": lambda L, F: F.hinge_embedding_loss(_fl(L, 3, 4), _fl(L, 2)),
    "cosine_reduction": lambda L, F: F.cosine_embedding_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2), reduction="Mean"
    ),
    "cosine_target_2d": lambda L, F: F.cosine_embedding_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2, 3)
    ),
    "cosine_1d_target_1d_inputs": lambda L, F: F.cosine_embedding_loss(
        _fl(L, 3), _fl(L, 3), _fl(L, 3)
    ),
    "cosine_0d_target_2d_inputs": lambda L, F: F.cosine_embedding_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), L.tensor(1.0)
    ),
    "cosine_target_length": lambda L, F: F.cosine_embedding_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 3)
    ),
    "soft_margin_reduction": lambda L, F: F.soft_margin_loss(_fl(L, 3), _fl(L, 3), reduction=""),
    "soft_margin_input_broadcast": lambda L, F: F.soft_margin_loss(_fl(L, 4, 1), _fl(L, 4)),
    "soft_margin_shapes": lambda L, F: F.soft_margin_loss(_fl(L, 3, 4), _fl(L, 2)),
    "soft_margin_target_grad": lambda L, F: F.soft_margin_loss(
        _fl(L, 3), _fl(L, 3).requires_grad_()
    ),
    "multilabel_soft_margin_reduction": lambda L, F: F.multilabel_soft_margin_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), reduction="x"
    ),
    "multilabel_soft_margin_0d": lambda L, F: F.multilabel_soft_margin_loss(
        L.tensor(1.0), L.tensor(1.0)
    ),
    "multi_margin_reduction": lambda L, F: F.multi_margin_loss(
        _fl(L, 2, 3), L.tensor([0, 1]), reduction="x"
    ),
    "multi_margin_p": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3), L.tensor([0, 1]), p=3),
    "multi_margin_weight_2d": lambda L, F: F.multi_margin_loss(
        _fl(L, 2, 3), L.tensor([0, 1]), weight=_fl(L, 1, 3)
    ),
    "multi_margin_weight_size": lambda L, F: F.multi_margin_loss(
        _fl(L, 2, 3), L.tensor([0, 1]), weight=_fl(L, 2)
    ),
    "multi_margin_weight_grad": lambda L, F: F.multi_margin_loss(
        _fl(L, 2, 3), L.tensor([0, 1]), weight=_fl(L, 3).requires_grad_()
    ),
    "multi_margin_3d": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3, 4), L.tensor([0, 1])),
    "multi_margin_no_class": lambda L, F: F.multi_margin_loss(_fl(L, 2, 0), L.tensor([0, 1])),
    "multi_margin_target_size": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3), L.tensor([0])),
    "multi_margin_target_2d": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3), L.tensor([[0, 1]])),
    "multi_margin_target_float": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3), _fl(L, 2)),
    "multi_margin_target_range": lambda L, F: F.multi_margin_loss(_fl(L, 2, 3), L.tensor([0, 3])),
    "multi_margin_target_negative": lambda L, F: F.multi_margin_loss(
        _fl(L, 2, 3), L.tensor([0, -1])
    ),
    "multilabel_margin_reduction": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 2, 3), L.tensor([[0, 1, -1]] * 2), reduction="x"
    ),
    "multilabel_margin_target_size": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 2, 3), L.tensor([[0, 1, -1]])
    ),
    "multilabel_margin_target_1d": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 3), L.tensor([[0, 1, -1]])
    ),
    "multilabel_margin_target_range": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 2, 3), L.tensor([[0, 3, -1]] * 2)
    ),
    "multilabel_margin_target_below": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 2, 3), L.tensor([[0, -2, -1]] * 2)
    ),
    "multilabel_margin_target_float": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 2, 3), _fl(L, 2, 3)
    ),
    "multilabel_margin_3d": lambda L, F: F.multilabel_margin_loss(
        _fl(L, 1, 2, 3), L.tensor([[[0, 1, -1]] * 2])
    ),
    "triplet_reduction": lambda L, F: F.triplet_margin_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2, 3), reduction="x"
    ),
    "triplet_margin": lambda L, F: F.triplet_margin_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2, 3), margin=0.0
    ),
    "triplet_dims": lambda L, F: F.triplet_margin_loss(_fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 3)),
    "triplet_with_distance_reduction": lambda L, F: F.triplet_margin_with_distance_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2, 3), reduction="x"
    ),
    "triplet_with_distance_margin": lambda L, F: F.triplet_margin_with_distance_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 2, 3), margin=-1.0
    ),
    "triplet_with_distance_dims": lambda L, F: F.triplet_margin_with_distance_loss(
        _fl(L, 3), _fl(L, 2, 3), _fl(L, 2, 3)
    ),
    "poisson_reduction": lambda L, F: F.poisson_nll_loss(_fl(L, 3), _fl(L, 3), reduction="x"),
    "poisson_shapes": lambda L, F: F.poisson_nll_loss(_fl(L, 3), _fl(L, 4)),
    "gaussian_reduction": lambda L, F: F.gaussian_nll_loss(
        _fl(L, 3), _fl(L, 3), _fl(L, 3), reduction="x"
    ),
    "gaussian_negative_var": lambda L, F: F.gaussian_nll_loss(_fl(L, 3), _fl(L, 3), -_fl(L, 3)),
    "gaussian_negative_float_var": lambda L, F: F.gaussian_nll_loss(_fl(L, 3), _fl(L, 3), -1.0),
    "gaussian_var_size": lambda L, F: F.gaussian_nll_loss(_fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 3)),
    "gaussian_var_two_mismatches": lambda L, F: F.gaussian_nll_loss(
        _fl(L, 2, 3), _fl(L, 2, 3), _fl(L, 1, 1)
    ),
    "gaussian_int_var": lambda L, F: F.gaussian_nll_loss(_fl(L, 3), _fl(L, 3), 1),
}
# the errors whose words are torch's word for word
SAME_MESSAGE = {
    name for name in ERRORS if not name.endswith(("_shapes", "_dims", "_int_var", "_length"))
} | {"triplet_dims", "triplet_with_distance_dims"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raised = []
    for lib in (gs, torch):
        with pytest.raises(
            (RuntimeError, TypeError, IndexError, ValueError, NotImplementedError)
        ) as info:
            ERRORS[name](lib, lib.nn.functional)
        raised.append(info)
    assert raised[0].type is raised[1].type
    if name in SAME_MESSAGE:
        assert str(raised[0].value) == str(raised[1].value)


MODULE_ERRORS = {
    "multi_margin_p": lambda L: L.nn.MultiMarginLoss(p=3),
    "multi_margin_weight": lambda L: L.nn.MultiMarginLoss(weight=L.ones(2, 3)),
    "triplet_margin": lambda L: L.nn.TripletMarginLoss(margin=0.0),
    "triplet_with_distance_margin": lambda L: L.nn.TripletMarginWithDistanceLoss(margin=-2),
}


@pytest.mark.parametrize("name", sorted(MODULE_ERRORS))
def test_module_errors_match_torch(name):
    raised = []
    for lib in (gs, torch):
        with pytest.raises(ValueError) as info:
            MODULE_ERRORS[name](lib)
        raised.append(str(info.value))
    assert raised[0] == raised[1]


def test_invalid_reduction_is_reported_by_the_first_call():
    for lib in (gs, torch):
        loss = lib.nn.SoftMarginLoss(reduction="avg")
        with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
            loss(lib.ones(2), lib.ones(2))
        loss = lib.nn.GaussianNLLLoss(reduction="avg")
        with pytest.raises(ValueError, match="avg is not valid"):
            loss(lib.ones(2), lib.ones(2), lib.ones(2))
