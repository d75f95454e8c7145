"""torch.lobpcg (the facade's ``_lobpcg.py``, torch's algorithm ported) against torch
2.13: eigenvalues and eigenvectors (up to sign) for method "ortho" and "basic", the
largest and the smallest, a generalized problem (B), a batch, a random start drawn from
the same seed; gradients of A against torch's; torch's errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
_M = RNG.standard_normal((18, 18))
A = _M @ _M.T + 18 * np.eye(18)
_N = RNG.standard_normal((18, 18))
B = _N @ _N.T / 18 + np.eye(18)
X0 = np.eye(18)[:, :3] + 0.05 * RNG.standard_normal((18, 3))


def _run(L, **kwargs):
    L.manual_seed(0)
    args = {
        k: (L.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()
    }
    E, X = L.lobpcg(args.pop("A"), **args)
    return E.numpy(), X.numpy()


CASES = [
    {"A": A, "k": 3},
    {"A": A, "k": 2, "largest": False},
    {"A": A, "k": 3, "method": "basic", "X": X0},
    {"A": A, "k": 2, "method": "basic", "largest": False, "niter": 300},
    {"A": A, "B": B, "k": 2},
    {"A": np.stack([A, A + 3 * np.eye(18)]), "k": 2},
    {"A": A, "X": X0, "tol": 1e-10},
    {"A": A, "n": 4, "k": 2},
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_are_torchs(case):
    (ge, gx), (te, tx) = _run(gs, **CASES[case]), _run(torch, **CASES[case])
    np.testing.assert_allclose(ge, te, rtol=1e-7)
    # eigenvectors up to sign, to the iteration's tolerance
    g, t = gx.reshape(-1, *gx.shape[-2:]), tx.reshape(-1, *tx.shape[-2:])
    for gb, tb in zip(g, t):
        for j in range(gb.shape[-1]):
            s = np.sign(gb[:, j] @ tb[:, j])
            np.testing.assert_allclose(s * gb[:, j], tb[:, j], atol=1e-4)


def test_float32():
    a = A.astype(np.float32)
    (ge, _), (te, _) = _run(gs, A=a, k=2), _run(torch, A=a, k=2)
    assert ge.dtype == np.float32
    np.testing.assert_allclose(ge, te, rtol=1e-5)


@pytest.mark.parametrize("largest", [True, False])
def test_gradients_are_torchs(largest):
    grads = []
    for L in (gs, torch):
        a = L.from_numpy(A[:12, :12].copy()).requires_grad_()
        E, X = L.lobpcg(a, k=2, X=L.from_numpy(X0[:12, :2].copy()), tol=1e-12, niter=500,
                        largest=largest)  # fmt: skip
        assert type(E.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
        w = L.arange(24.0, dtype=L.float64).reshape(12, 2)
        (E * L.tensor([1.0, 2.0], dtype=L.float64)).sum().add((X.abs() * w).sum()).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-9)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    return None


ERRORS = {
    "not square": lambda L: L.lobpcg(L.ones(6, 5, dtype=L.float64)),
    "B shape": lambda L: L.lobpcg(L.eye(6, dtype=L.float64), B=L.eye(5, dtype=L.float64)),
    "too many": lambda L: L.lobpcg(L.eye(6, dtype=L.float64), k=3),
    "B backward": lambda L: (
        L.lobpcg(
            L.from_numpy(A[:9, :9].copy()).requires_grad_(), k=2, B=L.from_numpy(B[:9, :9].copy())
        )[0]
        .sum()
        .backward()
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    got, want = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert want is not None
    assert got is not None and got[0] is want[0], (got, want)
    assert got[1].replace("gradstack.Size", "torch.Size") == want[1]
