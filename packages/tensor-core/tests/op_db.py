"""The op database of tensor-core's tests: one entry per registered op.

Every op in ``gradstack_tensor.OPS`` has an :class:`OpInfo` here (or a reason in
:data:`SKIPS`): its numpy reference, a generator of sample inputs (0-d, empty,
broadcastable pairs, non-contiguous inputs made by transposing, slicing and flipping numpy
arrays), the domain its inputs are drawn from (``log`` needs positive numbers), the dtypes
it supports as torch does, and how it is called (function form, method form, or both).
``test_ops.py`` runs generic tests over all of it; ``test_fuzz.py`` borrows the entries
to know how to call each op.

Note [Samples are numpy]
~~~~~~~~~~~~~~~~~~~~~~~~
A :class:`SampleInput` holds numpy arrays wherever the op takes a tensor.  The tests turn
them into gradstack tensors with ``from_numpy`` (which keeps the array's strides, so a
transposed or flipped array becomes a non-contiguous tensor), into torch tensors with a
contiguous copy, and hand the arrays themselves to the numpy reference.  Floating-point
arrays reach the reference upcast to float64, so the reference is the more precise side.

Examples
--------
>>> import numpy as np
>>> info = OP_DB["exp"]
>>> info.domain, info.dtypes[:2]
((-3.0, 3.0), ('float32', 'float64'))
>>> s = info.samples("float32", np.random.default_rng(0))[0]
>>> s.input.shape, s.input.dtype
((), dtype('float32'))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = [
    "ALL",
    "DT",
    "FLOATS",
    "INTS",
    "NUMERIC",
    "OP_DB",
    "SKIPS",
    "OpInfo",
    "SampleInput",
    "make_array",
    "SMALL_PATH_UNARY",
    "SMALL_PATH_BINARY",
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

_RANDOM = "a random draw: compared value for value with torch after the same seed in "
SKIPS: dict[str, str] = {  # op name -> why it has no entry
    "linalg_svd": "its singular vectors' signs are LAPACK's, which may differ from torch's "
    "MKL per pair: compared with torch up to those signs (values, errors, empty inputs, "
    "gradients of sign-invariant functions) in tests/test_dropin_small_names_torch.py",
    **{
        name: f"{why}: compared with torch (values{extra}, errors, empty and batched "
        "inputs, gradients) in tests/test_linalg_factorizations_torch.py"
        for name, why, extra in (
            ("linalg_eig", "its eigenvectors are defined up to a phase", " and invariants"),
            ("linalg_eigh", "its eigenvectors are defined up to a sign", " and invariants"),
            ("linalg_qr", "a named tuple of factors, its modes", ""),
            ("linalg_lstsq", "four fields, filled by driver", ""),
            ("linalg_solve_triangular", "keyword-only arguments, upper required", ""),
            ("linalg_lu", "the named tuple (P, L, U)", ""),
            ("linalg_pinv", "its atol/rtol/hermitian keywords", ""),
        )
    },
    **{
        name: "torch's reduce/include_self arguments: compared with torch (values of every "
        "reduce in float32, float64 and integers, errors, gradients) in "
        "tests/test_reducing_writes_torch.py"
        for name in ("scatter_reduce", "scatter_reduce_", "index_reduce", "index_reduce_")
    },
    "div_rounding": "no function of its own: div(a, b, rounding_mode=...) calls it; its values, "
    "dtypes and gradients are compared with torch in graph-engine's test_div_rounding_mode.py",
    "mul_scalar": "torch's mul.Scalar, no public function: compared with torch.ops.aten.mul.Scalar "
    "(values, gradients, node names) in graph-engine's autograd_op_db.py",
    "div_scalar": "torch's div.Scalar, no public function: compared with torch.ops.aten.div.Scalar "
    "(values, gradients, node names) in graph-engine's autograd_op_db.py",
    "erf": "compared with torch (values, dtypes, gradients) in graph-engine's "
    "test_special_functions.py",
    "erfinv": "compared with torch (values, dtypes, gradients) in graph-engine's "
    "test_special_functions.py",
    "erfc": "compared with torch (values in every float dtype with their tails, layouts, "
    "gradients) in graph-engine's test_special_functions.py",
    **{
        name: "compared with torch (values over dense grids with the edges in float32 and "
        "float64, dtypes, layouts, errors, gradients) in tests/test_special_bessel_torch.py"
        for name in (
            "frexp",
            "igamma",
            "igamma_",
            "igammac",
            "igammac_",
            *(
                "special_" + f
                for f in (
                    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
                    "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
                    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 "
                    "i0e i1 i1e erfcx zeta chebyshev_polynomial_t chebyshev_polynomial_u "
                    "chebyshev_polynomial_v chebyshev_polynomial_w hermite_polynomial_h "
                    "hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
                    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
                    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w"
                ).split()
            ),
        )
    },
    **{
        name: "compared with torch (values at the poles and in float32, gradients) in "
        "tests/test_gamma_functions_torch.py and graph-engine's autograd_op_db.py"
        for name in ("lgamma", "digamma", "polygamma")
    },
    **{
        name: "a complex-number op: compared with torch (values, dtypes, errors, gradients) "
        "in tests/test_complex_dtypes_torch.py and tests/test_complex_autograd_torch.py"
        for name in (
            "view_as_real",
            "view_as_complex",
            "conj",
            "conj_physical",
            "_neg_view",
            "angle",
            "polar",
            "complex",
        )
    },
    **{
        name: "torch's private FFT op behind torch.fft: compared with torch through the "
        "torch.fft functions (values, dtypes, errors, gradients) in tests/test_fft_torch.py"
        for name in ("fft_c2c", "fft_r2c", "fft_c2r")
    },
    **{
        name: _RANDOM + "test_random_torch.py"
        for name in ("bernoulli", "bernoulli_", "exponential_", "multinomial", "normal", "random_")
    },
    **{
        name: "a random draw: compared with torch (draws after the same seed, with a "
        "Generator, errors, node names, zero gradients) in tests/test_random_draws_torch.py"
        for name in ("cauchy_", "log_normal_", "geometric_", "poisson", "binomial")
    },
}

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


# ---------------------------------------------------------------------------------------
# The entries

OP_DB: dict[str, OpInfo] = {}

# Names with a function form in torch (``torch.<name>``) and a method form
# (``torch.Tensor.<name>``); the database declares what torch offers and
# test_ops checks that gradstack offers the same.
_TORCH_NO_FUNCTION = {
    "add_",
    "sub_",
    "mul_",
    "div_",
    "pow_",
    "remainder_",
    "fmod_",
    "floor_divide_",
    "atan2_",
    "bitwise_and_",
    "bitwise_or_",
    "bitwise_xor_",
    "bitwise_not_",
    "bitwise_left_shift_",
    "bitwise_right_shift_",
    "logical_not_",
    "sign_",
    "sgn_",
    "copy_",
    "masked_fill_",
    "uniform_",
    "normal_",
    "expand",
    "expand_as",
    "view",
    "repeat",
    "contiguous",
    "nextafter_",
}


def _add(info: OpInfo, *, function=True, method=True) -> OpInfo:
    if info.name in OP_DB:
        raise ValueError(f"duplicate op_db entry {info.name!r}")
    if function is True:
        info.function = None if info.name in _TORCH_NO_FUNCTION else info.name
    elif function:
        info.function = function
    if method is True:
        info.method = info.name
    elif method:
        info.method = method
    OP_DB[info.name] = info
    return info


def _inplace_samples(base_samples):
    def gen(info, dtype, rng):
        return base_samples(info, dtype, rng, inplace=True)

    return gen


# ---- unary ops whose integer and bool inputs compute in the default float dtype
# (name, numpy reference, domain)
_UNARY_FLOAT = (
    ("exp", np.exp, (-3.0, 3.0)),
    ("exp2", np.exp2, (-3.0, 3.0)),
    ("expm1", np.expm1, (-3.0, 3.0)),
    ("log", np.log, (0.05, 4.0)),
    ("log2", np.log2, (0.05, 4.0)),
    ("log10", np.log10, (0.05, 4.0)),
    ("log1p", np.log1p, (-0.9, 4.0)),
    ("sqrt", np.sqrt, (0.0, 4.0)),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), (0.05, 4.0)),
    ("reciprocal", np.reciprocal, (-3.0, 3.0)),
    ("sin", np.sin, (-3.0, 3.0)),
    ("cos", np.cos, (-3.0, 3.0)),
    ("tan", np.tan, (-1.4, 1.4)),
    ("asin", np.arcsin, (-0.99, 0.99)),
    ("acos", np.arccos, (-0.99, 0.99)),
    ("atan", np.arctan, (-3.0, 3.0)),
    ("sinh", np.sinh, (-3.0, 3.0)),
    ("cosh", np.cosh, (-3.0, 3.0)),
    ("asinh", np.arcsinh, (-3.0, 3.0)),
    ("acosh", np.arccosh, (1.05, 4.0)),
    ("atanh", np.arctanh, (-0.95, 0.95)),
    ("tanh", np.tanh, (-3.0, 3.0)),
    ("sigmoid", _sigmoid, (-8.0, 8.0)),
    ("i0", np.i0, (-3.0, 3.0)),
)
_NONZERO = {"reciprocal"}

for _name, _fn, _domain in _UNARY_FLOAT:

    def _gen(info, dtype, rng, _nz=_name in _NONZERO):
        return unary_samples(info, dtype, rng, nonzero=_nz)

    _add(OpInfo(_name, _unary_float_ref(_fn), _gen, ALL, _domain))
    _add(OpInfo(_name + "_", _unary_float_ref(_fn), _gen, FLOATS, _domain, inplace=True))

# ---- unary ops that keep the input's dtype
# (name, reference, dtypes); torch has no function form of sign_ and bitwise_not_
_UNARY_SAME = (
    ("neg", np.negative, NUMERIC),
    ("abs", np.abs, NUMERIC),
    ("sign", lambda x: np.sign(x) if x.dtype.kind != "b" else x.copy(), ALL),
    ("sgn", lambda x: np.sign(x) if x.dtype.kind != "b" else x.copy(), ALL),
    (
        "relu",
        lambda x: (
            np.where(np.isnan(x) | (x > 0), x, 0).astype(x.dtype)
            if x.dtype.kind == "f"
            else np.maximum(x, 0)
        ),
        NUMERIC,
    ),
    ("floor", lambda x: np.floor(x) if x.dtype.kind == "f" else x.copy(), NUMERIC),
    ("ceil", lambda x: np.ceil(x) if x.dtype.kind == "f" else x.copy(), NUMERIC),
    ("round", lambda x: np.round(x) if x.dtype.kind == "f" else x.copy(), NUMERIC),
    ("trunc", lambda x: np.trunc(x) if x.dtype.kind == "f" else x.copy(), NUMERIC),
    ("bitwise_not", np.invert, INTS + ("bool",)),
)
for _name, _fn, _dtypes in _UNARY_SAME:
    _add(OpInfo(_name, _fn, unary_samples, _dtypes))
    _add(OpInfo(_name + "_", _fn, unary_samples, _dtypes, inplace=True))


def _round_decimals_ref(x, decimals):
    """torch's round.decimals: nearbyint(x * 10**d) / 10**d (x / 10**-d, * 10**-d for a
    negative d), in float32 for the half types and in the tensor's dtype otherwise."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    ten = work(10.0) ** abs(decimals)
    y = x.astype(work)
    y = np.rint(y * ten) / ten if decimals >= 0 else np.rint(y / ten) * ten
    return y.astype(x.dtype)


