"""erf and erfinv (tensor-core's _impl_special.py) against torch: values, dtypes, edge
values, gradients (gradcheck in float64) and node names."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erf_values_match_torch(dtype):
    x = np.concatenate([RNG.uniform(-4, 4, 200), [0.0, -0.0, 6.0, -6.0, np.inf, -np.inf, np.nan]])
    got = gt.erf(gt.tensor(x, dtype=getattr(gt, dtype)))
    want = torch.erf(torch.tensor(x, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    tol = {"float16": 1e-3, "float32": 2e-7, "float64": 1e-15}[dtype]
    np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfinv_values_match_torch(dtype):
    y = np.concatenate([RNG.uniform(-1, 1, 200), [0.0, 0.7, -0.7, 0.99999, 1.0, -1.0, 1.5, np.nan]])
    got = gt.erfinv(gt.tensor(y, dtype=getattr(gt, dtype)))
    want = torch.erfinv(torch.tensor(y, dtype=getattr(torch, dtype)))
    # near +-1 erfinv is ill-conditioned: a last-bit difference of erf (scipy's vs torch's)
    # grows by ~1 / (1 - |y|) in the Newton steps (1.6e-13 relative at y = 0.99999)
    tol = {"float16": 2e-3, "float32": 4e-6, "float64": 4e-13}[dtype]
    np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=tol, atol=tol)


def test_integer_inputs_become_the_default_float_as_torch():
    for name in ("erf", "erfinv"):
        got = getattr(gt, name)(gt.tensor([0, 1]))
        want = getattr(torch, name)(torch.tensor([0, 1]))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name, lo, hi", [("erf", -2.0, 2.0), ("erfinv", -0.9, 0.9)])
def test_gradients_match_torch_and_gradcheck(name, lo, hi):
    x = RNG.uniform(lo, hi, (3, 4))
    a = gt.tensor(x, dtype=gt.float64, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    out, tout = getattr(a, name)(), getattr(t, name)()
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert ag.gradcheck(getattr(gt, name), (gt.tensor(x, dtype=gt.float64, requires_grad=True),))
    assert ag.gradgradcheck(
        getattr(gt, name), (gt.tensor(x, dtype=gt.float64, requires_grad=True),)
    )
