"""The view, shape and indexing entries of graph-engine's autograd op database (``view``,
``expand``, ``cat``, ``gather``, the indexed writes ...).

``autograd_op_db.py`` adds them (:func:`extend`) where they stood in it, so the database's
order is unchanged.
"""

from __future__ import annotations

import numpy as np
from gradstack_autograd_tests_autograd_op_db_base import (
    _S,
    Family,
    GradOp,
    arr,
    distinct,
)
from gradstack_autograd_tests_autograd_op_db_linalg import _unary_call

__all__ = ["extend"]

_FAMILY = Family()
_add, extend = _FAMILY.add, _FAMILY.extend


# ---------------------------------------------------------------------------------------
# views and shape ops


def _shape_cases(name, cases):
    """cases: (shape, transposed, call, desc)."""
    return GradOp(name, _unary_call(name, cases))


_add(
    _shape_cases(
        "getitem",
        [
            ((4, 3), False, lambda L, t: t[1], "x[1]"),
            ((4, 3), False, lambda L, t: t[-1], "x[-1]"),
            ((4, 3), True, lambda L, t: t[1:3], "x[1:3]"),
            ((4, 3), False, lambda L, t: t[::2, 1:], "x[::2, 1:]"),
            ((4, 3), False, lambda L, t: t[:, 1], "x[:, 1]"),
            ((4, 3), False, lambda L, t: t[1, 2], "x[1, 2]"),
            ((4, 3), False, lambda L, t: t[None, 1:3], "x[None, 1:3]"),
            ((4, 3), False, lambda L, t: t[..., 0], "x[..., 0]"),
            ((4, 3), False, lambda L, t: t[L.from_numpy(np.array([0, 2, 2]))], "x[[0, 2, 2]]"),
            (
                (4, 3),
                False,
                lambda L, t: t[L.from_numpy(np.array([0, 3])), L.from_numpy(np.array([2, 2]))],
                "x[idx, idx]",
            ),
            (
                (4, 3),
                False,
                lambda L, t: t[L.from_numpy(np.array([[True, False, True]] * 4))],
                "x[mask]",
            ),
        ],
    )
)
_add(
    _shape_cases(
        "view",
        [
            ((2, 3), False, lambda L, t: t.view(3, 2), "view(3, 2)"),
            ((2, 3), False, lambda L, t: t.view(-1), "view(-1)"),
            ((), False, lambda L, t: t.view(1, 1), "0-d view(1, 1)"),
        ],
    )
)
_add(
    _shape_cases(
        "reshape",
        [
            ((2, 3), False, lambda L, t: t.reshape(3, 2), "reshape(3, 2)"),
            ((2, 3), True, lambda L, t: L.reshape(t, (6,)), "reshape of transposed"),
            ((2, 3, 2), False, lambda L, t: t.reshape(6, -1), "reshape(6, -1)"),
        ],
    )
)
_add(
    _shape_cases(
        "flatten",
        [
            ((2, 3, 2), False, lambda L, t: t.flatten(), "flatten"),
            ((2, 3, 2), False, lambda L, t: L.flatten(t, 1), "flatten(1)"),
        ],
    )
)
_add(
    _shape_cases(
        "squeeze",
        [
            ((1, 3, 1), False, lambda L, t: t.squeeze(), "squeeze()"),
            ((1, 3, 1), False, lambda L, t: t.squeeze(0), "squeeze(0)"),
            ((1, 3, 1), False, lambda L, t: L.squeeze(t, -1), "squeeze(-1)"),
            ((1, 3, 1), False, lambda L, t: t.squeeze((0, 2)), "squeeze((0, 2))"),
        ],
    )
)
_add(
    _shape_cases(
        "unsqueeze",
        [
            ((2, 3), False, lambda L, t: t.unsqueeze(0), "unsqueeze(0)"),
            ((2, 3), True, lambda L, t: L.unsqueeze(t, -1), "unsqueeze(-1)"),
        ],
    )
)
_add(
    _shape_cases(
        "transpose",
        [
            ((2, 3), False, lambda L, t: t.transpose(0, 1), "transpose(0, 1)"),
            ((2, 3, 2), False, lambda L, t: L.transpose(t, 0, -1), "transpose(0, -1)"),
        ],
    )
)
_add(
    _shape_cases(
        "t",
        [
            ((2, 3), False, lambda L, t: t.t(), "t()"),
            ((3,), False, lambda L, t: L.t(t), "t() of 1-d"),
        ],
    )
)
_add(
    _shape_cases(
        "permute",
        [
            ((2, 3, 2), False, lambda L, t: t.permute(2, 0, 1), "permute(2, 0, 1)"),
            ((2, 3), True, lambda L, t: L.permute(t, (1, 0)), "permute((1, 0))"),
        ],
    )
)
_add(
    _shape_cases(
        "expand",
        [
            ((3, 1), False, lambda L, t: t.expand(3, 4), "expand(3, 4)"),
            ((3,), False, lambda L, t: t.expand(2, 3), "expand(2, 3)"),
            ((), False, lambda L, t: t.expand(2), "0-d expand(2)"),
            (
                (3, 1),
                False,
                lambda L, t: t.expand_as(L.from_numpy(np.zeros((2, 3, 4)))),
                "expand_as",
            ),
        ],
    )
)


