"""The linear-algebra entries of graph-engine's autograd op database (``matmul``, ``mm``,
``addmm``, the decompositions and factorisations, ``tril``/``triu`` ...).

``autograd_op_db.py`` adds them (:func:`extend`) where they stood in it, so the database's
order is unchanged.
"""

from __future__ import annotations

import numpy as np
from gradstack_autograd_tests_autograd_op_db_base import _S, Family, GradOp, arr

__all__ = ["extend"]

_FAMILY = Family()
_add, extend = _FAMILY.add, _FAMILY.extend


# ---------------------------------------------------------------------------------------
# linear algebra


def _matmul_samples(rng):
    out = []
    for sa, sb in (
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3, 2)),
        ((2, 2, 3), (3, 2)),
        ((2, 1, 2, 3), (2, 3, 2)),
    ):
        a = arr(rng, sa, transposed=len(sa) == 2)
        b = arr(rng, sb)
        out.append(_S((a, b), lambda L, x, y: L.matmul(x, y), f"matmul {list(sa)} @ {list(sb)}"))
    a, b = arr(rng, (2, 3)), arr(rng, (3, 2))
    out.append(_S((a, b), lambda L, x, y: x @ y, "operator @"))
    return out


def _two(name, sa, sb, call=None):
    def gen(rng):
        a, b = arr(rng, sa, transposed=len(sa) == 2), arr(rng, sb)
        return [
            _S(
                (a, b),
                call or (lambda L, x, y: getattr(L, name)(x, y)),
                f"{name} {list(sa)}, {list(sb)}",
            )
        ]

    return gen


def _addmm_samples(rng):
    m1, m2 = arr(rng, (2, 3)), arr(rng, (3, 4), transposed=True)
    return [
        _S((arr(rng, (2, 4)), m1, m2), lambda L, x, a, b: L.addmm(x, a, b), "addmm"),
        _S((arr(rng, (4,)), m1, m2), lambda L, x, a, b: L.addmm(x, a, b), "addmm broadcast"),
        _S(
            (arr(rng, (2, 4)), m1, m2),
            lambda L, x, a, b: L.addmm(x, a, b, beta=2, alpha=0.5),
            "addmm beta=2 alpha=0.5",
        ),
    ]


_add(GradOp("matmul", _matmul_samples))
_add(GradOp("mm", _two("mm", (2, 3), (3, 4))))
_add(GradOp("bmm", _two("bmm", (2, 2, 3), (2, 3, 2))))
_add(GradOp("dot", _two("dot", (4,), (4,))))
_add(GradOp("outer", _two("outer", (3,), (2,))))
_add(GradOp("vdot", _two("vdot", (4,), (4,))))
# round(x, decimals=d): zero gradients; samples away from the jumps (halves of 10**-d)
_add(
    GradOp(
        "round_decimals",
        lambda rng: [
            _S((arr(rng, (4,), -3, 3),), lambda L, t: L.round(t, decimals=-1), "decimals=-1"),
            _S(
                (arr(rng, (2, 3), -2, 2, away=(-1.5, -0.5, 0.5, 1.5)),),
                lambda L, t: t.round(decimals=0),
                "decimals=0",
            ),
        ],
    )
)
_add(GradOp("mv", _two("mv", (2, 3), (3,))))
_add(GradOp("addmm", _addmm_samples))


def _unary_call(name, cases):
    def gen(rng):
        return [
            _S((arr(rng, shape, transposed=tr),), call, f"{name} {desc}")
            for shape, tr, call, desc in cases
        ]

    return gen


_add(
    GradOp(
        "trace",
        _unary_call(
            "trace",
            [
                ((3, 3), False, lambda L, t: L.trace(t), "3x3"),
                ((2, 4), True, lambda L, t: t.trace(), "2x4 T"),
            ],
        ),
    )
)


def _square(rng, shape, transposed=False):
    """Random matrices plus ``n`` on the diagonal: invertible, far from singular."""
    return arr(rng, shape, -1.0, 1.0, transposed=transposed) + shape[-1] * np.eye(shape[-1])


