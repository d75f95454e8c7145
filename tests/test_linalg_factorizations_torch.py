"""torch.linalg's eigendecompositions, QR, least squares, triangular solves, LU and the
functions made of them, and torch's top-level forms (``qr``, ``lu``, ``lu_solve``,
``lu_unpack``, ``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``, ``geqrf``,
``orgqr``, ``ormqr``, ``pinverse``) against torch 2.13: values (eigenvectors through
invariants), float64 gradients by gradcheck and gradgradcheck and against torch's,
errors, return types and their printing, ``out=``.

numpy computes float32 factorizations in float64 (Note [numpy factorizes in double
precision] in tensor-core's ``_impl_factorizations.py``): float32 values are compared at
1e-5.
"""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest
from gradstack.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
A = rng.standard_normal((3, 3))
B = rng.standard_normal((3, 2))
tall = rng.standard_normal((5, 3))
wide = rng.standard_normal((3, 5))
Ab = rng.standard_normal((2, 4, 4))
L = np.linalg.cholesky(A @ A.T + 3 * np.eye(3))
C = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
Ac = C


def f64(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


def V(name, fn, *arrays, tol=1e-10):
    return pytest.param(fn, arrays, tol, id=name)


def cmp(name, fn, *arrays, tol=1e-10):
    return V(name, fn, *arrays, tol=tol)


VALUES = [
    V("torch.qr", lambda l, a: tuple(l.qr(a)), tall),
    V("torch.qr some=False", lambda l, a: tuple(l.qr(a, some=False)), tall),
    V("Tensor.qr", lambda l, a: tuple(a.qr()), wide),
    V("torch.lu", lambda l, a: tuple(l.lu(a)), Ab),
    V("torch.lu get_infos", lambda l, a: tuple(l.lu(a, get_infos=True)), Ab),
    V("Tensor.lu", lambda l, a: tuple(a.lu()), tall),
    V("torch.lu_solve", lambda l, a, b: l.lu_solve(b, *l.lu(a)), A, B),
    V("Tensor.lu_solve", lambda l, a, b: b.lu_solve(*l.lu(a)), Ab, rng.standard_normal((2, 4, 1))),
    V("torch.lu_unpack", lambda l, a: tuple(l.lu_unpack(*l.linalg.lu_factor(a))), Ab),
    V("lu_unpack tall", lambda l, a: tuple(l.lu_unpack(*l.linalg.lu_factor(a))), tall),
    V("lu_unpack wide", lambda l, a: tuple(l.lu_unpack(*l.linalg.lu_factor(a))), wide),
    V("triangular_solve", lambda l, a, b: tuple(l.triangular_solve(b, a)), A, B),
    V(
        "triangular_solve T low unit",
        lambda l, a, b: tuple(l.triangular_solve(b, a, False, True, True)),
        A,
        B,
    ),
    V(
        "Tensor.triangular_solve bat",
        lambda l, a, b: tuple(b.triangular_solve(a)),
        Ab,
        rng.standard_normal((4, 2)),
    ),
    V("cholesky_solve", lambda l, b, L: l.cholesky_solve(b, L), B, L),
    V("cholesky_solve upper", lambda l, b, L: l.cholesky_solve(b, L.mT, upper=True), B, L),
    V("cholesky_inverse", lambda l, L: l.cholesky_inverse(L), L),
    V("Tensor.cholesky_inverse up", lambda l, L: L.mT.cholesky_inverse(upper=True), L),
    V("geqrf", lambda l, a: tuple(l.geqrf(a)), tall),
    V("geqrf wide batch", lambda l, a: tuple(l.geqrf(a)), rng.standard_normal((2, 3, 5))),
    V("orgqr", lambda l, a: l.orgqr(*l.geqrf(a)), tall),
    V("ormqr", lambda l, a, c: l.ormqr(*l.geqrf(a), c), tall, rng.standard_normal((5, 2))),
    V(
        "ormqr right T",
        lambda l, a, c: l.ormqr(*l.geqrf(a), c, left=False, transpose=True),
        tall,
        rng.standard_normal((2, 5)),
    ),
    V("ormqr wide", lambda l, a, c: l.ormqr(*l.geqrf(a), c), wide, rng.standard_normal((3, 2))),
    V("pinverse", lambda l, a: l.pinverse(a), tall),
    V("Tensor.pinverse", lambda l, a: a.pinverse(), wide),
    V("linalg.eigvals", lambda l, a: l.linalg.eigvals(a), Ab),
    V("linalg.eigvalsh", lambda l, a: l.linalg.eigvalsh(a), Ab),
    V(
        "linalg.lstsq",
        lambda l, a, b: tuple(l.linalg.lstsq(a, b)),
        tall,
        rng.standard_normal((5, 2)),
    ),
    V("matrix_rank", lambda l, a: l.linalg.matrix_rank(a), np.ones((2, 3, 3))),
    V(
        "matrix_rank herm atol",
        lambda l, a: l.linalg.matrix_rank(a, hermitian=True, atol=1.0),
        A + A.T,
    ),
    V("matrix_rank rtol", lambda l, a: l.linalg.matrix_rank(a, rtol=0.3), tall),
    V("pinv atol", lambda l, a: l.linalg.pinv(a, atol=0.5), tall),
    V("pinv herm", lambda l, a: l.linalg.pinv(a + a.mT, hermitian=True), Ab),
    V("cond tall", lambda l, a: l.linalg.cond(a), tall),
    V("cond singular 1", lambda l, a: l.linalg.cond(a, 1), np.ones((3, 3))),
    V("inv_ex", lambda l, a: tuple(l.linalg.inv_ex(a)), Ab),
    V("inv_ex singular info", lambda l, a: l.linalg.inv_ex(a).info, np.stack([np.ones((3, 3)), A])),
    V("cholesky_ex", lambda l, a: tuple(l.linalg.cholesky_ex(a)), A @ A.T + np.eye(3)),
    V(
        "cholesky_ex info",
        lambda l, a: l.linalg.cholesky_ex(a).info,
        np.stack([-np.eye(3), A @ A.T + np.eye(3)]),
    ),
    V("solve_ex", lambda l, a, b: tuple(l.linalg.solve_ex(a, b)), A, B),
    V("solve_ex singular info", lambda l, a, b: l.linalg.solve_ex(a, b).info, np.ones((3, 3)), B),
    V("lu_factor_ex", lambda l, a: tuple(l.linalg.lu_factor_ex(a)), np.stack([np.ones((3, 3)), A])),
    V("lu", lambda l, a: tuple(l.linalg.lu(a)), rng.standard_normal((2, 3, 6, 4))),
    V(
        "solve_triangular bcast",
        lambda l, a, b: l.linalg.solve_triangular(a, b, upper=False),
        rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3),
        rng.standard_normal((4, 3, 2)),
    ),
    V(
        "solve_triangular zero diag",
        lambda l, a, b: l.linalg.solve_triangular(a, b, upper=True),
        np.triu(np.ones((3, 3))) - np.diag([0, 1, 1]),
        B,
    ),
    V(
        "tensorinv",
        lambda l, a: l.linalg.tensorinv(a, ind=2),
        (rng.standard_normal((6, 6)) + 6 * np.eye(6)).reshape(2, 3, 6),
    ),
    V(
        "tensorsolve dims",
        lambda l, a, b: l.linalg.tensorsolve(a, b, dims=(0,)),
        (rng.standard_normal((6, 6)) + 6 * np.eye(6)).reshape(6, 2, 3),
        rng.standard_normal((2, 3)),
    ),
    V("eig real", lambda l, a: tuple(l.linalg.eig(a)), np.diag([1.0, 2.0, 3.0])),
    V("qr r", lambda l, a: tuple(l.linalg.qr(a, mode="r")), tall),
    V("qr complete", lambda l, a: tuple(l.linalg.qr(a, mode="complete")), tall),
    V("qr empty", lambda l, a: tuple(l.linalg.qr(a)), np.zeros((0, 3))),
    V("eigh empty", lambda l, a: tuple(l.linalg.eigh(a)), np.zeros((2, 0, 0))),
    V("eig empty", lambda l, a: tuple(l.linalg.eig(a)), np.zeros((0, 3, 3))),
    V("lu empty", lambda l, a: tuple(l.linalg.lu(a)), np.zeros((0, 3))),
    V("lu_factor empty", lambda l, a: tuple(l.linalg.lu_factor(a)), np.zeros((3, 0))),
    V("pinv empty", lambda l, a: l.linalg.pinv(a), np.zeros((0, 3))),
    V(
        "lstsq empty",
        lambda l, a, b: tuple(l.linalg.lstsq(a, b)),
        np.zeros((0, 3, 2)),
        np.zeros((0, 3, 1)),
    ),
    V("f32 eigh", lambda l, a: l.linalg.eigvalsh(a), (A + A.T).astype(np.float32), tol=1e-5),
    V("f32 qr", lambda l, a: tuple(l.linalg.qr(a)), tall.astype(np.float32), tol=1e-5),
    V("f32 lu", lambda l, a: tuple(l.linalg.lu(a)), tall.astype(np.float32), tol=1e-5),
    V("f32 eigvals", lambda l, a: l.linalg.eigvals(a), A.astype(np.float32), tol=1e-5),
    V("c128 lu", lambda l, a: tuple(l.linalg.lu(a)), C),
    V("c128 qr", lambda l, a: tuple(l.linalg.qr(a)), C),
    V("c128 eigvalsh", lambda l, a: l.linalg.eigvalsh(a), C + C.conj().T),
    V("c128 pinv", lambda l, a: l.linalg.pinv(a), C[:2]),
    V("c128 lstsq", lambda l, a, b: l.linalg.lstsq(a, b).solution, C, C[:, :1]),
    V(
        "c128 solve_tri",
        lambda l, a, b: l.linalg.solve_triangular(a, b, upper=True, left=False),
        C,
        C[:2],
    ),
    V(
        "c128 cholesky_solve",
        lambda l, b, L: l.cholesky_solve(b, L),
        C[:, :2],
        np.linalg.cholesky(C @ C.conj().T + np.eye(3)),
    ),
    V(
        "c128 lu_solve adj",
        lambda l, a, b: l.linalg.lu_solve(*l.linalg.lu_factor(a), b, adjoint=True),
        C,
        C[:, :2],
    ),
    V("c128 svdvals real", lambda l, a: l.linalg.svdvals(a), C),
    V("c128 cond real", lambda l, a: l.linalg.cond(a), C),
    *[
        V(f"lstsq {d} {kind}", lambda l, a, b, d=d: tuple(l.linalg.lstsq(a, b, driver=d)), a, b)
        for d in ("gels", "gelsy", "gelsd", "gelss")
        for kind, a, b in (
            ("batched", rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))),
            ("vector", tall, rng.standard_normal(5)),
            ("wide", wide, rng.standard_normal((3, 1))),
        )
    ],
    *[
        V(
            f"lstsq rank-deficient {d}",
            lambda l, a, b, d=d: tuple(l.linalg.lstsq(a, b, driver=d)),
            np.ones((5, 3)),
            rng.standard_normal((5, 1)),
        )
        for d in ("gelsy", "gelsd", "gelss")
    ],
    *[
        V(f"cond {p}", lambda l, a, p=p: l.linalg.cond(a, p), Ab)
        for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), -float("inf"))
    ],
]


