"""The lazy convolutions and batch norms (``LazyConv2d``, ``LazyConvTranspose2d``,
``LazyBatchNorm2d`` ...) against torch 2.13: reprs and state dicts before and after the
first call, the class they become, the shapes they infer, the values and gradients once
they hold torch's parameters, loading a state dict, casting before the first call, and
torch's errors."""

from __future__ import annotations

import math
import re

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import optim

torch = pytest.importorskip("torch")
TNN = torch.nn

CASES = [
    ("LazyConv1d", (4, 3), {}, (2, 3, 7)),
    ("LazyConv1d", (4, 3), {"padding": 1, "bias": False}, (3, 7)),  # unbatched
    ("LazyConv2d", (4, 3), {}, (2, 3, 5, 5)),
    ("LazyConv2d", (6, 3), {"groups": 3, "stride": 2, "padding": 1}, (2, 3, 6, 6)),
    ("LazyConv2d", (4, 3), {"padding": "same", "padding_mode": "reflect"}, (3, 5, 5)),
    ("LazyConv3d", (2, 2), {"dilation": 1}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (2, 3), {"stride": 2}, (1, 4, 5)),
    ("LazyConvTranspose2d", (4, 3), {"stride": 2, "output_padding": 1, "groups": 2}, (1, 4, 5, 5)),
    ("LazyConvTranspose3d", (2, 2), {"bias": False}, (1, 4, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"momentum": None, "affine": False}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"bias": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"eps": 1e-3}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (4, 3, 5)),
    ("LazyInstanceNorm2d", (), {"bias": False, "momentum": 0.3}, (2, 3, 4, 4)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", (), {"affine": False}, (2, 3, 2, 3, 2)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def _pair(name, args, kwargs):
    return getattr(nn, name)(*args, **kwargs), getattr(TNN, name)(*args, **kwargs)


def _g(t: torch.Tensor):
    return gt.tensor(t.detach().numpy())


@pytest.mark.parametrize("name, args, kwargs, shape", CASES, ids=IDS)
def test_lazy_layer_matches_torch(name, args, kwargs, shape):
    g, t = _pair(name, args, kwargs)
    assert repr(g) == repr(t)
    assert list(g.state_dict()) == list(t.state_dict())
    # (the state dict's values before the first call are plain tensors, where torch shows
    # <UninitializedParameter>: issue 35 lists that apart)
    assert [repr(v) for v in g.parameters()] == [repr(v) for v in t.parameters()]
    assert [repr(v) for v in g.buffers()] == [repr(v) for v in t.buffers()]
    assert g.has_uninitialized_params() == t.has_uninitialized_params()
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64).float()
    yt = t(x)
    yg = g(_g(x))
    # the class it becomes, its repr, the shapes it inferred
    assert type(g).__name__ == type(t).__name__ and repr(g) == repr(t)
    assert [(k, tuple(v.shape)) for k, v in g.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()
    ]
    if g.weight is not None:
        assert type(g.weight) is nn.Parameter
    for b in g.buffers():
        assert type(b) is gt.Tensor  # Note [A materialised buffer becomes a plain tensor]
    assert tuple(yg.shape) == tuple(yt.shape)
    if "Norm" in name:
        # values without parameters to copy: the batch statistics are torch's
        np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
        for gb, tb in zip(g.buffers(), t.buffers()):
            np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, args, kwargs, shape", CASES, ids=IDS)
