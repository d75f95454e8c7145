"""``conv2d`` through Winograd's F(2x2, 3x3) (tensor-core's ``_conv_winograd.py``, taken for
3x3 stride-1 convolutions of at least 8 channels) from the user's side against torch
2.13: ``nn.Conv2d`` values and first-order gradients in float32 and float64 with and
without bias, every padding, odd planes, an input that needs no gradient (the first
layer), non-contiguous input; gradcheck and gradgradcheck in float64 (the second order
runs the formula in ops); and a BatchNorm2d + ReLU block trained for steps as the
benchmark's ResNet does, its losses against torch's."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import _conv_arrays, _conv_winograd

torch = pytest.importorskip("torch")

TOL = {"float32": (2e-5, 5e-5), "float64": (1e-12, 1e-11)}

# (input shape, out channels, padding, bias)
CASES = [
    ((2, 8, 7, 5), 8, 1, True),
    ((3, 9, 6, 6), 12, 0, False),
    ((1, 8, 5, 4), 10, 2, True),
    ((2, 16, 8, 8), 16, (1, 0), False),
]


def _applies(shape, o, padding):
    x, w = np.empty(shape), np.empty((o, shape[1], 3, 3))
    p = padding if isinstance(padding, tuple) else (padding, padding)
    return _conv_winograd.winograd_applies(_conv_arrays._Geometry("t", x, w, (1, 1), p, (1, 1), 1))


def _layer(lib, shape, o, padding, bias, dtype, seed=0):
    rng = np.random.default_rng(seed)
    conv = lib.nn.Conv2d(shape[1], o, 3, padding=padding, bias=bias)
    w = (rng.standard_normal((o, shape[1], 3, 3)) / np.sqrt(9 * shape[1])).astype(dtype)
    with lib.no_grad():
        conv.weight.copy_(lib.tensor(w))
        if bias:
            conv.bias.copy_(lib.tensor(rng.standard_normal(o).astype(dtype)))
    return conv.to(getattr(lib, np.dtype(dtype).name))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv2d_module_matches_torch(case, dtype):
    shape, o, padding, bias = case
    assert _applies(shape, o, padding)
    rtol, atol = TOL[dtype]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    outs = []
    for lib in (gs, torch):
        conv = _layer(lib, shape, o, padding, bias, dtype)
        tx = lib.tensor(x, requires_grad=True)
        out = conv(tx)
        g = lib.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)).astype(dtype))
        out.backward(g)
        grads = [tx.grad, conv.weight.grad] + ([conv.bias.grad] if bias else [])
        outs.append([out.detach().numpy()] + [t.numpy() for t in grads])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_first_layer_makes_no_input_gradient():
    conv = _layer(gs, (2, 8, 6, 6), 8, 1, False, np.float32)
    x = gs.tensor(np.ones((2, 8, 6, 6), np.float32))
    conv(x).sum().backward()
    assert x.grad is None and conv.weight.grad is not None
    ref = _layer(torch, (2, 8, 6, 6), 8, 1, False, np.float32)
    ref(torch.ones(2, 8, 6, 6)).sum().backward()
    np.testing.assert_allclose(conv.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=2e-5)


def test_non_contiguous_input():
    x = np.random.default_rng(3).standard_normal((2, 6, 5, 8)).astype(np.float32)
    outs = []
    for lib in (gs, torch):
        conv = _layer(lib, (2, 8, 6, 5), 8, 1, True, np.float32)
        tx = lib.tensor(x).permute(0, 3, 1, 2).requires_grad_()  # (2, 8, 6, 5), strided
        out = conv(tx)
        out.square().sum().backward()
        outs.append((out.detach().numpy(), tx.grad.numpy(), conv.weight.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=5e-5)


@pytest.mark.parametrize("padding", [0, 1, (2, 1)])
def test_gradcheck_and_gradgradcheck(padding):
    rng = np.random.default_rng(4)
    x = gs.tensor(rng.standard_normal((2, 8, 5, 4)), requires_grad=True)
    w = gs.tensor(rng.standard_normal((8, 8, 3, 3)) / 9, requires_grad=True)
    b = gs.tensor(rng.standard_normal(8), requires_grad=True)

    def fn(x, w, b):
        return gs.nn.functional.conv2d(x, w, b, 1, padding)

    assert gs.autograd.gradcheck(fn, (x, w, b))
    assert gs.autograd.gradgradcheck(fn, (x, w, b))


def test_a_resnet_block_trains_as_torch():
    """Five SGD steps of conv -> BatchNorm2d -> ReLU -> conv -> BatchNorm2d + skip -> ReLU
    (the benchmark ResNet's basic block, Winograd for both convolutions), float32: the
    losses agree with torch's to float32 rounding."""
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((4, 16, 8, 8)).astype(np.float32) for _ in range(5)]
    losses = []
    for lib in (gs, torch):
        nn = lib.nn
        c1, c2 = (
            _layer(lib, (4, 16, 8, 8), 16, 1, False, np.float32, 6),
            _layer(lib, (4, 16, 8, 8), 16, 1, False, np.float32, 7),
        )
        b1, b2 = nn.BatchNorm2d(16), nn.BatchNorm2d(16)
        params = [*c1.parameters(), *c2.parameters(), *b1.parameters(), *b2.parameters()]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9)
        got = []
        for x in xs:
            t = lib.tensor(x)
            out = nn.functional.relu(b2(c2(nn.functional.relu(b1(c1(t))))) + t)
            loss = out.square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            got.append(loss.item())
        losses.append(got)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