def _compare(got, want, tol):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    assert type(got[0]).__name__ == type(want[0]).__name__ or len(got) == 1
    for x, y in zip(got, want):
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn, arrays, tol", VALUES)
def test_values_match_torch(fn, arrays, tol):
    got = fn(gs, *[gs.tensor(a) for a in arrays])
    want = fn(torch, *[torch.tensor(a) for a in arrays])
    _compare(got, want, tol)
    if isinstance(want, tuple) and hasattr(want, "_fields"):
        assert got._fields == want._fields
        assert type(got).__name__ == type(want).__name__


def _invariants(lib, eig, a, hermitian):
    """The eigendecomposition's values and the phase-free facts about its vectors."""
    r = eig(a)
    values, vectors = r.eigenvalues, r.eigenvectors
    residual = a.to(vectors.dtype) @ vectors - vectors * values.to(vectors.dtype).unsqueeze(-2)
    norms = vectors.abs().pow(2).sum(-2)
    return values, residual.abs().max(), norms, vectors.abs()


@pytest.mark.parametrize(
    "a, hermitian",
    [
        (A, False),
        (Ab, False),
        (np.diag([1.0, 2.0, 3.0]), False),
        (np.array([[0.0, -1.0], [1.0, 0.0]]), False),  # complex pair
        (C, False),
        (A + A.T, True),
        (Ab + np.swapaxes(Ab, -1, -2), True),
        (C + C.conj().T, True),
        (A.astype(np.float32), False),
        ((A + A.T).astype(np.float32), True),
    ],
)
def test_eig_and_eigh_match_torch_up_to_the_eigenvectors_phase(a, hermitian):
    tol = 1e-4 if a.dtype == np.float32 else 1e-9
    results = []
    for lib in (gs, torch):
        eig = lib.linalg.eigh if hermitian else lib.linalg.eig
        results.append(_invariants(lib, eig, lib.tensor(a), hermitian))
    (lg, res_g, norms_g, abs_g), (lt, _res_t, norms_t, abs_t) = results
    assert str(lg.dtype).split(".")[-1] == str(lt.dtype).split(".")[-1]
    np.testing.assert_allclose(lg.numpy(), lt.numpy(), rtol=tol, atol=tol)
    assert float(res_g) < tol * 10
    np.testing.assert_allclose(norms_g.numpy(), 1.0, rtol=tol)
    # LAPACK's normalisation (unit norm, largest component real for geev): the moduli
    # are torch's whenever the eigenvalues are distinct
    np.testing.assert_allclose(abs_g.numpy(), abs_t.numpy(), rtol=tol, atol=tol)
    vals = gs.linalg.eigvalsh(gs.tensor(a)) if hermitian else gs.linalg.eigvals(gs.tensor(a))
    np.testing.assert_allclose(vals.numpy(), lg.numpy(), rtol=tol, atol=tol)