def _round_decimals_samples(info, dtype, rng):
    for sample in unary_samples(info, dtype, rng):
        for decimals in (2, 0, -1):
            yield SampleInput(sample.input, (decimals,), desc=f"{sample.desc}, {decimals}")


_add(
    OpInfo(
        "round_decimals",
        _round_decimals_ref,
        _round_decimals_samples,
        FLOATS,
        domain=(-300.0, 300.0),
        # the reference rounds the float64 upcast of a float32 input: where x * 100 is a
        # tie in float32 and not in float64 it lands one step (0.01) away; the comparison
        # with torch (torch_call) is exact
        rtol={"float32": 1e-4},
        call=lambda gt, x, d: gt.round(x, decimals=d),
        torch_call=lambda torch, x, d: torch.round(x, decimals=d),
    ),
    function=None,
    method=None,
)

_add(OpInfo("logical_not", np.logical_not, unary_samples, ALL))
_add(
    OpInfo(
        "logical_not_",
        lambda x: np.logical_not(x).astype(x.dtype),
        unary_samples,
        ALL,
        inplace=True,
    ),
    function=None,
)

# ---- binary elementwise ops
# (name, reference, dtypes, rhs domain, nonzero rhs, in-place dtypes, scalars)


def _pow_ref(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" or isinstance(b, float) or b.dtype.kind == "f":
        return np.power(_as_float(a), _as_float(b))
    return np.power(a.astype(np.int64), b.astype(np.int64))


def _shift_ref(a, b, left):
    """torch's shifts, element by element in Python integers: counts outside
    ``[0, bits)`` give 0 (left) or the sign (right); a left shift wraps."""
    dtype = np.asarray(a).dtype if isinstance(b, int) else np.result_type(a, b)
    a, b = np.asarray(a), np.asarray(b)
    bits = dtype.itemsize * 8
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype)
    for i, (x, n) in enumerate(zip(*(v.ravel() for v in np.broadcast_arrays(a, b)))):
        x, n = int(x), int(np.array(n).astype(dtype))
        if left:
            v = 0 if not 0 <= n < bits else (x << n) % (1 << bits)
            v = v - (1 << bits) if dtype.kind == "i" and v >= 1 << (bits - 1) else v
        else:
            v = (x >> n) if 0 <= n < bits else (-1 if x < 0 else 0)
        out.flat[i] = v
    return out