def _decomposition_samples(rng):
    a, batch, m = _square(rng, (3, 3)), _square(rng, (2, 3, 3)), arr(rng, (3, 3), -1, 1)
    spd = m @ m.T + 3 * np.eye(3)

    def sym(L, t):  # cholesky reads the lower triangle: a symmetric input, as torch's tests
        return (t + t.transpose(-1, -2)) / 2

    return {
        "linalg_inv": [
            _S([a], lambda L, t: L.linalg.inv(t), "3x3"),
            _S([_square(rng, (4, 4), True)], lambda L, t: L.linalg.inv(t), "4x4 T"),
            _S([batch], lambda L, t: L.linalg.inv(t), "2x3x3"),
        ],
        "linalg_det": [
            _S([a], lambda L, t: L.linalg.det(t), "3x3"),
            _S([batch], lambda L, t: t.det(), "2x3x3"),
        ],
        "linalg_logabsdet": [
            _S([a], lambda L, t: L.linalg.slogdet(t).logabsdet, "3x3"),
            _S([batch], lambda L, t: L.linalg.slogdet(t)[1], "2x3x3"),
        ],
        "linalg_solve": [
            _S([a, arr(rng, (3, 2))], lambda L, x, b: L.linalg.solve(x, b), "3x3, 3x2"),
            _S([a, arr(rng, (3,))], lambda L, x, b: L.linalg.solve(x, b), "vector"),
            _S([batch, arr(rng, (3, 2))], lambda L, x, b: L.linalg.solve(x, b), "broadcast"),
            _S(
                [a, arr(rng, (2, 3))],
                lambda L, x, b: L.linalg.solve(x, b, left=False),
                "left=False",
            ),
        ],
        "linalg_cholesky": [
            _S([spd], lambda L, t: L.linalg.cholesky(sym(L, t)), "3x3"),
            _S([spd], lambda L, t: L.linalg.cholesky(sym(L, t), upper=True), "upper"),
        ],
    }


def _svd_samples(rng):
    # signs of singular vectors are LAPACK's (Note [SVD's signs are LAPACK's]): the samples
    # read sign-invariant functions of the factors, whose gradients are torch's whatever
    # the signs
    tall, wide, square = arr(rng, (4, 3), -1, 1), arr(rng, (3, 4), -1, 1), arr(rng, (3, 3), -1, 1)

    def usv(L, t):
        r = L.linalg.svd(t, full_matrices=False)
        return (r.U * r.S.unsqueeze(-2)) @ r.Vh

    def projectors(L, t):
        r = L.linalg.svd(t, full_matrices=False)
        return (r.U @ r.U.mT).sum() + (r.Vh.mT @ r.Vh).sum() + r.S.sum()

    return [
        _S([tall], lambda L, t: L.linalg.svd(t, full_matrices=False).S, "S 4x3"),
        _S([wide], lambda L, t: L.linalg.svdvals(t), "svdvals 3x4"),
        _S([tall], usv, "USVh 4x3"),
        _S([wide], projectors, "projectors 3x4"),
        _S([square], projectors, "projectors 3x3"),
    ]


_add(GradOp("linalg_svd", _svd_samples))


