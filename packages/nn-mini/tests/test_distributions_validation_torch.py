"""Argument and sample validation of gradstack_nn.distributions against torch 2.13: the
same exceptions with the same messages (``gradstack`` written for ``torch``), the
validation switches (``validate_args``, ``Distribution.set_default_validate_args``), and
the warnings torch gives."""

from __future__ import annotations

import warnings

import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")


def _outcome(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib.distributions, lib)
        except Exception as e:  # noqa: BLE001 - the type and the message are compared
            return type(e).__name__, str(e).replace("gradstack", "torch")
    return None


BAD_CALLS = {
    "negative scale": lambda D, L: D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    "scalar negative scale": lambda D, L: D.Normal(0.0, -2.0),
    "probs above one": lambda D, L: D.Bernoulli(probs=L.tensor([0.5, 1.5])),
    "probs and logits": lambda D, L: D.Bernoulli(probs=L.tensor([0.5]), logits=L.tensor([0.0])),
    "neither probs nor logits": lambda D, L: D.Categorical(),
    "0-d probs": lambda D, L: D.Categorical(probs=L.tensor(1.0)),
    "0-d logits": lambda D, L: D.Categorical(logits=L.tensor(1.0)),
    "negative probs": lambda D, L: D.Categorical(probs=L.tensor([0.5, -0.5])),
    "not a simplex": lambda D, L: D.OneHotCategorical(L.tensor([0.2, -0.1])),
    "low above high": lambda D, L: D.Uniform(L.tensor([1.0]), L.tensor([0.0])),
    "gamma rate": lambda D, L: D.Gamma(L.tensor([1.0]), L.tensor([0.0])),
    "beta": lambda D, L: D.Beta(L.tensor([1.0]), L.tensor([-1.0])),
    "dirichlet 0-d": lambda D, L: D.Dirichlet(L.tensor(1.0)),
    "dirichlet": lambda D, L: D.Dirichlet(L.tensor([1.0, 0.0])),
    "poisson": lambda D, L: D.Poisson(L.tensor([-1.0])),
    "binomial count": lambda D, L: D.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    "geometric zero": lambda D, L: D.Geometric(L.tensor([0.0, 0.5])),
    "exponential": lambda D, L: D.Exponential(L.tensor([-1.0])),
    "laplace": lambda D, L: D.Laplace(0.0, 0.0),
    "mvn none": lambda D, L: D.MultivariateNormal(L.zeros(2)),
    "mvn two": lambda D, L: D.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    "mvn 0-d loc": lambda D, L: D.MultivariateNormal(L.tensor(0.0), L.eye(1)),
    "mvn 1-d cov": lambda D, L: D.MultivariateNormal(L.zeros(2), L.ones(2)),
    "mvn not pd": lambda D, L: D.MultivariateNormal(L.zeros(2), -L.eye(2)),
    "mvn not tril": lambda D, L: D.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2, 2)),
    "lowrank shapes": lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    "lowrank diag": lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(3)),
    "lowrank batch": lambda D, L: D.LowRankMultivariateNormal(
        L.zeros(3, 2), L.ones(4, 2, 1), L.ones(2)
    ),
    "independent ndims": lambda D, L: D.Independent(D.Normal(L.zeros(2), 1.0), 2),
    "mixture not categorical": lambda D, L: D.MixtureSameFamily(
        D.Normal(0.0, 1.0), D.Normal(L.zeros(2), 1.0)
    ),
    "mixture components": lambda D, L: D.MixtureSameFamily(
        D.Categorical(L.ones(3)), D.Normal(L.zeros(2), 1.0)
    ),
    "mixture batch": lambda D, L: D.MixtureSameFamily(
        D.Categorical(L.ones(3, 2)), D.Normal(L.zeros(4, 2), 1.0)
    ),
    "multinomial count": lambda D, L: D.Multinomial(L.tensor(3), L.ones(2)),
    "lkj dim": lambda D, L: D.LKJCholesky(1, 1.0),
    "wishart df": lambda D, L: D.Wishart(L.tensor(0.5), covariance_matrix=L.eye(2)),
    "wishart two": lambda D, L: D.Wishart(L.tensor(3.0), L.eye(2), scale_tril=L.eye(2)),
    "broadcast_all": lambda D, L: D.utils.broadcast_all(L.zeros(2), "a"),
    "transforms": lambda D, L: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    "transform list": lambda D, L: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]),
    "transform event dims": lambda D, L: D.TransformedDistribution(
        D.Normal(0.0, 1.0), D.StickBreakingTransform()
    ),
    "binomial entropy": lambda D, L: D.Binomial(
        L.tensor([2.0, 3.0]), L.tensor([0.5, 0.5])
    ).entropy(),
    "binomial kl": lambda D, L: D.kl_divergence(
        D.Binomial(L.tensor([2.0]), L.tensor([0.5])), D.Binomial(L.tensor([3.0]), L.tensor([0.5]))
    ),
    "vec_to_tril": lambda D, L: D.utils.vec_to_tril_matrix(L.ones(4)),
    "tril_to_vec": lambda D, L: D.utils.tril_matrix_to_vec(L.ones(2, 2), diag=3),
    "set_default_validate_args": lambda D, L: D.Distribution.set_default_validate_args(2),
    "cdf not implemented": lambda D, L: D.Poisson(L.ones(1)).cdf(L.ones(1)),
    "rsample not implemented": lambda D, L: D.Poisson(L.ones(1)).rsample(),
    "enumerate_support not implemented": lambda D, L: D.Normal(0.0, 1.0).enumerate_support(),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors_are_torchs(name):
    ours, theirs = _outcome(gs, BAD_CALLS[name]), _outcome(torch, BAD_CALLS[name])
    assert theirs is not None
    assert ours == theirs