def _expand_as_samples(rng):
    def fn(L, t):
        other = L.from_numpy(np.zeros((2, 3, 4)))
        return L.OPS["expand_as"](t, other)

    return [
        _S(
            (arr(rng, (3, 1)),),
            fn,
            "OPS['expand_as']",
            torch_fn=lambda L, t: t.expand_as(L.from_numpy(np.zeros((2, 3, 4)))),
        )
    ]


_add(GradOp("expand_as", _expand_as_samples))


def _alias_samples(rng):
    return [
        _S(
            (arr(rng, (2, 3)),),
            lambda L, t: L.OPS["alias"](t) * t,
            "alias",
            torch_fn=lambda L, t: L.ops.aten.alias(t) * t,
        )
    ]


_add(GradOp("alias", _alias_samples))
_add(
    _shape_cases(
        "narrow",
        [
            ((5, 3), False, lambda L, t: t.narrow(0, 1, 2), "narrow(0, 1, 2)"),
            ((5, 3), True, lambda L, t: L.narrow(t, 1, -2, 2), "narrow(1, -2, 2)"),
        ],
    )
)
_add(
    _shape_cases(
        "unfold",
        [
            ((5, 3), False, lambda L, t: t.unfold(0, 2, 1), "unfold(0, 2, 1): overlapping"),
            ((5, 3), True, lambda L, t: t.unfold(1, 2, 1), "transposed"),
            ((2, 3, 6), False, lambda L, t: t.unfold(-1, 3, 2), "unfold(-1, 3, 2)"),
            ((4,), False, lambda L, t: t.unfold(0, 2, 2), "disjoint windows"),
        ],
    )
)
_add(
    _shape_cases(
        "diagonal",
        [
            ((4, 3), False, lambda L, t: t.diagonal(), "diagonal()"),
            ((4, 3), True, lambda L, t: t.diagonal(-1), "diagonal(-1)"),
            ((2, 3, 4), False, lambda L, t: L.diagonal(t, 1, -1, 0), "diagonal(1, -1, 0)"),
            ((2, 3, 4), False, lambda L, t: t.diagonal(offset=-2, dim1=2, dim2=1), "dim2 < dim1"),
            ((3, 3), False, lambda L, t: t.diagonal(5), "empty diagonal"),
        ],
    )
)
_add(
    _shape_cases(
        "select",
        [
            ((5, 3), False, lambda L, t: t.select(0, 1), "select(0, 1)"),
            ((2, 3, 4), True, lambda L, t: L.select(t, 2, -1), "select(2, -1)"),
        ],
    )
)
_add(
    _shape_cases(
        "split",
        [
            ((5, 3), False, lambda L, t: t.split(2), "split(2)"),
            ((5, 3), False, lambda L, t: L.split(t, [1, 2], 1), "split([1, 2], 1)"),
            ((5, 3), False, lambda L, t: t.split(2)[1], "split(2)[1] only"),
        ],
    )
)
_add(
    _shape_cases(
        "chunk",
        [
            ((5, 3), False, lambda L, t: t.chunk(2), "chunk(2)"),
            ((5, 3), False, lambda L, t: L.chunk(t, 3, 1)[0], "chunk(3, 1)[0]"),
        ],
    )
)
_add(
    _shape_cases(
        "unbind",
        [
            ((3, 2), False, lambda L, t: t.unbind(), "unbind()"),
            ((3, 2), True, lambda L, t: L.unbind(t, 1)[1], "unbind(1)[1]"),
        ],
    )
)


