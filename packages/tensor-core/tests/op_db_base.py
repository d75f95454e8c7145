"""What tensor-core's op database (``op_db.py``) and its family modules share: the entry
types (:class:`OpInfo`, :class:`SampleInput`, :class:`DT`), the dtype groups and
tolerances, the input arrays and sample generators, the numpy references and the property
checks of random ops (Note [Samples are numpy] in ``op_db.py``).

A family module (``op_db_elementwise.py`` ...) imports these by name (Note [Test helpers
import by name] in the workspace's conftest.py) and collects its entries in a
:class:`Family`, which ``op_db.py`` adds where they stood, so the database's order is
unchanged.

Examples
--------
>>> import numpy as np
>>> make_array((2, 3), "float32", np.random.default_rng(0)).shape
(2, 3)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

# what a family module takes (``from gradstack_tensor_tests_op_db_base import *``): all
# of it, the helpers with a leading underscore included
__all__ = [
    "FLOATS",
    "INTS",
    "NUMERIC",
    "ALL",
    "SMALL_PATH_UNARY",
    "SMALL_PATH_BINARY",
    "DT",
    "SampleInput",
    "describe",
    "OpInfo",
    "RTOL",
    "ATOL",
    "make_array",
    "UNARY_SHAPES",
    "BINARY_SHAPES",
    "_broadcast_shape",
    "unary_samples",
    "binary_samples",
    "_scalar_category",
    "reduction_samples",
    "_dim_ok",
    "_NEEDS_NONEMPTY",
    "_reduces_nonempty",
    "_sigmoid",
    "_as_float",
    "_unary_float_ref",
    "_axes",
    "_reduce_ref",
    "_var_ref",
    "_norm_ref",
    "_extreme_ref",
    "_arg_ref",
    "_softmax_ref",
    "_logsumexp_ref",
    "_cumsum_ref",
    "_sort_ref",
    "_topk_ref",
    "_clamp_ref",
    "_setitem_ref",
    "_copy_ref",
    "_masked_fill_ref",
    "_fill_ref",
    "_matmul_ref",
    "_addmm_ref",
    "_view_ref",
    "_narrow_ref",
    "_select_ref",
    "_split_ref",
    "_chunk_ref",
    "_unbind_ref",
    "_squeeze_ref",
    "_expand_ref",
    "_flatten_ref",
    "_index_select_ref",
    "_gather_ref",
    "_trace_ref",
    "_where_ref",
    "_to_dtype_ref",
    "_check_uniform",
    "_check_normal",
    "_inplace_samples",
    "Family",
]


FLOATS = ("float32", "float64")
INTS = ("int64", "int32")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)

# ops with a C loop for small contiguous float arrays (Note [Small float arrays take C loops])
SMALL_PATH_UNARY = ("neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs")
SMALL_PATH_BINARY = ("add", "sub", "mul", "div")


class DT(str):
    """A dtype argument in a sample (``DT("float64")``), converted for each library."""

    __slots__ = ()


@dataclasses.dataclass
class SampleInput:
    """One call of an op: ``op(input, *args, **kwargs)``; arrays stand for tensors."""

    input: Any
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    desc: str = ""

    def __repr__(self) -> str:
        return f"SampleInput({self.desc or describe(self.input)})"


def describe(x) -> str:
    if isinstance(x, np.ndarray):
        layout = "" if x.flags.c_contiguous else " non-contiguous"
        return f"{x.dtype}{list(x.shape)}{layout}"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(describe(v) for v in x) + "]"
    return repr(x)


@dataclasses.dataclass
class OpInfo:
    """What the generic tests need to know about one registered op.

    Attributes
    ----------
    name : str
        The op's name in ``gradstack_tensor.OPS``.
    ref : callable or None
        numpy reference ``ref(input, *args, **kwargs)``; None for random ops.
    sample_inputs : callable
        ``sample_inputs(dtype_name, rng) -> iterable of SampleInput``.
    dtypes : tuple of str
        Dtypes (of ``ALL``) the op accepts, as torch does; the others must raise.
    domain : (float, float)
        The interval the input values are drawn from.
    function : str or None
        Name of the function form ``gradstack_tensor.<function>``.
    method : str or None
        Name of the method form ``Tensor.<method>``.
    call : callable or None
        ``call(gt, input, *args, **kwargs)`` for ops with neither form (``getitem``).
    torch_call : callable or None
        ``torch_call(torch, input, *args, **kwargs)``; defaults to the same names in torch.
    inplace : bool
        Writes into ``input`` and returns it.
    view : bool
        The output shares storage (and version counter) with ``input``.
    rtol, atol : dict
        Tolerances by result dtype (defaults: :data:`RTOL`, :data:`ATOL`).
    torch_skip : str or None
        Why the torch comparison does not apply.
    check : callable or None
        ``check(result_array, sample)``, a property test for ops without a reference.
    """

    name: str
    ref: Callable | None
    sample_inputs: Callable[[str, np.random.Generator], Iterable[SampleInput]]
    dtypes: tuple = ALL
    domain: tuple = (-3.0, 3.0)
    function: str | None = None
    method: str | None = None
    call: Callable | None = None
    torch_call: Callable | None = None
    inplace: bool = False
    view: bool = False
    rtol: dict = dataclasses.field(default_factory=dict)
    atol: dict = dataclasses.field(default_factory=dict)
    torch_skip: str | None = None
    check: Callable | None = None

    def samples(self, dtype_name: str, rng: np.random.Generator) -> list[SampleInput]:
        """The op's sample inputs in ``dtype_name``."""
        return list(self.sample_inputs(self, dtype_name, rng))

    def tolerance(self, dtype_name: str) -> tuple[float, float]:
        return (
            self.rtol.get(dtype_name, RTOL.get(dtype_name, 0.0)),
            self.atol.get(dtype_name, ATOL.get(dtype_name, 0.0)),
        )


