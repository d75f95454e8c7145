"""Gradients of float16 reductions, compared with torch 2.13's float16 gradients.

The forward values accumulate in float32 (Note [float16 accumulates in float32] in
tensor-core); the backward formulas are gradstack ops on float16 tensors, so they inherit
it: the gradient of ``std`` over 1000 x 300.0 is 0 (it was nan, from an inf std), that of
``norm`` is finite.  Compared to a few float16 ulps (the libraries round in other orders).
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
ARRAYS = {
    "1000x300": np.full((1000, 2), 300.0, np.float16),
    "1000x100": np.full((1000, 2), 100.0, np.float16),
    "randn": (RNG.standard_normal((300, 4)) * 3).astype(np.float16),
}

CALLS = [
    ("mean", lambda t: t.mean()),
    ("mean_dim", lambda t: t.mean(0)),
    ("std", lambda t: t.std()),
    ("std_dim", lambda t: t.std(0)),
    ("var", lambda t: t.var()),
    ("norm", lambda t: t.norm()),
    ("norm_dim", lambda t: t.norm(dim=0)),
    ("norm_3", lambda t: t.norm(3)),
    ("logsumexp", lambda t: t.logsumexp(0)),
    ("log_softmax", lambda t: t.log_softmax(0)[:4]),
    ("cumsum", lambda t: t.cumsum(0)[-1]),
]


@pytest.mark.parametrize("array", list(ARRAYS))
@pytest.mark.parametrize(("name", "fn"), CALLS, ids=[c[0] for c in CALLS])
def test_float16_reduction_gradients_match_torch(name, fn, array):
    a = ARRAYS[array]
    x = gt.tensor(a, requires_grad=True)
    out = fn(x)
    (g,) = ag.grad(out, x, gt.ones_like(out))
    tx = torch.tensor(a, requires_grad=True)
    tout = fn(tx)
    (tg,) = torch.autograd.grad(tout, tx, torch.ones_like(tout))
    assert out.dtype is gt.float16 and g.dtype is gt.float16
    got, want = g.numpy().astype(np.float32), tg.numpy().astype(np.float32)
    assert (np.isfinite(got) == np.isfinite(want)).all(), f"{name}: {got} vs {want}"
    # logsumexp's gradient is exp(x - lse): a 1-ulp difference of the float16 lse (8e-3 at
    # magnitude 12) moves it by ~1%
    rtol = 2.0**-6 if name == "logsumexp" else 4 * 2.0**-10
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-4)


def test_the_issue_11_gradients():
    x = gt.full((1000,), 300.0, dtype=gt.float16, requires_grad=True)
    x.std().backward()
    assert (x.grad == 0).all()
    y = gt.full((1000,), 300.0, dtype=gt.float16, requires_grad=True)
    y.norm().backward()
    assert abs(y.grad[0].item() - 0.03162) < 1e-4  # 300 / 9488, torch's float16 0.0316
