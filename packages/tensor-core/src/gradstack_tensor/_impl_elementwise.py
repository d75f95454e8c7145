"""Kernels of the elementwise ops that are not plain ufuncs: where, clamp, fills, copies,
``__setitem__`` and the random in-place fills.

Each kernel takes the op's canonical positional arguments (see ``Op``) and returns a
Tensor; in-place kernels write into their first argument and bump its version.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import random as _random
from ._tensor import OPS, Tensor, _data, _wrap, broadcast_error

__all__: list[str] = []


def _array(x):
    return _data(x) if isinstance(x, Tensor) else x


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
        raise broadcast_error(np.shape(cond), np.broadcast_shapes(np.shape(x), np.shape(y))) from None


def _clamp_values(x, lo, hi, name):
    """``min(max(x, lo), hi)``; numpy's maximum/minimum propagate NaN, as torch does."""
    if lo is None and hi is None:
        raise RuntimeError(f"{name}: At least one of 'min' or 'max' must not be None")
    out = x
    if lo is not None:
        out = np.maximum(out, _array(lo))
    if hi is not None:
        out = np.minimum(out, _array(hi))
    return out


@OPS["clamp"].set_kernel
def clamp(input, min=None, max=None):  # noqa: A002 - torch's names
    return _wrap(_clamp_values(_data(input), min, max, "clamp"))


@OPS["clamp_"].set_kernel
def clamp_(input, min=None, max=None):  # noqa: A002
    _check_writable(input, "clamp_")
    x = _data(input)
    np.copyto(x, _clamp_values(x, min, max, "clamp_"), casting="unsafe")
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
    _data(input).fill(value)
    input._bump_version("fill_")
    return input


@OPS["copy_"].set_kernel
def copy_(input, src):
    _check_writable(input, "copy_")
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


def describe_index_error(shape, err):
    return IndexError(f"{err} (indexing a tensor of shape {list(shape)})")


@OPS["setitem_"].set_kernel
def setitem_(input, index, value):
    _check_writable(input, "__setitem__")
    key, _ = index_key(index)
    dst = _data(input)
    try:
        dst[key] = _array(value)
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
    v = value.item() if isinstance(value, Tensor) else value
    return _wrap(np.where(_mask(mask), np.asarray(v, dtype=x.dtype), x))


@OPS["masked_fill_"].set_kernel
def masked_fill_(input, mask, value):
    _check_writable(input, "masked_fill_")
    x = _data(input)
    v = value.item() if isinstance(value, Tensor) else value
    np.copyto(x, np.asarray(v, dtype=x.dtype), where=np.broadcast_to(_mask(mask), x.shape))
    input._bump_version("masked_fill_")
    return input


@OPS["uniform_"].set_kernel
def uniform_(input, a=0.0, b=1.0, generator=None):
    _check_writable(input, "uniform_")
    x = _data(input)
    gen = _random.numpy_generator(generator)
    x[...] = gen.uniform(a, b, size=x.shape).astype(x.dtype, copy=False)
    input._bump_version("uniform_")
    return input


@OPS["normal_"].set_kernel
def normal_(input, mean=0.0, std=1.0, generator=None):
    _check_writable(input, "normal_")
    x = _data(input)
    gen = _random.numpy_generator(generator)
    x[...] = gen.normal(mean, std, size=x.shape).astype(x.dtype, copy=False)
    input._bump_version("normal_")
    return input

