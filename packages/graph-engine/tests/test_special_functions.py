"""erf, erfc and erfinv (tensor-core's _impl_special.py) against torch: values, dtypes, edge
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


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfc_values_match_torch_in_its_tails(dtype):
    # erfc is computed directly: 1 - erf(x) would be 0 from x ~ 4 in float32 and lose
    # digits near -3 (Note [erfc is its own function])
    tails = [3.0, 5.0, 9.0, 10.0, 26.0, 27.0, -3.0, -6.0, 1e-30, -1e-30, 3e38]
    x = np.concatenate([RNG.uniform(-6, 12, 300), [0.0, -0.0, np.inf, -np.inf, np.nan], tails])
    got = gt.erfc(gt.tensor(x, dtype=getattr(gt, dtype)))
    want = torch.erfc(torch.tensor(x, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    got = np.asarray(got.tolist())
    # torch's float32 erfc is Sleef's (1.5 ulp), gradstack's libm's rounded once (0.5 ulp)
    rtol = {"float16": 1e-3, "float32": 5e-7, "float64": 1e-15}[dtype]
    tiny = {"float16": 6e-8, "float32": 1.5e-45, "float64": 5e-324}[dtype]
    np.testing.assert_allclose(got, want.numpy(), rtol=rtol, atol=tiny)
    assert (got[np.isfinite(x) & (x > 0) & (want.numpy() > 0)] > 0).all()  # no tail lost


def test_erfc_keeps_the_layout_and_the_method_and_inplace_forms_agree():
    x = RNG.uniform(-3, 6, (4, 5)).astype(np.float32)
    t = gt.tensor(x).t()
    got = t.erfc()
    assert got.stride() == torch.tensor(x).t().erfc().stride()
    np.testing.assert_array_equal(got.numpy(), gt.special.erfc(t).numpy())
    np.testing.assert_array_equal(t.clone().erfc_().numpy(), got.numpy())
    np.testing.assert_allclose(got.numpy(), torch.tensor(x).t().erfc().numpy(), rtol=5e-7)
    np.testing.assert_allclose(
        gt.erfc(gt.tensor(x)[::2, ::3]).numpy(),
        torch.erfc(torch.tensor(x)[::2, ::3]).numpy(),
        rtol=5e-7,
    )


def test_integer_inputs_become_the_default_float_as_torch():
    for name in ("erf", "erfc", "erfinv"):
        got = getattr(gt, name)(gt.tensor([0, 1]))
        want = getattr(torch, name)(torch.tensor([0, 1]))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "name, lo, hi", [("erf", -2.0, 2.0), ("erfc", -2.0, 2.0), ("erfinv", -0.9, 0.9)]
)
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
