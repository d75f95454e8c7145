"""Kernels of the elementwise ops that are not plain ufuncs: where, clamp, fills, copies,
masked_fill and the classifiers (isnan, isinf, ...); ``__setitem__`` and the translation
of torch's indices are in ``_impl_indexing.py``.

Each kernel takes the op's canonical positional arguments (see ``Op``) and returns a
Tensor; in-place kernels write into their first argument and bump its version.
"""

from __future__ import annotations

import math
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
CPP_TYPE = _dt.CPP_TYPE_NAMES
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
                 "int64": "int64_t", "uint16": "uint16", "uint32": "uint32",
                 "uint64": "uint64"}  # fmt: skip


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
    out = np.asarray(_ArrayInterface(interface, owner))
    # the array interface spells a numpy user dtype (bfloat16) as void: give it back
    return out if out.dtype == r.dtype else out.view(r.dtype)


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


@OPS["round_decimals"].set_kernel
def round_decimals(input, decimals):
    """``round(input, decimals=d)``: torch's ``round.decimals`` kernel.

    Note [round with decimals]
    torch computes ``nearbyint(x * 10**d) / 10**d`` (``nearbyint(x / 10**-d) * 10**-d`` for
    a negative ``d``) in the op-math type: float32 for float32, float16 and bfloat16 (the
    power of ten is made in double and cast once), float64 for float64; a float16 result
    is rounded once at the end.  ``decimals=0`` is round's own kernel; integer and complex
    dtypes have no kernel.
    """
    x = _data(input)
    name = input.dtype.name
    if decimals == 0:
        if not input.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"round_vml_cpu\" not implemented for '{SCALAR_TYPE.get(name, name)}'"
            )
        return OPS["round"].run_kernel(input)
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"\"round_cpu\" not implemented for '{SCALAR_TYPE.get(name, name)}'"
        )
    opmath = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        ten_pow = opmath(np.power(10.0, abs(decimals)))
        a = x.astype(opmath, copy=False)
        if decimals < 0:
            r = np.multiply(np.rint(np.divide(a, ten_pow)), ten_pow)
        else:
            r = np.divide(np.rint(np.multiply(a, ten_pow)), ten_pow)
    return _wrap(np.asarray(r, dtype=x.dtype))


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
