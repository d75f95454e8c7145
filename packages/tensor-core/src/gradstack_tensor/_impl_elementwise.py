"""Kernels of the elementwise ops that are not plain ufuncs: where, clamp, fills, copies,
``__setitem__`` and the random in-place fills.

Each kernel takes the op's canonical positional arguments (see ``Op``) and returns a
Tensor; in-place kernels write into their first argument and bump its version.
"""

from __future__ import annotations

import re

import numpy as np

from . import dtypes as _dt
from . import random as _random
from ._tensor import OPS, Tensor, _data, _wrap, broadcast_error, can_cast_inplace

__all__: list[str] = []


def _array(x):
    return _data(x) if isinstance(x, Tensor) else x


def scalar_as(value, dtype, name):
    """A Python number (or one-element tensor) as a 0-d array of numpy ``dtype``.

    Integers wrap around as torch casts them (``-1`` as uint8 is 255); numpy 2 raises
    OverflowError instead.  Anything but a number raises TypeError.
    """
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"{name}(): expected a number or a Tensor, got {type(value).__name__}")
    dtype = np.dtype(dtype)
    if isinstance(value, int) and not isinstance(value, bool):
        if dtype.kind in "iub":
            if not -(2**63) <= value < 2**64:
                raise RuntimeError(
                    f"{name}(): value {value} cannot be converted to {dtype} without overflow"
                )
            return np.asarray(value, dtype=np.int64 if value < 2**63 else np.uint64).astype(dtype)
        try:
            value = float(value)
        except OverflowError:
            raise RuntimeError(
                f"{name}(): value {value} cannot be converted to {dtype} without overflow"
            ) from None
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)


def _check_writable(t: Tensor, name: str) -> None:
    if not _data(t).flags.writeable:
        raise RuntimeError(
            f"{name}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded view). Please clone() the tensor "
            "before performing the operation."
        )


@OPS["rsub"].set_kernel
def rsub(input, other, alpha=1):
    """``other - alpha * input`` (Python's reflected ``other - tensor``)."""
    scaled = OPS["mul"].run_kernel(input, alpha) if alpha != 1 else input
    return OPS["sub"].run_kernel(other, scaled, 1)


@OPS["where"].set_kernel
def where(condition, input, other):
    cond = _array(condition)
    if not isinstance(cond, np.ndarray) or cond.dtype != np.bool_:
        raise TypeError("where(): condition must be a bool tensor (e.g. x > 0)")
    operands = [(t.dtype, t.ndim) if isinstance(t, Tensor) else t for t in (input, other)]
    res = _dt.result_type(operands)
    x = np.asarray(_array(input), dtype=res.numpy)
    y = np.asarray(_array(other), dtype=res.numpy)
    try:
        return _wrap(np.where(cond, x, y))
    except ValueError:
        # name the pair that clashes: input and other first, then the condition
        sx, sy = np.shape(x), np.shape(y)
        err = broadcast_error(sx, sy) or broadcast_error(
            np.shape(cond), np.broadcast_shapes(sx, sy)
        )
        raise err from None


