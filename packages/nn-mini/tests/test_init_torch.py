"""nn.init against torch.

gradstack's generator is numpy's PCG64, torch's is MT19937 with its own transforms, so
the same seed gives other draws (README, "Random numbers"): the init functions are
checked by their formulas (gains, bounds, standard deviations against torch's for the
same shapes), their distributions, and their deterministic parts exactly."""

from __future__ import annotations

import math

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter, init

torch = pytest.importorskip("torch")

TI = torch.nn.init


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("conv2d",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("selu",),
    ],
)
def test_calculate_gain_matches_torch(args):
    assert init.calculate_gain(*args) == TI.calculate_gain(*args)


@pytest.mark.parametrize(
    "name,param",
    [
        ("linear", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("selu", None),
        ("conv2d", None),
    ],
)
def test_calculate_gain_by_name_matches_torch(name, param):
    assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize(
    "name, kwargs, kind",
    [
        ("xavier_uniform_", {}, "bound"),
        ("xavier_uniform_", {"gain": 2.0}, "bound"),
        ("kaiming_uniform_", {}, "bound"),
        ("kaiming_uniform_", {"a": math.sqrt(5)}, "bound"),
        ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}, "bound"),
        ("xavier_normal_", {}, "std"),
        ("kaiming_normal_", {"mode": "fan_out"}, "std"),
        ("kaiming_normal_", {"a": 0.1, "nonlinearity": "leaky_relu"}, "std"),
    ],
)
@pytest.mark.parametrize("shape", [(400, 300), (64, 16, 3, 3)])
def test_fan_based_inits_follow_torchs_formulas(name, kwargs, kind, shape):
    gt.manual_seed(0)
    torch.manual_seed(0)
    g = getattr(init, name)(gt.empty(shape), **kwargs).numpy()
    t = getattr(TI, name)(torch.empty(shape), **kwargs).numpy()
    if kind == "bound":
        # uniform(-b, b): both reach close to the same b and never beyond it
        b = max(np.abs(g).max(), np.abs(t).max())
        assert np.abs(g).max() > 0.99 * b and np.abs(t).max() > 0.99 * b
        assert abs(g.mean()) < 0.02 * b and abs(g.std() - b / math.sqrt(3)) < 0.02 * b
    else:
        assert abs(g.std() - t.std()) < 0.02 * t.std() and abs(g.mean()) < 0.02 * t.std()


def test_uniform_normal_constant_ones_zeros_eye():
    gt.manual_seed(1)
    u = init.uniform_(gt.empty(20000), -2.0, 3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.05
    n = init.normal_(gt.empty(20000), 1.0, 0.5).numpy()
    assert abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    assert init.constant_(gt.empty(3), 2.5).tolist() == [2.5] * 3
    assert init.ones_(gt.empty(2)).tolist() == [1.0, 1.0]
    assert init.zeros_(gt.empty(2)).tolist() == [0.0, 0.0]
    assert init.eye_(gt.empty(2, 3)).tolist() == TI.eye_(torch.empty(2, 3)).tolist()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(gt.empty(3))
    p = nn.Parameter(gt.empty(3))  # in place on a leaf that requires grad: under no_grad
    init.normal_(p)
    assert p.requires_grad and p.grad_fn is None


def test_trunc_normal_stays_in_bounds_with_the_right_moments():
    gt.manual_seed(2)
    x = init.trunc_normal_(gt.empty(50000), mean=0.5, std=1.0, a=-1.0, b=1.5).numpy()
    t = TI.trunc_normal_(torch.empty(50000), mean=0.5, std=1.0, a=-1.0, b=1.5).numpy()
    assert x.min() >= -1.0 and x.max() <= 1.5
    assert abs(x.mean() - t.mean()) < 0.02 and abs(x.std() - t.std()) < 0.02
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(gt.empty(3), mean=10.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3), (6, 6)])
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_orthogonal(shape, gain):
    w = init.orthogonal_(gt.empty(shape, dtype=gt.float64), gain=gain).numpy()
    flat = w.reshape(shape[0], -1)
    rows, cols = flat.shape
    if rows <= cols:
        np.testing.assert_allclose(flat @ flat.T, gain**2 * np.eye(rows), atol=1e-12)
    else:
        np.testing.assert_allclose(flat.T @ flat, gain**2 * np.eye(cols), atol=1e-12)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(gt.empty(3))
    assert init.orthogonal_(gt.empty(0, 3)).shape == (0, 3)