_BINARY = (
    ("add", np.add, ALL, None, False, ALL, (2, 1.5, True)),
    ("sub", np.subtract, NUMERIC, None, False, NUMERIC, (2, 1.5)),
    ("mul", np.multiply, ALL, None, False, ALL, (2, 1.5, True)),
    ("div", lambda a, b: np.true_divide(_as_float(a), b), ALL, None, True, FLOATS, (2, 1.5)),
    ("pow", _pow_ref, NUMERIC, (0.0, 3.0), False, NUMERIC, (2, 0.5)),
    ("maximum", np.maximum, ALL, None, False, None, ()),
    ("minimum", np.minimum, ALL, None, False, None, ()),
    ("remainder", np.remainder, NUMERIC, None, True, NUMERIC, (2, 1.5)),
    ("fmod", np.fmod, NUMERIC, None, True, NUMERIC, (2, -1.5)),
    ("floor_divide", np.floor_divide, NUMERIC, None, True, NUMERIC, (2, 1.5)),
    ("atan2", lambda a, b: np.arctan2(_as_float(a), b), ALL, None, False, FLOATS, ()),
    ("bitwise_and", np.bitwise_and, INTS + ("bool",), None, False, INTS + ("bool",), (3,)),
    ("bitwise_or", np.bitwise_or, INTS + ("bool",), None, False, INTS + ("bool",), (3,)),
    ("bitwise_xor", np.bitwise_xor, INTS + ("bool",), None, False, INTS + ("bool",), (3,)),
    ("nextafter", np.nextafter, FLOATS, None, False, FLOATS, ()),
    ("bitwise_left_shift", lambda a, b: _shift_ref(a, b, True), INTS, None, False, INTS, (3, 70)),
    ("bitwise_right_shift", lambda a, b: _shift_ref(a, b, False), INTS, None, False, INTS, (3, -1)),
)
_DOMAINS = {"pow": (0.1, 3.0)}

