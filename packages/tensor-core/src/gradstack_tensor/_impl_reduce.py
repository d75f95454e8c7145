"""Kernels of the reductions (mean, prod, max/min, var/std, norm ...) and of softmax.

``sum`` lives in ``_tensor.pyx`` (it is on every training step's hot path).  Dims follow
torch: ``dim=None`` (or ``()`` for amax/amin) reduces everything, negative dims count from
the end, ``keepdim`` keeps reduced dims as size 1.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _norm_kernels, _order_kernels, _scan_kernels, _vector_norm_kernels, return_types
from . import dtypes as _dt
from ._dispatch import OPS
from ._impl_elementwise import SCALAR_TYPE, torch_dims, warn_at_caller
from ._index_kernels import gather as _gather_kernel
from ._kernels import fusable
from ._shapes import _normalize_dim, normalize_dims
from ._tensor import Tensor, _data, _wrap
from ._ufuncs import quiet

__all__: list[str] = []

# Note [float16 accumulates in float32]
# torch reduces float16 tensors in float32 (its accumulate type) and rounds the result
# once: the mean of 1000 x 100.0 is 100.0, not the inf of a float16 running sum past
# 65504.  The float16 kernels here do the same: compute on a float32 copy, cast at the
# end (``_acc`` / ``_result``).  numpy's float16 loops round after every step.


def _acc(x):
    """``x`` in the dtype its reduction accumulates in: float32 for float16."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _result(r, dtype):
    """A reduction's result (an array or a numpy scalar) as a 0-d-safe array of ``dtype``
    (a float32 result past float16's range rounds to inf silently, as torch's)."""
    r = np.asarray(r)
    return r if r.dtype == dtype else quiet(r.astype, dtype)


def _c_order(r):
    """A reduction's result in C order.

    Note [A reduction's result is contiguous]
    torch allocates every reduction's result (sum, mean, std, norm, max with dim...) as a
    new contiguous tensor; numpy keeps the input's memory order (``keepdims`` over a
    permuted input gives permuted strides), so ``x.permute(...).sum(d, keepdim=True)
    .view(-1)`` failed where torch's view works (fuzz seed 1 #18104).  A C-ordered result
    is returned as it is; only a reordered one is copied.
    """
    r = np.asarray(r)
    return r if r.flags.c_contiguous else r.copy(order="C")


def _axes(dim, ndim):
    if dim is None or (isinstance(dim, tuple) and len(dim) == 0):
        return None
    return torch_dims(dim, ndim)


def _float_input(t: Tensor, name: str, dtype=None):
    x = _data(t)
    if dtype is not None:
        return x.astype(_dt.as_dtype(dtype).numpy)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {t.dtype.name}. Cast with .float() first."
        )
    return x


def _check_nonempty(x, axes, name):
    """torch's errors for max/min/amax/amin/argmax/argmin over nothing."""
    if x.size == 0 and axes is None:
        if name in ("argmax", "argmin"):
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for a in axes or ():
        if x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


@OPS["mean"].set_kernel
def mean(input, dim=None, keepdim=False, dtype=None):
    if dtype is not None and not (
        _dt.as_dtype(dtype, "mean").is_floating_point or _dt.as_dtype(dtype).is_complex
    ):
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {SCALAR_TYPE[_dt.as_dtype(dtype).name]}"
        )
    x = _float_input(input, "mean", dtype)
    axes = _axes(dim, x.ndim)
    # Note [mean as sum / count]
    # np.mean spends ~20 us in Python-level argument handling on small arrays; the sum
    # ufunc reduction divided by the count is the same arithmetic (numpy's mean is
    # add.reduce then a true divide) at a tenth of the cost.  An empty slice gives nan
    # (0 / 0), as torch's, without numpy's "Mean of empty slice" warning.
    count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    total = np.add.reduce(_acc(x), axis=axes, keepdims=keepdim)
    return _wrap(_c_order(_result(quiet(np.true_divide, total, count), x.dtype)))


