"""Kernels of the elementwise ops that are not plain ufuncs: where, clamp, fills, copies,
``__setitem__`` and the random in-place fills.

Each kernel takes the op's canonical positional arguments (see ``Op``) and returns a
Tensor; in-place kernels write into their first argument and bump its version.
"""

from __future__ import annotations

import math
import re
import sys
import warnings

import numpy as np

from . import _masked_fill_kernels
from . import dtypes as _dt
from ._dispatch import OPS
from ._loops import fill_zero
from ._promotion import can_cast_inplace
from ._shapes import _normalize_dim, broadcast_error, check_no_partial_overlap
from ._tensor import Tensor, _data, _wrap

__all__: list[str] = []


def _is_gradstack_file(filename):
    parts = filename.replace("\\", "/").split("/")[:-1]
    return any(
        p.startswith("gradstack_")
        or (p == "gradstack" and i and parts[i - 1] in ("src", "site-packages"))
        for i, p in enumerate(parts)
    )


def torch_dims(dim, ndim):
    """``dim`` (an int or a sequence) as a tuple of non-negative axes, checked as torch does:
    IndexError out of range (a 0-d tensor accepts 0 and -1, and gives ``()``), RuntimeError
    for a repeated dim, in torch's words."""
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    axes = []
    for d in dims:
        a = _normalize_dim(d, ndim)
        if a in axes:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        axes.append(a)
    return tuple(axes) if ndim else ()


# torch's C++ names of the scalar types, as its messages print them
CPP_TYPE = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
# torch's ScalarType names
SCALAR_TYPE = _dt.SCALAR_TYPE_NAMES


def warn_at_caller(message, category=UserWarning):
    """``warnings.warn`` pointing at the user's line (the first frame outside gradstack's
    packages), as torch's warnings point at the Python line that called the op."""
    frame, level = sys._getframe(1), 2
    while frame is not None and _is_gradstack_file(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _array(x):
    return _data(x) if isinstance(x, Tensor) else x


_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                 "int64": "int64_t"}  # fmt: skip


def _check_fits(value, dtype: np.dtype, float_checks: bool = True) -> None:
    """torch's ``Scalar::to<T>`` (``c10::checked_convert``) for a fill value.

    Note [A fill value must fit the dtype]
    fill_, setitem, masked_fill, full and full_like convert their number with torch's
    overflow check: a float must be finite and within the integer dtype's range before
    truncation (``uint8.fill_(-0.75)`` and ``fill_(255.5)`` raise, ``int8.fill_(-0.75)``
    gives 0); an int must be within the range, except that an unsigned dtype takes
    negatives down to ``-max``, which wrap (``uint8.fill_(-1)`` is 255).  Any number fits
    bool.  Arithmetic with a number (``x + 300``) wraps without a check, as torch's.  For
    float16 and float32, full, full_like, new_full and masked_fill refuse a finite number
    beyond the dtype's largest (``full((2,), 1e10, dtype=float16)``; 65519, which would
    round down to 65504, too); inf and nan fit; an int beyond a double's range raises
    OverflowError, as torch's argument parser.  setitem checks float32 only: torch's
    float16 ``t[0] = 1e10`` stores inf, its float32 ``t[0] = 1e300`` raises.  A fill of
    exactly one float16 element (``full((), 1e10, dtype=float16)``, ``new_full``,
    ``fill_``) takes torch's one-element path, which does not check: inf (fuzz seed 15
    #6779; :func:`fill_checks_floats`).
    """
    if isinstance(value, bool):
        return
    if dtype.kind == "f":
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise OverflowError("int too big to convert")
        if float_checks and dtype.itemsize < 8:
            big = float(np.finfo(dtype).max)
            try:
                over = math.isfinite(float(value)) and abs(float(value)) > big
            except OverflowError:  # an int too large even for a double, as torch's
                raise OverflowError("int too big to convert") from None
            if over:
                name = "c10::Half" if dtype.itemsize == 2 else "float"
                raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        return
    if dtype.kind not in "iu":
        return
    info = np.iinfo(dtype)
    if isinstance(value, float):
        fits = math.isfinite(value) and info.min <= value <= info.max
    else:
        low = -int(info.max) if info.min == 0 else int(info.min)
        fits = low <= value <= int(info.max)
    if not fits:
        raise RuntimeError(
            f"value cannot be converted to type {_C_TYPE_NAMES[dtype.name]} without overflow"
        )


def fill_checks_floats(dtype, numel: int) -> bool:
    """Whether filling ``numel`` elements of ``dtype`` with a number checks it against
    the float dtype's range (Note [A fill value must fit the dtype]): torch's fill of one
    float16 element does not."""
    return not (numel == 1 and np.dtype(dtype) == np.float16)


def scalar_as(value, dtype, name, *, checked=False, float_checks=True):
    """A Python number (or one-element tensor) as a 0-d array of numpy ``dtype``.

    Integers wrap around as torch casts them (``-1`` as uint8 is 255); numpy 2 raises
    OverflowError instead.  ``checked``: a fill value, refused as torch refuses it when it
    does not fit (Note [A fill value must fit the dtype]).  Anything but a number raises
    TypeError.
    """
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, complex):
        dtype = np.dtype(dtype)
        if dtype.kind != "c":
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
        return np.asarray(value).astype(dtype)
    if not isinstance(value, (bool, int, float)):
        raise TypeError(
            f"{name}(): argument 'fill_value' must be a number or a Tensor, not "
            f"{type(value).__name__}"
        )
    dtype = np.dtype(dtype)
    if checked:
        _check_fits(value, dtype, float_checks)
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