def _t(lib, a):
    return lib.tensor(a, dtype=lib.float64 if a.dtype.kind == "f" else lib.complex128,
                      requires_grad=True)  # fmt: skip


def run(name, f, *arrays, gg=True):
    return pytest.param(f, arrays, gg, id=name)


GRADIENTS = [
    run("eigvals", lambda L, a: L.linalg.eigvals(a), A),
    run(
        "eig V*V invariants",
        lambda L, a: (lambda r: (r.eigenvectors.abs() ** 2, r.eigenvalues))(L.linalg.eig(a)),
        A,
    ),
    run(
        "eigh",
        lambda L, a: (lambda r: (r.eigenvalues, r.eigenvectors.abs()))(L.linalg.eigh(a + a.mT)),
        A,
    ),
    run(
        "eigh batched",
        lambda L, a: (lambda r: (r.eigenvalues, (r.eigenvectors**2)))(L.linalg.eigh(a + a.mT)),
        rng.standard_normal((2, 3, 3)),
    ),
    run("eigvalsh U", lambda L, a: L.linalg.eigvalsh(a + a.mT, UPLO="U"), A),
    run("qr square", lambda L, a: tuple(L.linalg.qr(a)), A),
    run("qr tall", lambda L, a: tuple(L.linalg.qr(a)), tall),
    run("qr wide", lambda L, a: tuple(L.linalg.qr(a)), wide),
    run("qr complete wide", lambda L, a: tuple(L.linalg.qr(a, mode="complete")), wide),
    run(
        "solve_triangular",
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
        A + 3 * np.eye(3),
        B,
    ),
    run(
        "solve_triangular low right unit",
        lambda L, a, b: L.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
        A,
        B.T,
    ),
    run("pinv tall", lambda L, a: L.linalg.pinv(a), tall),
    run("pinv wide", lambda L, a: L.linalg.pinv(a), wide),
    run("pinv herm", lambda L, a: L.linalg.pinv(a + a.mT, hermitian=True), A),
    run(
        "lstsq tall",
        lambda L, a, b: L.linalg.lstsq(a, b).solution,
        tall,
        rng.standard_normal((5, 2)),
    ),
    run(
        "lstsq gelsd res",
        lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd")[:2]),
        tall,
        rng.standard_normal((5, 2)),
    ),
    run(
        "lstsq wide",
        lambda L, a, b: L.linalg.lstsq(a, b).solution,
        wide,
        rng.standard_normal((3, 2)),
    ),
    run("lu square", lambda L, a: tuple(L.linalg.lu(a)[1:]), A),
    run("lu tall", lambda L, a: tuple(L.linalg.lu(a)[1:]), tall),
    run("lu wide", lambda L, a: tuple(L.linalg.lu(a)[1:]), wide),
    run("lu_factor", lambda L, a: L.linalg.lu_factor(a).LU, A),
    run("lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), A, B),
    run(
        "lu_solve adj",
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
        A,
        B,
    ),
    run(
        "lu_solve right",
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False),
        A,
        B.T,
    ),
    run(
        "lu_solve right adj",
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False, adjoint=True),
        A,
        B.T,
    ),
    run("cond", lambda L, a: L.linalg.cond(a), A),
    run("cond fro", lambda L, a: L.linalg.cond(a, "fro"), A),
    run(
        "tensorinv",
        lambda L, a: L.linalg.tensorinv(a.reshape(4, 2, 2), ind=1),
        rng.standard_normal((4, 4)) + 4 * np.eye(4),
    ),
    run(
        "tensorsolve",
        lambda L, a, b: L.linalg.tensorsolve(a.reshape(2, 3, 6), b),
        rng.standard_normal((6, 6)) + 6 * np.eye(6),
        rng.standard_normal((2, 3)),
    ),
    run(
        "eigh complex",
        lambda L, a: (lambda r: (r.eigenvalues, r.eigenvectors.abs()))(L.linalg.eigh(a + a.mH)),
        Ac,
    ),
    run("qr complex", lambda L, a: (lambda r: (r.Q.abs(), r.R.abs()))(L.linalg.qr(a)), Ac),
    run("qr complex wide", lambda L, a: (lambda r: (r.Q.abs(), r.R.abs()))(L.linalg.qr(a)), Ac[:2]),
    run("pinv complex", lambda L, a: L.linalg.pinv(a), Ac[:2]),
    run(
        "solve_triangular complex",
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
        Ac + 3 * np.eye(3),
        Ac[:, :2],
    ),
    run(
        "eig complex",
        lambda L, a: (lambda r: (r.eigenvectors.abs(), r.eigenvalues))(L.linalg.eig(a)),
        Ac,
    ),
    run("lu complex", lambda L, a: tuple(L.linalg.lu(a)[1:]), Ac),
]


