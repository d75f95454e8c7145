"""The matrix functions with a factorization (``linalg.inv``, ``det``, ``slogdet``,
``solve``, ``cholesky``, ``matrix_power`` and torch's top-level ``inverse``, ``det``,
``slogdet``, ``logdet``, ``cholesky``, ``matrix_power``) against torch 2.13: values,
float64 gradients to second order, forward mode, errors.
"""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(17)
A = R.standard_normal((3, 3)) + 3 * np.eye(3)
BATCH = R.standard_normal((2, 4, 4)) + 4 * np.eye(4)
M = R.standard_normal((4, 4))
SPD = M @ M.T + 4 * np.eye(4)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2
B = R.standard_normal((3, 2))
V = R.standard_normal(3)


def _grads(lib, fn, arrays, second=True):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    w = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
    gs_ = lib.autograd.grad((out * w).sum(), ts, create_graph=second)
    res = [out.detach().numpy()] + [g.detach().numpy() for g in gs_]
    if second:
        total = sum((g * g).sum() for g in gs_)
        res += [g.numpy() for g in lib.autograd.grad(total, ts)]
    return res


CASES = {
    "inv": (lambda L, a: L.linalg.inv(a), [A]),
    "inv batch": (lambda L, a: L.linalg.inv(a), [BATCH]),
    "inverse": (lambda L, a: L.inverse(a), [A]),
    "det": (lambda L, a: L.linalg.det(a), [A]),
    "det batch": (lambda L, a: a.det(), [BATCH]),
    "det singular": (lambda L, a: L.det(a), [SINGULAR]),
    "logabsdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, [A]),
    "logdet": (lambda L, a: L.logdet(a), [SPD]),
    "solve matrix": (lambda L, a, b: L.linalg.solve(a, b), [A, B]),
    "solve vector": (lambda L, a, b: L.linalg.solve(a, b), [A, V]),
    "solve batch vector": (lambda L, a, b: L.linalg.solve(a, b), [BATCH, BATCH[:, 0]]),
    "solve broadcast": (lambda L, a, b: L.linalg.solve(a, b), [BATCH, BATCH[0]]),
    "solve left=False": (lambda L, a, b: L.linalg.solve(a, b, left=False), [A, B.T]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), [SPD]),
    "cholesky upper": (lambda L, a: L.linalg.cholesky(a, upper=True), [SPD]),
    "matrix_power 5": (lambda L, a: L.linalg.matrix_power(a, 5), [A / 3]),
    "matrix_power -2": (lambda L, a: a.matrix_power(-2), [A]),
}


def _symmetrized(name, fn):
    # cholesky reads the lower triangle: differentiate through a symmetric input, as
    # torch's gradcheck of cholesky does
    if name.startswith("cholesky"):
        return lambda L, a: fn(L, (a + a.transpose(-1, -2)) / 2)
    return fn


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_to_second_order_match_torch(name):
    fn, arrays = CASES[name]
    fn = _symmetrized(name, fn)
    ours, theirs = _grads(gs, fn, arrays), _grads(torch, fn, arrays)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "name", ["inv", "det", "logabsdet", "solve matrix", "cholesky", "det singular"]
)
def test_gradcheck_and_forward_mode(name):
    fn, arrays = CASES[name]
    fn = _symmetrized(name, fn)
    ts = tuple(gs.tensor(a, requires_grad=True) for a in arrays)
    assert gs.autograd.gradcheck(lambda *t: fn(gs, *t), ts)
    assert gs.autograd.gradgradcheck(lambda *t: fn(gs, *t), ts)
    tangents = tuple(gs.tensor(R.standard_normal(a.shape)) for a in arrays)
    _, ours = gs.func.jvp(lambda *t: fn(gs, *t), ts, tangents)
    if name == "det singular":
        # torch's forward formula gives 0 at a singular matrix (det * trace(A^-1 dA) on
        # its LU); the derivative is the adjugate's, as a central difference shows
        a, t = arrays[0], tangents[0].numpy()
        h = 1e-6
        numeric = (np.linalg.det(a + h * t) - np.linalg.det(a - h * t)) / (2 * h)
        np.testing.assert_allclose(ours.detach().numpy(), numeric, rtol=1e-6)
        assert abs(numeric) > 0.1
        return
    _, theirs = torch.func.jvp(
        lambda *t: fn(torch, *t),
        tuple(torch.tensor(a) for a in arrays),
        tuple(torch.tensor(t.numpy()) for t in tangents),
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-9, atol=1e-10)