def repeats_elements(a: np.ndarray) -> bool:
    """Whether two elements of ``a`` are one memory location (torch's internal overlap:
    a stride-0 dim of size > 1, in a non-empty array)."""
    return a.size > 1 and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


class _ArrayInterface:
    """An ``__array_interface__`` holder that keeps the memory's owner alive (``base``)."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def writable_alias(r: np.ndarray, *, overlapping=False) -> np.ndarray:
    """``r``, writable when no two of its elements share memory and its storage is.

    Note [An expand that repeats nothing is writable]
    numpy marks every array made by ``broadcast_to`` read-only, and every view of one:
    gradstack's in-place checks read that flag as "elements share memory".  torch refuses
    only a real repetition (a stride-0 dim of size > 1): ``ones(3).expand(3).add_(1)`` and
    ``x.expand(3, 4)[:1].add_(1)`` are legal.  A view without repetition whose storage is
    writable is rebuilt as a writable view of that storage; ``overlapping=True`` rebuilds
    one with repetitions too (setitem's index_put, which torch lets write through them).
    """
    if r.flags.writeable:
        return r
    if not overlapping and repeats_elements(r):
        return r
    owner = r.base
    while owner is not None and not (isinstance(owner, np.ndarray) and owner.flags.writeable):
        owner = getattr(owner, "base", None)
    if owner is None:  # read-only storage (a read-only numpy array given to from_numpy)
        return r
    interface = {
        "shape": r.shape,
        "strides": r.strides,
        "typestr": r.dtype.str,
        "data": (r.__array_interface__["data"][0], False),
        "version": 3,
    }
    return np.asarray(_ArrayInterface(interface, owner))


def _check_writable(t: Tensor, name: str) -> None:
    if not _data(t).flags.writeable:
        raise RuntimeError(
            f"{name}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded view). Please clone() the tensor "
            "before performing the operation."
        )


def _scalar_operand(other, name):
    if isinstance(other, (bool, int, float)):
        return other
    raise TypeError(
        f"{name}(): argument 'other' must be a Python number, not {type(other).__name__} "
        "(multiply or divide by a tensor with mul/div)"
    )


@OPS["mul_scalar"].set_kernel
def mul_scalar(input, other):
    """``input * other`` for a Python number ``other``: torch's ``mul.Scalar``.

    Note [Scalar overloads]
    From Python, ``t * 0.5`` wraps the number in a 0-d tensor and runs ``mul.Tensor``
    (MulBackward0, whose ``_saved_other`` is a tensor); torch's C++ library code, such as
    cross_entropy's label smoothing, multiplies by a ``Scalar``: ``mul.Scalar``, recorded
    as MulBackward1 with the number saved.  Library code of gradstack that mirrors such C++
    calls ``mul_scalar``/``div_scalar``, so that its graphs read as torch's; the values are
    ``mul``'s and ``div``'s.
    """
    return OPS["mul"].run_kernel(input, _scalar_operand(other, "mul_scalar"))


@OPS["div_scalar"].set_kernel
def div_scalar(input, other):
    """``input / other`` for a Python number ``other``: torch's ``div.Scalar`` (Note
    [Scalar overloads])."""
    return OPS["div"].run_kernel(input, _scalar_operand(other, "div_scalar"))


@OPS["rsub"].set_kernel
def rsub(input, other, alpha=1):
    """``other - alpha * input`` (Python's reflected ``other - tensor``)."""
    scaled = OPS["mul"].run_kernel(input, alpha) if alpha != 1 else input
    return OPS["sub"].run_kernel(other, scaled, 1)


@OPS["where"].set_kernel
def where(condition, input, other):
    if not isinstance(condition, Tensor):
        raise TypeError(
            f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}"
        )
    cond = _data(condition)
    if cond.dtype == np.uint8:
        warn_at_caller(
            "where received a uint8 condition tensor. This behavior is deprecated and will be "
            "removed in a future version of PyTorch. Use a boolean condition instead."
        )
        cond = cond != 0
    elif cond.dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{SCALAR_TYPE[condition.dtype.name]}"
        )
    operands = [(t.dtype, t.ndim) if isinstance(t, Tensor) else t for t in (input, other)]
    res = _dt.result_type(operands)
    for t in (input, other):
        if not isinstance(t, Tensor):  # torch converts a number to the result's dtype with
            _check_fits(t, res.numpy, float_checks=False)  # its overflow check (seed 29 #1628)
    x, y = (
        _data(t).astype(res.numpy, copy=False)
        if isinstance(t, Tensor)
        else scalar_as(t, res.numpy, "where")  # wraps as torch's cast (-1 as uint8 is 255)
        for t in (input, other)
    )
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
    numbers = [b for b in bounds if not isinstance(b, Tensor)]
    if len(numbers) == len(bounds) and out.dtype.kind == "f" and out.size:
        values = [scalar_as(b, res, name) for b in bounds]
        if not any(np.isnan(v) for v in values) and (len(values) == 1 or values[0] <= values[1]):
            # Note [clamp by numbers in one pass]
            # np.clip in one pass (its NaN stays NaN), where the compares, ors and wheres
            # above take six; its ties at a zero bound may give the bound's zero, so the
            # zeros of x (exactly the ties then, since lo <= hi) are put back
            low = values[0] if lo is not None else None
            high = values[-1] if hi is not None else None
            r = np.asarray(np.clip(out, low, high))  # (a 0-d x gives a numpy scalar)
            if any(v == 0 for v in values):
                np.copyto(r, out, where=out == 0)
            return r
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
    if isinstance(input, Tensor) and _data(input).dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
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
    fill_zero(_fill_target(input, "zero_"))  # Note [Zeroing a contiguous array is a memset]
    input._bump_version("zero_")
    return input