def _scalar(outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    return sum((o.abs() if o.is_complex() else o).sum() for o in outs)


@pytest.mark.parametrize("f, arrays, gg", GRADIENTS)
def test_gradients_gradcheck_and_match_torch(f, arrays, gg):
    ins = [_t(gs, a) for a in arrays]
    assert gradcheck(lambda *x: f(gs, *x), ins)
    if gg:
        assert gradgradcheck(lambda *x: f(gs, *x), ins)
    tins = [_t(torch, a) for a in arrays]
    got = gs.autograd.grad(_scalar(f(gs, *ins)), ins)
    try:
        want = torch.autograd.grad(_scalar(f(torch, *tins)), tins)
    except RuntimeError:  # (torch's own cond(A, 'fro') backward fails its version check)
        return
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-7, atol=1e-9)


def test_backward_node_names_are_torch():
    a = gs.tensor(A, requires_grad=True)
    names = {
        "eig": gs.linalg.eig(a).eigenvalues.grad_fn.name(),
        "eigh": gs.linalg.eigh(a).eigenvalues.grad_fn.name(),
        "qr": gs.linalg.qr(a).Q.grad_fn.name(),
        "lstsq": gs.linalg.lstsq(a, gs.tensor(B)).solution.grad_fn.name(),
        "solve_triangular": gs.linalg.solve_triangular(a, gs.tensor(B), upper=True).grad_fn.name(),
        "lu": gs.linalg.lu(a).L.grad_fn.name(),
        "pinv": gs.linalg.pinv(a).grad_fn.name(),
    }
    assert names == {
        "eig": "LinalgEigBackward0",
        "eigh": "LinalgEighBackward0",
        "qr": "LinalgQrBackward0",
        "lstsq": "LinalgLstsqBackward0",
        "solve_triangular": "LinalgSolveTriangularBackward0",
        "lu": "LinalgLuBackward0",
        "pinv": "LinalgPinvBackward0",
    }


def both(name, f):
    return pytest.param(f, id=name)


