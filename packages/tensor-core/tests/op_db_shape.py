"""The shape-op, view and indexing entries of tensor-core's op database (a ``Family``):
``view``, ``reshape``, ``cat``, ``gather``, the indexed writes ..."""

# ruff: noqa: F405 (the names from op_db_base)
from __future__ import annotations

import numpy as np
from gradstack_tensor_tests_op_db_base import *  # noqa: F403 (its __all__: all of it)

__all__ = ["extend"]

_FAMILY = Family()
_add, extend = _FAMILY.add, _FAMILY.extend


# ---- shape ops and views


def _shape_samples(cases):
    """``cases``: (shape, layout, args) triples."""

    def gen(info, dtype, rng):
        for shape, layout, args in cases:
            x = make_array(shape, dtype, rng, layout=layout)
            yield SampleInput(x, args, desc=f"{describe(x)}, {args}")

    return gen


def _view_cases():
    return (
        ((2, 3), "c", ((3, 2),)),
        ((2, 3), "c", ((-1,),)),
        ((), "c", ((1, 1),)),
        ((6,), "c", ((2, -1),)),
        ((0, 3), "c", ((3, 0),)),
        ((4, 3), "sliced", ((2, 2, 3),)),
        ((2, 3, 4), "c", ((6, 4),)),
    )


