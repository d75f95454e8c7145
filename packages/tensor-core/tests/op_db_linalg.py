"""The linear-algebra entries of tensor-core's op database (a ``Family``): ``matmul``,
``mm``, ``addmm`` ..."""

# ruff: noqa: F405 (the names from op_db_base)
from __future__ import annotations

import numpy as np
from gradstack_tensor_tests_op_db_base import *  # noqa: F403 (its __all__: all of it)

__all__ = ["extend"]

_FAMILY = Family()
_add, extend = _FAMILY.add, _FAMILY.extend


# ---- linear algebra

_MATMUL_SHAPES = (
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
)


def _matmul_samples(info, dtype, rng):
    for sa, sb in _MATMUL_SHAPES:
        a = make_array(sa, dtype, rng)
        b = make_array(sb, dtype, rng, layout="T")
        yield SampleInput(a, (b,), desc=f"{describe(a)} @ {describe(b)}")


def _pair_samples(pairs):
    def gen(info, dtype, rng):
        for sa, sb in pairs:
            a = make_array(sa, dtype, rng, layout="T")
            b = make_array(sb, dtype, rng, layout="sliced" if sb else "c")
            yield SampleInput(a, (b,), desc=f"{describe(a)}, {describe(b)}")

    return gen


_LINALG_TOL = {"float32": 1e-4}
_add(OpInfo("matmul", _matmul_ref, _matmul_samples, NUMERIC, rtol=_LINALG_TOL))
_add(
    OpInfo(
        "mm",
        _matmul_ref,
        _pair_samples((((2, 3), (3, 4)), ((0, 3), (3, 2)), ((4, 4), (4, 4)))),
        NUMERIC,
        rtol=_LINALG_TOL,
    )
)
_add(
    OpInfo(
        "bmm",
        _matmul_ref,
        _pair_samples((((2, 2, 3), (2, 3, 4)), ((0, 2, 3), (0, 3, 1)))),
        NUMERIC,
        rtol=_LINALG_TOL,
    )
)
_add(
    OpInfo(
        "dot",
        lambda a, b: np.asarray(np.dot(a, b)),
        _pair_samples((((5,), (5,)), ((0,), (0,)))),
        NUMERIC,
        rtol=_LINALG_TOL,
    )
)
_add(
    OpInfo(
        "vdot",
        lambda a, b: np.asarray(np.vdot(a, b)),
        _pair_samples((((5,), (5,)), ((0,), (0,)))),
        NUMERIC,
        rtol=_LINALG_TOL,
    )
)
_add(OpInfo("outer", np.multiply.outer, _pair_samples((((3,), (4,)), ((0,), (2,)))), ALL))
_add(
    OpInfo(
        "mv",
        _matmul_ref,
        _pair_samples((((2, 3), (3,)), ((0, 3), (3,)))),
        NUMERIC,
        rtol=_LINALG_TOL,
    )
)


def _addmm_samples(info, dtype, rng):
    for sx in ((2, 4), (4,), ()):
        x = make_array(sx, dtype, rng)
        m1 = make_array((2, 3), dtype, rng)
        m2 = make_array((3, 4), dtype, rng, layout="T")
        yield SampleInput(x, (m1, m2), desc=f"input {describe(x)}")
    x = make_array((2, 4), dtype, rng)
    yield SampleInput(
        x,
        (make_array((2, 3), dtype, rng), make_array((3, 4), dtype, rng)),
        {"beta": 2, "alpha": 3},
        desc="beta=2, alpha=3",
    )


_add(OpInfo("addmm", _addmm_ref, _addmm_samples, NUMERIC, rtol=_LINALG_TOL))


def _diag_samples(info, dtype, rng):
    for shape, k in (((3,), 0), ((3,), 1), ((3, 4), 0), ((3, 4), -1), ((4, 3), 2), ((0,), 0)):
        x = make_array(shape, dtype, rng, layout="T" if len(shape) == 2 else "c")
        yield SampleInput(x, (k,), desc=f"{describe(x)}, diagonal={k}")


_add(OpInfo("diag", lambda x, k=0: np.diag(x, k), _diag_samples, ALL))


def _trace_samples(info, dtype, rng):
    for shape, layout in (((3, 3), "c"), ((2, 4), "T"), ((0, 2), "c")):
        x = make_array(shape, dtype, rng, layout=layout)
        yield SampleInput(x, desc=describe(x))