@OPS["prod"].set_kernel
def prod(input, dim=None, keepdim=False, dtype=None):
    x = _data(input)
    if dtype is not None:
        x = x.astype(_dt.as_dtype(dtype, "prod").numpy)
    elif x.dtype.kind in "biu":
        x = x.astype(np.int64)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be an int, not {type(dim).__name__}")
    axis = None if dim is None else normalize_dims(dim, x.ndim)
    if x.dtype == np.float16:
        r = _prod_float16(x, axis[0] if axis else None)
        if keepdim and axis is not None:
            r = np.expand_dims(r, axis)
        return _wrap(_c_order(r))
    r = quiet(np.prod, _acc(x), axis=axis, keepdims=keepdim and axis is not None)
    return _wrap(_c_order(_result(r, x.dtype)))


# Note [A float16 product rounds at every step]
# Unlike its sums (Note [float16 accumulates in float32]), torch's CPU prod multiplies
# float16 in float16: each product is rounded to half, so 300 * 300 overflows to inf and
# ``[300, 300, 0].prod()`` is NaN (a float32 product would give 0).  Along a dim that is
# not contiguous the product runs element after element; along a contiguous one of n >=
# 64 elements it runs in torch's AVX2 vector order (``vectorized_inner_reduction`` in
# ATen's Reduce.h): four accumulators of 16 lanes start from the first 64 elements and
# multiply each next block of 64 in, then combine as ``(a0 * a1) * (a2 * a3)``, then the
# 16 lanes left to right, then the n % 64 elements of the tail one by one.  numpy's
# float16 multiply computes in float32 and rounds once, as torch's half vectors do (the
# product of two halves is exact in float32).

_F16_LANES = 16  # Vectorized<Half>::size() on AVX2


def _prod_float16(x: np.ndarray, axis) -> np.ndarray:
    """torch's float16 product of ``x`` over ``axis`` (None: all elements), rounding to
    half at every step in torch's order (Note [A float16 product rounds at every step])."""
    if x.ndim == 0:
        return x.copy()
    if axis is None:
        rows = x.ravel(order="K").reshape(1, -1)  # memory order, as TensorIterator's
        contiguous = True
    else:
        contiguous = x.strides[axis] == x.itemsize or x.shape[axis] <= 1
        rows = np.moveaxis(x, axis, -1)
        out_shape = rows.shape[:-1]
        rows = rows.reshape(math.prod(out_shape), rows.shape[-1])
    n = rows.shape[1]
    block = 4 * _F16_LANES
    count = n // block if contiguous else 0
    with np.errstate(all="ignore"):
        out = np.ones(rows.shape[0], np.float16)
        if count:
            blocks = rows[:, : count * block].reshape(rows.shape[0], count, 4, _F16_LANES)
            acc = blocks[:, 0].copy()
            for i in range(1, count):
                acc = acc * blocks[:, i]
            lanes = (acc[:, 0] * acc[:, 1]) * (acc[:, 2] * acc[:, 3])
            out = lanes[:, 0]
            for j in range(1, _F16_LANES):
                out = out * lanes[:, j]
        for k in range(count * block, n):
            out = out * rows[:, k]
    return out.reshape(()) if axis is None else out.reshape(out_shape)


def _extreme(input, dim, keepdim, name, arg_fn, red_fn, result_type):
    x = _data(input)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim needs a dim")
        _check_nonempty(x, None, name)
        return _wrap(np.asarray(red_fn(x)))
    axis = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        return result_type(_wrap(x.copy()), _wrap(np.zeros((), np.int64)))
    _check_nonempty(x, (axis,), name)
    idx = arg_fn(x, axis=axis, keepdims=True)
    if x.dtype in _GATHER_DTYPES and x.flags.aligned:
        values = _gather_kernel(x, axis, idx)  # (one C pass; take_along_axis builds a key)
    else:
        values = np.take_along_axis(x, idx, axis=axis)
    if not keepdim:
        values, idx = values.squeeze(axis), idx.squeeze(axis)
    return result_type(_wrap(_c_order(values)), _wrap(_c_order(idx.astype(np.int64))))


