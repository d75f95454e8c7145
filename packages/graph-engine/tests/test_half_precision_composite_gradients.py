"""Gradients of bfloat16/float16 addcmul, addcdiv and lerp through their float32
computation (Note [Half-precision composites compute in float32] in tensor-core's
``composites.py``): the gradients keep the inputs' dtype, torch's values to an ulp, and the
float64 formulas pass gradcheck."""

from __future__ import annotations

import gradstack_autograd
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_gradients_as_torch(dtype, name):
    g = torch.Generator().manual_seed(0)
    vals = [torch.randn(200, generator=g) for _ in range(3)]
    vals[2] = vals[2].abs() + 0.5
    ts = [v.to(getattr(torch, dtype)).requires_grad_() for v in vals]
    gs = [gt.tensor(t.detach().float().numpy()).to(getattr(gt, dtype)).requires_grad_() for t in ts]

    def f(lib, a, b, c):
        if name == "lerp":
            return lib.lerp(a, b, 0.8)
        return getattr(lib, name)(a, b, c, value=0.7)

    f(torch, *ts).sum().backward()
    f(gt, *gs).sum().backward()
    for t, x in zip(ts, gs):
        if t.grad is None:
            assert x.grad is None
            continue
        assert x.grad.dtype == getattr(gt, dtype)
        np.testing.assert_allclose(x.grad.float().numpy(), t.grad.float().numpy(), rtol=2**-6)


def test_gradcheck_float64():
    xs = [
        gt.tensor(v, dtype=gt.float64, requires_grad=True)
        for v in ([0.5, -1.0], [2.0, 0.3], [1.5, 2.5])
    ]
    assert gradstack_autograd.gradcheck(lambda a, b, c: gt.addcmul(a, b, c, value=0.7), xs)
    assert gradstack_autograd.gradcheck(lambda a, b, c: gt.addcdiv(a, b, c, value=0.7), xs)
    assert gradstack_autograd.gradcheck(lambda a, b, c: gt.lerp(a, b, c), xs)