def _clamp_values(input, lo, hi, name):
    """``min(max(x, lo), hi)`` in torch's result dtype of the three operands (an int tensor
    clamped to float bounds is float32, not numpy's float64).

    Note [clamp keeps x on a tie]
    As torch's kernel: ``x`` is replaced only where it is beyond a bound (or the bound is
    NaN), so a tie keeps ``x`` itself: ``clamp(-0.0, min=0.0)`` is ``-0.0``, whose sign
    a later ``1 / x`` or ``sqrt``'s gradient sees.  numpy's maximum returns either zero.
    A NaN ``x`` stays NaN; ``lo > hi`` gives ``hi``."""
    x = _data(input)
    if lo is None and hi is None:
        raise RuntimeError(f"{name}: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (lo, hi) if b is not None]
    for b in bounds:
        if not isinstance(b, (Tensor, int, float, np.number, np.bool_)):
            raise TypeError(
                f"{name}(): min and max must be numbers or Tensors, not {type(b).__name__}"
            )
    res = _dt.result_type(
        [(input.dtype, input.ndim)]
        + [(b.dtype, b.ndim) if isinstance(b, Tensor) else b for b in bounds]
    ).numpy

    def bound(b):
        if isinstance(b, Tensor):
            return _data(b).astype(res, copy=False)
        return scalar_as(b, res, name)

    out = x.astype(res, copy=False)
    try:
        if lo is not None:
            b = bound(lo)
            out = np.where((out < b) | np.isnan(b), b, out)
        if hi is not None:
            b = bound(hi)
            out = np.where((out > b) | np.isnan(b), b, out)
    except ValueError:
        shapes = [np.shape(_array(b)) for b in bounds]
        raise broadcast_error(
            input.shape, np.broadcast_shapes(*shapes) if len(shapes) > 1 else shapes[0]
        ) from None
    return out


@OPS["clamp"].set_kernel
def clamp(input, min=None, max=None):  # noqa: A002 - torch's names
    return _wrap(np.asarray(_clamp_values(input, min, max, "clamp")))


@OPS["clamp_"].set_kernel
def clamp_(input, min=None, max=None):  # noqa: A002
    _check_writable(input, "clamp_")
    x = _data(input)
    r = np.asarray(_clamp_values(input, min, max, "clamp_"))
    if not can_cast_inplace(_dt.from_numpy_dtype(r.dtype), input.dtype):
        raise RuntimeError(
            f"clamp_: result type {_dt.from_numpy_dtype(r.dtype).name} can't be cast to the "
            f"desired output type {input.dtype.name}. Use the out-of-place clamp, or cast first."
        )
    if r.shape != x.shape:
        raise RuntimeError(
            f"clamp_: output with shape {list(x.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    np.copyto(x, r, casting="unsafe")
    input._bump_version("clamp_")
    return input


@OPS["zero_"].set_kernel
def zero_(input):
    _check_writable(input, "zero_")
    _data(input).fill(0)
    input._bump_version("zero_")
    return input


@OPS["fill_"].set_kernel
def fill_(input, value):
    _check_writable(input, "fill_")
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        value = value.item()
    x = _data(input)
    x.fill(scalar_as(value, x.dtype, "fill_"))
    input._bump_version("fill_")
    return input


@OPS["copy_"].set_kernel
def copy_(input, src):
    _check_writable(input, "copy_")
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be a Tensor, not {type(src).__name__}")
    dst = _data(input)
    s = _array(src)
    try:
        np.copyto(dst, s, casting="unsafe")
    except ValueError:
        raise RuntimeError(
            f"copy_: the source of shape {list(np.shape(s))} cannot be broadcast to the "
            f"destination's shape {list(dst.shape)}"
        ) from None
    input._bump_version("copy_")
    return input


def index_key(index):
    """Translate a torch index into a numpy one; also say whether it is basic (a view).

    Tensors in the index become numpy arrays; basic indexing (ints, slices, None,
    Ellipsis) gets a trailing ``...`` so that numpy returns a 0-d view, never a scalar.
    """
    items = index if isinstance(index, tuple) else (index,)
    key, basic = [], True
    for item in items:
        if isinstance(item, Tensor):
            arr = _data(item)
            if arr.ndim == 0 and arr.dtype.kind in "iu":
                key.append(int(arr))
                continue
            if arr.dtype.kind not in "iub":
                raise IndexError(
                    f"tensors used as indices must be long, int, byte or bool tensors, "
                    f"got {item.dtype}"
                )
            key.append(arr)
            basic = False
        elif isinstance(item, (list, np.ndarray)):
            key.append(np.asarray(item))
            basic = False
        elif isinstance(item, bool):
            key.append(item)
            basic = False
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)):
            if isinstance(item, slice) and item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            key.append(item)
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and long or bool tensors "
                f"are valid indices (got {type(item).__name__})"
            )
    if basic and not any(k is Ellipsis for k in key):
        key.append(Ellipsis)
    return tuple(key), basic


_NUMPY_INDEX_ERRORS = (
    # numpy's words -> torch's words
    (
        re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)"),
        "index {0} is out of bounds for dimension {1} with size {2}",
    ),
    (
        re.compile(
            r"too many indices for array: array is (\d+)-dimensional, but (\d+) were indexed"
        ),
        "too many indices for tensor of dimension {0} (got {1} indices)",
    ),
    (
        re.compile(
            r"boolean index did not match indexed array along (?:axis|dimension) (\d+); "
            r"size of (?:axis|dimension) is (\d+) but size of corresponding boolean "
            r"(?:axis|dimension) is (\d+)"
        ),
        "The shape of the mask at index {0} (size {2}) does not match the shape of the indexed "
        "tensor at index {0} (size {1})",
    ),
)