ERRORS = [
    both("eig nonsquare", lambda l: l.linalg.eig(f64(l, 2, 3))),
    both("eig 1d", lambda l: l.linalg.eig(f64(l, 3))),
    both("eig int", lambda l: l.linalg.eig(l.ones(2, 2, dtype=l.int64))),
    both("eig half", lambda l: l.linalg.eig(l.ones(2, 2, dtype=l.float16))),
    both("eig nan", lambda l: l.linalg.eig(f64(l, 2, 2) * float("nan"))),
    both("eigvals nonsquare", lambda l: l.linalg.eigvals(f64(l, 2, 3))),
    both("eigh nonsquare", lambda l: l.linalg.eigh(f64(l, 2, 3))),
    both("eigh int", lambda l: l.linalg.eigh(l.ones(2, 2, dtype=l.int64))),
    both("eigh UPLO", lambda l: l.linalg.eigh(f64(l, 2, 2), UPLO="X")),
    both("eigvalsh UPLO", lambda l: l.linalg.eigvalsh(f64(l, 2, 2), UPLO="l")),
    both("eigh 1d", lambda l: l.linalg.eigh(f64(l, 2))),
    both("qr mode", lambda l: l.linalg.qr(f64(l, 2, 2), mode="full")),
    both("qr 1d", lambda l: l.linalg.qr(f64(l, 2))),
    both("qr int", lambda l: l.linalg.qr(l.ones(2, 2, dtype=l.int64))),
    both("qr half", lambda l: l.linalg.qr(l.ones(2, 2, dtype=l.float16))),
    both("lstsq driver", lambda l: l.linalg.lstsq(f64(l, 3, 2), f64(l, 3, 1), driver="foo")),
    both("lstsq rows", lambda l: l.linalg.lstsq(f64(l, 3, 2), f64(l, 4, 1))),
    both("lstsq dtype", lambda l: l.linalg.lstsq(f64(l, 3, 2), l.ones(3, 1))),
    both("lstsq 1d", lambda l: l.linalg.lstsq(f64(l, 3), f64(l, 3))),
    both(
        "lstsq int",
        lambda l: l.linalg.lstsq(l.ones(3, 2, dtype=l.int64), l.ones(3, 1, dtype=l.int64)),
    ),
    both("lstsq bcast dims", lambda l: l.linalg.lstsq(f64(l, 3, 2), f64(l, 2, 3, 1))),
    both(
        "solve_tri dtype",
        lambda l: l.linalg.solve_triangular(f64(l, 2, 2), l.ones(2, 1), upper=True),
    ),
    both(
        "solve_tri shape",
        lambda l: l.linalg.solve_triangular(f64(l, 2, 2), f64(l, 3, 1), upper=True),
    ),
    both(
        "solve_tri right shape",
        lambda l: l.linalg.solve_triangular(f64(l, 2, 2), f64(l, 2, 3), upper=True, left=False),
    ),
    both(
        "solve_tri nonsquare",
        lambda l: l.linalg.solve_triangular(f64(l, 2, 3), f64(l, 2, 1), upper=True),
    ),
    both(
        "solve_tri 1d B", lambda l: l.linalg.solve_triangular(f64(l, 2, 2), f64(l, 2), upper=True)
    ),
    both(
        "solve_tri int",
        lambda l: l.linalg.solve_triangular(
            l.ones(2, 2, dtype=l.int64), l.ones(2, 1, dtype=l.int64), upper=True
        ),
    ),
    both("solve_tri no upper", lambda l: l.linalg.solve_triangular(f64(l, 2, 2), f64(l, 2, 1))),
    both("lu 1d", lambda l: l.linalg.lu(f64(l, 2))),
    both("lu int", lambda l: l.linalg.lu(l.ones(2, 2, dtype=l.int64))),
    both("lu nopivot", lambda l: l.linalg.lu(f64(l, 2, 2), pivot=False)),
    both("lu_factor singular", lambda l: l.linalg.lu_factor(f64(l, 2, 2))),
    both("lu_factor singular batch", lambda l: l.linalg.lu_factor(f64(l, 3, 2, 2))),
    both("lu_factor_ex check", lambda l: l.linalg.lu_factor_ex(f64(l, 2, 2), check_errors=True)),
    both("lu_factor 1d", lambda l: l.linalg.lu_factor(f64(l, 2))),
    both(
        "lu_solve nonsquare",
        lambda l: l.linalg.lu_solve(f64(l, 2, 3), l.ones(2, dtype=l.int32), f64(l, 2, 1)),
    ),
    both(
        "lu_solve shape",
        lambda l: l.linalg.lu_solve(*l.linalg.lu_factor(l.eye(2, dtype=l.float64)), f64(l, 3, 1)),
    ),
    both("pinv 1d", lambda l: l.linalg.pinv(f64(l, 3))),
    both("pinv int", lambda l: l.linalg.pinv(l.ones(2, 2, dtype=l.int64))),
    both("pinv herm nonsquare", lambda l: l.linalg.pinv(f64(l, 2, 3), hermitian=True)),
    both("matrix_rank 1d", lambda l: l.linalg.matrix_rank(f64(l, 3))),
    both("matrix_rank int", lambda l: l.linalg.matrix_rank(l.ones(2, 2, dtype=l.int64))),
    both("cond 1d", lambda l: l.linalg.cond(f64(l, 3))),
    both("cond fro nonsquare", lambda l: l.linalg.cond(f64(l, 2, 3), "fro")),
    both("cond bad p", lambda l: l.linalg.cond(f64(l, 2, 2), 3)),
    both("inv_ex nonsquare", lambda l: l.linalg.inv_ex(f64(l, 2, 3))),
    both("inv_ex check", lambda l: l.linalg.inv_ex(f64(l, 2, 2), check_errors=True)),
    both(
        "cholesky_ex check",
        lambda l: l.linalg.cholesky_ex(-l.eye(2, dtype=l.float64), check_errors=True),
    ),
    both("solve_ex check", lambda l: l.linalg.solve_ex(f64(l, 2, 2), f64(l, 2), check_errors=True)),
    both("tensorinv ind", lambda l: l.linalg.tensorinv(f64(l, 4, 2, 2), ind=0)),
    both("tensorinv shape", lambda l: l.linalg.tensorinv(f64(l, 4, 2, 3), ind=1)),
    both("tensorsolve shape", lambda l: l.linalg.tensorsolve(f64(l, 2, 3, 5), f64(l, 2, 3))),
    both("torch.qr 1d", lambda l: l.qr(f64(l, 3))),
    both("cholesky_solve dtype", lambda l: l.cholesky_solve(f64(l, 2, 1), l.eye(2))),
    both("cholesky_solve 1d", lambda l: l.cholesky_solve(f64(l, 2), l.eye(2, dtype=l.float64))),
    both("cholesky_inverse 1d", lambda l: l.cholesky_inverse(f64(l, 2))),
    both("cholesky_inverse nonsq", lambda l: l.cholesky_inverse(f64(l, 2, 3))),
    both("triangular_solve 1d", lambda l: l.triangular_solve(f64(l, 2), f64(l, 2, 2))),
    both("geqrf 1d", lambda l: l.geqrf(f64(l, 2))),
    both("geqrf int", lambda l: l.geqrf(l.ones(2, 2, dtype=l.int64))),
    both(
        "lu_unpack int64 piv",
        lambda l: l.lu_unpack(l.eye(2, dtype=l.float64), l.ones(2, dtype=l.int64)),
    ),
    both(
        "eig backward gauge",
        lambda l: (
            l.linalg.eig(l.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=l.float64, requires_grad=True))
            .eigenvectors.real.sum()
            .backward()
        ),
    ),
    both(
        "eigh complex gauge",
        lambda l: (
            l.linalg.eigh(l.tensor([[2.0, 1j], [-1j, 2.0]], dtype=l.complex128, requires_grad=True))
            .eigenvectors.real.sum()
            .backward()
        ),
    ),
    both(
        "qr r backward",
        lambda l: l.linalg.qr(f64(l, 3, 2).requires_grad_(), mode="r").R.sum().backward(),
    ),
    both(
        "qr complete tall backward",
        lambda l: (
            l.linalg.qr(l.eye(3, 2, dtype=l.float64).requires_grad_(), mode="complete")
            .R.sum()
            .backward()
        ),
    ),
]