def _fill_target(t, name):
    """The array ``fill_``/``zero_`` write: torch fills an expanded view (every element that
    repeats gets the same value), which other in-place ops refuse.

    Note [Filling an expanded view]
    gradstack's expanded views are read-only numpy views (stride 0 along the expanded dims),
    which is how the other in-place ops detect them.  A fill writes one value everywhere, so
    a writable alias of the same memory is safe here; an array that is read-only for another
    reason (a read-only array given to ``from_numpy``) stays refused.
    """
    x = _data(t)
    if not x.flags.writeable and 0 in x.strides:
        w = x.view()
        try:
            w.flags.writeable = True
        except ValueError:
            pass
        else:
            return w
    _check_writable(t, name)
    return x


@OPS["fill_"].set_kernel
def fill_(input, value):
    # torch's fill_ casts a tensor value and checks only a number (Note [A fill value must
    # fit the dtype]): ``uint8.fill_(tensor(-2.5))`` is 254, ``uint8.fill_(-2.5)`` raises
    checked = not isinstance(value, Tensor)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        # a tensor value is copied in as an operand: torch's internal-overlap check of the
        # target applies (an expanded view raises), where a number fills it (fuzz seed 6
        # #19421)
        _check_writable(input, "fill_")
        value = value.item()
    target = _fill_target(input, "fill_")
    floats = fill_checks_floats(target.dtype, target.size)
    target.fill(scalar_as(value, target.dtype, "fill_", checked=checked, float_checks=floats))
    input._bump_version("fill_")
    return input


@OPS["copy_"].set_kernel
def copy_(input, src):
    if isinstance(src, Tensor) and _same_data(_data(input), _data(src)):
        # torch's copy_ returns early when both describe the same elements (even of an
        # expanded view, ``v[1:].copy_(v[:-1])`` with ``v`` an expanded 0-d tensor)
        input._bump_version("copy_")
        return input
    _check_writable(input, "copy_")
    if not isinstance(src, Tensor):
        raise TypeError(  # (torch's parser names it 'other')
            f"copy_(): argument 'other' (src) must be a Tensor, not {type(src).__name__}"
        )
    dst = _data(input)
    s = _array(src)
    _check_broadcasts_to(np.shape(s), dst.shape)
    check_no_partial_overlap(dst, s)
    np.copyto(dst, s, casting="unsafe")
    input._bump_version("copy_")
    return input


def _same_data(a, b):
    return (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.strides == b.strides
        and a.shape == b.shape
        and a.dtype == b.dtype
    )


def _check_broadcasts_to(src_shape, dst_shape):
    """torch's rule for an operand written into ``dst_shape`` (copy_, in-place ops): it
    must broadcast *to* that shape; numpy would also drop its leading size-1 dims."""
    try:
        b = np.broadcast_shapes(tuple(src_shape), tuple(dst_shape))
    except ValueError:
        raise broadcast_error(tuple(dst_shape), tuple(src_shape)) from None
    if b != tuple(dst_shape):
        raise RuntimeError(
            f"output with shape {list(dst_shape)} doesn't match the broadcast shape {list(b)}"
        )


