"""The op-level paths on matrix products (issue 34): ``linalg.lu``'s recursive LU above
128 columns (Note [A recursive LU on matrix products] in tensor-core's
``_impl_factorizations.py``, base case ``_lu_kernels.getf2_panel_``) and
``linalg.solve_triangular``'s blocked solve for float32/float64 (Note [A triangular solve
on numpy's solver]), against torch 2.13: pivots equal to getrf's, factors and solutions to
rounding, square, tall, wide and batched matrices, singular ones (getrf's ``info``),
upper/lower, left/right, unitriangular, broadcasting, non-contiguous operands, zero and
non-finite diagonals (the substitution's infinities), the backward at sizes that take the
new paths, and gradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack.autograd import gradcheck

torch = pytest.importorskip("torch")

TOL = {np.float32: 1e-4, np.float64: 1e-11}


def _rel(ours, theirs):
    scale = max(1.0, float(np.abs(theirs).max())) if theirs.size else 1.0
    return float(np.abs(ours - theirs).max()) / scale if theirs.size else 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape", [(129, 129), (300, 300), (300, 170), (170, 300), (2, 150, 150), (2, 1, 140, 260)]
)
def test_lu_pivots_and_factors_are_getrfs(dtype, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    ours = gs.linalg.lu(gs.from_numpy(x))
    theirs = torch.linalg.lu(torch.from_numpy(x))
    assert np.array_equal(ours.P.numpy(), theirs.P.numpy())
    for o, t in zip(ours[1:], theirs[1:]):
        assert o.numpy().dtype == t.numpy().dtype and o.shape == t.shape
        assert _rel(o.numpy(), t.numpy()) < TOL[dtype]
    lu, piv, info = gs.linalg.lu_factor_ex(gs.from_numpy(x))
    tlu, tpiv, tinfo = torch.linalg.lu_factor_ex(torch.from_numpy(x))
    assert np.array_equal(piv.numpy(), tpiv.numpy())
    assert np.array_equal(info.numpy(), tinfo.numpy())
    assert _rel(lu.numpy(), tlu.numpy()) < TOL[dtype]


def _singular(kind, rng):
    if kind == "zero columns":
        return np.c_[rng.standard_normal((200, 150)), np.zeros((200, 50))]
    if kind == "zero rows":
        return np.r_[rng.standard_normal((150, 200)), np.zeros((50, 200))]
    if kind == "zeros":
        return np.zeros((160, 160))
    return np.ones((160, 160))


@pytest.mark.parametrize("kind", ["zero columns", "zero rows", "zeros", "ones"])
def test_lu_of_singular_matrices_is_getrfs(kind):
    x = _singular(kind, np.random.default_rng(1))
    lu, piv, info = gs.linalg.lu_factor_ex(gs.from_numpy(x))
    tlu, tpiv, tinfo = torch.linalg.lu_factor_ex(torch.from_numpy(x))
    assert np.array_equal(piv.numpy(), tpiv.numpy())
    assert int(info) == int(tinfo)
    assert _rel(lu.numpy(), tlu.numpy()) < 1e-11
    with pytest.raises(RuntimeError, match="is zero and using it on lu_solve"):
        gs.linalg.lu_factor(gs.from_numpy(x))


def test_lu_of_a_non_contiguous_matrix():
    x = np.random.default_rng(2).standard_normal((300, 300))[::2, ::-1]
    ours = gs.linalg.lu(gs.from_numpy(x))
    theirs = torch.linalg.lu(torch.from_numpy(x.copy()))
    assert np.array_equal(ours.P.numpy(), theirs.P.numpy())
    assert _rel(ours.U.numpy(), theirs.U.numpy()) < 1e-11


@pytest.mark.parametrize("shape", [(150, 150), (180, 140), (140, 180)])
def test_lu_backward_is_torchs_on_the_recursive_path(shape):
    x = np.random.default_rng(3).standard_normal(shape)
    r = np.random.default_rng(4)
    gl = r.standard_normal((shape[0], min(shape)))
    gu = r.standard_normal((min(shape), shape[1]))
    grads = []
    for lib in (gs, torch):
        a = lib.tensor(x, requires_grad=True)
        _, low, up = lib.linalg.lu(a)
        loss = (low * lib.tensor(gl)).sum() + (up * lib.tensor(gu)).sum()
        grads.append(lib.autograd.grad(loss, a)[0].numpy())
    assert _rel(*grads) < 1e-9


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_lu_gradcheck(shape):
    a = gs.tensor(np.random.default_rng(5).standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda t: tuple(gs.linalg.lu(t)[1:]), (a,))


def _triangle(n, upper, dtype, batch=(), seed=0):
    """A well-conditioned triangle, with junk in the other one (never read)."""
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n)) / np.sqrt(n) + 2 * np.eye(n)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [65, 150])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_blocked_is_trsms(dtype, n, upper, left, unit):
    a = _triangle(n, upper, dtype)
    b = np.random.default_rng(1).standard_normal((n, 9) if left else (9, n)).astype(dtype)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    ours = gs.linalg.solve_triangular(gs.from_numpy(a), gs.from_numpy(b), **kw).numpy()
    theirs = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), **kw)
    assert ours.dtype == dtype
    assert _rel(ours, theirs.numpy()) < TOL[dtype]


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("zero", [False, True])
def test_solve_triangular_broadcasts_and_takes_strided_operands(unit, zero):
    a = _triangle(200, True, np.float32, batch=(2, 1))[..., ::-1, ::-1]  # (lower)
    if zero:  # (the substitution's path)
        a = a.copy()
        a[1, 0, 5, 5] = 0.0
    b = np.random.default_rng(2).standard_normal((3, 400, 200)).astype(np.float32)[:, ::2].mT
    kw = dict(upper=False, unitriangular=unit)
    ours = gs.linalg.solve_triangular(gs.from_numpy(a), gs.from_numpy(b), **kw)
    theirs = torch.linalg.solve_triangular(
        torch.from_numpy(a.copy()), torch.from_numpy(b.copy()), **kw
    )
    if zero and not unit:
        ours, theirs = ours[0], theirs[0]
    assert ours.shape == ((3, 200, 200) if zero and not unit else (2, 3, 200, 200))
    assert _rel(ours.numpy(), theirs.numpy()) < 1e-4


@pytest.mark.parametrize("bad", [0.0, np.inf, np.nan])
def test_solve_triangular_zero_or_non_finite_diagonal_is_trsms(bad):
    a = _triangle(100, True, np.float64)
    a[40, 40] = bad
    b = np.random.default_rng(3).standard_normal((100, 3))
    ours = gs.linalg.solve_triangular(gs.from_numpy(a), gs.from_numpy(b), upper=True).numpy()
    theirs = torch.linalg.solve_triangular(
        torch.from_numpy(a), torch.from_numpy(b), upper=True
    ).numpy()
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
    fin = np.isfinite(theirs)
    assert _rel(ours[fin], theirs[fin]) < 1e-11


def test_solve_triangular_unit_ignores_the_diagonal():
    a = _triangle(100, False, np.float64)
    a[np.arange(100), np.arange(100)] = 0.0  # (a zero diagonal, never read)
    b = np.random.default_rng(4).standard_normal((100, 5))
    kw = dict(upper=False, unitriangular=True)
    ours = gs.linalg.solve_triangular(gs.from_numpy(a), gs.from_numpy(b), **kw).numpy()
    theirs = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), **kw)
    assert _rel(ours, theirs.numpy()) < 1e-11


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_backward_is_torchs_on_the_blocked_path(upper, left, unit):
    a0 = _triangle(130, upper, np.float64, seed=6)
    b0 = np.random.default_rng(7).standard_normal((130, 4) if left else (4, 130))
    g0 = np.random.default_rng(8).standard_normal(b0.shape)
    grads = []
    for lib in (gs, torch):
        a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0, requires_grad=True)
        x = lib.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
        grads.append([g.numpy() for g in lib.autograd.grad((x * lib.tensor(g0)).sum(), (a, b))])
    for o, t in zip(*grads):
        assert _rel(o, t) < 1e-9


def test_getf2_panel_checks_its_arguments():
    from gradstack_tensor._lu_kernels import getf2_panel_

    a = np.zeros((1, 3, 3))
    piv, perm, info = np.zeros((1, 3), np.int32), np.zeros((1, 3), np.int64), np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="j0 <= j1"):
        getf2_panel_(a, 0, 4, piv, perm, info)
    with pytest.raises(ValueError, match="j0 <= j1"):
        getf2_panel_(a, 2, 1, piv, perm, info)
    with pytest.raises(ValueError, match="perm"):
        getf2_panel_(a, 0, 3, piv, np.zeros((1, 3), np.int32), info)
    with pytest.raises(ValueError, match="pivots"):
        getf2_panel_(a, 0, 3, np.zeros((1, 2), np.int32), perm, info)
    with pytest.raises(ValueError, match="C-contiguous"):
        getf2_panel_(np.zeros((1, 3, 6))[:, :, ::2], 0, 3, piv, perm, info)
    with pytest.raises(TypeError, match="float32 or float64"):
        getf2_panel_(a.astype(np.complex128), 0, 3, piv, perm, info)


@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gelsy"])
@pytest.mark.parametrize(
    "shape, rank", [((150, 100), None), ((100, 150), None), ((2, 120, 90), 40), ((90, 90), 30)]
)
def test_lstsq_by_the_svd_is_gelsds(shape, rank, driver):
    """Note [lstsq by the SVD]: the minimum-norm solution, the rank, the singular values
    and the residuals as torch's drivers fill them (rank-deficient: the same rank)."""
    r = np.random.default_rng(9)
    a = r.standard_normal(shape)
    if rank is not None:
        a = a[..., :, :rank] @ r.standard_normal(shape[:-2] + (rank, shape[-1]))
    b = r.standard_normal(shape[:-1] + (3,))
    ours = gs.linalg.lstsq(gs.from_numpy(a), gs.from_numpy(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        if o.numel():
            assert _rel(o.numpy().astype(np.float64), t.numpy().astype(np.float64)) < 1e-9


def _real_spectrum(n, seed):
    """A non-symmetric matrix with distinct real eigenvalues (real eigenvectors)."""
    r = np.random.default_rng(seed)
    s = r.standard_normal((n, n)) + n * np.eye(n)
    return s @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(s)


@pytest.mark.parametrize("kind", ["symmetric", "real spectrum", "complex spectrum", "batch"])
def test_eigvals_backward_is_torchs(kind):
    """Note [A real spectrum's eig backward in real arithmetic], and the complex solve
    where a spectrum is not real."""
    r = np.random.default_rng(10)
    if kind == "symmetric":
        x = r.standard_normal((60, 60))
        x = x + x.T
    elif kind == "real spectrum":
        x = _real_spectrum(40, 11)
    elif kind == "complex spectrum":
        x = r.standard_normal((40, 40))
    else:
        x = np.stack([_real_spectrum(20, 12), r.standard_normal((20, 20))])
    grads = []
    for lib in (gs, torch):  # (a loss that does not see the eigenvalues' order)
        a = lib.tensor(x, requires_grad=True)
        vals = lib.linalg.eigvals(a)
        loss = (vals.real**3).sum() + (vals.imag**2 * vals.real).sum()
        grads.append(lib.autograd.grad(loss, a)[0].numpy())
    assert grads[0].dtype == grads[1].dtype
    assert _rel(*grads) < 1e-8


def test_eigvals_real_spectrum_gradcheck_and_gradgradcheck():
    from gradstack.autograd import gradgradcheck

    a = gs.tensor(_real_spectrum(4, 13), requires_grad=True)
    assert gradcheck(lambda t: gs.linalg.eigvals(t).real, (a,))
    assert gradgradcheck(lambda t: gs.linalg.eigvals(t).real, (a,))
