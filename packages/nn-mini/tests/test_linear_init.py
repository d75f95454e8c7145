"""Linear against torch (copied weights), its graph, and the initialisers' distributions."""

from __future__ import annotations

import math

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter, init

torch = pytest.importorskip("torch")


def copied_linears(n_in, n_out, bias, dtype):
    g = nn.Linear(n_in, n_out, bias=bias, dtype=dtype)
    t = torch.nn.Linear(n_in, n_out, bias=bias, dtype=getattr(torch, dtype.name))
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(g.weight.detach().numpy().copy()))
        if bias:
            t.bias.copy_(torch.from_numpy(g.bias.detach().numpy().copy()))
    return g, t


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
@pytest.mark.parametrize("shape", [(7, 5), (5,), (2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(dtype, shape, bias):
    g, t = copied_linears(5, 4, bias, dtype)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(shape).astype(dtype.numpy)
    xg = gt.tensor(x_np, requires_grad=True)
    xt = torch.tensor(x_np, requires_grad=True)
    yg, yt = g(xg), t(xt)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == gt.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), **tol)
    upstream = rng.standard_normal(yt.shape).astype(dtype.numpy)
    yg.backward(gt.tensor(upstream))
    yt.backward(torch.tensor(upstream))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), **tol)
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), **tol)
    if bias:
        np.testing.assert_allclose(g.bias.grad.numpy(), t.bias.grad.numpy(), **tol)
    assert g.weight.grad.shape == g.weight.shape and g.weight.grad.dtype == dtype


def node_names(fn, depth=2):
    """grad_fn names down the graph, as torch prints them."""
    out = [type(fn).__name__]
    if depth:
        out.append([None if f is None else node_names(f, depth - 1) for f, _ in fn.next_functions])
    return out


def test_grad_fn_names_match_torch():
    g, t = copied_linears(5, 4, True, gt.float32)
    for shape in [(3, 5), (5,), (2, 3, 5)]:
        yg = g(gt.randn(*shape, requires_grad=True))
        yt = t(torch.randn(*shape, requires_grad=True))
        assert node_names(yg.grad_fn) == node_names(yt.grad_fn), shape
    # 2-D input: one addmm whose inputs are the bias, the input and weight.t()
    yg = g(gt.randn(3, 5))
    assert type(yg.grad_fn).__name__ == "AddmmBackward0"
    names = [None if f is None else type(f).__name__ for f, _ in yg.grad_fn.next_functions]
    assert names == ["AccumulateGrad", None, "TBackward0"]


def test_linear_trains_like_torch():
    """Five SGD steps of a small MLP from the same weights end at the same weights."""
    gm = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for pg, pt in zip(gm.parameters(), tm.parameters()):
            pt.copy_(torch.from_numpy(pg.detach().numpy().copy()))
    gopt = nn.optim.SGD(gm.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((10, 6), np.float32), rng.integers(0, 3, 10)
    for _ in range(5):
        lg = nn.functional.cross_entropy(gm(gt.tensor(x)), gt.tensor(y))
        lt = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        assert lg.item() == pytest.approx(lt.item(), rel=1e-5)
        gopt.zero_grad()
        topt.zero_grad()
        lg.backward()
        lt.backward()
        gopt.step()
        topt.step()
    for pg, pt in zip(gm.parameters(), tm.parameters()):
        np.testing.assert_allclose(pg.detach().numpy(), pt.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_linear_attributes_and_errors():
    lin = nn.Linear(3, 2, bias=False)
    assert lin.bias is None and lin.in_features == 3 and lin.out_features == 2
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(Exception):  # noqa: B017 - shape mismatch from matmul
        lin(gt.ones(4, 5))
    assert nn.Identity(1, x=2)(gt.ones(2)).tolist() == [1.0, 1.0]


# -------------------------------------------------------------------------------------
# initialisation


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
def test_calculate_gain_matches_torch(name, param):
    assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


def test_init_generator_reproducible():
    g1, g2 = gt.Generator().manual_seed(5), gt.Generator().manual_seed(5)
    a, b = gt.empty(4, 4), gt.empty(4, 4)
    init.kaiming_uniform_(a, a=math.sqrt(5), generator=g1)
    init.kaiming_uniform_(b, a=math.sqrt(5), generator=g2)
    assert gt.equal(a, b)


def test_weight_grad_keeps_the_weights_layout():
    """Note [Matmul gradients in their input's layout]: the gradient for ``weight.t()``
    comes back row-major, like the weight, so accumulating it is a contiguous add."""
    lin = nn.Linear(7, 5)
    x = gt.randn(3, 7)
    for _ in range(2):  # created, then accumulated
        lin(x).sum().backward()
        assert lin.weight.grad.is_contiguous()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), 2 * np.ones((3, 5), np.float32).T @ x.numpy(), rtol=1e-6
    )