def index_key(index, shape=None):
    """Translate a torch index into a numpy one; also say whether it is basic (a view).

    Tensors in the index become numpy arrays; basic indexing (ints, slices, None,
    Ellipsis) gets a trailing ``...`` so that numpy returns a 0-d view, never a scalar.
    Given the indexed tensor's ``shape``, an advanced index that mixes in ints or bools
    becomes an explicit grid of index arrays (Note [torch selects ints first]).

    Note [torch selects ints first]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    numpy counts an int as an advanced index: in ``x[0, :, [1, 1]]`` the two advanced
    indices are separated by a slice, so numpy puts their dims first (shape [2, 4] for a
    (3, 4, 5) tensor).  torch applies ints as ``select`` before the advanced indexing, so
    only ``[1, 1]`` is advanced and its dim stays in place ([4, 2]).  A Python bool is an
    unsqueeze plus an index ``[0]`` (True) or ``[]`` (False) on the new dim.  For those
    keys :func:`_grid_key` spells torch's result as one index array per input dim,
    broadcast to the result's shape: a single numpy key, which getitem, setitem and their
    backward (``np.add.at``) all read the same way.
    """
    if shape is not None and isinstance(index, tuple) and sum(i is Ellipsis for i in index) > 1:
        index = _one_ellipsis_at_most(index, tuple(shape))
    items = index if isinstance(index, tuple) else (index,)
    key, basic, mixed = [], True, False
    bad_step = False
    text = None  # a str or bytes item, raised after the count of dims (torch's order)
    for item in items:
        if isinstance(item, Tensor):
            arr = _data(item)
            if arr.ndim == 0 and arr.dtype.kind in "iu" and arr.dtype != np.uint8:
                key.append(int(arr))  # torch selects with a 0-d integer tensor
                mixed = True
                continue
            if arr.dtype.kind not in "iub":
                raise IndexError(
                    f"tensors used as indices must be long, int, byte or bool tensors, "
                    f"got {item.dtype}"
                )
            if arr.dtype == np.uint8:  # torch reads a byte tensor as a mask
                warn_at_caller(
                    "indexing with dtype gradstack.uint8 is now deprecated, please use a dtype "
                    "gradstack.bool instead."
                )
                arr = arr != 0
            if arr.ndim == 0:  # a 0-d bool tensor is a Python bool (torch)
                key.append(bool(arr))
                mixed = True
            else:
                key.append(arr)
            basic = False
        elif isinstance(item, (list, range, np.ndarray)):  # a range is a sequence, as in torch
            arr = np.asarray(item)
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)  # torch reads [] as an empty long index
            if arr.dtype.kind in "US":
                # torch fails to make an index tensor of str (a TypeError, as for a str item)
                raise TypeError(
                    "new(): invalid data type 'str' (an index is an integer, a slice, ..., "
                    "None, or a long or bool tensor)"
                )
            if arr.dtype.kind not in "iub":
                raise IndexError(
                    f"tensors used as indices must be long, int, byte or bool tensors, "
                    f"got an index of {arr.dtype}"
                )
            key.append(arr)
            basic = False
        elif isinstance(item, (bool, np.bool_)):
            key.append(bool(item))
            basic = False
            mixed = True
        elif item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)):
            if isinstance(item, slice) and item.step is not None and item.step <= 0:
                bad_step = True  # raised below, after the count of dims (torch's order)
            if isinstance(item, (int, np.integer)):
                key.append(int(item))
                mixed = True
            else:
                key.append(item)
        elif isinstance(item, (str, bytes)):
            # torch reads a str as a sequence and fails to make an index tensor of it
            text = item if text is None else text
            key.append(0)
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and long or bool tensors "
                f"are valid indices (got {type(item).__name__})"
            )
    if text is not None:
        if shape is not None and isinstance(index, tuple):
            _check_dim_count(key, shape)
        raise TypeError(
            f"new(): invalid data type '{type(text).__name__}' (an index is an integer, a "
            "slice, ..., None, or a long or bool tensor)"
        )
    if bad_step:
        # torch reads a lone slice's step first (``x0d[::-1]``: ValueError), and a tuple's
        # count of dims first (``x0d[::-1,]``: IndexError)
        if shape is not None and isinstance(index, tuple):
            _check_dim_count(key, shape)
            _check_ints_before_bad_step(key, shape)
        raise ValueError("step must be greater than zero")
    if basic:
        if not any(k is Ellipsis for k in key):
            key.append(Ellipsis)
        return tuple(key), True
    if shape is not None and len(shape) > 0:
        if mixed:
            try:
                return _grid_key(key, tuple(shape)), False
            except _OutOfBounds:
                # numpy raises it on use, where setitem raises it: after the value's dtype
                # and shape checks (Note [setitem's checks, in torch's order]; fuzz seed 7
                # #899)
                return _grid_key(key, tuple(shape), check_bounds=False), False
        if _may_be_out_of_bounds(key, shape):
            try:  # an empty result: no bound is checked (Note [Empty results check no index])
                return _grid_key(key, tuple(shape)), False
            except _OutOfBounds:
                pass  # numpy raises it, where setitem raises it: after the value's checks
        if any(k is Ellipsis for k in key) and _named_dims(key) == len(shape):
            # an Ellipsis that stands for no dim separates nothing: ``x[:, [0], ..., [0]]``
            # of a 3-d x keeps its advanced block in place in torch, where numpy counts the
            # indices as separated and moves the block first (fuzz seed 8 #8077)
            key = [k for k in key if k is not Ellipsis]
    return tuple(key), False