for _name, _fn, _dtypes, _rdom, _nz, _ip_dtypes, _scalars in _BINARY:

    def _gen(info, dtype, rng, inplace=False, _r=_rdom, _nz=_nz, _s=_scalars):
        return binary_samples(
            info, dtype, rng, rhs_domain=_r, nonzero_rhs=_nz, scalars=_s, inplace=inplace
        )

    _add(OpInfo(_name, _fn, _gen, _dtypes, _DOMAINS.get(_name, (-3.0, 3.0))))
    if _ip_dtypes is not None:
        _add(
            OpInfo(
                _name + "_",
                _fn,
                _inplace_samples(_gen),
                _ip_dtypes,
                _DOMAINS.get(_name, (-3.0, 3.0)),
                inplace=True,
            )
        )

# comparisons and logical ops: bool results
for _name, _fn in (
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
):

    def _gen(info, dtype, rng):
        # torch's logical ops take tensors only
        scalars = () if info.name.startswith("logical") else (1, 0.5)
        return binary_samples(info, dtype, rng, scalars=scalars)

    _add(OpInfo(_name, _fn, _gen, ALL))


def _rsub_samples(info, dtype, rng):
    return binary_samples(info, dtype, rng, scalars=(2, 1.5))


_add(OpInfo("rsub", lambda a, b, alpha=1: np.subtract(b, a), _rsub_samples, NUMERIC), method=None)