RTOL = {"float16": 1e-3, "float32": 1e-5, "float64": 1e-10}
ATOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}

# ---------------------------------------------------------------------------------------
# Input arrays


def make_array(
    shape, dtype, rng, domain=(-3.0, 3.0), *, layout="c", nonzero=False, unique=False
) -> np.ndarray:
    """Random values of ``dtype`` in ``domain``, laid out as ``layout``.

    ``layout`` is ``"c"`` (contiguous), ``"T"`` (all axes reversed: a transposed view),
    ``"sliced"`` (every other element of the last axis) or ``"flipped"`` (negative stride
    on axis 0).  ``nonzero`` keeps values away from 0; ``unique`` avoids ties.
    """
    shape = tuple(shape)
    if layout == "T" and len(shape) >= 2:
        return make_array(shape[::-1], dtype, rng, domain, nonzero=nonzero, unique=unique).T
    if layout == "sliced" and shape:
        wide = shape[:-1] + (2 * shape[-1],)
        return make_array(wide, dtype, rng, domain, nonzero=nonzero, unique=unique)[..., ::2]
    if layout == "flipped" and shape:
        return np.flip(make_array(shape, dtype, rng, domain, nonzero=nonzero, unique=unique), 0)
    dt = np.dtype(dtype)
    lo, hi = domain
    n = math.prod(shape)
    if dt.kind == "b":
        v = np.asarray(rng.random(shape) < 0.5)
        if nonzero:
            v[...] = True
        return v
    if dt.kind in "iu":
        ilo, ihi = max(math.ceil(lo), -6), min(math.floor(hi), 6)
        if unique:
            v = (rng.permutation(n) - n // 2).reshape(shape)
            if ilo >= 0:
                v = v + n // 2 + max(ilo, 1 if nonzero else 0)
        else:
            v = rng.integers(ilo, ihi + 1, size=shape)
        if nonzero:
            v[v == 0] = 1 if ihi >= 1 else -1
        return np.ascontiguousarray(v.astype(dt)).reshape(shape)
    v = rng.uniform(lo, hi, size=shape)
    if nonzero:
        v = np.where(np.abs(v) < 0.25, np.copysign(0.25, v), v)
    return np.asarray(v, dtype=dt).reshape(shape)


# (shape, layout) of the inputs of elementwise and shape ops
UNARY_SHAPES = (
    ((), "c"),
    ((0,), "c"),
    ((5,), "c"),
    ((2, 3), "c"),
    ((2, 0, 3), "c"),
    ((3, 4), "T"),
    ((3, 4), "sliced"),
    ((4, 3), "flipped"),
    ((2, 3, 4), "T"),
    ((70, 70), "c"),
)

# pairs of (shape, layout) that broadcast
BINARY_SHAPES = (
    (((2, 3), "c"), ((2, 3), "c")),
    (((2, 3), "c"), ((3,), "c")),
    (((3, 1), "c"), ((1, 4), "c")),
    (((), "c"), ((2, 3), "c")),
    (((2, 3), "c"), ((), "c")),
    (((), "c"), ((), "c")),
    (((0, 3), "c"), ((1, 3), "c")),
    (((2, 1, 3), "c"), ((4, 3), "c")),
    (((3, 4), "T"), ((3, 4), "c")),
    (((5,), "sliced"), ((5,), "flipped")),
    (((70, 70), "c"), ((70, 70), "c")),
)


def _broadcast_shape(*shapes):
    return np.broadcast_shapes(*shapes)


# ---------------------------------------------------------------------------------------
# Sample generators


def unary_samples(info, dtype, rng, shapes=UNARY_SHAPES, *, nonzero=False):
    for shape, layout in shapes:
        x = make_array(shape, dtype, rng, info.domain, layout=layout, nonzero=nonzero)
        yield SampleInput(x, desc=describe(x))


def binary_samples(
    info, dtype, rng, *, rhs_domain=None, nonzero_rhs=False, scalars=(2, 1.5), inplace=False
):
    """Broadcastable pairs, then tensor (op) Python scalar."""
    rhs_domain = rhs_domain or info.domain
    for (sa, la), (sb, lb) in BINARY_SHAPES:
        if inplace and _broadcast_shape(sa, sb) != tuple(sa):
            continue
        a = make_array(sa, dtype, rng, info.domain, layout=la)
        b = make_array(sb, dtype, rng, rhs_domain, layout=lb, nonzero=nonzero_rhs)
        yield SampleInput(a, (b,), desc=f"{describe(a)}, {describe(b)}")
    for s in scalars:
        if inplace and _scalar_category(s) > _scalar_category(dtype):
            continue  # torch refuses to write a float into an int tensor in place
        for shape in ((2, 3), ()):
            a = make_array(shape, dtype, rng, info.domain)
            yield SampleInput(a, (s,), desc=f"{describe(a)}, scalar {s!r}")


def _scalar_category(x):
    """0 bool, 1 integer, 2 floating, for Python scalars and dtype names."""
    if isinstance(x, str):
        return 0 if x == "bool" else 1 if x in INTS else 2
    return 0 if isinstance(x, bool) else 1 if isinstance(x, int) else 2


def reduction_samples(
    info,
    dtype,
    rng,
    *,
    dims=(None, 0, -1, (0, 1)),
    keepdim=True,
    empty=True,
    unique=False,
    dim_kw="dim",
    extra=(),
):
    """Inputs of several ranks and layouts, reduced over each of ``dims``."""
    cases = [
        ((), "c"),
        ((5,), "c"),
        ((2, 3), "c"),
        ((3, 4), "T"),
        ((2, 3, 4), "sliced"),
        ((4, 3), "flipped"),
    ]
    if empty:
        cases.append(((0, 3), "c"))
    for shape, layout in cases:
        for dim in dims:
            if dim is not None and not _dim_ok(dim, len(shape)):
                continue
            if empty and 0 in shape and not _reduces_nonempty(shape, dim, info.name):
                continue
            for kd in (False, True) if keepdim and dim is not None else (False,):
                x = make_array(shape, dtype, rng, info.domain, layout=layout, unique=unique)
                kwargs = dict(extra)
                if dim is not None:
                    kwargs[dim_kw] = dim
                if kd:
                    kwargs["keepdim"] = True
                yield SampleInput(x, (), kwargs, desc=f"{describe(x)}, {kwargs}")


def _dim_ok(dim, ndim):
    dims = dim if isinstance(dim, tuple) else (dim,)
    n = max(ndim, 1)
    if isinstance(dim, tuple) and ndim == 0:
        return False
    return all(-n <= d < n for d in dims) and len({d % n for d in dims}) == len(dims)


_NEEDS_NONEMPTY = {"max", "min", "amax", "amin", "argmax", "argmin"}


def _reduces_nonempty(shape, dim, name):
    """Whether reducing ``shape`` over ``dim`` reduces only non-empty slices."""
    if name not in _NEEDS_NONEMPTY:
        return True
    if dim is None:
        return False
    dims = dim if isinstance(dim, tuple) else (dim,)
    return all(shape[d] != 0 for d in dims)


# ---------------------------------------------------------------------------------------
# References (numpy)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def _as_float(x):
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _unary_float_ref(fn):
    return lambda x: fn(_as_float(x))


def _axes(dim, ndim=None):
    if ndim == 0:
        return None  # dim 0 / -1 of a 0-d tensor: numpy has no axis to name
    return dim if dim is None or isinstance(dim, tuple) else (dim,)


def _reduce_ref(fn, *, int_dtype=None):
    def ref(x, dim=None, keepdim=False, **kw):
        if int_dtype is not None and x.dtype.kind in "biu":
            x = x.astype(int_dtype)
        return np.asarray(fn(x, axis=_axes(dim, x.ndim), keepdims=keepdim, **kw))

    return ref


def _var_ref(std):
    def ref(x, dim=None, keepdim=False, unbiased=True, correction=None):
        ddof = correction if correction is not None else (1 if unbiased else 0)
        fn = np.std if std else np.var
        with np.errstate(all="ignore"):
            return np.asarray(fn(x, axis=_axes(dim, x.ndim), ddof=ddof, keepdims=keepdim))

    return ref


def _norm_ref(x, p="fro", dim=None, keepdim=False):
    a = np.abs(x)
    axes = _axes(dim, x.ndim)
    if p in ("fro", 2):
        return np.sqrt(np.sum(a * a, axis=axes, keepdims=keepdim))
    if p == math.inf:
        return np.max(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    return np.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p)


def _extreme_ref(arg, red):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return np.asarray(red(x))
        if x.ndim == 0:
            return (x.copy(), np.zeros((), np.int64))
        idx = arg(x, axis=dim, keepdims=True)
        vals = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            vals, idx = vals.squeeze(dim), idx.squeeze(dim)
        return (vals, idx)

    return ref


def _arg_ref(fn):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            r = np.asarray(fn(x.reshape(-1)))
            return r.reshape((1,) * x.ndim) if keepdim else r
        if x.ndim == 0:
            return np.zeros((), np.int64)
        return np.asarray(fn(x, axis=dim, keepdims=keepdim))

    return ref


def _softmax_ref(log):
    def ref(x, dim):
        if x.ndim == 0:
            return np.zeros_like(x) if log else np.ones_like(x)
        if x.size == 0:
            return x.copy()
        z = x - np.max(x, axis=dim, keepdims=True)
        if log:
            return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
        e = np.exp(z)
        return e / np.sum(e, axis=dim, keepdims=True)

    return ref


def _logsumexp_ref(x, dim, keepdim=False):
    x = _as_float(x)
    if x.ndim == 0:
        return x.copy()
    m = np.max(x, axis=_axes(dim), keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=_axes(dim), keepdims=True)) + m
    return r if keepdim else np.squeeze(r, axis=_axes(dim))


