"""gradstack_tensor.special (``gradstack.special``) against torch.special: values and
float64 gradients (the incomplete gamma and Bessel families: tests/test_special_bessel_torch.py)."""

from __future__ import annotations

import gradstack_autograd  # noqa: F401 - registers autograd
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.uniform(-3, 3, (3, 4))
X[0, :2] = [0.0, -1.0]
P = R.uniform(0.05, 0.95, (3, 4))
Y = R.uniform(0.1, 3, (3, 4))

PROGRAMS = {
    "expit": (lambda L, x: L.special.expit(x), X),
    "logit": (lambda L, p: L.special.logit(p), P),
    "logit_eps": (lambda L, p: L.special.logit(p, eps=0.2), P),
    "xlogy": (lambda L, x: L.special.xlogy(x, L.tensor(Y)), X),
    "xlog1py": (lambda L, x: L.special.xlog1py(x, L.tensor(Y)), X),
    "entr": (lambda L, p: L.special.entr(p), P),
    "ndtr": (lambda L, x: L.special.ndtr(x), X),
    "ndtri": (lambda L, p: L.special.ndtri(p), P),
    "log_ndtr": (lambda L, x: L.special.log_ndtr(x), X),
    "erf": (lambda L, x: L.special.erf(x), X),
    "erfc": (lambda L, x: L.special.erfc(x), X),
    "erfinv": (lambda L, p: L.special.erfinv(p), P),
    "exp2": (lambda L, x: L.special.exp2(x), X),
    "expm1": (lambda L, x: L.special.expm1(x), X),
    "log1p": (lambda L, y: L.special.log1p(y), Y),
    "sinc": (lambda L, x: L.special.sinc(x), X),
    "round": (lambda L, x: L.special.round(x * 10), X),
    "round_decimals": (lambda L, x: L.special.round(x, decimals=2), X),
    "logsumexp": (lambda L, x: L.special.logsumexp(x, 1), X),
    "softmax": (lambda L, x: L.special.softmax(x, 0), X),
    "log_softmax": (lambda L, x: L.special.log_softmax(x, 1), X),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(name):
    fn, a = PROGRAMS[name]
    results = []
    for lib in (gt, torch):
        t = lib.tensor(a.copy(), requires_grad=True)
        y = fn(lib, t)
        (y * y.detach()).sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    (v1, g1), (v2, g2) = results
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12)


def test_entr_edges_and_missing_functions():
    for lib in (gt, torch):
        out = lib.special.entr(lib.tensor([0.0, -1.0, float("nan")])).tolist()
        assert out[:2] == [0.0, float("-inf")] and np.isnan(out[2])
    # (the incomplete gamma and Bessel families: tests/test_special_bessel_torch.py)
    assert round(gt.special.gammainc(gt.tensor([1.0]), gt.tensor([1.0])).item(), 5) == 0.63212
