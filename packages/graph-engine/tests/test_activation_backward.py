"""Gradients of the ops that take tensor-core's activation kernels (gelu, silu, erf,
erfinv): float32 first-order gradients through the fused kernels, against torch 2.13;
create_graph keeps gradstack ops (double backward against torch, gradgradcheck in float64)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(3434)

# name: (gradstack function, torch function, input range)
OPS = {
    "gelu": (lambda t: gt.OPS["gelu"](t, "none"), F.gelu, 4.0),
    "gelu_tanh": (
        lambda t: gt.OPS["gelu"](t, "tanh"),
        lambda t: F.gelu(t, approximate="tanh"),
        4.0,
    ),
    "silu": (lambda t: gt.OPS["silu"](t), F.silu, 6.0),
    "erf": (gt.erf, torch.erf, 2.5),
    "erfinv": (gt.erfinv, torch.erfinv, 0.95),
    "leaky_relu": (lambda t: gt.OPS["leaky_relu"](t, 0.1), lambda t: F.leaky_relu(t, 0.1), 3.0),
}
# the fused kernel each first-order float32 backward takes (gelu through its op's kernel)
FUSED = {"silu": "silu_backward", "erf": "erf_backward", "erfinv": "erfinv_backward"}


def _x(name, shape, dtype):
    scale = OPS[name][2]
    x = (
        RNG.uniform(-scale, scale, shape)
        if name == "erfinv"
        else RNG.standard_normal(shape) * scale
    )
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5, 17), (70, 80)])
def test_float32_gradients_match_torch(name, shape):
    ours, theirs, _ = OPS[name]
    x = _x(name, shape, np.float32)
    g = RNG.standard_normal(shape).astype(np.float32)
    a = gt.tensor(x, requires_grad=True)
    ours(a).backward(gt.tensor(g))
    t = torch.tensor(x, requires_grad=True)
    theirs(t).backward(torch.tensor(g))
    rtol = 2e-5 if name == "erfinv" else 2e-6  # exp(erfinv(y)**2) magnifies near +-1
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=5e-6)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_first_order_float32_backward_takes_the_fused_kernel(name, monkeypatch):
    calls = []
    kernel = getattr(kernels, FUSED[name])

    def counted(*arrays):
        calls.append(arrays[0].shape)
        return kernel(*arrays)

    monkeypatch.setattr(kernels, FUSED[name], counted)
    ours = OPS[name][0]
    a = gt.tensor(_x(name, (4, 6), np.float32), requires_grad=True)
    ours(a).sum().backward()
    assert calls == [(4, 6)]
    # create_graph keeps the gradstack formula (which differentiates again)
    b = gt.tensor(_x(name, (4, 6), np.float32), requires_grad=True)
    (gb,) = ag.grad(ours(b).sum(), b, create_graph=True)
    assert calls == [(4, 6)] and gb.requires_grad


@pytest.mark.parametrize("name", sorted(OPS))
def test_non_contiguous_inputs_and_gradients(name):
    ours, theirs, _ = OPS[name]
    x = _x(name, (6, 8), np.float32)
    g = RNG.standard_normal((8, 6)).astype(np.float32)
    a = gt.tensor(x, requires_grad=True)
    ours(a.t()).backward(gt.tensor(g.T.copy()).t())  # a transposed input and gradient
    t = torch.tensor(x, requires_grad=True)
    theirs(t.t()).backward(torch.tensor(g))
    rtol = 2e-5 if name == "erfinv" else 2e-6
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=5e-6)


@pytest.mark.parametrize("name", sorted(set(OPS) - {"leaky_relu"}))  # (piecewise linear)
def test_double_backward_matches_torch_and_gradgradcheck(name):
    ours, theirs, _ = OPS[name]
    x = _x(name, (3, 4), np.float64)
    a = gt.tensor(x, requires_grad=True)
    (ga,) = ag.grad(ours(a).sum(), a, create_graph=True)
    (gga,) = ag.grad(ga.sum(), a)
    t = torch.tensor(x, requires_grad=True)
    (gt_,) = torch.autograd.grad(theirs(t).sum(), t, create_graph=True)
    (ggt,) = torch.autograd.grad(gt_.sum(), t)
    np.testing.assert_allclose(ga.detach().numpy(), gt_.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gga.numpy(), ggt.numpy(), rtol=1e-10, atol=1e-12)
    assert ag.gradcheck(ours, (gt.tensor(x, requires_grad=True),))
    assert ag.gradgradcheck(ours, (gt.tensor(x, requires_grad=True),))