_add(OpInfo("trace", _trace_ref, _trace_samples, NUMERIC))


def _well_conditioned(shape, dtype, rng, layout="c"):
    """Random square matrices plus ``n`` on the diagonal (far from singular)."""
    x = make_array(shape, dtype, rng, (-1.0, 1.0), layout=layout)
    if dtype in FLOATS:
        x = x + (shape[-1] * np.eye(shape[-1])).astype(dtype)
    return x


def _matrix_samples(info, dtype, rng):
    for shape, layout in (((3, 3), "c"), ((4, 4), "T"), ((2, 3, 3), "c"), ((0, 0), "c")):
        x = _well_conditioned(shape, dtype, rng, layout)
        yield SampleInput(x, desc=describe(x))


def _spd_samples(info, dtype, rng):
    for shape in ((3, 3), (2, 4, 4)):
        m = make_array(shape, dtype, rng, (-1.0, 1.0))
        if dtype in FLOATS:
            m = m @ np.swapaxes(m, -1, -2) + (shape[-1] * np.eye(shape[-1])).astype(dtype)
        for upper in (False, True):
            yield SampleInput(m, (upper,), desc=f"{describe(m)}, upper={upper}")


def _solve_samples(info, dtype, rng):
    for a_shape, b_shape, left in (
        ((3, 3), (3, 2), True),
        ((3, 3), (3,), True),
        ((2, 3, 3), (2, 3), True),
        ((2, 3, 3), (3, 4), True),
        ((3, 3), (2, 3), False),
    ):
        a = _well_conditioned(a_shape, dtype, rng)
        b = make_array(b_shape, dtype, rng)
        yield SampleInput(a, (b, left), desc=f"{describe(a)}, {describe(b)}, left={left}")


def _cholesky_ref(x, upper=False):
    low = np.linalg.cholesky(x)
    return np.swapaxes(low, -1, -2) if upper else low


def _solve_ref(a, b, left=True):
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rhs = b[..., None] if vector else b
    if not left:
        a, rhs = np.swapaxes(a, -1, -2), np.swapaxes(rhs, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    r = np.linalg.solve(
        np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(rhs, batch + rhs.shape[-2:])
    )
    if not left:
        r = np.swapaxes(r, -1, -2)
    return r[..., 0] if vector else r


def _det_ref(x):
    return np.linalg.det(x) if x.size else np.ones(x.shape[:-2], x.dtype)


_add(
    OpInfo(
        "linalg_inv",
        lambda x: np.linalg.inv(x) if x.size else x.copy(),
        _matrix_samples,
        FLOATS,
        call=lambda gt, x: gt.linalg.inv(x),
        torch_call=lambda torch, x: torch.linalg.inv(x),
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "linalg_det",
        _det_ref,
        _matrix_samples,
        FLOATS,
        call=lambda gt, x: gt.linalg.det(x),
        torch_call=lambda torch, x: torch.linalg.det(x),
        rtol={"float32": 1e-4},
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "linalg_logabsdet",
        lambda x: np.linalg.slogdet(x)[1] if x.size else np.zeros(x.shape[:-2], x.dtype),
        _matrix_samples,
        FLOATS,
        call=lambda gt, x: gt.linalg.slogdet(x).logabsdet,
        torch_call=lambda torch, x: torch.linalg.slogdet(x).logabsdet,
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "linalg_solve",
        _solve_ref,
        _solve_samples,
        FLOATS,
        call=lambda gt, a, b, left: gt.linalg.solve(a, b, left=left),
        torch_call=lambda torch, a, b, left: torch.linalg.solve(a, b, left=left),
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "linalg_cholesky",
        _cholesky_ref,
        _spd_samples,
        FLOATS,
        call=lambda gt, x, upper: gt.linalg.cholesky(x, upper=upper),
        torch_call=lambda torch, x, upper: torch.linalg.cholesky(x, upper=upper),
    ),
    function=False,
    method=False,
)


def _tri_samples(info, dtype, rng):
    for shape, k in (((3, 4), 0), ((4, 3), 1), ((2, 3, 3), -1), ((0, 2), 0)):
        x = make_array(shape, dtype, rng, layout="T")
        yield SampleInput(x, (k,), desc=f"{describe(x)}, diagonal={k}")


_add(OpInfo("tril", lambda x, k=0: np.tril(x, k), _tri_samples, ALL))
_add(OpInfo("triu", lambda x, k=0: np.triu(x, k), _tri_samples, ALL))