def _error(lib, f):
    try:
        f(lib)
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return type(e).__name__.lstrip("_"), str(e).split("\n")[0]
    return None


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("f", ERRORS)
def test_errors_match_torch(f):
    got, want = _error(gs, f), _error(torch, f)
    assert got == want


_NAN = np.array([[[1.0, 1.0], [1.0, 2.0]], [[np.nan, 1.0], [1.0, 1.0]]])


@pytest.mark.parametrize(
    "f",
    [
        lambda l: l.linalg.svd(l.tensor(_NAN)),
        lambda l: l.linalg.svd(l.tensor(_NAN[1])),
        lambda l: l.linalg.pinv(l.tensor(_NAN)),
        lambda l: l.linalg.matrix_rank(l.tensor(_NAN)),
        lambda l: l.linalg.cond(l.tensor(_NAN)),
    ],
)
def test_svd_of_non_finite_input_raises_torch_error(f):
    assert _error(gs, f) == _error(torch, f)


def test_lstsq_of_non_finite_input_raises():
    # (torch's CPU lstsq fails an internal assert; here a LinAlgError says why)
    with pytest.raises(gs.linalg.LinAlgError, match="infinities or NaNs"):
        gs.linalg.lstsq(gs.tensor(_NAN), gs.tensor(_NAN))


def test_eig_of_non_finite_input_raises_torch_error():
    # (torch's eigvals without a gradient crashes in MKL's gebal on NaN; eig raises)
    for fn in (gs.linalg.eig, gs.linalg.eigvals):
        with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
            fn(gs.full((2, 2), float("nan")))