def _cat_samples(rng):
    a, b, c = arr(rng, (2, 3)), arr(rng, (1, 3)), arr(rng, (2, 2))
    return [
        _S((a, b), lambda L, x, y: L.cat([x, y]), "cat dim 0"),
        _S((a, c), lambda L, x, y: L.cat((x, y), dim=1), "cat dim 1"),
        _S((a,), lambda L, x: L.cat([x, L.from_numpy(np.ones((1, 3)))]), "cat with a constant"),
    ]


def _stack_samples(rng):
    a, b = arr(rng, (2, 3)), arr(rng, (2, 3))
    return [
        _S((a, b), lambda L, x, y: L.stack([x, y]), "stack dim 0"),
        _S((a, b), lambda L, x, y: L.stack((x, y), dim=-1), "stack dim -1"),
    ]


_add(GradOp("cat", _cat_samples))
_add(GradOp("stack", _stack_samples))
_add(_shape_cases("clone", [((2, 3), True, lambda L, t: t.clone(), "clone")]))
_add(
    _shape_cases(
        "contiguous",
        [((2, 3), True, lambda L, t: t.contiguous() * 1.0, "contiguous of transposed")],
    )
)


def _to_dtype_samples(rng):
    x = arr(rng, (2, 3))
    return [
        _S((x,), lambda L, t: t.to(L.float32).to(L.float64), "float64 -> float32 -> float64"),
        _S((x,), lambda L, t: t.float().sin().double(), "float() and double()"),
    ]


# float32 in the middle: finite differences need a larger step
_add(GradOp("to_dtype", _to_dtype_samples, eps=1e-3, atol=1e-3, rtol=1e-2))
_add(
    _shape_cases(
        "repeat",
        [
            ((2, 3), False, lambda L, t: t.repeat(2, 1), "repeat(2, 1)"),
            ((3,), False, lambda L, t: t.repeat(2, 2), "repeat(2, 2) of 1-d"),
        ],
    )
)
_add(
    _shape_cases(
        "flip",
        [
            ((2, 3), False, lambda L, t: t.flip(0), "flip(0)"),
            ((2, 3, 2), True, lambda L, t: L.flip(t, (0, 2)), "flip((0, 2))"),
        ],
    )
)


def _index_select_samples(rng):
    x = arr(rng, (4, 3))
    return [
        _S(
            (x,), lambda L, t: t.index_select(0, L.from_numpy(np.array([0, 2, 2]))), "dim 0 repeats"
        ),
        _S((x,), lambda L, t: L.index_select(t, 1, L.from_numpy(np.array([2]))), "dim 1"),
    ]


def _gather_samples(rng):
    x = arr(rng, (3, 4))
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    return [
        _S((x,), lambda L, t: t.gather(1, L.from_numpy(idx.copy())), "gather dim 1"),
        _S((x,), lambda L, t: L.gather(t, 0, L.from_numpy(np.array([[0, 1, 2, 0]]))), "dim 0"),
    ]


_add(GradOp("index_select", _index_select_samples))
_add(GradOp("gather", _gather_samples))


# indexed writes (derivatives/indexed_writes.py): no repeated index where a write replaces
# (torch's formula, like ours, then differs from the finite differences)
_SCATTER_IDX = np.array([[0, 3, 1], [2, 0, 3], [1, 2, 0]])