_add(OpInfo("view", _view_ref, _shape_samples(_view_cases()), ALL, view=True))
_add(
    OpInfo(
        "reshape",
        _view_ref,
        _shape_samples(_view_cases() + (((3, 4), "T", ((12,),)), ((4, 3), "flipped", ((2, 6),)))),
        ALL,
    )
)
_add(
    OpInfo(
        "transpose",
        lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
        _shape_samples(
            (
                ((2, 3), "c", (0, 1)),
                ((2, 3, 4), "T", (0, -1)),
                ((), "c", (0, -1)),
                ((0, 3), "c", (1, 0)),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "permute",
        lambda x, dims: np.transpose(x, dims),
        _shape_samples(
            (
                ((2, 3, 4), "c", ((2, 0, 1),)),
                ((3, 4), "T", ((1, 0),)),
                ((), "c", ((),)),
                ((2, 3, 4), "sliced", ((-1, 0, 1),)),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "t",
        lambda x: x.T,
        _shape_samples((((2, 3), "c", ()), ((3,), "c", ()), ((), "c", ()), ((3, 4), "T", ()))),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "squeeze",
        _squeeze_ref,
        _shape_samples(
            (
                ((1, 3, 1), "c", ()),
                ((1, 3, 1), "c", (0,)),
                ((1, 3, 1), "c", (1,)),
                ((), "c", ()),
                ((1, 3, 1), "c", ((0, 2),)),
                ((2, 1), "T", (-1,)),
                ((0, 1), "c", ()),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "unsqueeze",
        lambda x, d: np.expand_dims(x, d),
        _shape_samples(
            (((2, 3), "c", (0,)), ((2, 3), "c", (-1,)), ((), "c", (0,)), ((3, 4), "T", (1,)))
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "expand",
        _expand_ref,
        _shape_samples(
            (
                ((3, 1), "c", ((3, 4),)),
                ((1,), "c", ((2, 3),)),
                ((), "c", ((2,),)),
                ((3, 1), "c", ((2, -1, 4),)),
                ((1, 3), "T", ((0, 3),)),
            )
        ),
        ALL,
        view=True,
    )
)


def _expand_as_samples(info, dtype, rng):
    for shape, target in (((3, 1), (3, 4)), ((), (2, 2)), ((1, 3), (2, 2, 3))):
        x = make_array(shape, dtype, rng)
        yield SampleInput(x, (make_array(target, dtype, rng),), desc=f"{shape} as {target}")


# Tensor.expand_as dispatches ``expand`` (torch records ExpandBackward0 for it); the
# registered ``expand_as`` op is reached through the registry only.
_add(
    OpInfo(
        "expand_as",
        lambda x, other: np.broadcast_to(x, other.shape),
        _expand_as_samples,
        ALL,
        view=True,
        call=lambda gt, x, other: gt.OPS["expand_as"](x, other),
        torch_call=lambda torch, x, other: x.expand_as(other),
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "flatten",
        _flatten_ref,
        _shape_samples(
            (
                ((2, 3, 4), "c", ()),
                ((2, 3, 4), "c", (1,)),
                ((2, 3, 4), "T", (0, 1)),
                ((), "c", ()),
                ((0, 3), "c", ()),
                ((5,), "c", ()),
            )
        ),
        ALL,
    )
)
_add(
    OpInfo(
        "narrow",
        _narrow_ref,
        _shape_samples(
            (
                ((5, 3), "c", (0, 1, 2)),
                ((5, 3), "T", (1, 0, 3)),
                ((4,), "c", (0, -2, 2)),
                ((4,), "c", (0, 4, 0)),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "diagonal",
        lambda x, offset, dim1, dim2: np.diagonal(x, offset, dim1, dim2),
        _shape_samples(
            (
                ((4, 3), "c", (0, 0, 1)),
                ((4, 3), "T", (1, 1, 0)),
                ((4, 3), "c", (-2, 0, 1)),
                ((4, 3), "c", (7, 0, 1)),
                ((2, 3, 4), "sliced", (1, -1, 0)),
                ((2, 3, 4, 2), "c", (0, 1, 3)),
            )
        ),
        ALL,
        view=True,
    )
)


def _unfold_ref(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    axis = dimension % x.ndim
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)
    sl = [slice(None)] * windows.ndim
    sl[axis] = slice(None, None, step)
    return windows[tuple(sl)]


_add(
    OpInfo(
        "unfold",
        _unfold_ref,
        _shape_samples(
            (
                ((4, 3), "c", (0, 2, 1)),
                ((4, 3), "T", (1, 2, 2)),
                ((2, 3, 5), "sliced", (-1, 3, 2)),
                ((6,), "c", (0, 0, 1)),
                ((), "c", (0, 1, 1)),
            )
        ),
        ALL,
        view=True,
        function=None,
    ),
    function=False,
)
_add(
    OpInfo(
        "select",
        _select_ref,
        _shape_samples(
            (
                ((5, 3), "c", (0, 1)),
                ((5, 3), "T", (1, -1)),
                ((4,), "c", (0, 2)),
                ((2, 3, 4), "sliced", (2, 1)),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "split",
        _split_ref,
        _shape_samples(
            (
                ((5, 3), "c", (2,)),
                ((5, 3), "T", (1, 1)),
                ((5, 3), "c", ([1, 4],)),
                ((4,), "c", (4,)),
                ((0, 3), "c", (2,)),
            )
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "chunk",
        _chunk_ref,
        _shape_samples(
            (((5, 3), "c", (2,)), ((5, 3), "T", (3, 1)), ((4,), "c", (4,)), ((6,), "c", (4,)))
        ),
        ALL,
        view=True,
    )
)
_add(
    OpInfo(
        "unbind",
        _unbind_ref,
        _shape_samples((((3, 2), "c", ()), ((3, 2), "T", (1,)), ((4,), "c", (0,)))),
        ALL,
        view=True,
    )
)


def _getitem_samples(info, dtype, rng):
    keys = (
        0,
        -1,
        slice(1, 3),
        (slice(None), 1),
        (Ellipsis, 2),
        (None, 0),
        (1, None, slice(None, None, 2)),
        (slice(None, None, 3), Ellipsis, None),
        (),
        np.array([0, 3, 1]),
        np.array(2),
        (np.array([0, 1]), np.array([2, 0])),
        [0, 2],
        "mask",
        (slice(4, 4),),
    )
    for key in keys:
        x = make_array((4, 5), dtype, rng, layout="T" if isinstance(key, int) else "c")
        if isinstance(key, str):
            key = make_array((4, 5), "bool", rng)
        yield SampleInput(x, (key,), desc=f"{describe(x)}[{describe(key)}]")
    yield SampleInput(make_array((), dtype, rng), ((),), desc="0-d[()]")
    yield SampleInput(make_array((), dtype, rng), ((None, Ellipsis),), desc="0-d[None, ...]")


_add(
    OpInfo(
        "getitem",
        lambda x, key: np.asarray(x[key]),
        _getitem_samples,
        ALL,
        call=lambda gt, x, key: x[key],
        torch_call=lambda torch, x, key: x[key],
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "alias",
        lambda x: x,
        unary_samples,
        ALL,
        view=True,
        call=lambda gt, x: gt.OPS["alias"](x),
        torch_call=lambda torch, x: torch.ops.aten.alias(x),
    ),
    function=False,
    method=False,
)
_add(OpInfo("detach", lambda x: x, unary_samples, ALL))


def _cat_samples(info, dtype, rng):
    for shapes, dim in (
        (((2, 3), (1, 3)), 0),
        (((2, 3), (2, 2), (2, 0)), 1),
        (((2, 3), (0,)), 0),
        (((3,), (3,)), -1),
        (((0, 3), (0, 3)), 0),
    ):
        arrays = [make_array(s, dtype, rng, layout="T" if len(s) == 2 else "c") for s in shapes]
        yield SampleInput(arrays, (dim,), desc=f"{describe(arrays)}, dim={dim}")


def _cat_ref(arrays, dim=0):
    arrays = [a for a in arrays if a.shape != (0,)] or arrays[:1]
    return np.concatenate(arrays, axis=dim)


def _stack_samples(info, dtype, rng):
    for shape, n, dim in (((2, 3), 2, 0), ((2, 3), 3, -1), ((), 2, 0), ((0,), 2, 1)):
        arrays = [make_array(shape, dtype, rng) for _ in range(n)]
        yield SampleInput(arrays, (dim,), desc=f"{n} x {shape}, dim={dim}")


_add(OpInfo("cat", _cat_ref, _cat_samples, ALL), method=False)
_add(
    OpInfo("stack", lambda arrays, dim=0: np.stack(arrays, axis=dim), _stack_samples, ALL),
    method=False,
)
_add(OpInfo("clone", lambda x: x.copy(), unary_samples, ALL))
_add(OpInfo("contiguous", lambda x: x.copy(), unary_samples, ALL), function=False)


def _to_dtype_samples(info, dtype, rng):
    for target in ALL:
        x = make_array((2, 3), dtype, rng, layout="T")
        yield SampleInput(x, (DT(target),), desc=f"{describe(x)} to {target}")


_add(
    OpInfo(
        "to_dtype",
        _to_dtype_ref,
        _to_dtype_samples,
        ALL,
        call=lambda gt, x, target: x.to(target),
        torch_call=lambda torch, x, target: x.to(target),
    ),
    function=False,
    method=False,
)
_add(
    OpInfo(
        "repeat",
        lambda x, sizes: np.tile(x, sizes),
        _shape_samples(
            (
                ((2, 3), "c", ((2, 1),)),
                ((3,), "c", ((2, 2),)),
                ((), "c", ((3,),)),
                ((2, 3), "T", ((1, 2, 1),)),
                ((2, 3), "c", ((0, 1),)),
            )
        ),
        ALL,
    )
)
_add(
    OpInfo(
        "flip",
        lambda x, dims: np.flip(x, dims),
        _shape_samples(
            (
                ((2, 3), "c", ((0,),)),
                ((2, 3, 4), "T", ((0, 2),)),
                ((), "c", ((),)),
                ((3,), "c", ((-1,),)),
            )
        ),
        ALL,
    )
)


def _index_select_samples(info, dtype, rng):
    for shape, dim, idx in (
        ((4, 3), 0, [0, 2, 2]),
        ((4, 3), 1, [2]),
        ((4,), 0, []),
        ((4, 3), -1, [1, 0]),
    ):
        x = make_array(shape, dtype, rng, layout="T" if len(shape) == 2 else "c")
        yield SampleInput(x, (dim, np.array(idx, dtype=np.int64)), desc=f"{describe(x)}, {idx}")


def _gather_samples(info, dtype, rng):
    for shape, dim, ishape in (((3, 4), 1, (3, 2)), ((3, 4), 0, (2, 4)), ((5,), 0, (3,))):
        x = make_array(shape, dtype, rng, layout="T" if len(shape) == 2 else "c")
        idx = rng.integers(0, shape[dim], size=ishape).astype(np.int64)
        yield SampleInput(x, (dim, idx), desc=f"{describe(x)}, dim={dim}")


_add(OpInfo("index_select", _index_select_ref, _index_select_samples, ALL))
_add(OpInfo("gather", _gather_ref, _gather_samples, ALL))


# indexed writes (_impl_scatter.py), out of place and in place
def _scatter_key(x, dim, index):
    key = list(np.indices(index.shape, sparse=True))
    key[dim % x.ndim] = index
    return tuple(key)


def _scatter_ref(x, dim, index, src, reduce=None):
    out = x.copy()
    values = src[tuple(slice(0, k) for k in index.shape)] if isinstance(src, np.ndarray) else src
    out[_scatter_key(x, dim, index)] = values
    return out


def _scatter_add_ref(x, dim, index, src):
    out = x.copy()
    np.add.at(out, _scatter_key(x, dim, index), src[tuple(slice(0, k) for k in index.shape)])
    return out


def _slices_key(x, dim, index):
    key = [slice(None)] * x.ndim
    key[dim % x.ndim] = index
    return tuple(key)


def _index_add_ref(x, dim, index, source, alpha=1):
    out = x.copy()
    np.add.at(out, _slices_key(x, dim, index), (source * alpha).astype(x.dtype))
    return out


def _index_copy_ref(x, dim, index, source):
    out = x.copy()
    out[_slices_key(x, dim, index)] = source
    return out


def _index_fill_ref(x, dim, index, value):
    out = x.copy()
    out[_slices_key(x, dim, index)] = value
    return out


def _scatter_samples(info, dtype, rng):
    x = make_array((3, 4), dtype, rng, layout="T")
    src = make_array((3, 4), dtype, rng)
    idx = np.array([[0, 3, 1], [2, 0, 3], [1, 2, 0]], dtype=np.int64)
    yield SampleInput(x, (1, idx, src), desc=f"{describe(x)}, dim 1")
    rows = np.array([[0, 2, 1], [1, 0, 2]], dtype=np.int64)  # (no repeat: the winner of a
    yield SampleInput(x, (0, rows, src), desc=f"{describe(x)}, dim 0")  # repeated write is any)
    if info.name.startswith("scatter_add"):
        yield SampleInput(x, (1, np.array([[0, 0, 3]], dtype=np.int64), src), desc="repeats")
    else:
        yield SampleInput(x, (1, idx, 1 if dtype != "bool" else True), desc="a number")


def _index_samples(info, dtype, rng):
    x = make_array((3, 4), dtype, rng, layout="T")
    rows = make_array((2, 4), dtype, rng)
    at = np.array([2, 0], dtype=np.int64)
    if info.name.startswith("index_fill"):
        yield SampleInput(x, (0, at, 1 if dtype != "bool" else True), desc="rows 2, 0")
        yield SampleInput(x, (1, np.array([3], dtype=np.int64), 0), desc="column 3")
        return
    yield SampleInput(x, (0, at, rows), desc=f"{describe(x)}, rows 2, 0")
    cols = make_array((3, 1), dtype, rng)
    yield SampleInput(x, (1, np.array([1], dtype=np.int64), cols), desc="column 1")


for _name, _ref, _samples, _dtypes in (
    ("scatter", _scatter_ref, _scatter_samples, ALL),
    ("scatter_add", _scatter_add_ref, _scatter_samples, ALL),
    ("index_add", _index_add_ref, _index_samples, ALL),
    ("index_copy", _index_copy_ref, _index_samples, ALL),
    ("index_fill", _index_fill_ref, _index_samples, ALL),
):
    _add(OpInfo(_name, _ref, _samples, _dtypes))
    _add(OpInfo(_name + "_", _ref, _samples, _dtypes, inplace=True), function=False)