def test_return_types_print_as_torch():
    r = gs.linalg.eigh(gs.tensor([[2.0, 0.0], [0.0, 3.0]]))
    t = torch.linalg.eigh(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
    assert repr(r).replace("gradstack.", "torch.") == repr(t)
    m = gs.max(gs.tensor([[1.0, 2.0]]), 1)
    assert repr(m).replace("gradstack.", "torch.") == repr(torch.max(torch.tensor([[1.0, 2.0]]), 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = gs.lu(gs.eye(2), get_infos=True)
    assert type(info).__name__ == "_lu_with_info" and info._fields == ("LU", "pivots", "info")


def test_out_arguments_are_written():
    a = gs.tensor(A)
    q, r = gs.empty(0, dtype=gs.float64), gs.empty(0, dtype=gs.float64)
    res = gs.linalg.qr(a, out=(q, r))
    assert res.Q is q and res.R is r
    np.testing.assert_allclose((q @ r).numpy(), A, atol=1e-12)
    x = gs.empty(0, dtype=gs.float64)
    assert gs.linalg.solve_triangular(a.triu(), gs.tensor(B), upper=True, out=x) is x
    p = gs.empty(0, dtype=gs.float64)
    assert gs.linalg.pinv(a, out=p) is p
    w, v = gs.empty(0, dtype=gs.complex128), gs.empty(0, dtype=gs.complex128)
    gs.linalg.eig(a, out=(w, v))
    np.testing.assert_allclose(np.sort_complex(w.numpy()), np.sort_complex(np.linalg.eigvals(A)))


def test_facade_names():
    for name in ("cholesky_ex", "cond", "eig", "eigh", "eigvals", "eigvalsh", "inv_ex",
                 "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_rank",
                 "pinv", "qr", "solve_ex", "solve_triangular", "tensorinv",
                 "tensorsolve"):  # fmt: skip
        assert callable(getattr(gs.linalg, name)), name
    for name in ("qr", "lu", "lu_solve", "lu_unpack", "triangular_solve", "cholesky_solve",
                 "cholesky_inverse", "geqrf", "orgqr", "ormqr", "pinverse"):  # fmt: skip
        assert callable(getattr(gs, name)), name
    for name in ("qr", "lu", "lu_solve", "triangular_solve", "cholesky_solve",
                 "cholesky_inverse", "geqrf", "orgqr", "ormqr", "pinverse"):  # fmt: skip
        assert callable(getattr(gs.Tensor, name)), name


@pytest.mark.parametrize("name", ["qr", "lu", "lu_solve", "triangular_solve"])
def test_deprecated_forms_warn_as_torch(name):
    a = gs.tensor(A + 3 * np.eye(3))
    calls = {
        "qr": lambda: gs.qr(a),
        "lu": lambda: gs.lu(a),
        "lu_solve": lambda: gs.lu_solve(gs.tensor(B), *gs.linalg.lu_factor(a)),
        "triangular_solve": lambda: gs.triangular_solve(gs.tensor(B), a),
    }
    with pytest.warns(UserWarning, match=f"torch.{name} is deprecated"):
        calls[name]()


def test_lu_pivots_are_lapacks_on_ties_and_zero_columns():
    a = np.array([[1.0, 2.0, 0.0], [-1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])  # a tie in column 0
    z = np.array([[0.0, 1.0], [0.0, 2.0]])  # a zero column: info 1, no swap
    for x in (a, z):
        got = gs.linalg.lu_factor_ex(gs.tensor(x))
        want = torch.linalg.lu_factor_ex(torch.tensor(x))
        assert got.pivots.tolist() == want.pivots.tolist()
        assert got.info.tolist() == want.info.tolist()
        np.testing.assert_allclose(got.LU.numpy(), want.LU.numpy(), atol=1e-12)


def test_matrix_rank_and_pinv_take_tensor_tolerances():
    a = gs.tensor(Ab)
    t = torch.tensor(Ab)
    atol = [0.5, 1.5]
    got = gs.linalg.matrix_rank(a, atol=gs.tensor(atol))
    want = torch.linalg.matrix_rank(t, atol=torch.tensor(atol))
    assert got.tolist() == want.tolist()
    np.testing.assert_allclose(
        gs.linalg.pinv(a, atol=gs.tensor(atol)).numpy(),
        torch.linalg.pinv(t, atol=torch.tensor(atol)).numpy(),
        atol=1e-10,
    )


LOWRANK = [
    ("svd_lowrank", {"q": 3}, (2, 8, 5)),
    ("svd_lowrank", {"q": 3}, (5, 8)),
    ("svd_lowrank", {"q": 4, "niter": 1}, (8, 5)),
    ("pca_lowrank", {"q": 3}, (2, 8, 5)),
    ("pca_lowrank", {}, (5, 8)),
    ("pca_lowrank", {"center": False}, (8, 5)),
]


@pytest.mark.parametrize("name, kwargs, shape", LOWRANK)
def test_lowrank_factorizations_match_torch_after_the_same_seed(name, kwargs, shape):
    # the Gaussian sketch is torch's draw; the singular vectors' signs are LAPACK's
    # (Note [SVD's signs are LAPACK's]): compared through S and U diag(S) V^H
    a = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib in (gs, torch):
        lib.manual_seed(3)
        x = lib.tensor(a, requires_grad=True)
        U, S, V = getattr(lib, name)(x, **kwargs)
        product = (U * S.unsqueeze(-2)) @ V.mH
        (g,) = lib.autograd.grad(S.sum() + product.pow(2).sum(), x)
        results.append((S.detach().numpy(), product.detach().numpy(), g.numpy()))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def test_lowrank_argument_errors_match_torch():
    for kwargs in ({"q": 9}, {"q": -1}, {"niter": -1}):
        got, want = (
            _error(lib, lambda lib, kw=kwargs: lib.pca_lowrank(lib.ones(4, 3), **kw))
            for lib in (gs, torch)
        )
        assert got == want


def _symmetric(rng, n, kind):
    a = rng.standard_normal((n, n))
    if kind == "small diagonal":  # 2x2 pivots
        a[np.diag_indices(n)] *= 0.01
    elif kind == "integers":  # ties and zero columns
        a = rng.integers(-2, 3, (n, n)).astype(float)
    return a + a.T


@pytest.mark.parametrize("kind", ["random", "small diagonal", "integers"])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_ldl_factor_and_solve_match_torch(n, kind):
    rng = np.random.default_rng(n * 10 + len(kind))
    for _ in range(5):
        a = _symmetric(rng, n, kind)
        got = gs.linalg.ldl_factor_ex(gs.tensor(a))
        want = torch.linalg.ldl_factor_ex(torch.tensor(a))
        assert got.pivots.tolist() == want.pivots.tolist()
        assert got.info.tolist() == want.info.tolist()
        if want.info.item():
            continue
        np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), rtol=1e-10, atol=1e-12)
        b = rng.standard_normal((n, 2))
        np.testing.assert_allclose(
            gs.linalg.ldl_solve(got.LD, got.pivots, gs.tensor(b)).numpy(),
            torch.linalg.ldl_solve(want.LD, want.pivots, torch.tensor(b)).numpy(),
            rtol=1e-9,
            atol=1e-9,
        )


@pytest.mark.parametrize(
    "dtype, hermitian",
    [
        ("float64", False),
        ("float32", False),
        ("float64", True),
        ("complex128", False),
        ("complex128", True),
    ],
)
def test_ldl_batched_and_dtypes_match_torch(dtype, hermitian):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 4, 4))
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal((2, 4, 4))
    a_t = np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2)
    a = (a + a_t).astype(dtype)
    b = rng.standard_normal((2, 4, 2)).astype(a.dtype)  # (torch crashes on broadcast batches)
    tol = 1e-5 if dtype == "float32" else 1e-10
    got = gs.linalg.ldl_factor(gs.tensor(a), hermitian=hermitian)
    want = torch.linalg.ldl_factor(torch.tensor(a), hermitian=hermitian)
    assert repr(type(got).__name__) == repr(type(want).__name__)
    assert got.pivots.tolist() == want.pivots.tolist()
    np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), rtol=tol, atol=tol)
    x = gs.linalg.ldl_solve(got.LD, got.pivots, gs.tensor(b), hermitian=hermitian)
    y = torch.linalg.ldl_solve(want.LD, want.pivots, torch.tensor(b), hermitian=hermitian)
    assert tuple(x.shape) == tuple(y.shape)
    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=tol * 10, atol=tol * 10)
    wide = gs.linalg.ldl_solve(
        got.LD, got.pivots, gs.tensor(np.stack([b, 2 * b])), hermitian=hermitian
    )
    np.testing.assert_allclose(wide.numpy()[1], 2 * x.numpy(), rtol=tol * 10, atol=tol * 10)


