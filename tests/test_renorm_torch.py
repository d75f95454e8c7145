"""``renorm`` (function, method, in-place method, ``out=``) against torch 2.13: values in
float32 and float64, gradients (torch's ``renorm_backward`` differentiates through the
norm; gradcheck and gradgradcheck in float64), and errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(3)
X = R.standard_normal((3, 4, 2)) * 2

CASES = [
    (2, 0, 1.5), (1, 1, 2.0), (3.5, -1, 1.0), (float("inf"), 0, 1.2), (2, 2, 100.0),
    (0.5, 1, 3.0), (2, 0, 0),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p, dim, maxnorm", CASES)
def test_values_and_gradients_as_torch(p, dim, maxnorm, dtype):
    res = []
    w = np.linspace(-1, 1, X.size).reshape(X.shape)
    for L in (gs, torch):
        x = L.tensor(X, dtype=getattr(L, dtype), requires_grad=True)
        out = L.renorm(x, p, dim, maxnorm)
        (out * L.tensor(w, dtype=getattr(L, dtype))).sum().backward()
        method = x.detach().renorm(p, dim, maxnorm)
        inplace = x.detach().clone().renorm_(p, dim, maxnorm)
        res.append([out.detach().numpy(), x.grad.numpy(), method.numpy(), inplace.numpy()])
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, **tol)


def test_gradcheck_and_out():
    x = gs.tensor(X, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: gs.renorm(t, 2, 0, 1.5), (x,))
    assert gs.autograd.gradgradcheck(lambda t: gs.renorm(t, 3, 1, 1.0), (x,))
    out = gs.empty(3, 4, 2, dtype=gs.float64)
    r = gs.renorm(gs.tensor(X), 2, 0, 1.5, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), torch.renorm(torch.tensor(X), 2, 0, 1.5).numpy())


ERRORS = [
    lambda L: L.renorm(L.ones(3), 2, 0, 5),
    lambda L: L.renorm(L.ones(2, 3), 0, 0, 5),
    lambda L: L.renorm(L.ones(2, 3), -1, 0, 5),
    lambda L: L.renorm(L.ones(2, 3), 2, 0, -1),
    lambda L: L.renorm(L.ones(2, 3), 2, 2, 5),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    outcomes = []
    for L in (gs, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class and words compared
            call(L)
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[0] == outcomes[1]