def _one_ellipsis_at_most(index, shape):
    """An index with several Ellipses, as torch applies it, spelled without them.

    Note [Several Ellipses in an index]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    numpy refuses a second ``...``; torch 2.13 takes any number.  It applies the index
    item by item at a position ``dim`` in the result so far: an int selects there (the
    dim goes), a slice slices there and moves on, None inserts a dim and moves on, and
    every ``...`` moves on by the tensor's dims minus the dims the index names.  So
    ``x[..., 0, ...]`` of a 3-d x is ``x[..., 0]``, ``x[0, ..., 1, ...]`` is ``x[0, ..., 1]``
    and ``x[..., ...]`` is ``x``; an item past the last dim raises an IndexError (torch's
    does too).  Only ints, slices, None and ``...`` are taken with several Ellipses: with
    a tensor or list index there too the index raises an IndexError saying so.
    """
    for item in index:
        if not (
            item is None
            or item is Ellipsis
            or isinstance(item, slice)
            or (isinstance(item, (int, np.integer)) and not isinstance(item, bool))
        ):
            raise IndexError(
                "an index with more than one ellipsis ('...') may hold only integers, "
                f"slices and None here (got {type(item).__name__})"
            )
    ndim = len(shape)
    named = sum(1 for item in index if item is not None and item is not Ellipsis)
    layout = [("dim", d) for d in range(ndim)]  # the result's dims so far
    chosen = {}  # input dim -> its int or slice
    position = 0
    for item in index:
        if item is Ellipsis:
            position += ndim - named
        elif item is None:
            layout.insert(position, ("new", None))
            position += 1
        else:
            if position >= len(layout) or layout[position][0] == "new":
                raise _index_error(
                    f"too many indices for tensor of dimension {ndim} (an index with more "
                    "than one ellipsis ('...') names a dim past the last one)",
                    shape,
                )
            chosen[layout[position][1]] = item
            if isinstance(item, slice):
                position += 1
            else:
                del layout[position]
    key, done = [], 0
    for kind, d in layout:
        if kind == "new":
            key.append(None)
            continue
        for skipped in range(done, d):  # the dims selected away before this one
            key.append(chosen[skipped])
        key.append(chosen.get(d, slice(None)))
        done = d + 1
    key += [chosen[d] for d in range(done, ndim)]
    return tuple(key)


def _named_dims(key):
    """How many of the tensor's dims ``key`` names: an int, a slice, an integer index one;
    a mask its own dims; None, ``...`` and a bool none."""
    return sum(
        0
        if (k is None or k is Ellipsis or isinstance(k, bool))
        else (k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1)
        for k in key
    )


def _check_ints_before_bad_step(key, shape):
    """torch applies an index item by item: an int out of bounds before the slice with a
    bad step raises its IndexError first (``x[3, ::-1]`` of one row; fuzz seed 30 #14936)."""
    dim = 0
    for k in key:
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            return
        if k is Ellipsis:
            return  # (the dims after it count from the end; torch's order is kept from here)
        if k is None:
            continue
        if isinstance(k, int) and not isinstance(k, bool) and dim < len(shape):
            n = shape[dim]
            if not -n <= k < n:
                raise _index_error(
                    f"index {k} is out of bounds for dimension {dim} with size {n}", shape
                )
        dim += 1


def _check_dim_count(key, shape):
    """torch's first check of an index: it names no more dims than the tensor has."""
    named = _named_dims(key)
    if named > len(shape):
        raise _index_error(
            f"too many indices for tensor of dimension {len(shape)} (got {named})", shape
        )


def _may_be_out_of_bounds(key, shape):
    """Whether an index array of ``key`` may hold an index outside its dim (a cheap,
    conservative test): :func:`_grid_key` then checks it, raising only when the result
    has elements (Note [Empty results check no index])."""
    low = min(shape)
    for k in key:
        if isinstance(k, np.ndarray) and k.dtype != np.bool_ and k.size:
            if low == 0 or k.max() >= low or k.min() < -low:
                return True
    return False


class _OutOfBounds(IndexError):
    """An index outside its dim, in a result with elements (see :func:`_grid_key`)."""


def _index_error(text, shape):
    return IndexError(f"{text} (indexing a tensor of shape {list(shape)})")