_LD = np.array([[4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.75, 2.0, -1.25]])


@pytest.mark.parametrize(
    "f",
    [
        lambda l: l.linalg.ldl_factor(l.ones(2, 3)),
        lambda l: l.linalg.ldl_factor(l.ones(3)),
        lambda l: l.linalg.ldl_factor(l.ones(2, 2, dtype=l.int64)),
        lambda l: l.linalg.ldl_factor(l.ones(2, 2, dtype=l.float16)),
        lambda l: l.linalg.ldl_factor_ex(l.ones(2, 3)),
        lambda l: l.linalg.ldl_solve(
            l.tensor(_LD), l.tensor([3, -3, -3], dtype=l.int32), l.ones(2, 1, dtype=l.float64)
        ),
        lambda l: l.linalg.ldl_solve(
            l.tensor(_LD), l.tensor([3, -3, -3], dtype=l.int32), l.ones(3, dtype=l.float64)
        ),
        lambda l: l.linalg.ldl_solve(
            l.tensor(_LD), l.tensor([3, -3, -3], dtype=l.int32), l.ones(3, 1)
        ),
    ],
)
def test_ldl_errors_match_torch(f):
    assert _error(gs, f) == _error(torch, f)


def test_ldl_of_a_singular_matrix_reports_info():
    for lib in (gs, torch):
        r = lib.linalg.ldl_factor_ex(lib.zeros(2, 2))
        assert r.info.item() == 1 and r.pivots.tolist() == [1, 2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 6), (3, 7, 4), (2, 4, 7), (1, 1), (5, 0), (0, 3, 3)])
@pytest.mark.parametrize("layout", ["C", "transposed"])
def test_lu_kernel_matches_torch(dtype, shape, layout):
    # the C getf2 (_lu_kernels.pyx): pivots, info and factors against torch's getrf
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    if layout == "transposed":
        a = np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)  # (a non-contiguous view)
    got = gs.linalg.lu_factor_ex(gs.tensor(a))
    want = torch.linalg.lu_factor_ex(torch.tensor(a))
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert got.pivots.tolist() == want.pivots.tolist()
    assert got.info.tolist() == want.info.tolist()
    np.testing.assert_allclose(got.LU.numpy(), want.LU.numpy(), rtol=tol, atol=tol)
    P, L_, U = gs.linalg.lu(gs.tensor(a))
    np.testing.assert_allclose((P @ L_ @ U).numpy(), a, rtol=tol * 10, atol=tol * 10)


def test_lu_kernel_checks_its_arguments_before_writing():
    from gradstack_tensor._lu_kernels import getf2_

    a = np.ones((1, 2, 2))
    p, i = np.zeros((1, 2), np.int32), np.zeros(1, np.int32)
    bad_calls = [
        (np.ones((2, 2)), p, i),  # not 3-d
        (np.ones((1, 2, 2), np.complex128), p, i),  # complex: the numpy loop's
        (np.ones((1, 2, 2), np.int64), p, i),
        (np.ones((1, 2, 4))[:, :, ::2], p, i),  # not contiguous
        (a, np.zeros((1, 3), np.int32), i),  # wrong pivots shape
        (a, np.zeros((1, 2), np.int64), i),  # wrong pivots dtype
        (a, p, np.zeros(2, np.int32)),  # wrong info shape
    ]
    for args in bad_calls:
        before = args[0].copy()
        with pytest.raises((TypeError, ValueError)):
            getf2_(*args)
        np.testing.assert_array_equal(args[0], before)
    frozen = np.ones((1, 2, 2))
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        getf2_(frozen, p, i)