# Note [numpy's argmax is torch's with NaN]
# torch's max/min/argmax/argmin along a dim propagate NaN: the first NaN of a row wins.
# numpy's argmax and argmin do the same (a NaN is taken as the extreme and the first one is
# returned, in its scalar and its SIMD loops alike), so no pass over the input looks for
# NaN first (that pass and its boolean array were 2/3 of max's forward at 10**4 elements);
# tests/test_selection_scatter_torch.py checks rows with NaN, inf and ties against torch.


def _nan_argmax(x, axis, keepdims):
    return np.argmax(x, axis=axis, keepdims=keepdims)  # Note [numpy's argmax is torch's ...]


def _nan_argmin(x, axis, keepdims):
    return np.argmin(x, axis=axis, keepdims=keepdims)  # Note [numpy's argmax is torch's ...]


_GATHER_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _no_complex(input, kernel):
    """torch's refusal of an ordering of complex numbers (numpy orders them
    lexicographically)."""
    x = _data(input)
    if x.dtype.kind == "c":
        words = "ComplexFloat" if x.dtype == np.complex64 else "ComplexDouble"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{words}'")


@OPS["max"].set_kernel
def max_(input, dim=None, keepdim=False):
    _no_complex(input, "max_all" if dim is None else "max_cpu")
    return _extreme(input, dim, keepdim, "max", _nan_argmax, np.max, return_types.max)


@OPS["min"].set_kernel
def min_(input, dim=None, keepdim=False):
    _no_complex(input, "min_all" if dim is None else "min_cpu")
    return _extreme(input, dim, keepdim, "min", _nan_argmin, np.min, return_types.min)


def _extreme_values(name, kernel, reduce):
    """The kernel of ``amax``/``amin`` (`kernel` is torch's name in its complex error)."""

    def extreme_values(input, dim=(), keepdim=False):
        _no_complex(input, kernel)
        x = _data(input)
        axes = _axes(dim, x.ndim)
        _check_nonempty(x, axes, name)
        return _wrap(_c_order(reduce(x, axis=axes, keepdims=keepdim)))

    extreme_values.__name__ = extreme_values.__qualname__ = name
    return OPS[name].set_kernel(extreme_values)


amax = _extreme_values("amax", "max_values_cpu", np.max)
amin = _extreme_values("amin", "min_values_cpu", np.min)


def _arg(input, dim, keepdim, name, fn):
    if _data(input).dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    x = _data(input)
    if x.dtype.kind == "b":
        raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Bool'; cast with .int() first")
    if dim is None:
        _check_nonempty(x, None, name)
        r = fn(x.reshape(-1), axis=0, keepdims=False)
        if keepdim:
            r = np.reshape(r, (1,) * x.ndim)
        return _wrap(np.asarray(r, dtype=np.int64))
    axis = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        return _wrap(np.zeros((), np.int64))
    _check_nonempty(x, (axis,), name)
    r = fn(x, axis=axis, keepdims=True)
    return _wrap(_c_order(np.asarray(r if keepdim else r.squeeze(axis), dtype=np.int64)))


@OPS["argmax"].set_kernel
def argmax(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, "argmax", _nan_argmax)


@OPS["argmin"].set_kernel
def argmin(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, "argmin", _nan_argmin)


def _moment(input, dim, correction, keepdim, name, fn):
    if correction is None:  # torch's default: Bessel's correction
        correction = 1
    x = _float_input(input, name)
    axes = _axes(dim, x.ndim)
    n = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    if n - correction <= 0:
        warn_at_caller(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the reduction factor (input numel divided by output numel)."
        )
    with warnings.catch_warnings():  # numpy's own RuntimeWarning says the same
        warnings.simplefilter("ignore", RuntimeWarning)
        r = quiet(fn, _acc(x), axis=axes, ddof=correction, keepdims=keepdim)
    # (a complex tensor's variance is real: the mean of |x - mean|^2, as numpy's)
    return _wrap(_c_order(_result(r, x.real.dtype)))