def _grid_key(items, shape, check_bounds=True):
    """torch's advanced indexing of ``shape`` by ``items`` as one index array per dim
    (Note [torch selects ints first]); ``items`` come from :func:`index_key`.  Without
    ``check_bounds`` an index out of range stays in the key, for numpy to refuse."""
    consumed = sum(
        0 if (k is None or k is Ellipsis or isinstance(k, bool)) else (k.ndim if _is_mask(k) else 1)
        for k in items
    )
    if consumed > len(shape):
        raise _index_error(
            f"too many indices for tensor of dimension {len(shape)} (got {consumed})", shape
        )
    # walk the index: each input dim gets an int, a slice's range (a basic output dim) or
    # an advanced array; None and bools add output dims of size 1 with no input dim
    per_dim = []  # per input dim: ("int", i) | ("basic", out_slot, values) | ("adv", array)
    slots = []  # output dims in order: "basic" or "adv" (an advanced index's position)
    adv_arrays = []
    out_of_bounds = None  # Note [Empty results check no index]
    size_zero_indexed = False
    dim = 0
    for k in items:
        if k is Ellipsis:
            for _ in range(len(shape) - consumed):
                per_dim.append(("basic", len(slots), np.arange(shape[dim], dtype=np.intp)))
                slots.append("basic")
                dim += 1
            consumed = len(shape)  # a second Ellipsis expands to nothing (numpy refuses it)
        elif k is None:
            slots.append("basic")
        elif isinstance(k, bool):
            adv_arrays.append(np.zeros(1 if k else 0, dtype=np.intp))
            slots.append("adv")
        elif isinstance(k, int):
            n = shape[dim]
            if not -n <= k < n:
                raise _index_error(
                    f"index {k} is out of bounds for dimension {dim} with size {n}", shape
                )
            per_dim.append(("int", k % n))
            dim += 1
        elif isinstance(k, slice):
            per_dim.append(("basic", len(slots), np.arange(*k.indices(shape[dim]), dtype=np.intp)))
            slots.append("basic")
            dim += 1
        elif _is_mask(k):
            want = shape[dim : dim + k.ndim]
            if k.shape != want:
                bad = next(i for i in range(k.ndim) if k.shape[i] != want[i])
                raise _index_error(
                    f"The shape of the mask {list(k.shape)} at index {bad} does not match the "
                    f"shape of the indexed tensor {list(want)} at index {bad}",
                    shape,
                )
            for arr in np.nonzero(k):
                per_dim.append(("adv", arr))
                adv_arrays.append(arr)
                slots.append("adv")
                dim += 1
        else:
            n = shape[dim]
            if k.size and n == 0:
                size_zero_indexed = True
            if k.size and (k.min() < -n or k.max() >= n) and out_of_bounds is None:
                bad = int(k.max() if k.max() >= n else k.min())
                out_of_bounds = _OutOfBounds(
                    f"index {bad} is out of bounds for dimension {dim} with size {n} "
                    f"(indexing a tensor of shape {list(shape)})"
                )
            per_dim.append(("adv", k))
            adv_arrays.append(k)
            slots.append("adv")
            dim += 1
    while dim < len(shape):  # trailing dims: whole slices
        per_dim.append(("basic", len(slots), np.arange(shape[dim], dtype=np.intp)))
        slots.append("basic")
        dim += 1
    try:
        adv_shape = np.broadcast_shapes(*(a.shape for a in adv_arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in adv_arrays)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        ) from None
    if size_zero_indexed and int(np.prod(adv_shape)) != 0:
        # (torch checks this before the kernel, whatever the other dims)
        raise _index_error("index is out of bounds for dimension with size 0", shape)
    if out_of_bounds is not None and check_bounds:
        # Note [Empty results check no index]
        # torch's index kernel checks each index it reads: a result without elements
        # (``x[:0, [5]]``, ``x[0, None, [0], []]``) reads none and raises nothing.  The
        # grid keys below broadcast to an empty grid then, which numpy checks no more.
        # Only an index into a dim of size 0 is refused first, once the indices are
        # broadcast (``x[[0, 0], :0]`` with ``x`` of shape (0, 1)).
        sizes = [e[2].size for e in per_dim if e[0] == "basic"]
        if int(np.prod(adv_shape)) * int(np.prod(sizes)) != 0:
            raise out_of_bounds
    first = slots.index("adv")
    last = len(slots) - 1 - slots[::-1].index("adv")
    adjacent = all(s == "adv" for s in slots[first : last + 1])
    # output layout: the advanced block where it stands (adjacent) or first (separated)
    basic_slots = [i for i, s in enumerate(slots) if s == "basic"]
    if adjacent:  # slots before ``first`` are all basic: they keep their places
        shift = len(adv_shape) - (last - first + 1)
        position = {i: i if i < first else i + shift for i in basic_slots}
        adv_at = first
    else:
        position = {i: len(adv_shape) + j for j, i in enumerate(basic_slots)}
        adv_at = 0
    ndim_out = len(basic_slots) + len(adv_shape)
    key = []
    for entry in per_dim:
        if entry[0] == "int":
            key.append(np.intp(entry[1]))
        elif entry[0] == "basic":
            where = [1] * ndim_out
            where[position[entry[1]]] = entry[2].size
            key.append(entry[2].reshape(where))
        else:
            arr = np.broadcast_to(entry[1].astype(np.intp, copy=False), adv_shape)
            key.append(
                arr.reshape((1,) * adv_at + adv_shape + (1,) * (ndim_out - adv_at - len(adv_shape)))
            )
    if not any(e[0] == "adv" for e in per_dim):
        # only bools are advanced: no array carries their dims, so the first one does
        full = [1] * ndim_out
        full[adv_at : adv_at + len(adv_shape)] = adv_shape
        key[0] = np.broadcast_to(key[0], np.broadcast_shapes(np.shape(key[0]), tuple(full)))
    return tuple(key)


def _is_mask(k):
    return isinstance(k, np.ndarray) and k.dtype == np.bool_


_BROADCAST_FAILURE = re.compile(
    r"shape mismatch: indexing arrays could not be broadcast together with shapes "
    r"((?:\([\d, ]*\) ?)+)"
)


def _torch_shapes(numpy_shapes):
    """numpy's ``(2,) (3,)`` as torch prints them: ``[2], [3]``."""
    shapes = re.findall(r"\(([\d, ]*)\)", numpy_shapes)
    return ", ".join(str([int(n) for n in sh.split(",") if n.strip()]) for sh in shapes)


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
    m = _BROADCAST_FAILURE.search(msg)
    if m:
        return IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            f"{_torch_shapes(m.group(1))}"
        )
    for pattern, words in _NUMPY_INDEX_ERRORS:
        m = pattern.search(msg)
        if m:
            msg = words.format(*m.groups())
            break
    return IndexError(f"{msg} (indexing a tensor of shape {list(shape)})")