# ---- where, clamp, masked_fill, fills and copies


def _where_samples(info, dtype, rng):
    for sc, sx, sy in (
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (3,), ()),
        ((3, 1), (1, 4), (3, 4)),
        ((), (2,), (2,)),
        ((0, 2), (2,), (1, 2)),
    ):
        cond = make_array(sc, "bool", rng)
        x = make_array(sx, dtype, rng, info.domain)
        y = make_array(sy, dtype, rng, info.domain, layout="flipped" if sy else "c")
        yield SampleInput(cond, (x, y), desc=f"cond {describe(cond)}, {describe(x)}, {describe(y)}")
    cond = make_array((3, 4), "bool", rng, layout="T")
    x = make_array((3, 4), dtype, rng)
    yield SampleInput(cond, (x, 2), desc="tensor, scalar other")


_add(OpInfo("where", _where_ref, _where_samples, ALL), method=False)


def _clamp_samples(info, dtype, rng, inplace=False):
    for shape, layout in UNARY_SHAPES:
        x = make_array(shape, dtype, rng, info.domain, layout=layout)
        yield SampleInput(x, (-1, 2), desc=f"{describe(x)}, -1, 2")
    x = make_array((2, 3), dtype, rng)
    yield SampleInput(x, (None, 1), desc="max only")
    yield SampleInput(x, (0, None), desc="min only")
    if dtype in FLOATS or not inplace:
        yield SampleInput(make_array((2, 3), dtype, rng), (-0.5, 0.5), desc="float bounds")
    lo = make_array((3,), dtype, rng, (-3, 0))
    yield SampleInput(make_array((2, 3), dtype, rng), (lo, None), desc="tensor min")


_add(OpInfo("clamp", _clamp_ref, _clamp_samples, ALL))
_add(OpInfo("clamp_", _clamp_ref, _inplace_samples(_clamp_samples), NUMERIC, inplace=True))


