"""gradstack_nn.distributions against torch.distributions: samples after the same seed,
log_prob, entropy, moments, cdf/icdf, KL divergences, gradients through rsample and
log_prob (float64), and argument validation."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
LOC = R.standard_normal((3, 2))
SCALE = R.uniform(0.5, 2.0, (3, 2))
LOGITS = R.standard_normal((3, 4))
PROBS = R.dirichlet(np.ones(4), size=3)
P = R.uniform(0.1, 0.9, (3, 2))
LOW = R.uniform(-2, 0, (3, 2))
HIGH = LOW + R.uniform(0.5, 2, (3, 2))
VALUES = R.standard_normal((3, 2))

CASES = {
    "normal": (lambda L, a, b: L.distributions.Normal(a, b), [LOC, SCALE], VALUES),
    "categorical_probs": (
        lambda L, a: L.distributions.Categorical(probs=a),
        [PROBS],
        np.array([0, 3, 1]),
    ),
    "categorical_logits": (
        lambda L, a: L.distributions.Categorical(logits=a),
        [LOGITS],
        np.array([2, 0, 1]),
    ),
    "bernoulli_probs": (lambda L, a: L.distributions.Bernoulli(probs=a), [P], (P > 0.5) * 1.0),
    "bernoulli_logits": (lambda L, a: L.distributions.Bernoulli(logits=a), [LOC], (LOC > 0) * 1.0),
    "uniform": (lambda L, a, b: L.distributions.Uniform(a, b), [LOW, HIGH], (LOW + HIGH) / 2),
}


def run(lib, name):
    build, params, value = CASES[name]
    ts = [lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in params]
    d = build(lib, *ts)
    lib.manual_seed(3)
    sample = d.sample((5,))
    out = {"sample": sample.detach().numpy(), "shape": tuple(sample.shape)}
    lp = d.log_prob(lib.tensor(value))
    ent = d.entropy()
    out["log_prob"] = lp.detach().numpy()
    out["entropy"] = ent.detach().numpy()
    if name in ("normal", "uniform", "bernoulli_probs"):
        out["mean"], out["variance"] = d.mean.detach().numpy(), d.variance.detach().numpy()
    loss = lp.sum() + ent.sum()
    if d.has_rsample:
        lib.manual_seed(4)
        loss = loss + d.rsample((2,)).pow(2).sum()
    grads = (gs.autograd.grad if lib is gs else torch.autograd.grad)(loss, ts)
    out["grads"] = [g.numpy() for g in grads]
    out["repr"] = repr(d)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ours, theirs = run(gs, name), run(torch, name)
    assert ours["shape"] == theirs["shape"]
    np.testing.assert_allclose(ours["sample"], theirs["sample"], rtol=1e-12)
    for key in ("log_prob", "entropy", "mean", "variance"):
        if key in theirs:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=1e-12)
    for a, b in zip(ours["grads"], theirs["grads"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_normal_cdf_icdf_and_kl():
    for lib in (gs, torch):
        D = lib.distributions
        p = D.Normal(lib.tensor(LOC), lib.tensor(SCALE))
        q = D.Normal(lib.tensor(LOC[::-1].copy()), lib.tensor(SCALE * 2))
        x = lib.tensor(VALUES)
        yield_ = (p.cdf(x).numpy(), p.icdf(lib.tensor(P)).numpy(), D.kl_divergence(p, q).numpy())
        if lib is gs:
            ours = yield_
        else:
            for a, b in zip(ours, yield_):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "pair",
    [
        lambda L: (L.distributions.Categorical(probs=L.tensor(PROBS)),
                   L.distributions.Categorical(logits=L.tensor(LOGITS))),
        lambda L: (L.distributions.Bernoulli(probs=L.tensor(P)),
                   L.distributions.Bernoulli(logits=L.tensor(LOC))),
        lambda L: (L.distributions.Uniform(L.tensor(LOW), L.tensor(HIGH)),
                   L.distributions.Uniform(L.tensor(LOW - 1), L.tensor(HIGH + 1))),
    ],
)  # fmt: skip
def test_kl_divergence_matches_torch(pair):
    a = gs.distributions.kl_divergence(*pair(gs)).numpy()
    b = torch.distributions.kl_divergence(*pair(torch)).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_validation_and_errors():
    for lib in (gs, torch):
        D = lib.distributions
        with pytest.raises(ValueError):
            D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))
        with pytest.raises(ValueError):
            D.Categorical()
        with pytest.raises(ValueError):
            D.Bernoulli(probs=lib.tensor([1.5]))
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Categorical(probs=lib.ones(2)), D.Normal(0.0, 1.0))
    for pair in ((lambda D: (D.Normal(0.5, 2.0), D.Uniform(0.0, 1.0))),
                 (lambda D: (D.Uniform(-1.0, 3.0), D.Normal(0.5, 2.0)))):  # fmt: skip
        a = gs.distributions.kl_divergence(*pair(gs.distributions)).item()
        b = torch.distributions.kl_divergence(*pair(torch.distributions)).item()
        assert a == b or abs(a - b) < 1e-6