@OPS["setitem_"].set_kernel
# Note [An integer tensor written from a value that requires grad]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch 2.13 records ``x[0] = v`` (x an int64 matrix, v a 0-d float tensor that requires
# grad) as a fill through a view: x then requires grad with a CopySlices grad_fn, though
# an integer tensor cannot have a gradient, and a backward through it fails torch's
# internal assert (``isDifferentiableType(grad.scalar_type())``).  A slice, an advanced
# index or a value of more than one element leaves x as it was, in torch too.  Here an
# integer tensor never joins the graph: x keeps ``requires_grad=False`` in every form (a
# difference on purpose; the workspace's tests/test_torch_refusals.py checks it).


def setitem_(input, index, value):
    """``input[index] = value``, with torch's checks in torch's order.

    Note [setitem's checks, in torch's order]
    torch converts the value first (a number must fit the dtype, anything else must be a
    tensor).  For an advanced index it then checks that the index tensors broadcast together
    (IndexError), then that the value broadcasts to the indexed part, then that the value's
    dtype is the tensor's, and the indices' range last, in the kernel.  A single bool or
    uint8 mask with a one-element value is a ``masked_fill_`` instead (any value dtype; a
    uint8 mask is refused there).  A basic index (ints, slices, None, Ellipsis) is a copy
    into a view, which casts.
    """
    dst = _data(input)
    # the value first, as torch's valueToTensor, before the index is looked at (uint8
    # ``t[[0]] = -0.75`` of an empty t: the overflow, not the index; fuzz seed 38 #5823)
    src = _array(value)
    if isinstance(src, (int, float, np.generic)):  # bool is an int
        # (torch checks a float stored into float32, not into float16: Note [A fill ...])
        src = scalar_as(
            src, dst.dtype, "__setitem__", checked=True, float_checks=dst.dtype == np.float32
        )
    elif not isinstance(src, np.ndarray):
        raise TypeError(
            f"can't assign a {type(value).__name__} to a {input.dtype} tensor; assign a number "
            "or a Tensor"
        )
    key, basic = index_key(index, dst.shape)
    index_error = None
    try:
        target = dst[key]
        shape = target.shape
    except IndexError as e:
        if basic or _index_error_comes_first(str(e)):
            raise describe_index_error(dst.shape, e) from None
        index_error = e  # out of range: torch checks the value's shape and dtype first
        shape = _indexed_shape(dst.shape, key)
    if not basic:
        mask = _masked_fill_mask(index, src)
        if mask is not None and mask.dtype.name == "uint8":
            raise RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
            )
        if mask is not None and isinstance(value, Tensor):
            # masked_fill_ takes the value as a number: it must fit the dtype (fuzz seed 13
            # #13403: -2.5 into uint8 raises; Note [A fill value must fit the dtype])
            src = scalar_as(
                value, dst.dtype, "__setitem__", checked=True, float_checks=dst.dtype == np.float32
            )
        src = _drop_leading_ones(src, len(shape))
        _check_assignable(np.shape(src), shape, basic)
        if isinstance(value, Tensor) and value.dtype is not input.dtype and mask is None:
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{SCALAR_TYPE[input.dtype.name]} for the destination and "
                f"{SCALAR_TYPE[value.dtype.name]} for the source."
            )
    if index_error is not None:
        raise describe_index_error(dst.shape, index_error) from None
    src = _drop_leading_ones(src, target.ndim)
    _check_assignable(np.shape(src), target.shape, basic)
    if basic:
        # torch copies into the indexed view: refused only if *it* repeats elements
        # (Note [An expand that repeats nothing is writable]); index_put writes anyway
        if repeats_elements(target):
            raise RuntimeError(
                "__setitem__: unsupported operation: more than one element of the written-to "
                "tensor refers to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )
        check_no_partial_overlap(target, src)
    elif repeats_elements(dst):
        warn_at_caller(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[indices] = tensor"
        )
    with np.errstate(invalid="ignore"):  # nan or inf cast to an integer: silent, as torch
        writable_alias(dst, overlapping=True)[key] = src
    input._bump_version("__setitem__")
    return input


def _index_error_comes_first(msg):
    """Whether torch raises this indexing error before it looks at the value: indices that
    do not broadcast together, more indices than dims, or any index into a dim of size 0
    (``index is out of bounds for dimension with size 0``, checked before the kernel);
    other out-of-range indices are found by the kernel, after the value's checks."""
    if _BROADCAST_FAILURE.search(msg) or msg.startswith("too many indices"):
        return True
    return bool(re.search(r"out of bounds for axis \d+ with size 0$", msg))


def _drop_leading_ones(src, ndim):
    """torch strips a value's leading size-1 dims beyond the indexed part's rank."""
    while np.ndim(src) > ndim and np.shape(src)[0] == 1:
        src = src[0]
    return src


def _masked_fill_mask(index, src):
    """The mask when torch writes ``x[index] = v`` with ``masked_fill_``, else None.

    torch does so when ``v`` has one element and the only tensor index is one bool or
    uint8 mask of at least one dim (a Python list of bools is one); ints select and
    slices, None and Ellipsis are not tensor indices, while a Python bool or a 0-d bool
    tensor becomes a long index tensor.  Every other advanced write needs equal dtypes.
    """
    if np.size(src) != 1:
        return None
    items = index if isinstance(index, tuple) else (index,)
    tensors = []
    for i in items:
        if isinstance(i, Tensor):
            if i.dim() == 0 and i.dtype.name not in ("bool", "uint8"):
                continue  # a 0-d integer tensor selects
            tensors.append(_data(i))
        elif isinstance(i, (list, np.ndarray)):
            tensors.append(np.asarray(i))
        elif isinstance(i, (bool, np.bool_)):
            tensors.append(np.zeros(int(i), dtype=np.int64))
    if len(tensors) != 1:
        return None
    m = tensors[0]
    if m.ndim == 0 or m.dtype not in (np.bool_, np.uint8):
        return None
    return m


def _indexed_shape(shape, key):
    """The shape ``x[key]`` would have, with out-of-range indices clipped into range."""
    probe = np.broadcast_to(np.zeros((), dtype=np.int8), shape)
    clipped = []
    for k, n in zip(key, list(shape) + [1] * len(key)):
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and n:
            k = np.clip(k, -n, n - 1)
        clipped.append(k)
    try:
        return probe[tuple(clipped)].shape
    except IndexError:
        return ()


def expands_to(src_shape, target_shape):
    """Whether ``src_shape`` expands to ``target_shape`` (torch's ``expand``: no more dims,
    each equal or 1)."""
    src, target = tuple(src_shape), tuple(target_shape)
    if len(src) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(src, target[len(target) - len(src) :]))