def test_slogdet_sign_and_logdet_edge_values_match_torch():
    for a in (A, np.array([[0.0, 1.0], [1.0, 0.0]]), BATCH):
        for lib_name, lib in (("gs", gs), ("torch", torch)):
            r = lib.linalg.slogdet(lib.tensor(a))
            if lib_name == "gs":
                ours = (r.sign.numpy(), r.logabsdet.numpy(), lib.logdet(lib.tensor(a)).numpy())
            else:
                theirs = (r.sign.numpy(), r.logabsdet.numpy(), lib.logdet(lib.tensor(a)).numpy())
        for o, t in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(o, t, rtol=1e-12)
    assert type(gs.slogdet(gs.tensor(A))).__name__ == "slogdet"


def test_slogdet_of_an_exactly_singular_matrix_is_zero_or_rounding_noise_as_torch_s():
    """Note [A singular matrix's determinant depends on the CPU]: LU of the rank-2 matrix
    ``SINGULAR`` leaves a last pivot that is exactly 0 or one rounding error, by the order
    of the products of the BLAS kernel the CPU selects (numpy's OpenBLAS gives 0 on AMD
    EPYC and Intel Xeon; torch 2.13 gives 0 on AMD EPYC and a pivot of ~1e-16 on Intel
    Xeon, sign -1, logabsdet -34.9).  gradstack's answer is the exact one, and torch's,
    where it is not the same, is a determinant at rounding level."""
    ours = gs.linalg.slogdet(gs.tensor(SINGULAR))
    assert ours.sign.item() == 0.0 and ours.logabsdet.item() == -np.inf
    assert gs.logdet(gs.tensor(SINGULAR)).item() == -np.inf
    theirs = torch.linalg.slogdet(torch.tensor(SINGULAR))
    scale = np.linalg.norm(SINGULAR) ** SINGULAR.shape[0]
    assert theirs.sign.item() == 0.0 or np.exp(theirs.logabsdet.item()) < 1e-14 * scale
    assert type(gs.linalg.slogdet(gs.tensor(A))).__name__ == "linalg_slogdet"


ERRORS = {
    "inv singular": lambda L: L.linalg.inv(L.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "inv batch singular": lambda L: L.linalg.inv(
        L.stack([L.eye(2), L.tensor([[1.0, 2.0], [2.0, 4.0]])])
    ),
    "inv not square": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv vector": lambda L: L.linalg.inv(L.ones(3)),
    "inv ints": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.int64)),
    "inv half": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.float16)),
    "det not square": lambda L: L.det(L.ones(2, 3)),
    "solve singular": lambda L: L.linalg.solve(L.tensor([[1.0, 2.0], [2.0, 4.0]]), L.ones(2)),
    "solve shapes": lambda L: L.linalg.solve(L.eye(2), L.ones(3, 1)),
    "solve dtypes": lambda L: L.linalg.solve(L.eye(2), L.ones(2, dtype=L.float64)),
    "cholesky not positive": lambda L: L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky batch": lambda L: L.linalg.cholesky(
        L.stack([L.eye(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])])
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raised = []
    for lib in (gs, torch):
        with pytest.raises(RuntimeError) as info:
            ERRORS[name](lib)
        raised.append(info.value)
    ours, theirs = raised
    assert str(ours) == str(theirs)
    assert isinstance(ours, gs.linalg.LinAlgError) == isinstance(theirs, torch.linalg.LinAlgError)


def test_cholesky_function_warns_as_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = gs.cholesky(gs.tensor(SPD), upper=True)
    assert any("torch.cholesky is deprecated" in str(w.message) for w in caught)
    np.testing.assert_allclose(got.numpy(), np.linalg.cholesky(SPD).T, rtol=1e-12)