def _masked_fill_samples(info, dtype, rng):
    for shape, mshape in (
        ((2, 3), (2, 3)),
        ((2, 3), (3,)),
        ((), ()),
        ((0, 3), (3,)),
        ((3, 4), (4,)),
    ):
        x = make_array(shape, dtype, rng, layout="T" if shape == (3, 4) else "c")
        mask = make_array(mshape, "bool", rng)
        yield SampleInput(
            x, (mask, 1 if dtype != "bool" else True), desc=f"{describe(x)}, mask {describe(mask)}"
        )


_add(OpInfo("masked_fill", _masked_fill_ref, _masked_fill_samples, ALL))
_add(OpInfo("masked_fill_", _masked_fill_ref, _masked_fill_samples, ALL, inplace=True))


def _fill_samples(info, dtype, rng):
    value = {"bool": True}.get(dtype, 2 if dtype in INTS else 1.5)
    for shape, layout in UNARY_SHAPES[:-1]:
        x = make_array(shape, dtype, rng, layout=layout)
        yield SampleInput(x, (value,), desc=describe(x))


_add(OpInfo("fill_", _fill_ref, _fill_samples, ALL, inplace=True), function=False)
_add(OpInfo("zero_", lambda x: np.zeros_like(x), unary_samples, ALL, inplace=True), function=False)


def _copy_samples(info, dtype, rng):
    for (sa, la), (sb, lb) in BINARY_SHAPES:
        if _broadcast_shape(sa, sb) != tuple(sa):
            continue
        a = make_array(sa, dtype, rng, layout=la)
        b = make_array(sb, dtype, rng, layout=lb)
        yield SampleInput(a, (b,), desc=f"{describe(a)} <- {describe(b)}")
    a = make_array((2, 3), dtype, rng)
    yield SampleInput(a, (make_array((2, 3), "float64", rng),), desc="from float64")


_add(OpInfo("copy_", _copy_ref, _copy_samples, ALL, inplace=True))


def _setitem_samples(info, dtype, rng):
    x = lambda: make_array((4, 5), dtype, rng)  # noqa: E731
    v = make_array((), dtype, rng).item()
    yield SampleInput(x(), (0, v), desc="[0] = scalar")
    yield SampleInput(x(), ((slice(1, 3), slice(None, None, 2)), v), desc="[1:3, ::2] = scalar")
    yield SampleInput(x(), ((Ellipsis, 1), make_array((4,), dtype, rng)), desc="[..., 1] = row")
    yield SampleInput(
        x(), (np.array([0, 2]), make_array((5,), dtype, rng)), desc="[int tensor] = row"
    )
    yield SampleInput(x(), (make_array((4, 5), "bool", rng), v), desc="[mask] = scalar")
    yield SampleInput(
        make_array((4, 5), dtype, rng, layout="T"),
        ((slice(None), 0), v),
        desc="transposed[:, 0] = scalar",
    )


_add(
    OpInfo(
        "setitem_",
        _setitem_ref,
        _setitem_samples,
        ALL,
        inplace=True,
        call=lambda gt, x, key, value: (x.__setitem__(key, value), x)[1],
        torch_call=lambda torch, x, key, value: (x.__setitem__(key, value), x)[1],
    ),
    function=False,
    method=False,
)


def _random_samples(info, dtype, rng):
    args = (-2.0, 3.0) if info.name == "uniform_" else (1.5, 2.0)
    for shape, layout in (((), "c"), ((0,), "c"), ((3, 4), "T"), ((40, 40), "c")):
        x = make_array(shape, dtype, rng, layout=layout)
        yield SampleInput(x, args, desc=describe(x))


_add(
    OpInfo(
        "uniform_",
        None,
        _random_samples,
        FLOATS,
        inplace=True,
        check=_check_uniform,
        torch_skip="random draws: compared with torch after the same seed in test_random_torch.py",
    )
)
_add(
    OpInfo(
        "normal_",
        None,
        _random_samples,
        FLOATS,
        inplace=True,
        check=_check_normal,
        torch_skip="random draws: compared with torch after the same seed in test_random_torch.py",
    )
)

