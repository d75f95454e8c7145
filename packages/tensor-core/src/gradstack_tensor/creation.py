"""Functions that create tensors: from data (``tensor``, ``as_tensor``, ``from_numpy``),
filled (``zeros``, ``ones``, ``full``, ``empty``, ``eye``), ranges (``arange``,
``linspace``, ``logspace``) and random (``rand``, ``randn``, ``randint``, ``randperm``).

Every factory takes ``dtype=``, ``device=`` (CPU only) and ``requires_grad=``, as torch's.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.zeros(2, 3).shape
gradstack.Size([2, 3])
>>> gt.tensor([1, 2]).dtype, gt.tensor([1., 2.]).dtype
(gradstack.int64, gradstack.float32)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import _impl_random as _rand
from . import _tensor_base as _tensor_module
from . import dtypes as _dt
from . import random as _random
from ._impl_elementwise import fill_checks_floats, scalar_as
from ._linspace import torch_linspace
from ._out import factory_dtype, write_out
from ._signatures import argument_error, checked, is_scalar
from ._tensor import Tensor, _data, _wrap
from ._tensor_base import _python_data_kind
from .device import check_device, factory_on_meta
from .random import factory_generator

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
    "scalar_tensor",
]


def _meta_new(shape, np_dtype, requires_grad: bool) -> Tensor:
    """A meta tensor of ``shape`` and ``np_dtype`` (Note [Meta tensors carry no data] in
    meta.py): no memory, and for the random factories no number drawn, as torch's."""
    from .meta import meta_array

    return _finish(meta_array(shape, np_dtype), requires_grad)


def _meta_by_moving(fn):
    """``fn``, a factory, also on the meta device: made on the CPU with the generator's
    state put back afterwards (torch's meta factories draw nothing), then moved there.
    For the factories whose results are small or whose shapes need their arguments read
    (``tensor``, ``arange``, ``eye`` ...); the size factories make meta tensors directly."""

    @functools.wraps(fn)
    def factory(*args, **kwargs):
        if not factory_on_meta(kwargs.get("device")):
            return fn(*args, **kwargs)
        kwargs["device"] = "cpu"
        state = _random.get_rng_state()
        try:
            made = fn(*args, **kwargs)
        finally:
            _random.set_rng_state(state)
        return made.to("meta")

    return factory


def _like_on_meta(input, device) -> bool:
    """Whether a ``*_like`` factory makes a meta tensor: the input is one (and no device is
    asked for), or the meta device is asked for."""
    if device is None:
        return isinstance(input, Tensor) and input.is_meta
    return factory_on_meta(device)


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = _new(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new(arr: np.ndarray) -> Tensor:
    """A new tensor over ``arr``; an inference tensor when inference mode is on.

    Note [Factories in inference mode]
    torch: every tensor allocated in inference mode is an inference tensor, outputs of
    factories included (``zeros``, ``tensor``, ``from_numpy``, ``randn`` ...).  Ops mark
    their outputs in the autograd layer; factories do not dispatch, so they ask the
    installed autograd extension here (tensor-core alone has no inference mode).
    """
    t = _wrap(arr)
    ext = _tensor_module._autograd
    if ext is not None and ext.is_inference_mode_enabled():
        t._is_inference = True
    return t


def _size(size, name, size_kw=None) -> tuple:
    """The shape of a factory call: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or
    ``f(size=(2, 3))`` (torch's keyword)."""
    if size_kw is not None:
        if size:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got sizes both as "
                "positional arguments and as size=; pass one of them"
            )
        size = (size_kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if (
            isinstance(s, Tensor)
            and s.numel() == 1
            and not s.is_floating_point()
            and s.dtype is not _dt.bool
        ):
            s = int(s)  # (a one-element integer tensor is an int, as torch's SymInt)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' must be a tuple of ints, but found element of type "
                f"{type(s).__name__}"
            )
        if s < 0:
            raise RuntimeError(
                f"{name}(): Trying to create tensor with negative dimension {s}: {list(size)}"
            )
        out.append(int(s))
    return tuple(out)


def _done(arr: np.ndarray, requires_grad: bool, out, name: str) -> Tensor:
    """A new tensor over ``arr``, or ``arr`` written into ``out`` (resized silently, as
    torch's factories do)."""
    if out is None:
        return _finish(arr, requires_grad)
    return write_out(name, _wrap(arr), out, warn=False, factory=True)


