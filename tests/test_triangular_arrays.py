"""The blocked triangular solve and Cholesky factor (tensor-core's
``_triangular_arrays.py``, Note [Triangular solves by recursive halving]) and what takes
them: ``linalg.cholesky``'s forward above 192 rows and ``LinalgCholeskyExBackward0`` at
first order, against torch 2.13: float32 and float64, upper and lower, left and right,
sizes around the block (64) and the recursion's splits, batches that broadcast,
non-contiguous and 0-size operands, singular triangles and matrices that are not
positive-definite (torch's errors); gradcheck and gradgradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

DTYPES = (np.float32, np.float64)
TOL = {np.float32: 2e-5, np.float64: 1e-12}


def _spd(n, dtype, batch=(), seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n)).astype(dtype)


def _close(ours, theirs, dtype, scale=1.0):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    err = np.abs(ours - theirs).max() if ours.size else 0.0
    assert err <= TOL[dtype] * scale * max(1.0, np.abs(theirs).max() if theirs.size else 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 5, 64, 65, 150, 300])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_is_torchs(dtype, n, upper, left):
    low = np.linalg.cholesky(_spd(n, dtype))
    a = np.ascontiguousarray(low.T) if upper else low
    r = np.random.default_rng(1)
    b = r.standard_normal((n, 7) if left else (7, n)).astype(dtype)
    ours = kernels.solve_triangular(a, b, upper=upper, left=left)
    theirs = torch.linalg.solve_triangular(
        torch.from_numpy(a), torch.from_numpy(b), upper=upper, left=left
    ).numpy()
    _close(ours, theirs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_triangular_batches_views_and_empty(dtype):
    low = np.linalg.cholesky(_spd(100, dtype, (3,)))
    b = np.random.default_rng(2).standard_normal((2, 1, 100, 9)).astype(dtype)
    ours = kernels.solve_triangular(low, b, upper=False)  # batches broadcast: (2, 3)
    theirs = torch.linalg.solve_triangular(
        torch.from_numpy(low), torch.from_numpy(b), upper=False
    ).numpy()
    _close(ours, theirs, dtype)
    # transposed views (an upper triangle read through a lower one's transpose)
    up = np.swapaxes(low, -1, -2)
    bt = np.swapaxes(np.random.default_rng(3).standard_normal((3, 9, 100)).astype(dtype), -1, -2)
    ours = kernels.solve_triangular(up, bt, upper=True)
    theirs = torch.linalg.solve_triangular(
        torch.from_numpy(np.ascontiguousarray(up)),
        torch.from_numpy(np.ascontiguousarray(bt)),
        upper=True,
    ).numpy()
    _close(ours, theirs, dtype)
    # only the named triangle is read
    junk = low + np.triu(np.full((100, 100), np.nan, dtype), 1)
    _close(
        kernels.solve_triangular(junk, b[0], upper=False),
        kernels.solve_triangular(low, b[0], upper=False),
        dtype,
        0.0,
    )
    for a, bb in [
        (np.eye(3, dtype=dtype), np.zeros((3, 0), dtype)),
        (np.zeros((0, 0), dtype), np.zeros((0, 4), dtype)),
        (np.zeros((0, 5, 5), dtype), np.zeros((0, 5, 2), dtype)),
    ]:
        out = kernels.solve_triangular(a, bb, upper=True)
        assert out.shape == bb.shape and out.dtype == dtype


def test_solve_triangular_checks():
    a = np.eye(3)
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.solve_triangular(a.astype(np.float16), a.astype(np.float16), upper=True)
    with pytest.raises(TypeError, match="one dtype"):
        kernels.solve_triangular(a, a.astype(np.float32), upper=True)
    with pytest.raises(ValueError, match="square and fit"):
        kernels.solve_triangular(a, np.ones((4, 2)), upper=True)
    with pytest.raises(ValueError, match="matrices"):
        kernels.solve_triangular(a, np.ones(3), upper=True)
    with pytest.raises(TypeError, match="numpy array"):
        kernels.solve_triangular([[1.0]], a, upper=True)
    singular = np.triu(np.ones((100, 100)))
    singular[70, 70] = 0
    with pytest.raises(np.linalg.LinAlgError):
        kernels.solve_triangular(singular, np.ones((100, 2)), upper=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(200,), (300,), (2, 257)])
def test_cholesky_factor_is_torchs(dtype, shape):
    n, batch = shape[-1], tuple(shape[:-1])
    a = _spd(n, dtype, batch)
    a_junk = a + np.triu(np.full((n, n), 7.0, dtype), 1)  # the upper triangle is not read
    ours = kernels.cholesky_lower(a_junk)
    theirs = torch.linalg.cholesky(torch.from_numpy(a)).numpy()
    _close(ours, theirs, dtype)
    assert np.all(np.triu(ours, 1) == 0)
    for upper in (False, True):
        got = gs.linalg.cholesky(gs.tensor(a), upper=upper).numpy()
        want = torch.linalg.cholesky(torch.from_numpy(a), upper=upper).numpy()
        _close(got, want, dtype)


def test_cholesky_not_positive_definite_is_torchs_error():
    a = _spd(300, np.float64, (2,))
    a[1, 250, 250] = -5.0
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.cholesky(torch.from_numpy(a))
    with pytest.raises(gs.linalg.LinAlgError) as ours:
        gs.linalg.cholesky(gs.tensor(a))
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(np.linalg.LinAlgError):
        kernels.cholesky_lower(a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(5,), (100,), (300,), (3, 130)])
def test_cholesky_gradient_is_torchs(dtype, upper, shape):
    n, batch = shape[-1], tuple(shape[:-1])
    a = _spd(n, dtype, batch, seed=4)
    g = np.random.default_rng(5).standard_normal(a.shape).astype(dtype)
    grads = []
    for L in (gs, torch):
        t = L.tensor(a, requires_grad=True)
        out = L.linalg.cholesky(t, upper=upper)
        (ga,) = L.autograd.grad(out, t, L.tensor(g))
        grads.append(ga.numpy())
    _close(grads[0], grads[1], dtype, scale=10.0)


def test_cholesky_gradcheck_in_float64():
    r = np.random.default_rng(6)
    for shape in [(70, 70), (2, 6, 6)]:  # (recursive halving from 65 rows)
        x = gs.tensor(r.standard_normal(shape) / 8, requires_grad=True)
        eye = gs.eye(shape[-1], dtype=gs.float64)

        def fn(v, eye=eye):
            return gs.linalg.cholesky(v @ v.mT + eye)

        assert gs.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5, fast_mode=True)
    small = gs.tensor(r.standard_normal((2, 4, 4)), requires_grad=True)
    eye4 = gs.eye(4, dtype=gs.float64)
    assert gs.autograd.gradgradcheck(lambda v: gs.linalg.cholesky(v @ v.mT + eye4), (small,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["spd", "symmetric indefinite", "general", "batch of both"])
def test_det_and_logabsdet_gradients_by_the_cholesky_inverse(dtype, kind):
    # (Note [The inverse of a symmetric positive-definite matrix by its Cholesky factor]:
    # from 192 rows a symmetric matrix's inverse is tried by its factor first)
    n = 200
    r = np.random.default_rng(8)
    m = r.standard_normal((n, n))
    if kind == "spd":
        a = _spd(n, np.float64)
    elif kind == "symmetric indefinite":
        a = (m + m.T) / np.sqrt(n) + 0.1 * np.eye(n)
    elif kind == "general":
        a = m / np.sqrt(n) + np.eye(n)
    else:
        a = np.stack([_spd(n, np.float64), (m + m.T) / np.sqrt(n)])
    # scaled to |det| = 1, which float32 holds
    a = (a / np.exp(np.linalg.slogdet(a)[1] / n)[..., None, None]).astype(dtype)
    for name in ("det", "logabsdet"):
        grads = []
        for L in (gs, torch):
            t = L.tensor(a, requires_grad=True)
            out = L.linalg.det(t) if name == "det" else L.linalg.slogdet(t)[1]
            (g,) = L.autograd.grad(out.sum(), t)
            grads.append((out.detach().numpy(), g.numpy()))
        (o1, g1), (o2, g2) = grads
        tol = 2e-4 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(o1, o2, rtol=tol, atol=tol)  # (logabsdet ~ 0 here)
        scale = np.abs(g2).max()
        np.testing.assert_allclose(g1, g2, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["spd", "symmetric indefinite", "general"])
@pytest.mark.parametrize("case", ["matrix", "vector", "right", "batched"])
def test_solve_of_a_symmetric_system_is_torchs(dtype, kind, case):
    # (Note [A symmetric system is tried by its Cholesky factor first], from 192 rows)
    n = 200
    r = np.random.default_rng(9)
    m = r.standard_normal((n, n))
    if kind == "spd":
        a = _spd(n, np.float64)
    elif kind == "symmetric indefinite":
        a = (m + m.T) / np.sqrt(n) + 0.1 * np.eye(n)
    else:
        a = m / np.sqrt(n) + 2 * np.eye(n)
    b = r.standard_normal({"vector": (n,), "batched": (3, n, 4)}.get(case, (n, 5)))
    if case == "batched":
        a = np.stack([a, a.T @ a / n + np.eye(n), a])  # SPD only if a is
    a, b = a.astype(dtype), b.astype(dtype)
    left = case != "right"
    grads = []
    for L in (gs, torch):
        ta, tb = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        out = L.linalg.solve(ta, tb if left else tb.mT, left=left)
        ga, gb = L.autograd.grad((out * out).sum(), (ta, tb))
        grads.append([v.detach().numpy() for v in (out, ga, gb)])
    for u, v in zip(*grads):
        _close(u, v, dtype, scale=50.0)


def test_solve_of_a_singular_symmetric_system_is_torchs_error():
    a = _spd(200, np.float64)
    a[:, 7] = 0
    a[7, :] = 0
    b = np.ones((200, 2))
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b))
    with pytest.raises(gs.linalg.LinAlgError) as ours:
        gs.linalg.solve(gs.tensor(a), gs.tensor(b))
    assert str(ours.value) == str(theirs.value)