def _factorization_samples(rng):
    # eigenvectors and QR/LU factors enter through functions their gradients are defined
    # for: symmetric inputs for eigh, |V|^2 for eig's eigenvectors (phase-invariant)
    a, tall, wide = arr(rng, (3, 3), -1, 1), arr(rng, (4, 3), -1, 1), arr(rng, (3, 4), -1, 1)
    batch = arr(rng, (2, 3, 3), -1, 1)
    tri = _square(rng, (3, 3))
    b = arr(rng, (3, 2), -1, 1)

    def eigh_parts(L, t):
        r = L.linalg.eigh(t + t.mT)
        return r.eigenvalues, r.eigenvectors * r.eigenvectors

    def eig_parts(L, t):
        r = L.linalg.eig(t)
        return r.eigenvalues.real, r.eigenvectors.abs() ** 2

    def lu_parts(L, t):
        r = L.linalg.lu(t)
        return r.L, r.U

    return {
        "linalg_eig": [
            _S([a], lambda L, t: L.linalg.eigvals(t).real, "eigvals 3x3"),
            _S([a], eig_parts, "values, |V|^2"),
        ],
        "linalg_eigh": [
            _S([a], eigh_parts, "3x3"),
            _S([batch], lambda L, t: L.linalg.eigvalsh(t + t.mT, UPLO="U"), "eigvalsh U batched"),
        ],
        "linalg_qr": [
            _S([tall], lambda L, t: tuple(L.linalg.qr(t)), "4x3"),
            _S([wide], lambda L, t: tuple(L.linalg.qr(t)), "3x4"),
            _S([a], lambda L, t: tuple(L.linalg.qr(t, mode="complete")), "complete 3x3"),
        ],
        "linalg_lstsq": [
            _S([tall, arr(rng, (4, 2))], lambda L, x, y: L.linalg.lstsq(x, y).solution, "4x3"),
            _S(
                [tall, arr(rng, (4, 2))],
                lambda L, x, y: tuple(L.linalg.lstsq(x, y, driver="gelsd")[:2]),
                "residuals",
            ),
            _S([wide, arr(rng, (3,))], lambda L, x, y: L.linalg.lstsq(x, y).solution, "3x4 vector"),
        ],
        "linalg_solve_triangular": [
            _S([tri, b], lambda L, x, y: L.linalg.solve_triangular(x, y, upper=True), "upper"),
            _S(
                [tri, b.T.copy()],
                lambda L, x, y: L.linalg.solve_triangular(
                    x, y, upper=False, left=False, unitriangular=True
                ),
                "lower, right, unit",
            ),
        ],
        "linalg_lu": [
            _S([a], lu_parts, "3x3"),
            _S([tall], lu_parts, "4x3"),
            _S([wide], lu_parts, "3x4"),
        ],
        "linalg_pinv": [
            _S([tall], lambda L, t: L.linalg.pinv(t), "4x3"),
            _S([wide], lambda L, t: L.linalg.pinv(t), "3x4"),
            _S([a], lambda L, t: L.linalg.pinv(t + t.mT, hermitian=True), "hermitian"),
        ],
    }


for _n in (
    "linalg_eig",
    "linalg_eigh",
    "linalg_qr",
    "linalg_lstsq",
    "linalg_solve_triangular",
    "linalg_lu",
    "linalg_pinv",
):
    _add(GradOp(_n, lambda rng, _n=_n: _factorization_samples(rng)[_n]))
for _n in ("linalg_inv", "linalg_det", "linalg_logabsdet", "linalg_solve", "linalg_cholesky"):
    _add(GradOp(_n, lambda rng, _n=_n: _decomposition_samples(rng)[_n]))
for _n in ("tril", "triu"):
    _add(
        GradOp(
            _n,
            _unary_call(
                _n,
                [
                    ((3, 4), False, lambda L, t, _n=_n: getattr(L, _n)(t), "k=0"),
                    ((4, 3), True, lambda L, t, _n=_n: getattr(t, _n)(1), "k=1"),
                    ((2, 3, 3), False, lambda L, t, _n=_n: getattr(t, _n)(-1), "batched k=-1"),
                ],
            ),
        )
    )
_add(
    GradOp(
        "diag",
        _unary_call(
            "diag",
            [
                ((3,), False, lambda L, t: L.diag(t), "1-d"),
                ((3,), False, lambda L, t: L.diag(t, 1), "1-d k=1"),
                ((3, 4), False, lambda L, t: L.diag(t), "2-d"),
                ((3, 4), True, lambda L, t: t.diag(-1), "2-d k=-1"),
                ((4, 3), False, lambda L, t: L.diag(t, 2), "2-d k=2"),
            ],
        ),
    )
)