def _indexed_write_samples(name, inplace):
    def gen(rng):
        # (src of index's shape: torch's formula gives it a gradient of that shape)
        x, src, rows, v = arr(rng, (3, 4)), arr(rng, (3, 3)), arr(rng, (2, 4)), arr(rng, ())
        suffix = "_" if inplace else ""

        def call(t, *args, **kwargs):
            target = t.clone() if inplace else t
            return getattr(target, name + suffix)(*args, **kwargs)

        def idx(L):
            return L.from_numpy(_SCATTER_IDX.copy())

        def rows_at(L):
            return L.from_numpy(np.array([2, 0]))

        if name == "scatter":
            return [
                _S((x, src), lambda L, a, b: call(a, 1, idx(L), b), "scatter src"),
                _S((x,), lambda L, a: call(a, 1, idx(L), 1.5), "scatter value"),
            ]
        if name == "scatter_add":
            rep = np.array([[0, 0, 1], [3, 3, 3]])
            src2 = arr(rng, (2, 3))
            return [
                _S((x, src), lambda L, a, b: call(a, 1, idx(L), b), "scatter_add"),
                _S((x, src2), lambda L, a, b: call(a, 1, L.from_numpy(rep.copy()), b), "repeats"),
            ]
        if name == "index_add":
            return [
                _S((x, rows), lambda L, a, b: call(a, 0, rows_at(L), b, alpha=-2), "alpha -2"),
                _S(
                    (x, rows),
                    lambda L, a, b: call(a, 0, L.from_numpy(np.array([1, 1])), b),
                    "repeat",
                ),
            ]
        if name == "index_copy":
            return [_S((x, rows), lambda L, a, b: call(a, 0, rows_at(L), b), "rows 2, 0")]
        return [
            _S((x,), lambda L, a: call(a, 1, L.from_numpy(np.array([0, 3])), -1.0), "number"),
            _S((x, v), lambda L, a, b: call(a, 1, L.from_numpy(np.array([1, 1])), b), "0-d tensor"),
        ]

    return gen


for _name in ("scatter", "scatter_add", "index_add", "index_copy", "index_fill"):
    _add(GradOp(_name, _indexed_write_samples(_name, False)))
    _add(GradOp(_name + "_", _indexed_write_samples(_name, True)))


def _reducing_write_samples(name, inplace):
    """scatter_reduce/index_reduce with every reduce, include_self both ways (values kept
    distinct and away from zero: amax/amin and prod are smooth there)."""

    def gen(rng):
        suffix = "_" if inplace else ""
        x = distinct(rng, (3, 4), 0.5, 2.0)
        out = []
        reduces = ("prod", "mean", "amax", "amin") + (("sum",) if name == "scatter_reduce" else ())
        for reduce in reduces:
            for include_self in (True, False):

                def call(L, a, b, reduce=reduce, include_self=include_self):
                    target = a.clone() if inplace else a
                    if name == "scatter_reduce":
                        at = L.from_numpy(np.array([[0, 3, 0], [2, 2, 2], [1, 1, 0]]))
                    else:
                        at = L.from_numpy(np.array([2, 0, 2]))
                    return getattr(target, name + suffix)(
                        1 if name == "scatter_reduce" else 0,
                        at,
                        b,
                        reduce,
                        include_self=include_self,
                    )

                src = distinct(rng, (3, 3) if name == "scatter_reduce" else (3, 4), 0.5, 2.0)
                out.append(_S((x, src), call, f"{reduce} include_self={include_self}"))
        return out

    return gen


for _name in ("scatter_reduce", "index_reduce"):
    _add(GradOp(_name, _reducing_write_samples(_name, False)))
    _add(GradOp(_name + "_", _reducing_write_samples(_name, True)))


def _index_scatter_samples(rng):
    def fn(L, v):
        from gradstack_autograd.derivatives import index_scatter

        return index_scatter(v, (np.array([0, 2, 2]),), (4, 3))

    return [_S((arr(rng, (3, 3)),), fn, "index_scatter rows 0, 2, 2")]


# an internal op (getitem's adjoint): torch has no public twin (index_put is close)
_add(GradOp("_index_scatter", _index_scatter_samples, torch=False))