def test_zero_element_tensors_warn_as_torch():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(gt.empty(0, 3))
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(gt.empty(3))


def ks_uniform(values, low, high):
    """Kolmogorov-Smirnov distance of the sample from U(low, high)."""
    v = np.sort(values.ravel())
    cdf = (v - low) / (high - low)
    n = v.size
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


def test_linear_default_init_is_kaiming_uniform_sqrt5():
    gt.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # fills the interval
    assert ks_uniform(w, -bound, bound) < 0.01  # 120k samples: uniform
    assert ks_uniform(b, -bound, bound) < 0.15
    assert abs(w.mean()) < 0.01 * bound
    assert w.var() == pytest.approx(bound**2 / 3, rel=0.02)
    assert lin.weight.grad is None and lin.weight.is_leaf


def test_init_functions():
    gt.manual_seed(0)
    w = Parameter(gt.empty(200, 300))
    fan_in, fan_out = 300, 200
    tw = torch.empty(200, 300)
    assert init._calculate_fan_in_and_fan_out(w) == torch.nn.init._calculate_fan_in_and_fan_out(tw)
    init.uniform_(w, -2, 3)
    a = w.detach().numpy()
    assert a.min() >= -2 and a.max() < 3 and ks_uniform(a, -2, 3) < 0.01
    init.normal_(w, 1.0, 2.0)
    a = w.detach().numpy()
    assert a.mean() == pytest.approx(1.0, abs=0.03) and a.std() == pytest.approx(2.0, rel=0.02)
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(w.detach().numpy()).max() <= bound
    assert ks_uniform(w.detach().numpy(), -bound, bound) < 0.01
    init.xavier_normal_(w)
    assert w.detach().numpy().std() == pytest.approx(math.sqrt(2 / (fan_in + fan_out)), rel=0.02)
    init.kaiming_uniform_(w, nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / fan_in)
    assert np.abs(w.detach().numpy()).max() <= bound
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert w.detach().numpy().std() == pytest.approx(math.sqrt(2 / fan_out), rel=0.02)
    init.trunc_normal_(w, std=1.0, a=-1.0, b=1.5)
    a = w.detach().numpy()
    assert a.min() >= -1.0 and a.max() <= 1.5
    init.constant_(w, 0.5)
    assert np.all(w.detach().numpy() == 0.5)
    init.ones_(w)
    init.zeros_(w)
    assert not w.detach().numpy().any()
    sq = Parameter(gt.empty(3, 3))
    init.eye_(sq)
    np.testing.assert_array_equal(sq.detach().numpy(), np.eye(3))
    # all of them under no_grad: the parameter stays a leaf that requires grad
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_init_bumps_version_and_checks():
    w = Parameter(gt.empty(3, 4))
    v = w._version
    init.uniform_(w)
    assert w._version > v
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(Parameter(gt.empty(3)))
    with pytest.raises(ValueError, match="Mode fan_up not supported"):
        init.kaiming_uniform_(w, mode="fan_up")
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.warns(UserWarning, match="no-op"):
        init.kaiming_uniform_(Parameter(gt.empty(0, 3)))


def test_init_generator_reproducible():
    g1, g2 = gt.Generator().manual_seed(5), gt.Generator().manual_seed(5)
    a, b = gt.empty(4, 4), gt.empty(4, 4)
    init.kaiming_uniform_(a, a=math.sqrt(5), generator=g1)
    init.kaiming_uniform_(b, a=math.sqrt(5), generator=g2)
    assert gt.equal(a, b)