SAMPLE_CALLS = {
    "out of support": lambda D, L: D.Exponential(L.ones(2)).log_prob(L.tensor([-1.0, 1.0])),
    "bad event shape": lambda D, L: D.Dirichlet(L.ones(3)).log_prob(L.ones(2)),
    "not broadcastable": lambda D, L: D.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    "not a tensor": lambda D, L: D.Normal(0.0, 1.0).log_prob(0.5),
    "cdf out of support": lambda D, L: D.Uniform(0.0, 1.0).cdf(L.tensor(2.0)),
    "categorical value": lambda D, L: D.Categorical(L.ones(3)).log_prob(L.tensor([3])),
    "one hot value": lambda D, L: D.OneHotCategorical(L.ones(3)).log_prob(L.tensor([1.0, 1, 0])),
    "simplex value": lambda D, L: D.Dirichlet(L.ones(2)).log_prob(L.tensor([0.5, 0.6])),
    "binomial value": lambda D, L: D.Binomial(L.tensor(3.0), L.tensor(0.5)).log_prob(L.tensor(4.0)),
    "mixture value": lambda D, L: D.MixtureSameFamily(
        D.Categorical(L.ones(2)), D.Exponential(L.ones(2))
    ).log_prob(L.tensor(-1.0)),
    "transformed value": lambda D, L: D.LogNormal(0.0, 1.0).log_prob(L.tensor(-1.0)),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_CALLS))
def test_sample_validation_is_torchs(name):
    ours, theirs = _outcome(gs, SAMPLE_CALLS[name]), _outcome(torch, SAMPLE_CALLS[name])
    assert theirs is not None
    assert ours == theirs


def test_validation_switches():
    for lib in (gs, torch):
        D = lib.distributions
        # per instance
        d = D.Normal(0.0, -1.0, validate_args=False)
        assert d.scale.item() == -1.0
        assert (
            D.Exponential(lib.ones(1), validate_args=False).log_prob(lib.tensor([-1.0])).item()
            == 1.0
        )
        # the default, for distributions created afterwards
        D.Distribution.set_default_validate_args(False)
        try:
            assert D.Normal(0.0, -1.0).scale.item() == -1.0
            with pytest.raises(ValueError):
                D.Normal(0.0, -1.0, validate_args=True)
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Normal(0.0, -1.0)
        # an expanded distribution keeps its validation setting without checking again
        e = D.Normal(lib.zeros(2), 1.0, validate_args=False).expand((3, 2))
        assert e._validate_args is False


def test_a_subclass_without_constraints_warns_as_torch():
    for lib in (gs, torch):
        D = lib.distributions

        class Mine(D.Distribution):
            def __init__(self):
                super().__init__(validate_args=True)

        with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
            d = Mine()
        with pytest.warns(UserWarning, match="does not define `support`"):
            d._validate_sample(lib.zeros(()))
        with pytest.raises(NotImplementedError, match="must also define a custom .expand"):

            class Sub(D.Normal):
                def __init__(self):
                    super().__init__(0.0, 1.0)

            Sub()._get_checked_instance(D.Normal)


def test_lazy_parameters_are_not_validated_before_they_are_computed():
    for lib in (gs, torch):
        D = lib.distributions
        d = D.Bernoulli(logits=lib.tensor([100.0]))
        assert "probs" not in d.__dict__
        assert d.probs.item() == 1.0  # computed on first access, with grad enabled
        assert "probs" in d.__dict__
        x = lib.tensor([0.3], requires_grad=True)
        with lib.no_grad():
            d = D.Bernoulli(logits=x)
        assert d.probs.requires_grad  # the lazy property runs under enable_grad


def test_sample_n_is_deprecated_as_in_torch():
    for lib in (gs, torch):
        with pytest.warns(FutureWarning, match="Use `sample\\(\\(n,\\)\\)` instead"):
            assert tuple(lib.distributions.Normal(0.0, 1.0).sample_n(3).shape) == (3,)