# ---- reductions


def _sum_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng)
    yield SampleInput(make_array((70, 70), dtype, rng), desc="large, all")
    yield SampleInput(
        make_array((2, 3), dtype, rng), (), {"dtype": DT("float64")}, desc="dtype=float64"
    )


_FLOAT_RED_TOL = {"float32": 1e-4}
_add(OpInfo("sum", _reduce_ref(np.sum, int_dtype=np.int64), _sum_samples, ALL, rtol=_FLOAT_RED_TOL))
_add(OpInfo("mean", _reduce_ref(np.mean), reduction_samples, FLOATS, rtol=_FLOAT_RED_TOL))
_add(
    OpInfo(
        "prod",
        _reduce_ref(np.prod, int_dtype=np.int64),
        lambda info, dtype, rng: reduction_samples(info, dtype, rng, dims=(None, 0, -1)),
        ALL,
        (-1.5, 1.5),
        rtol=_FLOAT_RED_TOL,
    )
)
_add(OpInfo("amax", _reduce_ref(np.max), reduction_samples, ALL))
_add(OpInfo("amin", _reduce_ref(np.min), reduction_samples, ALL))


def _extreme_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, dims=(None, 0, -1), unique=dtype != "bool")


_add(OpInfo("max", _extreme_ref(np.argmax, np.max), _extreme_samples, ALL))
_add(OpInfo("min", _extreme_ref(np.argmin, np.min), _extreme_samples, ALL))
_add(OpInfo("argmax", _arg_ref(np.argmax), _extreme_samples, NUMERIC))
_add(OpInfo("argmin", _arg_ref(np.argmin), _extreme_samples, NUMERIC))


def _count_nonzero_ref(x, dim=None):
    if dim is not None and x.ndim == 0:
        return (x != 0).astype(np.int64)
    return np.asarray(np.count_nonzero(x, axis=_axes(dim, x.ndim)), dtype=np.int64)


def _count_nonzero_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, keepdim=False)


# the Tensor methods count_nonzero/isnan/isinf/isfinite are the Cython core's (issue 11:
# proposed to the lead); the function forms dispatch these ops
_add(OpInfo("count_nonzero", _count_nonzero_ref, _count_nonzero_samples, ALL), method=False)
for _name, _ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    _add(
        OpInfo(
            _name,
            (lambda fn: lambda x: fn(x) if x.dtype.kind == "f" else fn(x.astype(np.float64)))(_ref),
            unary_samples,
            ALL,
        ),
        method=False,
    )


def _var_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng, empty=False)
    x = make_array((3, 4), dtype, rng)
    yield SampleInput(x, (), {"dim": 1, "unbiased": False}, desc="unbiased=False")
    yield SampleInput(x, (), {"dim": 0, "correction": 2}, desc="correction=2")


_add(OpInfo("var", _var_ref(False), _var_samples, FLOATS, rtol=_FLOAT_RED_TOL))
_add(OpInfo("std", _var_ref(True), _var_samples, FLOATS, rtol=_FLOAT_RED_TOL))


def _norm_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng, dims=(None, 1, (0, 1)), empty=False)
    x = make_array((3, 4), dtype, rng)
    for p in (1, 3, math.inf, 0):
        yield SampleInput(x, (p,), {"dim": 1}, desc=f"p={p}")


_add(OpInfo("norm", _norm_ref, _norm_samples, FLOATS, rtol=_FLOAT_RED_TOL))


def _logsumexp_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, dims=(0, -1, (0, 1)), empty=False)


_add(OpInfo("logsumexp", _logsumexp_ref, _logsumexp_samples, ALL, rtol=_FLOAT_RED_TOL))


