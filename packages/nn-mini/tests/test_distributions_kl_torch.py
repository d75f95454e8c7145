"""``kl_divergence`` and ``register_kl`` against torch.distributions 2.13: every pair
torch registers (values, infinities where the supports differ, gradients), the dispatch
to the most specific pair, the Bregman fallback for exponential families, ambiguity
warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(5)
# two parameter sets (variant 0 for p, 1 for q), batch shape (3,)
POS = [R.uniform(0.5, 3, 3), R.uniform(0.5, 3, 3)]
REAL = [R.standard_normal(3), R.standard_normal(3)]
UNIT = [R.uniform(0.1, 0.9, 3), R.uniform(0.1, 0.9, 3)]
SIMPLEX = [R.dirichlet(np.ones(4), 3), R.dirichlet(np.ones(4), 3)]
TRIL = [
    np.tril(R.standard_normal((3, 2, 2)) * 0.3, -1) + np.eye(2) * R.uniform(0.5, 1.5, (3, 2, 1))
    for _ in range(2)
]
FACTOR = [R.standard_normal((3, 2, 1)) * 0.5 for _ in range(2)]


def _t(L, a):
    return L.tensor(a, dtype=L.float64)


# distribution type -> build(D, L, variant)
INSTANCES = {
    "Bernoulli": lambda D, L, v, t=_t: D.Bernoulli(t(L, UNIT[v])),
    "Beta": lambda D, L, v, t=_t: D.Beta(t(L, POS[v]), t(L, POS[1 - v])),
    "Binomial": lambda D, L, v, t=_t: D.Binomial(t(L, [5.0, 5.0, 7.0 - 2 * v]), t(L, UNIT[v])),
    "Categorical": lambda D, L, v, t=_t: D.Categorical(t(L, SIMPLEX[v])),
    "Cauchy": lambda D, L, v, t=_t: D.Cauchy(t(L, REAL[v]), t(L, POS[v])),
    "ContinuousBernoulli": lambda D, L, v, t=_t: D.ContinuousBernoulli(t(L, UNIT[v])),
    "Dirichlet": lambda D, L, v, t=_t: D.Dirichlet(t(L, SIMPLEX[v] * 5 + 0.2)),
    "Exponential": lambda D, L, v, t=_t: D.Exponential(t(L, POS[v])),
    "Gamma": lambda D, L, v, t=_t: D.Gamma(t(L, POS[v]), t(L, POS[1 - v])),
    "Geometric": lambda D, L, v, t=_t: D.Geometric(t(L, UNIT[v])),
    "Gumbel": lambda D, L, v, t=_t: D.Gumbel(t(L, REAL[v]), t(L, POS[v])),
    "HalfNormal": lambda D, L, v, t=_t: D.HalfNormal(t(L, POS[v])),
    "Independent": lambda D, L, v, t=_t: D.Independent(D.Normal(t(L, REAL[v]), t(L, POS[v])), 1),
    "Laplace": lambda D, L, v, t=_t: D.Laplace(t(L, REAL[v]), t(L, POS[v])),
    "LowRankMultivariateNormal": lambda D, L, v, t=_t: D.LowRankMultivariateNormal(
        t(L, REAL[v][:2]), t(L, FACTOR[v]), t(L, POS[v][:2])
    ),
    "MultivariateNormal": lambda D, L, v, t=_t: D.MultivariateNormal(
        t(L, REAL[v][:2]), scale_tril=t(L, TRIL[v])
    ),
    "Normal": lambda D, L, v, t=_t: D.Normal(t(L, REAL[v]), t(L, POS[v])),
    "OneHotCategorical": lambda D, L, v, t=_t: D.OneHotCategorical(t(L, SIMPLEX[v])),
    "Pareto": lambda D, L, v, t=_t: D.Pareto(t(L, POS[v]), t(L, POS[v] + [0.2, 1.2, 2.5])),
    "Poisson": lambda D, L, v, t=_t: D.Poisson(t(L, POS[v])),
    "TransformedDistribution": lambda D, L, v, t=_t: D.LogNormal(t(L, REAL[v]), t(L, POS[v])),
    "Uniform": lambda D, L, v, t=_t: D.Uniform(t(L, UNIT[v] * 0.5), t(L, UNIT[v] * 0.5 + 0.4)),
    "ExponentialFamily": lambda D, L, v, t=_t: D.Wishart(
        t(L, [3.0 + v, 4.0, 5.5]), scale_tril=t(L, TRIL[v])
    ),
}


def _pairs():
    return sorted(
        (p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY
    )  # torch's own registry: every pair it implements


def _kl(lib, p_name, q_name, requires_grad=False):
    D = lib.distributions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = INSTANCES[p_name](D, lib, 0)
        q = INSTANCES[q_name](D, lib, 1)
    return D.kl_divergence(p, q)


def test_every_pair_torch_registers_is_registered():
    ours = sorted((p.__name__, q.__name__) for p, q in gs.distributions.kl._KL_REGISTRY)
    assert ours == _pairs()


@pytest.mark.parametrize("pair", _pairs(), ids="-".join)
def test_kl_matches_torch(pair):
    results = []
    for lib in (gs, torch):
        try:
            results.append(("value", _kl(lib, *pair).detach().numpy()))
        except (NotImplementedError, ValueError) as e:
            results.append(("raises", type(e)))
    assert results[0][0] == results[1][0], results
    if results[0][0] == "value":
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)
    else:
        assert results[0][1] is results[1][1]


@pytest.mark.parametrize(
    "pair",
    [("Normal", "Normal"), ("Beta", "Beta"), ("Gamma", "Gamma"), ("Dirichlet", "Dirichlet"),
     ("MultivariateNormal", "MultivariateNormal"), ("LowRankMultivariateNormal",
     "MultivariateNormal"), ("MultivariateNormal", "LowRankMultivariateNormal"),
     ("LowRankMultivariateNormal", "LowRankMultivariateNormal"), ("Categorical", "Categorical"),
     ("Bernoulli", "Bernoulli"), ("Laplace", "Normal"), ("Gumbel", "Gumbel"),
     ("ContinuousBernoulli", "ContinuousBernoulli"), ("Poisson", "Poisson"),
     ("Independent", "Independent"), ("TransformedDistribution", "TransformedDistribution"),
     ("ExponentialFamily", "ExponentialFamily")],
    ids="-".join,
)  # fmt: skip
def test_kl_gradients_match_torch(pair):
    """The gradient of the KL with respect to every parameter of p and q."""
    grads = []
    for lib in (gs, torch):
        D = lib.distributions
        leaves = []

        def leaf(L, a, leaves=leaves):
            x = L.tensor(a, dtype=L.float64, requires_grad=True)
            leaves.append(x)
            return x

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = INSTANCES[pair[0]](D, lib, 0, leaf)
            q = INSTANCES[pair[1]](D, lib, 1, leaf)
        kl = D.kl_divergence(p, q).sum()
        grads.append(
            [
                None if g is None else g.numpy()
                for g in lib.autograd.grad(kl, leaves, allow_unused=True)
            ]
        )
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_kl_dispatch_and_registry(monkeypatch):
    for lib in (gs, torch):
        D = lib.distributions
        # the pairs registered below stay in this test: the registries are process-wide
        monkeypatch.setattr(D.kl, "_KL_REGISTRY", dict(D.kl._KL_REGISTRY))
        monkeypatch.setattr(D.kl, "_KL_MEMOIZE", {})
        # subclasses use their parents' pair: Chi2 is a Gamma
        a = D.kl_divergence(
            D.Chi2(lib.tensor([3.0])), D.Gamma(lib.tensor([2.0]), lib.tensor([0.5]))
        )
        b = D.kl_divergence(
            D.Gamma(lib.tensor([1.5]), lib.tensor([0.5])),
            D.Gamma(lib.tensor([2.0]), lib.tensor([0.5])),
        )
        np.testing.assert_allclose(a.numpy(), b.numpy())
        # no pair: the message names both types
        with pytest.raises(
            NotImplementedError,
            match="No KL\\(p \\|\\| q\\) is implemented for p type Cauchy and q type Normal",
        ):
            D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0))
        # two exponential families of different types: the Bregman fallback refuses
        with pytest.raises(NotImplementedError, match="cross KL-divergence"):
            D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(lib.tensor([1.0])))

        class MyNormal(D.Normal):
            pass

        class MyUniform(D.Uniform):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _a(p, q, lib=lib):
            return lib.tensor(1.0)

        @D.register_kl(D.Normal, MyNormal)
        def _b(p, q, lib=lib):
            return lib.tensor(2.0)

        # an own pair wins over the parents'
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 1.0
        assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 2.0
        # ambiguous: both registered pairs match equally well
        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence\\(MyNormal, MyNormal\\)"):
            assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 1.0
        # a subclass without pairs of its own uses its parent's formula
        u = D.kl_divergence(MyUniform(0.0, 1.0), D.Uniform(-1.0, 2.0)).item()
        assert u == pytest.approx(np.log(3.0))


def test_kl_docstring_lists_the_pairs():
    doc = gs.distributions.kl_divergence.__doc__
    assert "KL divergence is currently implemented for the following distribution pairs" in doc
    assert "``Normal`` and ``Normal``" in doc