def _factory_dtype(dtype, out, name, default=None):
    """``dtype`` of a factory (``out``'s when given, and then ``dtype`` must match it)."""
    if out is not None:
        return factory_dtype(dtype, out, name)
    if dtype is None:
        return default or _dt.get_default_dtype()
    return _dt.as_dtype(dtype, name)


def _not_for(kernel, dtype):
    """torch's NotImplementedError for a factory's kernel that has no loop for ``dtype``."""
    names = _dt.SCALAR_TYPE_NAMES  # (the factories refuse only dtypes that are not floating)
    return NotImplementedError(f"\"{kernel}\" not implemented for '{names[dtype.name]}'")


def _np_dtype(dtype, default=None, name=None):
    if dtype is None:
        return (default or _dt.get_default_dtype()).numpy
    return _dt.as_dtype(dtype, name).numpy


def _infer_from_data(data) -> np.ndarray:
    """numpy array of Python data with torch's dtype inference (floats -> default float)."""
    if isinstance(data, Tensor):
        return _data(data).copy()
    if isinstance(data, np.ndarray):
        _dt.from_numpy_dtype(data.dtype)
        return data.copy()
    if isinstance(data, np.generic):
        _dt.from_numpy_dtype(data.dtype)
        return np.array(data)
    if isinstance(data, (list, tuple)):
        has_tensor = has_generic = False
        for x in _flat(data):  # one pass for both (each full scan costs microseconds)
            if isinstance(x, Tensor):
                has_tensor = True
            elif isinstance(x, np.generic):
                has_generic = True
        if has_tensor:
            data = _tensors_to_values(data)
        if has_generic:
            return _from_numpy_scalars(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise _ragged_error(e) from None
    if arr.dtype == object:
        if all(type(v) is int for v in arr.flat):  # (torch's words and class)
            raise ValueError("tensor(): Overflow when unpacking long long (an int beyond int64)")
        raise RuntimeError(  # (torch's class)
            f"tensor(): could not infer dtype of {type(data).__name__}; "
            "pass numbers, nested lists of numbers, or a numpy array"
        )
    if arr.dtype.kind == "f":
        return arr.astype(_dt.get_default_dtype().numpy)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "c":  # Python complex numbers: the default complex dtype
        return arr.astype(_dt.get_default_dtype().to_complex().numpy)
    if arr.dtype.kind in "US":
        # torch: a ValueError ("too many dimensions 'str'") for a list of str only (it
        # reads a str as a sequence), a TypeError for a str, or str among numbers
        error = ValueError if arr.ndim and _only_str(data) else TypeError
        raise error(f"tensor(): new(): invalid data type '{arr.dtype.kind == 'U' and 'str'}'")
    return arr.astype(_dt.from_numpy_dtype(arr.dtype).numpy)


def _only_str(data) -> bool:
    """Whether the nested lists or tuples ``data`` hold str and nothing else."""
    if isinstance(data, str):
        return True
    return isinstance(data, (list, tuple)) and all(_only_str(v) for v in data)


def _from_numpy_scalars(data) -> np.ndarray:
    """Note [numpy scalars keep their dtype]
    As in torch, a numpy scalar in the data counts with its own dtype, promoted with the
    others': ``[np.float64(1), 2.0]`` is float64, ``[np.int32(1), 2]`` int64.
    """
    d = None
    for x in _flat(data):
        # np.float64 subclasses float: ask for the numpy dtype first
        xd = _dt.from_numpy_dtype(x.dtype) if isinstance(x, np.generic) else _dt.scalar_dtype(x)
        d = xd if d is None else _dt.promote_types(d, xd)
    try:
        return np.array(data, dtype=d.numpy)
    except ValueError as e:
        raise _ragged_error(e) from None


def _ragged_error(e: ValueError) -> ValueError:
    return ValueError(
        f"tensor(): could not build a tensor from the data ({e}); nested "
        "sequences must have the same length at each level"
    )


def _flat(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _tensors_to_values(seq):
    if isinstance(seq, Tensor):
        if seq.numel() != 1 and seq.dim() != 0:
            return _data(seq).tolist()
        return _data(seq).item()
    if isinstance(seq, (list, tuple)):
        return [_tensors_to_values(x) for x in seq]
    return seq


@_meta_by_moving
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays).

    Python floats become the default float dtype (float32), ints int64, bools bool.

    >>> tensor([[1., 2.], [3., 4.]]).shape
    gradstack.Size([2, 2])
    >>> tensor(3.5).dim()
    0
    """
    check_device(device)
    kind = _python_data_kind(data)
    if kind >= 0:
        # only Python numbers (Note [tensor() from Python numbers] in _tensor.pyx): the
        # dtype is known, numpy builds the array in one call, without a cast afterwards
        if dtype is not None:
            target = _dt.as_dtype(dtype, "tensor").numpy
        elif kind == 2:
            target = _dt.get_default_dtype().numpy
        else:
            target = np.int64 if kind == 1 else np.bool_
        try:
            # (uint64: torch's own reading of Python numbers, _python_values_as)
            arr = np.array(data, dtype=target) if target != np.uint64 else None
        except (ValueError, OverflowError):
            # ragged, or a value the dtype cannot hold (nan as int64, 2**63): the general
            # path below raises (or decides) exactly as it always has
            arr = None
        if arr is not None:
            return _finish(arr, requires_grad)
    if dtype is not None:
        _dt.as_dtype(dtype, "tensor")
    arr = _infer_from_data(data)
    if dtype is not None:
        target = _dt.as_dtype(dtype).numpy
        if arr.dtype != target and not isinstance(data, (Tensor, np.ndarray, np.generic)):
            # Python numbers go straight to ``dtype``, not through the default float32:
            # tensor(0.7, dtype=float64).item() is exactly 0.7, as in torch
            values = _tensors_to_values(data) if isinstance(data, (list, tuple)) else data
            arr = _python_values_as(values, target)
        else:
            arr = arr.astype(target)
    return _finish(arr, requires_grad)


def _python_values_as(values, target):
    """Python numbers as an array of the integer or float dtype ``target``, with torch's
    overflow rule.

    Note [Which Python numbers fit an integer dtype]
    torch truncates floats toward zero and refuses a float outside the dtype's range; an
    int may also be negative down to ``-max`` for an unsigned dtype, where it wraps
    (``tensor([-1], dtype=uint8)`` is 255, ``tensor([-1.0], dtype=uint8)`` raises).
    numpy raises OverflowError for any int out of range, so the values are checked here
    and torch's RuntimeError raised.  uint64 takes Python ints from 0 up only (torch reads
    them as unsigned: a float is a TypeError, a negative int an OverflowError).
    """
    if np.dtype(target) == np.uint64:
        for v in _flat(values) if isinstance(values, (list, tuple)) else (values,):
            if isinstance(v, float):
                raise TypeError("an integer is required")
            if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                raise OverflowError("can't convert negative int to unsigned")
    try:
        return np.array(values, dtype=target)
    except (OverflowError, ValueError):  # ValueError: nan or inf to an integer dtype
        pass
    name = np.dtype(target).name
    wide = np.array(values)
    if wide.dtype.kind in "iuf" and np.dtype(target).kind in "iu":
        info = np.iinfo(target)
        low = -info.max if info.min == 0 and wide.dtype.kind in "iu" else info.min
        if np.all(np.isfinite(wide)) and not np.any((wide < low) | (wide > info.max)):
            return wide.astype(target)
    raise RuntimeError(f"value cannot be converted to type {name} without overflow")


@checked("scalar_tensor", "float s", first=0)
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor of the default float dtype (or ``dtype``) holding ``s``."""
    return tensor(
        float(s) if dtype is None else s, dtype=dtype, device=device, requires_grad=requires_grad
    )