@OPS["var"].set_kernel
def var(input, dim=None, correction=1, keepdim=False):
    return _moment(input, dim, correction, keepdim, "var", np.var)


@OPS["std"].set_kernel
def std(input, dim=None, correction=1, keepdim=False):
    return _moment(input, dim, correction, keepdim, "std", np.std)


_ONE_PASS_NORM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@OPS["norm"].set_kernel
def norm(input, p="fro", dim=None, keepdim=False):
    x = _float_input(input, "norm")
    if p is None:  # (torch's default order)
        p = "fro"
    if p == "fro" and isinstance(dim, (tuple, list)) and len(dim) > 2:
        # torch's norm sends 'fro' over a list of dims to linalg.matrix_norm (fuzz seed 4
        # #10669); over one or two dims it is the vector 2-norm
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}"
        )
    axes = _axes(dim, x.ndim)
    if (
        axes is None
        and p in ("fro", 2, 2.0)
        and x.dtype in _ONE_PASS_NORM_DTYPES
        and x.flags.c_contiguous
        and x.flags.aligned
    ):  # Note [The 2-norm in one pass] (_vector_norm_kernels.pyx): clip_grad_norm_'s norm
        r = np.sqrt(np.float64(_vector_norm_kernels.sum_of_squares(x))).astype(x.dtype)
        return _wrap(np.full((1,) * x.ndim if keepdim else (), r, dtype=x.dtype))
    a = np.abs(_acc(x))
    if p in (float("inf"), "inf", float("-inf"), "-inf"):
        _check_max_norm_identity(x, axes, "inf" if p in (float("inf"), "inf") else "-inf")
    if p in ("fro", 2, 2.0):
        r = np.sqrt(quiet(lambda: np.sum(a * a, axis=axes, keepdims=keepdim)))
    elif p in (float("inf"), "inf"):
        r = np.max(a, axis=axes, keepdims=keepdim)
    elif p in (float("-inf"), "-inf"):
        r = np.min(a, axis=axes, keepdims=keepdim)
    elif p == 0:
        r = np.sum(a != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif isinstance(p, (int, float)):
        r = quiet(lambda: np.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p))
    elif isinstance(p, str):  # torch: a RuntimeError for an order it does not know
        raise RuntimeError(f"norm(): unsupported p={p!r}; use 'fro', a number, inf or -inf")
    else:  # torch: a TypeError for an order that is not a number
        raise TypeError(
            f"norm(): argument 'ord' (p) must be Number, not {type(p).__name__} (use 'fro', "
            "a number, inf or -inf)"
        )
    return _wrap(_c_order(_result(r, x.dtype)))


def _check_max_norm_identity(x, axes, name):
    """torch's error for an inf/-inf norm (a max/min, which has no identity) over nothing."""
    if axes is None:
        if x.size == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        return
    for a in axes:
        if x.shape[a] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on the dimension {a} "
                "because this dimension is empty and the operation does not have an identity"
            )


@OPS["logsumexp"].set_kernel
def logsumexp(input, dim, keepdim=False):
    x = (
        _float_input(input, "logsumexp")
        if _data(input).dtype.kind == "f"
        else _data(input).astype(_dt.get_default_dtype().numpy)
    )
    axes = torch_dims(dim, x.ndim)  # checked even for a 0-d tensor, which reduces nothing
    if not x.ndim:
        axes = None
    a = _acc(x)
    steps = x.dtype if a.dtype != x.dtype else None
    return _wrap(_c_order(_result(quiet(_logsumexp, a, axes, keepdim, steps), x.dtype)))