def _cumsum_ref(x, dim):
    if x.dtype.kind in "biu":
        x = x.astype(np.int64)
    if x.ndim == 0:
        return x.copy()
    return np.cumsum(x, axis=dim)


def _sort_ref(x, dim=-1, descending=False):
    if x.ndim == 0:
        return (x.copy(), np.zeros((), np.int64))
    key = x.astype(np.int64) if x.dtype.kind == "b" else x
    idx = np.argsort(-key if descending else key, axis=dim, kind="stable")
    return (np.take_along_axis(x, idx, axis=dim), idx)


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    vals, idx = _sort_ref(x, dim, largest)
    if x.ndim == 0:
        return vals, idx
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(0, k)
    return vals[tuple(sl)], idx[tuple(sl)]


def _clamp_ref(x, min=None, max=None):  # noqa: A002
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out


def _setitem_ref(x, key, value):
    out = x.copy()
    out[key] = value
    return out


def _copy_ref(x, src):
    out = x.copy()
    out[...] = src
    return out


def _masked_fill_ref(x, mask, value):
    return np.where(mask, np.asarray(value).astype(x.dtype), x)


def _fill_ref(x, value):
    return np.full_like(x, value)


def _matmul_ref(a, b):
    return np.asarray(np.matmul(a, b))


