"""``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma`` and their ``special`` names against
torch 2.13: values in float64 and float32 at ordinary points, poles, signed zeros,
infinities and NaN; gradients to second order; errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

POINTS = np.array([
    0.0, -0.0, -1.0, -2.5, 0.3, 1.0, 2.0, 3.7, 9.99, 10.0, 10.5, 50.0, 1e5, 1e18, -7.3,
    np.inf, -np.inf, np.nan, 1e-8, -1e-8, 170.5, -0.5, 0.5,
])  # fmt: skip
R = np.random.default_rng(3)
RANDOM = np.concatenate([R.uniform(-20, 20, 400), R.uniform(0, 3, 200)])

FUNCTIONS = {
    "lgamma": lambda L, x: L.lgamma(x),
    "digamma": lambda L, x: L.digamma(x),
    "trigamma": lambda L, x: L.polygamma(1, x),
    "polygamma 2": lambda L, x: L.polygamma(2, x),
    "polygamma 3": lambda L, x: x.polygamma(3),
    "polygamma 0": lambda L, x: L.polygamma(0, x),
    "special.gammaln": lambda L, x: L.special.gammaln(x),
    "special.psi": lambda L, x: L.special.psi(x),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_match_torch(name, dtype):
    fn = FUNCTIONS[name]
    for values in (POINTS, RANDOM):
        a = values.astype(dtype)
        ours = fn(gs, gs.tensor(a)).numpy()
        theirs = fn(torch, torch.tensor(a)).numpy()
        assert ours.dtype == theirs.dtype
        # float64: torch's formulas, to rounding; float32: torch computes in float32
        rtol = 1e-12 if dtype == "float64" else 2e-6
        atol = 0 if dtype == "float64" else 2e-7  # (float32 cancellation near 0)
        if name.startswith("polygamma") and dtype == "float32":
            rtol = 1e-4  # (n >= 2 is a zeta sum in float32 in torch)
        close = np.isclose(ours, theirs, rtol=rtol, atol=atol) | (ours == theirs)
        close |= np.isnan(ours) & np.isnan(theirs)
        assert close.all(), (a[~close], ours[~close], theirs[~close])


def test_integer_inputs_become_the_default_float():
    for lib in (gs, torch):
        assert str(lib.lgamma(lib.tensor([1, 2, 3])).dtype).endswith("float32")


def test_gradients_to_second_order_match_torch():
    x = np.array([0.4, 1.3, 2.2, 7.5, -2.6])
    outs = []
    for lib in (gs, torch):
        t = lib.tensor(x, requires_grad=True)
        y = t.lgamma().sum() + (t.digamma() * 0.5).sum() + lib.polygamma(2, t).sum() * 0.1
        (g,) = lib.autograd.grad(y, t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t)
        outs.append([g.detach().numpy(), gg.numpy()])
    for o, t in zip(*outs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-10)
    for lib in (gs, torch):
        t = lib.tensor([1.5], requires_grad=True)
        assert type(lib.lgamma(t).grad_fn).__name__ == "LgammaBackward0"


def test_mvlgamma_matches_torch():
    x = np.array([[2.5, 3.0], [10.0, 1.6]])
    for p in (1, 2, 3):
        ours = gs.mvlgamma(gs.tensor(x), p)
        theirs = torch.mvlgamma(torch.tensor(x), p)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-14)
        np.testing.assert_allclose(
            gs.special.multigammaln(gs.tensor(x), p).numpy(), theirs.numpy(), rtol=1e-14
        )
    # below (p - 1) / 2: torch 2.13 computes the sum anyway
    below = gs.mvlgamma(gs.tensor([0.2, 0.7]), 2).numpy()
    np.testing.assert_allclose(
        below, torch.mvlgamma(torch.tensor([0.2, 0.7]), 2).numpy(), rtol=1e-6
    )
    for lib in (gs, torch):
        with pytest.raises(RuntimeError, match="does not support negative n"):
            lib.polygamma(-1, lib.tensor([1.0]))


def test_in_place_forms_match_torch():
    for name in ("lgamma_", "digamma_"):
        a, b = gs.tensor([0.5, 3.5]), torch.tensor([0.5, 3.5])
        getattr(a, name)()
        getattr(b, name)()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    a, b = gs.tensor([0.5, 3.5]), torch.tensor([0.5, 3.5])
    a.polygamma_(1)
    b.polygamma_(1)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