def _logsumexp(x, axes, keepdim, steps=None):
    """``log(sum(exp(x - m))) + m`` over ``axes``, each step rounded to ``steps`` if given.

    Note [logsumexp rounds each step as torch's]
    torch's logsumexp is composed of tensor ops in the input's dtype (``amax``, ``self -
    maxes``, ``exp``, ``sum``, ``log_``, ``add_``), so a float16 input is rounded to
    float16 after each of them (each computed in float32, the sum accumulated in float32).
    Rounding once at the end is more accurate and differs in the last bits: for [0.5, 0.5]
    along dim 0 after log_softmax, log(2) - 0.6934 is -2.1e-4 in float32 and 0.0 in float16
    steps, and atan2 of it is -pi against torch's pi (fuzz seed 40 #7179).
    """

    def step(v):
        return v if steps is None else v.astype(steps).astype(v.dtype)

    if x.size == 0:
        m = 0.0  # an empty slice sums to 0: log gives -inf, as torch (max has no identity)
    else:
        m = np.max(x, axis=axes, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
    total = step(np.sum(step(np.exp(step(x - m))), axis=axes, keepdims=True))
    r = step(step(np.log(total)) + m)
    return r if keepdim else (np.squeeze(r, axis=axes) if axes is not None else r.reshape(()))


def _softmax_input(input, dim, dtype, name):
    x = _data(input)
    if dtype is not None:
        x = x.astype(_dt.as_dtype(dtype, name).numpy)
    axis = _normalize_dim(dim, x.ndim)  # a 0-d tensor accepts 0 and -1 only, as torch
    if x.dtype.kind != "f" and x.size:  # torch checks nothing on an empty tensor
        kernel = "lastdim_kernel_impl" if axis >= x.ndim - 1 else "kernel_impl"
        own = _dt.from_numpy_dtype(x.dtype).name
        raise NotImplementedError(
            f"\"{name}_{kernel}\" not implemented for '{SCALAR_TYPE[own]}' "
            f"({own}: cast with .float() or pass a floating-point dtype=)"
        )
    return x, (axis if x.ndim else None)


def softmax_values(x, axis):
    """Numerically stable softmax of a numpy array along ``axis`` (None: a 0-d array)."""
    if axis is None:
        return np.exp(x - x) / np.exp(x - x)  # 1, or NaN for NaN and +-inf (torch)
    if x.size == 0:
        return x.copy()  # numpy's max has no identity to reduce an empty array with
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def _row_kernel_input(x):
    """``x`` as the row kernels of ``_norm_kernels`` take it (C-contiguous float32/float64,
    at least 1-d), or None for the numpy path (float16, 0-d).

    Note [softmax's C path]
    The kernel takes any dim of a C-contiguous array without a transposed copy (Note
    [float32 exp of the softmax kernels] in _norm_kernels.pyx); any other layout is
    copied to C order first, which costs less than numpy's five passes."""
    if x.ndim == 0 or x.dtype not in _ROW_KERNEL_DTYPES:
        return None
    return x if x.flags.c_contiguous and x.flags.aligned else np.ascontiguousarray(x)


_ROW_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@OPS["softmax"].set_kernel
def softmax(input, dim, dtype=None):
    x, axis = _softmax_input(input, dim, dtype, "softmax")
    c = _row_kernel_input(x)
    if c is not None:
        return _wrap(_norm_kernels.softmax(c, axis))
    return _wrap(_result(quiet(softmax_values, _acc(x), axis), x.dtype))


def _log_softmax_values(x, axis):
    if axis is None:
        return x - x  # 0, or NaN for NaN and +-inf (torch)
    if x.size == 0:
        return x.copy()
    z = x - np.max(x, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


@OPS["log_softmax"].set_kernel
def log_softmax(input, dim, dtype=None):
    x, axis = _softmax_input(input, dim, dtype, "log_softmax")
    c = _row_kernel_input(x)
    if c is not None:
        return _wrap(_norm_kernels.softmax(c, axis, log=True))
    return _wrap(_result(quiet(_log_softmax_values, _acc(x), axis), x.dtype))


@OPS["count_nonzero"].set_kernel
def count_nonzero(input, dim=None):
    """The number of non-zero elements (over ``dim``: an int or a tuple), as int64."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"count_nonzero(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    x = _data(input)
    axes = None if dim is None else torch_dims(dim, x.ndim)
    if axes == ():
        return _wrap((x != 0).astype(np.int64))  # a 0-d tensor over dim 0: itself, counted
    return _wrap(np.asarray(np.count_nonzero(x, axis=axes), dtype=np.int64))


@OPS["cumsum"].set_kernel
def cumsum(input, dim, dtype=None):
    x = _data(input)
    if dtype is not None:
        if _dt.as_dtype(dtype, "cumsum") is _dt.bool_:
            raise NotImplementedError("\"cumsum_out_cpu\" not implemented for 'Bool'")
        x = x.astype(_dt.as_dtype(dtype).numpy)
    elif x.dtype.kind in "biu":
        x = x.astype(np.int64)
    axis = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        return _wrap(x.copy())
    if fusable(x):  # one C pass (Note [cumsum accumulates in double] in _scan_kernels.pyx)
        return _wrap(_scan_kernels.cumsum(x, axis))
    # torch's CPU kernel runs the sum in acc_type (double for float32, float for float16)
    # and rounds each prefix once: numpy's float32 running sum differed in the last bits,
    # which ``.long()`` then turned into -1 vs 0 (fuzz seed 21 #10869)
    acc = x.astype(np.float64) if x.dtype == np.float32 else _acc(x)
    r = quiet(np.cumsum, acc, axis=axis)  # inf - inf: silent nan
    if r.dtype.kind in "fc":
        # torch's running sum starts from +0, so no prefix sum is -0 (fuzz seed 4 #350);
        # numpy's starts from the first element: x + 0 changes exactly the -0s
        np.add(r, 0.0, out=r)
    # torch's result is contiguous whatever the input's layout (numpy's keeps it): a
    # reshape of it is then a view, as in torch
    return _wrap(np.ascontiguousarray(_result(r, x.dtype)))


def _argsort(x, axis, descending):
    """Stable argsort; NaN counts as the largest value, as in torch.

    Note [Descending sort]
    Sorting ``-x`` ascending is wrong for bool and unsigned dtypes (no negation), for the
    most negative integer (it negates to itself) and for NaN (still last).  Sorting the
    reversed array ascending and reversing the result is right for all of them, and keeps
    equal elements in their original order.
    """
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    rev = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(rev, axis=axis)


@OPS["sort"].set_kernel
def sort(input, dim=-1, descending=False):
    x = _data(input)
    axis = _normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        return return_types.sort(_wrap(x.copy()), _wrap(np.zeros((), np.int64)))
    idx = _argsort(x, axis, descending)
    return return_types.sort(
        _wrap(np.take_along_axis(x, idx, axis=axis)), _wrap(idx.astype(np.int64))
    )


def _topk_by_kernel(x, k, axis, largest, sorted):  # noqa: A002 - torch's name
    """topk along ``axis`` by tensor-core's ``topk_rows``: torch's choice among ties and
    its order (Note [topk breaks ties as torch] in _order_kernels.pyx); the results are
    contiguous, as torch's."""
    rows = np.moveaxis(x, axis, -1)
    outer = rows.shape[:-1]
    values, indices = _order_kernels.topk_rows(
        rows.reshape(math.prod(outer), rows.shape[-1]), k, largest, sorted
    )
    values, indices = values.reshape(outer + (k,)), indices.reshape(outer + (k,))
    if axis != x.ndim - 1:
        values = np.ascontiguousarray(np.moveaxis(values, -1, axis))
        indices = np.ascontiguousarray(np.moveaxis(indices, -1, axis))
    return return_types.topk(_wrap(values), _wrap(indices))


@OPS["topk"].set_kernel
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    x = _data(input)
    if x.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU; cast with .int() first")
    if x.dtype.kind == "c":
        raise RuntimeError("topk does not support complex dtypes on CPU")
    axis = _normalize_dim(dim, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk(): selected index k={k} out of range for dimension of size {n}")
    if x.ndim == 0:  # as torch: the element itself, for k = 0 or 1
        return return_types.topk(_wrap(x.copy()), _wrap(np.zeros((), np.int64)))
    return _topk_by_kernel(x, k, axis, largest, sorted)