def _addmm_ref(x, m1, m2, beta=1, alpha=1):
    return beta * x + alpha * (m1 @ m2)


def _view_ref(x, shape):
    return x.reshape(shape)


def _narrow_ref(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(start, start + length)
    return x[tuple(sl)]


def _select_ref(x, dim, index):
    return np.take(x, index, axis=dim)


def _split_ref(x, size, dim=0):
    n = x.shape[dim]
    if isinstance(size, (list, tuple)):
        bounds = np.cumsum(size)[:-1]
    else:
        bounds = list(range(size, n, size))
    return tuple(np.split(x, bounds, axis=dim))


def _chunk_ref(x, chunks, dim=0):
    n = x.shape[dim]
    size = max(1, -(-n // chunks))
    return _split_ref(x, size, dim)


def _unbind_ref(x, dim=0):
    return tuple(np.take(x, i, axis=dim) for i in range(x.shape[dim]))


def _squeeze_ref(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, tuple) else (dim,)
    axes = tuple(d % x.ndim for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, axis=axes) if axes else x


def _expand_ref(x, shape):
    lead = len(shape) - x.ndim
    target = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    return np.broadcast_to(x, target)


def _flatten_ref(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (math.prod(x.shape[s : e + 1]),) + x.shape[e + 1 :])


def _index_select_ref(x, dim, index):
    return np.take(x, index.reshape(-1), axis=dim)  # a 0-d index counts as one


def _gather_ref(x, dim, index):
    return np.take_along_axis(x, index, axis=dim)


def _trace_ref(x):
    r = np.trace(x)
    return np.asarray(r, dtype=np.int64 if x.dtype.kind in "biu" else x.dtype)


def _where_ref(cond, x, y):
    return np.where(cond, x, y)


def _to_dtype_ref(x, dtype, copy=False):
    return x.astype(dtype)


# ---------------------------------------------------------------------------------------
# Property checks of random ops


def _check_uniform(r, sample):
    a, b = sample.args[:2]
    assert r.shape == sample.input.shape and r.dtype == sample.input.dtype
    if r.size:
        assert r.min() >= a and r.max() <= b, (r.min(), r.max(), a, b)
    if r.size >= 1000:
        assert abs(r.mean() - (a + b) / 2) < 0.1 * (b - a)


def _check_normal(r, sample):
    mean, std = sample.args[:2]
    assert r.shape == sample.input.shape and r.dtype == sample.input.dtype
    assert np.isfinite(r).all()
    if r.size >= 1000:
        assert abs(r.mean() - mean) < 0.1 * std
        assert abs(r.std() - std) < 0.1 * std


def _inplace_samples(base_samples):
    def gen(info, dtype, rng):
        return base_samples(info, dtype, rng, inplace=True)

    return gen


class Family:
    """The entries of a family module, in the order its ``_add`` calls gave them (with
    their ``function``/``method`` arguments); ``op_db.py`` calls its ``extend`` with
    itself."""

    def __init__(self) -> None:
        self.entries: list[tuple[OpInfo, dict]] = []

    def add(self, info: OpInfo, **forms) -> OpInfo:
        self.entries.append((info, forms))
        return info

    def extend(self, db) -> None:
        """Add the entries to the op database module ``db`` (its ``_add``), in order."""
        for info, forms in self.entries:
            db._add(info, **forms)
