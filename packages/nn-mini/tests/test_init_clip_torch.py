"""nn.init and nn.utils.clip_grad_* against torch.

gradstack's generator is numpy's PCG64, torch's is MT19937 with its own transforms, so
the same seed gives other draws (README, "Random numbers"): the init functions are
checked by their formulas (gains, bounds, standard deviations against torch's for the
same shapes), their distributions, and their deterministic parts exactly; clipping is
deterministic and checked value for value."""

from __future__ import annotations

import math
import types

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import init
from gradstack_nn.utils import clip_grad_norm_, clip_grad_value_

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


# ---------------------------------------------------------------------------------------
# gradient clipping


def _params_with_grads(lib, grads):
    ps = []
    for g in grads:
        if lib is torch:
            p = torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64))
            p.grad = None if g is None else torch.tensor(g)
        else:
            p = nn.Parameter(gt.zeros(g.shape, dtype=gt.float64))
            p.grad = None if g is None else gt.tensor(g)
        ps.append(p)
    return ps


GRADS = [np.array([[3.0, -4.0], [1.0, 0.5]]), np.array([12.0, -0.25]), np.array(2.0)]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    gp, tp = _params_with_grads(gt, GRADS), _params_with_grads(torch, GRADS)
    gn = clip_grad_norm_(gp, max_norm, norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert gn.dtype.name == str(tn.dtype)[6:] and gn.shape == tn.shape
    np.testing.assert_allclose(gn.item(), tn.item(), rtol=1e-12)
    for a, b in zip(gp, tp):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases_as_torch():
    ps = _params_with_grads(gt, [np.array([1.0]), np.array([2.0])])
    ps[1].grad = None  # skipped
    assert clip_grad_norm_(ps, 0.5).item() == pytest.approx(1.0)
    assert ps[0].grad.item() == pytest.approx(0.5 / (1 + 1e-6))
    assert clip_grad_norm_([nn.Parameter(gt.zeros(2))], 1.0).item() == 0.0  # no gradients
    single = nn.Parameter(gt.zeros(2))
    single.grad = gt.tensor([3.0, 4.0])
    assert clip_grad_norm_(single, 10.0).item() == 5.0  # a tensor, not a list
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        clip_grad_norm_((p for p in []), 1.0)
    bad = nn.Parameter(gt.zeros(1))
    bad.grad = gt.tensor([math.inf])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    assert isinstance((p for p in []), types.GeneratorType)


@pytest.mark.parametrize("clip", [0.5, 3])
def test_clip_grad_value_matches_torch(clip):
    gp, tp = _params_with_grads(gt, GRADS), _params_with_grads(torch, GRADS)
    assert clip_grad_value_(gp, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    for a, b in zip(gp, tp):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
