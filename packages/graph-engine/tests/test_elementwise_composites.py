"""tensor-core's elementwise_composites.py against torch: values, dtypes and float64
gradients (first and second order), including the points where a composite must keep
torch's derivative (Note [A branch that where does not take is computed on a safe
input])."""

from __future__ import annotations

import math

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
A = R.uniform(-3, 3, (3, 4))
A[0, :3] = [0.0, 1.0, -2.0]
B = R.uniform(-3, 3, (3, 4))
B[0, :3] = [0.0, 1.0, 5.0]
P = R.uniform(0.05, 0.95, (3, 4))
POS = R.uniform(0.1, 3, (3, 4))
V3 = R.standard_normal((4, 3))
W3 = R.standard_normal((4, 3))
BATCH1 = R.standard_normal((2, 3, 4))
BATCH2 = R.standard_normal((2, 4, 5))
M = R.standard_normal((3, 5))
IDX = np.array([[0, 2], [1, 1], [3, 0]])

PROGRAMS = {
    "deg2rad": (lambda L, a: L.deg2rad(a), [A]),
    "rad2deg": (lambda L, a: a.rad2deg(), [A]),
    "frac": (lambda L, a: L.frac(a * 1.7), [A]),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), [A, B]),
    "logaddexp2": (lambda L, a, b: a.logaddexp2(b), [A, B]),
    "xlogy": (lambda L, a, p: L.xlogy(a, p), [A, POS]),
    "nan_to_num": (lambda L, a: L.nan_to_num(a.log(), nan=0.5, posinf=9.0, neginf=-9.0), [A]),
    "sinc": (lambda L, a: L.sinc(a), [A]),  # (second order at 0: below)
    "logit": (lambda L, p: L.logit(p), [P]),
    "logit_eps": (lambda L, p: p.logit(eps=0.2), [P]),
    "float_power": (lambda L, p, b: L.float_power(p, b), [POS, B]),
    # (non-negative exponents: torch's LdexpBackward0 gives 0 for a negative integer
    # exponent, the integer 2 ** -1; here the gradient is 2 ** other, 0.5)
    "ldexp": (lambda L, a: L.ldexp(a, L.tensor([[1, 2, 3, 0]])), [A]),
    "nansum": (lambda L, a: L.nansum(L.where(L.tensor(A < -1), float("nan"), a), 1), [A]),
    "nanmean": (lambda L, a: L.where(L.tensor(A < -1), float("nan"), a).nanmean(), [A]),
    "aminmax": (lambda L, a: L.aminmax(a, dim=1), [A]),
    "take_along_dim": (lambda L, a: L.take_along_dim(a, L.tensor(IDX), 1), [A]),
    "take_along_dim_flat": (lambda L, a: a.take_along_dim(L.tensor([5, 0, 11])), [A]),
    "cross": (lambda L, v, w: L.cross(v, w, dim=1), [V3, W3]),
    "linalg_style_cross": (lambda L, v, w: v.cross(w, -1), [V3, W3]),
    "cumprod": (lambda L, a: L.cumprod(a, 1), [A]),
    "cumprod_dim0": (lambda L, a: a.cumprod(0), [A]),
    "baddbmm": (
        lambda L, x, b1, b2: L.baddbmm(x, b1, b2, beta=0.5, alpha=2.0),
        [M, BATCH1, BATCH2],
    ),
    "addbmm": (lambda L, x, b1, b2: L.addbmm(x, b1, b2), [M, BATCH1, BATCH2]),
    "addmv": (lambda L, x, m, v: L.addmv(x[:, 0], m, v[0, 0], alpha=3.0), [M, M, BATCH2]),
    "addr": (lambda L, x, v, w: x.addr(v[0, :, 0], w[0, 0], beta=0.0), [M, BATCH1, BATCH2]),
}


def run(lib, name):
    fn, arrays = PROGRAMS[name]
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    outs = list(out) if isinstance(out, tuple) else [out]
    grad = ag.grad if lib is gt else torch.autograd.grad
    total = sum((o * o.detach() ** 2).sum() for o in outs if o.dtype.is_floating_point)
    first = grad(total, xs, create_graph=True, allow_unused=True)
    first = [lib.zeros_like(x) if g is None else g for g, x in zip(first, xs)]
    s = sum((g * g).sum() for g in first)
    second = grad(s, xs, allow_unused=True) if s.requires_grad else [None] * len(xs)
    arr = lambda t: t.detach().clone().numpy()  # noqa: E731 - (torch's ZeroTensor)
    return (
        [(arr(o), str(o.dtype).split(".")[-1]) for o in outs],
        [arr(g) for g in first],
        [np.zeros(a.shape) if g is None else arr(g) for g, a in zip(second, arrays)],
    )


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(name):
    ours, theirs = run(gt, name), run(torch, name)
    for (a, da), (b, db) in zip(ours[0], theirs[0]):
        assert da == db and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    if name == "sinc":  # torch's second derivative at 0 is NaN, here 0 (its where branch)
        ours[2][0][A == 0] = theirs[2][0][A == 0] = 0.0
    for a, b in zip(ours[1] + ours[2], theirs[1] + theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_aliases_and_edge_values():
    for lib in (gt, torch):
        x = lib.tensor([-1.0, 0.0, 2.0])
        assert x.greater(0).tolist() == [False, False, True]
        assert lib.less_equal(x, 0).tolist() == [True, True, False]
        assert lib.not_equal(x, 2).tolist() == [True, True, False]
        assert lib.fix(lib.tensor([-1.5, 1.5])).tolist() == [-1.0, 1.0]
        assert lib.signbit(lib.tensor([-0.0, 0.0, -1.0])).tolist() == [True, False, True]
        inf = float("inf")
        assert lib.logaddexp(lib.tensor([inf, -inf]), lib.tensor([inf, -inf])).tolist() == [
            inf,
            -inf,
        ]
        assert math.isnan(lib.xlogy(lib.tensor([0.0]), lib.tensor([float("nan")])).item())
        assert lib.xlogy(lib.tensor([0.0]), lib.tensor([0.0])).item() == 0.0
        with pytest.raises(RuntimeError):
            lib.positive(lib.tensor([True]))
        y = lib.tensor([-2.0, 0.5, 3.0])
        assert y.clone().clamp_min_(0).tolist() == [0.0, 0.5, 3.0]
        assert y.clone().clamp_max_(1).tolist() == [-2.0, 0.5, 1.0]
        assert y.clone().square_().tolist() == [4.0, 0.25, 9.0]
        assert y.isclose(y + 1e-9).tolist() == [True, True, True] and y.allclose(y)
        assert lib.cumprod(lib.tensor([1, 2, 3], dtype=lib.int32), 0).dtype == lib.int64
    r = gt.aminmax(gt.tensor([[1.0, 5.0], [-2.0, 0.0]]))
    assert (r.min.item(), r.max.item()) == (-2.0, 5.0)


def test_index_results_do_not_require_grad():
    # (tensor-core's searching.py: nonzero, argsort, searchsorted return plain indices)
    x = gt.tensor([3.0, 1.0, 2.0], requires_grad=True)
    for r in (x.nonzero(), x.argsort(), gt.searchsorted(x.detach(), x)):
        assert not r.requires_grad