def _check_assignable(src_shape, target_shape, basic):
    """torch's errors for a value that does not broadcast to the indexed part."""
    if expands_to(src_shape, target_shape):
        return
    if not basic:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(src_shape)} cannot be broadcast to "
            f"indexing result of shape {list(target_shape)}"
        )
    raise expand_error(src_shape, target_shape)


def expand_error(src_shape, target_shape):
    """torch's message for expanding ``src_shape`` to ``target_shape`` (copy_, setitem)."""
    src, target = list(src_shape), list(target_shape)
    if len(src) > len(target):
        return RuntimeError(
            f"expand(torch.FloatTensor{{{src}}}, size={target}): the number of sizes provided "
            f"({len(target)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(src)})"
        )
    lead = len(target) - len(src)
    for i, have in enumerate(src):
        want = target[lead + i]
        if have != want and have != 1:
            return RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size "
                f"({have}) at non-singleton dimension {lead + i}.  Target sizes: {target}.  "
                f"Tensor sizes: {src}"
            )
    return RuntimeError(f"cannot broadcast a tensor of shape {src} to shape {target}")


def _classify(name, numpy_test, integer_answer):
    """isnan/isinf/isfinite: a bool tensor; integer and bool tensors are never NaN or
    infinite (numpy's ufuncs refuse bool)."""

    def kernel(input):
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}"
            )
        x = _data(input)
        if x.dtype.kind != "f":
            return _wrap(np.full(x.shape, integer_answer, dtype=bool))
        return _wrap(numpy_test(x))

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"``{name}``: elementwise, a bool tensor."
    return OPS[name].set_kernel(kernel)


_classify("isnan", np.isnan, False)
_classify("isinf", np.isinf, False)
_classify("isfinite", np.isfinite, True)


def _mask(mask):
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = _data(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{CPP_TYPE[mask.dtype.name]}"
        )
    return m


_BLOCK_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _repeated_block(x, m):
    """The mask ``m`` as the flat block that, repeated, is ``m`` broadcast to ``x``'s
    shape, when the kernel takes it (float32/float64 C-contiguous ``x`` of at least one
    element, ``m`` C-contiguous whose dims right-aligned to ``x``'s are 1 before a suffix
    equal to ``x``'s); else None."""
    if x.dtype not in _BLOCK_DTYPES or not (x.flags.c_contiguous and x.flags.aligned):
        return None
    if m.ndim > x.ndim or x.size == 0 or not m.flags.c_contiguous:
        return None
    lead = x.ndim - m.ndim
    ms = m.shape
    k = m.ndim
    while k > 0 and ms[k - 1] == x.shape[lead + k - 1]:
        k -= 1
    if any(d != 1 for d in ms[:k]):
        return None
    return m.reshape(-1)


@OPS["masked_fill"].set_kernel
def masked_fill(input, mask, value):
    x = _data(input)
    m = _mask(mask)
    v = scalar_as(value, x.dtype, "masked_fill", checked=True)
    block = _repeated_block(x, m)
    if block is not None:  # Note [A mask repeated over the leading dims]
        return _wrap(_masked_fill_kernels.masked_fill_block(x, block, v))
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
    x = _data(input)
    if not x.flags.writeable and repeats_elements(x):
        # torch fills an expanded view (a location is written when one of its elements is
        # masked), with a deprecation warning; with autograd, backward then refuses the
        # overlapping write (Note [Backward through a write into overlapping memory])
        w = writable_alias(x, overlapping=True)
        if w.flags.writeable:
            warnings.warn(
                "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                "tensor before performing this operation. This also applies to advanced "
                "indexing e.g. tensor[mask] = scalar",
                UserWarning,
                stacklevel=2,
            )
            x = w
    if x is _data(input):
        _check_writable(input, "masked_fill_")
    m = _mask(mask)
    _check_mask_shape(m, x, "masked_fill_")
    np.copyto(
        x,
        scalar_as(value, x.dtype, "masked_fill_", checked=True),
        where=np.broadcast_to(m, x.shape),
    )
    input._bump_version("masked_fill_")
    return input