def _softmax_samples(info, dtype, rng):
    for shape, layout in (
        ((), "c"),
        ((5,), "c"),
        ((2, 3), "c"),
        ((3, 4), "T"),
        ((2, 3, 4), "sliced"),
        ((0, 3), "c"),
    ):
        for dim in (0, -1):
            x = make_array(shape, dtype, rng, (-5.0, 5.0), layout=layout)
            yield SampleInput(x, (dim,), desc=f"{describe(x)}, dim={dim}")


_add(OpInfo("softmax", _softmax_ref(False), _softmax_samples, FLOATS))
_add(OpInfo("log_softmax", _softmax_ref(True), _softmax_samples, FLOATS))
_add(OpInfo("cumsum", _cumsum_ref, _softmax_samples, ALL, rtol=_FLOAT_RED_TOL))


def _sort_samples(info, dtype, rng):
    for shape, layout in (
        ((), "c"),
        ((6,), "c"),
        ((3, 4), "T"),
        ((2, 3, 4), "sliced"),
        ((0, 3), "c"),
    ):
        for dim in (0, -1):
            for descending in (False, True):
                x = make_array(shape, dtype, rng, layout=layout, unique=dtype != "bool")
                yield SampleInput(
                    x, (dim, descending), desc=f"{describe(x)}, dim={dim}, descending={descending}"
                )


_add(OpInfo("sort", _sort_ref, _sort_samples, ALL))


def _topk_samples(info, dtype, rng):
    for shape, k, dim in (
        ((6,), 3, -1),
        ((3, 4), 2, 0),
        ((3, 4), 0, 1),
        ((2, 5), 5, 1),
        ((), 1, 0),
    ):
        for largest in (True, False):
            x = make_array(shape, dtype, rng, layout="T" if len(shape) == 2 else "c", unique=True)
            yield SampleInput(x, (k, dim, largest), desc=f"{describe(x)}, k={k}, dim={dim}")


_add(OpInfo("topk", _topk_ref, _topk_samples, NUMERIC))

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

# ---------------------------------------------------------------------------------------
# Ops that have a numpy-path twin check (Note [Small float arrays take C loops])

for _name in SMALL_PATH_UNARY + SMALL_PATH_BINARY + ("sum",):
    assert _name in OP_DB, _name

# ---------------------------------------------------------------------------------------
# Turning samples into calls (Note [Samples are numpy])


def to_gs(obj, gt):
    """Arrays become gradstack tensors sharing memory (``from_numpy``), DT gradstack dtypes."""
    if isinstance(obj, np.ndarray):
        return gt.from_numpy(obj)
    if isinstance(obj, DT):
        return getattr(gt, str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_gs(v, gt) for v in obj)
    if isinstance(obj, dict):
        return {k: to_gs(v, gt) for k, v in obj.items()}
    return obj


def to_torch(obj, torch):
    """Arrays become torch tensors over a contiguous copy (torch refuses negative strides)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj, copy=True, order="C"))
    if isinstance(obj, DT):
        return getattr(torch, str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch(v, torch) for v in obj)
    if isinstance(obj, dict):
        return {k: to_torch(v, torch) for k, v in obj.items()}
    return obj


def to_ref(obj):
    """Copies of the arrays for the numpy reference, floats upcast to float64."""
    if isinstance(obj, np.ndarray):
        return obj.astype(np.float64) if obj.dtype.kind == "f" else obj.copy()
    if isinstance(obj, DT):
        return np.dtype(str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_ref(v) for v in obj)
    if isinstance(obj, dict):
        return {k: to_ref(v) for k, v in obj.items()}
    return obj


# the nn ops of _impl_nn.py (losses, normalisation, activations): entries in op_db_nn.py
def _extend_with(name):
    """Add the entries of the helper module ``name`` (Note [Test helpers import by name] in
    the workspace's conftest.py) to this database."""
    import importlib
    import sys

    importlib.import_module(f"gradstack_tensor_tests_{name}").extend(sys.modules[__name__])


_extend_with("op_db_nn")
_extend_with("op_db_rnn")