def test_values_and_gradients_with_torch_s_parameters(name, args, kwargs, shape):
    g, t = _pair(name, args, kwargs)
    torch.manual_seed(1)
    x = torch.randn(*shape)
    t(x)
    g.load_state_dict({k: _g(v) for k, v in t.state_dict().items()})  # materialises
    assert type(g).__name__ == name  # still lazy until its first call, as torch
    if name.startswith("LazyInstanceNorm") and g.affine:
        # torch's num_features stays 0 when a state dict materialises a lazy instance norm
        # before its first call, so the call refuses the input: gradstack's does the same
        t_lazy = getattr(TNN, name)(*args, **kwargs)
        t_lazy.load_state_dict(t.state_dict())
        with pytest.raises(ValueError) as theirs:
            t_lazy(x)
        with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
            g(_g(x))
        return
    xt = x.clone().requires_grad_(True)
    xg = _g(x).requires_grad_(True)
    yt = t(xt)
    yg = g(xg)
    assert type(g).__name__ == type(t).__name__
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    w = torch.randn(*yt.shape)
    (yt * w).sum().backward()
    (yg * _g(w)).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (kg, pg), (kt, pt) in zip(g.named_parameters(), t.named_parameters()):
        assert kg == kt
        np.testing.assert_allclose(pg.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_initial_draws_follow_the_plain_layer():
    gt.manual_seed(0)
    conv = nn.LazyConv2d(64, 3)
    conv(gt.zeros(1, 8, 5, 5))
    bound = 1 / math.sqrt(8 * 3 * 3)
    w = conv.weight.detach().numpy()
    assert w.min() >= -bound and w.max() <= bound and w.max() > 0.95 * bound
    b = conv.bias.detach().numpy()
    assert b.min() >= -bound and b.max() <= bound
    bn = nn.LazyBatchNorm2d()
    bn.eval()
    bn(gt.zeros(1, 5, 2, 2))
    assert bn.weight.tolist() == [1.0] * 5 and bn.bias.tolist() == [0.0] * 5
    assert bn.running_mean.tolist() == [0.0] * 5 and bn.running_var.tolist() == [1.0] * 5
    assert bn.num_batches_tracked.item() == 0  # eval mode: no batch counted


def test_an_optimiser_built_before_the_first_call_sees_the_parameters():
    conv = nn.LazyConv2d(2, 3)
    opt = optim.SGD(conv.parameters(), lr=1.0)
    y = conv(gt.ones(1, 3, 4, 4))
    before = conv.weight.detach().numpy().copy()
    y.sum().backward()
    opt.step()
    assert not np.allclose(conv.weight.detach().numpy(), before)


def test_casting_before_the_first_call():
    bn = nn.LazyBatchNorm1d().double()
    t = TNN.LazyBatchNorm1d().double()
    assert repr(bn.running_mean) == repr(t.running_mean) == "<UninitializedBuffer>"
    bn(gt.ones(3, 2, dtype=gt.float64))
    t(torch.ones(3, 2, dtype=torch.float64))
    assert bn.running_mean.dtype == gt.float64 and bn.weight.dtype == gt.float64
    conv = nn.LazyConvTranspose2d(2, 3).double()
    conv(gt.ones(1, 2, 4, 4, dtype=gt.float64))
    assert conv.weight.dtype == gt.float64 and tuple(conv.weight.shape) == (2, 2, 3, 3)


def test_loading_a_state_dict_materialises_parameters_and_buffers():
    t = TNN.LazyBatchNorm2d()
    t(torch.randn(2, 3, 2, 2))
    g, t2 = nn.LazyBatchNorm2d(), TNN.LazyBatchNorm2d()
    g.load_state_dict({k: _g(v) for k, v in t.state_dict().items()})
    t2.load_state_dict(t.state_dict())
    assert repr(g) == repr(t2)
    assert tuple(g.running_mean.shape) == (3,) and not g.has_uninitialized_params()
    np.testing.assert_allclose(g.running_var.numpy(), t.running_var.numpy())
    g.eval()
    t.eval()
    x = torch.randn(2, 3, 2, 2)
    np.testing.assert_allclose(
        g(_g(x)).detach().numpy(), t(x).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    t2.eval()
    t2(x)
    # torch's num_features stays 0 when a state dict materialised the module: so does ours
    assert type(g.running_var) is gt.Tensor and repr(g) == repr(t2)


def test_uninitialized_buffer_matches_torch():
    g, t = nn.UninitializedBuffer(), TNN.UninitializedBuffer()
    assert repr(g) == repr(t) and g.requires_grad == t.requires_grad
    g.materialize((2, 3))
    t.materialize((2, 3))
    assert tuple(g.shape) == tuple(t.shape) and not nn.parameter.is_lazy(g)


@pytest.mark.parametrize(
    "name, args, kwargs, shape",
    [
        ("LazyConv2d", (4, 3), {}, (3, 5)),
        ("LazyConv1d", (4, 3), {}, (1, 2, 3, 7)),
        ("LazyConvTranspose3d", (2, 2), {}, (4, 3, 3)),
    ],
)
def test_wrong_input_dims_raise_torch_s_error(name, args, kwargs, shape):
    g, t = _pair(name, args, kwargs)
    with pytest.raises(RuntimeError) as et:
        t(torch.ones(*shape))
    with pytest.raises(RuntimeError) as eg:
        g(gt.ones(*shape))
    assert str(eg.value).replace("gradstack.Size", "torch.Size") == str(et.value)


def test_groups_that_do_not_divide_the_inferred_channels():
    g, t = _pair("LazyConv2d", (4, 3), {"groups": 2})
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        t(torch.ones(1, 3, 5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        g(gt.ones(1, 3, 5, 5))


def test_batch_norm_checks_the_input_dims_as_torch():
    g, t = _pair("LazyBatchNorm2d", (), {})
    with pytest.raises(ValueError) as et:
        t(torch.ones(2, 3))
    with pytest.raises(ValueError) as eg:
        g(gt.ones(2, 3))
    assert str(eg.value) == str(et.value)