def describe_index_error(shape, err):
    """numpy's IndexError in torch's words, with the indexed tensor's shape."""
    msg = str(err)
    for pattern, words in _NUMPY_INDEX_ERRORS:
        m = pattern.search(msg)
        if m:
            msg = words.format(*m.groups())
            break
    return IndexError(f"{msg} (indexing a tensor of shape {list(shape)})")


@OPS["setitem_"].set_kernel
def setitem_(input, index, value):
    _check_writable(input, "__setitem__")
    key, _ = index_key(index)
    dst = _data(input)
    src = _array(value)
    if isinstance(src, (int, float, np.generic)):  # bool is an int
        src = scalar_as(src, dst.dtype, "__setitem__")
    try:
        dst[key] = src
    except IndexError as e:
        raise describe_index_error(dst.shape, e) from None
    except ValueError as e:
        raise RuntimeError(f"__setitem__: {e} (destination shape {list(dst.shape)})") from None
    input._bump_version("__setitem__")
    return input


def _mask(mask):
    m = _array(mask)
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
        raise TypeError("masked_fill only supports boolean masks (e.g. x > 0)")
    return m


@OPS["masked_fill"].set_kernel
def masked_fill(input, mask, value):
    x = _data(input)
    m = _mask(mask)
    v = scalar_as(value, x.dtype, "masked_fill")
    try:
        return _wrap(np.where(m, v, x))  # out of place, the two broadcast (as torch)
    except ValueError:
        raise broadcast_error(x.shape, m.shape) from None


def _check_mask_shape(m, x, name):
    """In place, the mask broadcasts to the tensor (never the tensor to the mask)."""
    try:
        np.broadcast_to(m, x.shape)
    except ValueError:
        raise RuntimeError(
            f"{name}: the mask of shape {list(m.shape)} cannot be broadcast to the tensor's "
            f"shape {list(x.shape)}"
        ) from None


@OPS["masked_fill_"].set_kernel
def masked_fill_(input, mask, value):
    _check_writable(input, "masked_fill_")
    x = _data(input)
    m = _mask(mask)
    _check_mask_shape(m, x, "masked_fill_")
    np.copyto(x, scalar_as(value, x.dtype, "masked_fill_"), where=np.broadcast_to(m, x.shape))
    input._bump_version("masked_fill_")
    return input


def _check_float(input, name, kernel):
    if not input.is_floating_point():
        raise RuntimeError(
            f"{name}: \"{kernel}\" not implemented for '{input.dtype.name}'; random fills need "
            "a floating-point tensor (use randint for integers)"
        )


def _real(v, name, what):
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, (int, float, np.number)) or isinstance(v, np.bool_):
        raise TypeError(f"{name}(): argument '{what}' must be a number, not {type(v).__name__}")
    return float(v)


@OPS["uniform_"].set_kernel
def uniform_(input, a=0.0, b=1.0, generator=None):
    _check_writable(input, "uniform_")
    _check_float(input, "uniform_", "check_uniform_bounds")
    a, b = _real(a, "uniform_", "from"), _real(b, "uniform_", "to")
    if not a <= b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    if not np.isfinite(b - a):
        raise RuntimeError(
            f"uniform_: the range [{a}, {b}) is out of bounds for {input.dtype.name}"
        )
    x = _data(input)
    gen = _random.numpy_generator(generator)
    x[...] = gen.uniform(a, b, size=x.shape).astype(x.dtype, copy=False)
    input._bump_version("uniform_")
    return input


@OPS["normal_"].set_kernel
def normal_(input, mean=0.0, std=1.0, generator=None):
    _check_writable(input, "normal_")
    _check_float(input, "normal_", "normal_kernel_cpu")
    mean, std = _real(mean, "normal_", "mean"), _real(std, "normal_", "std")
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    x = _data(input)
    gen = _random.numpy_generator(generator)
    x[...] = gen.normal(mean, std, size=x.shape).astype(x.dtype, copy=False)
    input._bump_version("normal_")
    return input