@_meta_by_moving
def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, without a copy when it already is one (or a numpy array of a
    supported dtype and no ``dtype`` change)."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        _dt.from_numpy_dtype(data.dtype)
        if dtype is None or _dt.as_dtype(dtype, "as_tensor").numpy == data.dtype:
            return _new(data)
        return _new(data.astype(_dt.as_dtype(dtype).numpy))
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray``: writes to one are seen in the other.

    >>> a = np.zeros(3, dtype=np.float32); t = from_numpy(a); a[0] = 5.0
    >>> t[0].item()
    5.0
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(ndarray).__name__})")
    _dt.from_numpy_dtype(ndarray.dtype)
    return _new(ndarray)


def zeros(
    *size,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **size_kw,
) -> Tensor:
    """A tensor of zeros of the given size: ``zeros(2, 3)``, ``zeros((2, 3))`` or
    ``zeros(size=(2, 3))``.

    >>> zeros(size=(2, 3)).shape
    gradstack.Size([2, 3])
    """
    meta = factory_on_meta(device)
    shape = _size(size, "zeros", _size_keyword(size_kw, "zeros"))
    d = _factory_dtype(dtype, out, "zeros")
    if meta:
        return _meta_new(shape, d.numpy, requires_grad)
    return _done(np.zeros(shape, dtype=d.numpy), requires_grad, out, "zeros")


