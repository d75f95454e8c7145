"""float16 and bfloat16 activations compute in float32 and round once, as torch 2.13's
kernels (Note [Half-precision activations compute in float32] in
``functional/activation.py``): values, dtypes, gradients, the in-place forms."""

from __future__ import annotations

import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("logsigmoid", {}),
    ("selu", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0}),
    ("hardsigmoid", {}),
    ("hardswish", {}),
    ("mish", {}),
    ("glu", {"dim": -1}),
]


def _pair(dtype, seed=0, n=4000):
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(n, generator=g) * 3).to(getattr(torch, dtype)).reshape(8, -1)
    return t, gt.tensor(t.float().numpy()).to(getattr(gt, dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", CASES)
def test_values_as_torch(dtype, name, kw):
    t, x = _pair(dtype)
    want = getattr(TF, name)(t, **kw)
    got = getattr(F, name)(x, **kw)
    assert got.dtype == getattr(gt, dtype)
    a, b = want.float().numpy(), got.float().numpy()
    # was hundreds to thousands of 4000 an ulp off; the tanh GELU's float32 tanh differs
    # from torch's vectorised one in the last bit of a few
    assert int((a != b).sum()) <= (30 if name == "gelu" else 4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["leaky_relu", "silu", "hardswish", "mish", "selu"])
def test_gradients_as_torch(dtype, name):
    t, x = _pair(dtype, seed=1, n=400)
    t.requires_grad_()
    x.requires_grad_()
    getattr(TF, name)(t).sum().backward()
    getattr(F, name)(x).sum().backward()
    assert x.grad.dtype == getattr(gt, dtype)
    np.testing.assert_allclose(
        x.grad.float().numpy(), t.grad.float().numpy(), rtol=2**-6, atol=1e-3
    )


@pytest.mark.parametrize("name", ["leaky_relu", "silu", "hardswish"])
def test_in_place_keeps_the_tensor(name):
    t, x = _pair("float16", seed=2, n=64)
    before = x._version
    kwargs = {"inplace": True}
    out = getattr(F, name)(x, **kwargs)
    assert out is x and x._version > before and x.dtype == gt.float16
    getattr(TF, name)(t, inplace=True)
    np.testing.assert_allclose(x.float().numpy(), t.float().numpy(), rtol=2**-9, atol=1e-3)


def test_float32_and_float64_unchanged_and_gradcheck():
    import gradstack_autograd

    x = gt.tensor([-2.0, -0.3, 0.7, 3.5], dtype=gt.float64, requires_grad=True)
    for name in ["leaky_relu", "silu", "mish", "softplus"]:
        assert gradstack_autograd.gradcheck(getattr(F, name), (x,))
    y = gt.tensor([-1.0, 2.0])
    assert F.silu(y).dtype == gt.float32