def ones(
    *size,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **size_kw,
) -> Tensor:
    """A tensor of ones of the given size (as :func:`zeros`)."""
    meta = factory_on_meta(device)
    shape = _size(size, "ones", _size_keyword(size_kw, "ones"))
    d = _factory_dtype(dtype, out, "ones")
    if meta:
        return _meta_new(shape, d.numpy, requires_grad)
    return _done(np.ones(shape, dtype=d.numpy), requires_grad, out, "ones")


def empty(
    *size,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
    **size_kw,
) -> Tensor:
    """An uninitialised tensor of the given size (as :func:`zeros`)."""
    meta = factory_on_meta(device)
    shape = _size(size, "empty", _size_keyword(size_kw, "empty"))
    d = _factory_dtype(dtype, out, "empty")
    if meta:
        return _meta_new(shape, d.numpy, requires_grad)
    if out is not None:
        from ._out import resize_into

        resize_into(out, shape, warn=False)
        return out
    return _finish(np.empty(shape, dtype=d.numpy), requires_grad)


def _size_keyword(kwargs: dict, name: str):
    """torch's ``size=`` keyword of the factories whose sizes are ``*size``."""
    if not kwargs:
        return None
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    return size


@checked("full", first=0)
def full(
    size,
    fill_value,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (float -> float32)."""
    meta = factory_on_meta(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if out is not None:
        d = factory_dtype(dtype, out, "full").numpy
    else:
        if dtype is None:
            dtype = _dt.scalar_dtype(fill_value)
        d = _np_dtype(dtype, name="full")
    shape = _size((size,), "full")
    floats = fill_checks_floats(d, math.prod(shape))
    value = scalar_as(fill_value, d, "full", checked=True, float_checks=floats)
    if meta:
        return _meta_new(shape, d, requires_grad)
    arr = np.full(shape, value, dtype=d)
    return _done(arr, requires_grad, out, "full")


def _batched_like(fn):
    """``fn``, a ``*_like`` factory, also on a tensor batched by vmap: the factory batcher
    runs it on the physical tensor and batches the result like the input (Note [Factories
    under vmap] in random.py); one check when no vmap runs."""

    def like(input, *args, **kwargs):
        batcher = _random._factory_batcher
        if batcher is not None:
            result = batcher.like(fn, input, args, kwargs)
            if result is not NotImplemented:
                return result
        return fn(input, *args, **kwargs)

    like.__name__ = like.__qualname__ = fn.__name__
    like.__doc__ = fn.__doc__
    like.__module__ = fn.__module__
    like.__wrapped__ = fn
    return like


def _like(input, dtype, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.shape, (_dt.as_dtype(dtype, name) if dtype is not None else input.dtype)


@_batched_like
def zeros_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
):
    """Zeros of ``input``'s shape (and dtype, unless ``dtype``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "zeros_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "zeros_like")
    arr = _rand.empty_like_array(input, d)
    arr[...] = 0
    return _finish(arr, requires_grad)


@_batched_like
def ones_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
):
    """Ones of ``input``'s shape (and dtype, unless ``dtype``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "ones_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "ones_like")
    arr = _rand.empty_like_array(input, d)
    arr[...] = 1
    return _finish(arr, requires_grad)


@_batched_like
def empty_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
):
    """An uninitialised tensor of ``input``'s shape (and dtype, unless ``dtype``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "empty_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "empty_like")
    return _finish(_rand.empty_like_array(input, d), requires_grad)


@_batched_like
def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """``fill_value`` in ``input``'s shape (and dtype, unless ``dtype``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "full_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "full_like")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    arr = _rand.empty_like_array(input, d)
    floats = fill_checks_floats(arr.dtype, arr.size)
    arr[...] = scalar_as(fill_value, arr.dtype, "full_like", checked=True, float_checks=floats)
    return _finish(arr, requires_grad)


@_batched_like
def rand_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """Uniform values in [0, 1) of ``input``'s shape (as ``empty_like(input).uniform_()``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "rand_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "rand_like")
    _random_dtype(d, "check_uniform_bounds", complex_ok=True)
    t = _finish(_rand.empty_like_array(input, d), False)
    _rand.uniform_(t, 0.0, 1.0, generator)
    return t.requires_grad_(True) if requires_grad else t


@_batched_like
def randn_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """Standard normal values of ``input``'s shape (as ``empty_like(input).normal_()``)."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "randn_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "randn_like")
    _random_dtype(d, "normal_kernel_cpu", complex_ok=True)
    t = _finish(_rand.empty_like_array(input, d), False)
    _rand.normal_(t, 0.0, 1.0, generator)
    return t.requires_grad_(True) if requires_grad else t


@_batched_like
def randint_like(
    input,
    low=0,
    high=None,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """Random integers in [low, high) (or [0, low)) of ``input``'s shape and dtype."""
    if _like_on_meta(input, device):
        _, d = _like(input, dtype, "randint_like")
        return _meta_new(tuple(input.shape), d.numpy, requires_grad)
    check_device(device)
    _, d = _like(input, dtype, "randint_like")
    if high is None:
        low, high = 0, low
    t = _finish(_rand.empty_like_array(input, d), False)
    _randint_fill(t, low, high, generator)
    return t.requires_grad_(True) if requires_grad else t


@_meta_by_moving
def arange(
    start,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Values from ``start`` (default 0) up to, not including, ``end``, spaced by ``step``.

    >>> arange(5).tolist()
    [0, 1, 2, 3, 4]
    >>> arange(0, 1, 0.25).tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    check_device(device)
    bounds = (("end", start),) if end is None else (("start", start), ("end", end))
    for position, (name, value) in enumerate(bounds + (("step", step),), 1):
        if not is_scalar(value):  # torch's Number (a tensor of one element too)
            raise argument_error("arange", name, position, "Number", value)
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = values
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    if out is not None and dtype is None:
        dtype = out.dtype if isinstance(out, Tensor) else None
    if dtype is None:
        is_float = any(isinstance(v, float) for v in values)
        dtype = _dt.get_default_dtype() if is_float else _dt.int64
    dtype = _dt.as_dtype(dtype, "arange")
    if dtype is _dt.bool_:
        raise _not_for("arange_cpu", dtype)
    if dtype.is_floating_point:
        n = math.ceil((end - start) / step)
        arr = start + step * np.arange(n, dtype=np.float64)
    else:
        # Note [Integer arange of float arguments]: torch casts start and step to the
        # integer type (truncating) and counts the elements from the cast values for
        # int64 but from the float ones otherwise: arange(0.5, 3, 0.5, dtype=int32) is five
        # zeros, arange(1.5, 5, 1.5, dtype=int64) is [1, 2, 3, 4]
        istart, istep = int(start), int(step)
        if dtype is _dt.int64:
            if istep == 0:
                raise RuntimeError("arange(): step must be nonzero")
            n = (
                math.ceil((int(end) - istart) / istep)
                if isinstance(end, float)
                else -(-(end - istart) // istep)
            )
        else:
            n = math.ceil((end - start) / step)
        arr = istart + istep * np.arange(max(n, 0), dtype=np.int64)
    if out is not None:
        factory_dtype(dtype, out, "arange")
    return _done(arr.astype(_np_dtype(dtype)), requires_grad, out, "arange")


@_meta_by_moving
def linspace(
    start,
    end,
    steps,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive.

    >>> linspace(0., 1., steps=5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    check_device(device)
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be a non-negative int, got {steps!r}")
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    if out is not None and dtype is None:
        dtype = factory_dtype(None, out, "linspace")
    if dtype is not None and _dt.as_dtype(dtype, "linspace") is _dt.bool_:
        raise _not_for("linspace_cpu", _dt.bool_)
    target = _np_dtype(dtype, name="linspace")
    if np.dtype(target) in (np.dtype(np.float32), np.dtype(np.float64)):
        # torch's values to the last bit (Note [torch's linspace is fused multiply-adds])
        values = torch_linspace(float(start), float(end), int(steps), np.dtype(target))
        return _done(values, requires_grad, out, "linspace")
    values = np.linspace(float(start), float(end), int(steps), dtype=np.float64)
    if np.dtype(target).kind in "iu":
        values = np.trunc(values)  # torch computes in the integer type: truncated steps
    return _done(values.astype(target), requires_grad, out, "linspace")


@_meta_by_moving
def logspace(
    start,
    end,
    steps,
    base=10.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """``base ** linspace(start, end, steps)``."""
    check_device(device)
    if out is not None and dtype is None:
        dtype = factory_dtype(None, out, "logspace")
    if dtype is not None and _dt.as_dtype(dtype, "logspace") is _dt.bool_:
        raise _not_for("logspace_cpu", _dt.bool_)
    target = _np_dtype(dtype, name="logspace")
    values = np.power(float(base), np.linspace(float(start), float(end), int(steps)))
    return _done(values.astype(target), requires_grad, out, "logspace")


@_meta_by_moving
@checked("eye", first=0)
def eye(
    n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    check_device(device)
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye(): n and m must be non-negative, got n={n}, m={m}")
    d = _factory_dtype(dtype, out, "eye")
    return _done(np.eye(n, m, dtype=d.numpy), requires_grad, out, "eye")


# -------------------------------------------------------------------------------------
# random factories: torch's stream (Note [torch's random stream] in random.py)


def _batched(t: Tensor, wrap) -> Tensor:
    """A factory's result, batched by vmap when its draw was (Note [Factories under vmap])."""
    return t if wrap is None else wrap(t)


def _random_dtype(d, kernel, complex_ok=False):
    if not (d.is_floating_point or (complex_ok and d.is_complex)):
        raise _not_for(kernel, d)


def rand(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **size_kw,
) -> Tensor:
    """Uniform random values in [0, 1): ``empty(size).uniform_()``, torch's numbers after
    the same ``manual_seed``.

    >>> from gradstack_tensor import manual_seed
    >>> _ = manual_seed(0); rand(2).tolist()
    [0.49625658988952637, 0.7682217955589294]
    """
    meta = factory_on_meta(device)
    shape = _size(size, "rand", _size_keyword(size_kw, "rand"))
    d = _factory_dtype(dtype, out, "rand")
    _random_dtype(d, "check_uniform_bounds", complex_ok=True)
    if meta:
        return _meta_new(shape, d.numpy, requires_grad)
    gen, batch, wrap = factory_generator(generator, "rand", out is None)
    shape = batch + shape
    if d.is_complex:  # (real, imaginary) pairs of uniforms (Note [Complex random fills])
        part = d.to_real().numpy
        values = _rand.uniform_values(gen, 2 * math.prod(shape), part)
        arr = values.astype(part, copy=False).view(d.numpy).reshape(shape)
    else:
        arr = _rand.uniform_values(gen, math.prod(shape), d.numpy).reshape(shape)
    return _batched(_done(arr, requires_grad, out, "rand"), wrap)


def randn(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **size_kw,
) -> Tensor:
    """Standard normal random values: ``empty(size).normal_()``, torch's numbers after the
    same ``manual_seed`` (its vectorised Box-Muller from 16 elements, its one-at-a-time
    sampler below)."""
    meta = factory_on_meta(device)
    shape = _size(size, "randn", _size_keyword(size_kw, "randn"))
    d = _factory_dtype(dtype, out, "randn")
    if d.is_complex:
        # torch draws a complex tensor's (real, imaginary) pairs as real normals with
        # standard deviation 1/sqrt(2), so that E|z|^2 = 1
        gen, batch, wrap = factory_generator(generator, "randn", out is None)
        shape = batch + shape
        part = d.to_real().numpy
        values = _rand.normal_values(gen, 2 * math.prod(shape), part, 0.0, 1.0 / math.sqrt(2), True)
        arr = values.astype(part, copy=False).view(d.numpy).reshape(shape)
        return _batched(_done(arr, requires_grad, out, "randn"), wrap)
    _random_dtype(d, "normal_kernel_cpu")
    if meta:
        return _meta_new(shape, d.numpy, requires_grad)
    gen, batch, wrap = factory_generator(generator, "randn", out is None)
    shape = batch + shape
    values = _rand.normal_values(gen, math.prod(shape), d.numpy, 0.0, 1.0, True)
    arr = values.astype(d.numpy, copy=False).reshape(shape)
    return _batched(_done(arr, requires_grad, out, "randn"), wrap)


def _randint_fill(t: Tensor, low, high, generator) -> None:
    low = low.item() if isinstance(low, Tensor) else low
    high = high.item() if isinstance(high, Tensor) else high
    _rand._random_inplace(t, int(low), int(high), generator)


@_meta_by_moving
def randint(
    low=0,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (``empty(size, dtype=int64).random_(low, high)``: torch's numbers)."""
    check_device(device)
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint(): missing required argument 'size' (a tuple of ints)")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...): torch's first overload
        low, high = 0, low
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size,)
    shape = _size((size,), "randint")
    d = _factory_dtype(dtype, out, "randint", _dt.int64)
    if requires_grad and not d.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    gen, batch, wrap = factory_generator(generator, "randint", out is None)
    t = _finish(np.empty(batch + shape, dtype=d.numpy), False)
    if wrap is None:
        _randint_fill(t, low, high, generator)  # the op random_, as torch records it
    else:
        low = low.item() if isinstance(low, Tensor) else low
        high = high.item() if isinstance(high, Tensor) else high
        _rand.random_fill(t, int(low), int(high), gen)
    return _batched(_done(_data(t), requires_grad, out, "randint"), wrap)


@_meta_by_moving
def randperm(
    n,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (torch's Fisher-Yates shuffle over its
    stream: torch's permutation after the same ``manual_seed``)."""
    check_device(device)
    gen, batch, wrap = factory_generator(generator, "randperm", out is None)
    d = _factory_dtype(dtype, out, "randperm", _dt.int64)
    if d is _dt.bool_:
        raise _not_for("randperm", _dt.bool_)
    if isinstance(n, Tensor):
        n = n.item()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if wrap is None:
        values = _rand.randperm_values(gen, int(n))
    else:  # one permutation per sample, drawn one after another (as torch's loop)
        values = _batched_randperm(gen, int(n), batch)
    return _batched(_done(values.astype(d.numpy), requires_grad, out, "randperm"), wrap)


def _batched_randperm(gen, n: int, batch: tuple) -> np.ndarray:
    """``prod(batch)`` permutations of ``0 .. n-1`` in the order torch's nested loops draw
    them: each vmap level's rule loops over its own samples and calls the op again, so
    the innermost level's index varies slowest."""
    order = batch[::-1]
    draws = np.stack([_rand.randperm_values(gen, n) for _ in range(math.prod(batch))])
    return np.moveaxis(draws.reshape(order + (n,)), range(len(batch)), range(len(batch))[::-1])


@_meta_by_moving
def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Normal random values: ``normal(mean, std, size)`` with numbers, or ``normal(mean,
    std)`` with a tensor ``mean`` and/or ``std`` (broadcast together), as torch.

    >>> from gradstack_tensor import manual_seed
    >>> _ = manual_seed(0); normal(2.0, 0.5, (2,)).tolist()  # torch's values
    [2.770498037338257, 1.853285551071167]
    """
    check_device(device)
    from ._dispatch import OPS

    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal(): size is not accepted when mean or std is a Tensor")
        result = OPS["normal"](mean, std, generator)
        return result if out is None else write_out("normal", result, out)
    if size is None:
        raise TypeError("normal() missing required argument 'size' (with numbers for mean, std)")
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size,)
    shape = _size((size,), "normal")
    d = _factory_dtype(dtype, out, "normal")
    _random_dtype(d, "normal_kernel_cpu")
    std = float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    gen, batch, wrap = factory_generator(generator, "normal", out is None)
    shape = batch + shape
    values = _rand.normal_values(gen, math.prod(shape), d.numpy, float(mean), std, True)
    arr = values.astype(d.numpy, copy=False).reshape(shape)
    return _batched(_done(arr, requires_grad, out, "normal"), wrap)
