"""Factories over given memory or a given memory layout: ``asarray`` (without a copy when it
can), ``frombuffer`` (over a Python buffer), ``empty_strided`` and ``empty_permuted``;
and ``fill``, a tensor of ``input``'s shape filled with one value.

Note [Tensors over other memory]
A gradstack tensor is a numpy array, so a tensor over another object's memory is a numpy
array over it: ``asarray`` of a numpy array (or of a tensor) with no dtype change and
``copy`` not True is that array, and writes through either are seen by both, as torch's
``asarray`` shares the memory of objects with the buffer or array interface; ``frombuffer``
is ``np.frombuffer``.  A strided layout is a view of a flat block large enough for every
element the strides reach (``as_strided``), so ``empty_strided((2, 3), (1, 2))`` has
torch's strides, ``(1, 2)``.

Examples
--------
>>> import numpy as np
>>> import gradstack_tensor as gt
>>> a = np.zeros(3, dtype=np.float32)
>>> t = gt.asarray(a)
>>> a[0] = 5.0
>>> t.tolist()
[5.0, 0.0, 0.0]
>>> gt.empty_strided((2, 3), (1, 2)).stride()
(1, 2)
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes as _dt
from ._tensor import Tensor, _wrap_view
from .creation import _finish, _size, tensor

__all__ = ["asarray", "empty_permuted", "empty_strided", "fill", "frombuffer"]


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """``obj`` as a tensor: a tensor, a numpy array (or an object with the array or buffer
    interface), a number or nested sequences.  Memory is shared when it can be (Note
    [Tensors over other memory]): ``copy=True`` always copies, ``copy=False`` refuses to,
    with torch's ValueError when the dtype would change.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.ones(2)
    >>> gt.asarray(x) is x, gt.asarray(x, copy=True) is x
    (True, False)
    >>> gt.asarray([1, 2]).dtype
    gradstack.int64
    """
    target = None if dtype is None else _dt.as_dtype(dtype, "asarray")
    if isinstance(obj, Tensor):
        out = obj
        if target is not None and target is not obj.dtype:
            if copy is False:
                raise ValueError(_alias_error(obj.dtype, target))
            out = obj.to(target)
        elif copy:
            out = obj.clone()
        return out.requires_grad_(True) if requires_grad and not out.requires_grad else out
    array = obj if isinstance(obj, np.ndarray) else _array_or_none(obj)
    if array is not None and array.dtype.kind in "biufc":
        have = _dt.from_numpy_dtype(array.dtype)
        if target is not None and target is not have:
            if copy is False:
                raise ValueError(_alias_error(have, target))
            array = array.astype(target.numpy)
        elif copy:
            array = array.copy()
        return _finish(array, requires_grad)
    if copy is False:
        raise ValueError(
            f"can't alias {type(obj).__name__} object: it has no array or buffer interface; "
            "pass copy=None or copy=True"
        )
    return tensor(obj, dtype=target, requires_grad=requires_grad)


def _alias_error(have, target) -> str:
    return (
        f"can't alias tensor with dtype '{_dt.SCALAR_TYPE_NAMES[have.name]}' into dtype "
        f"'{_dt.SCALAR_TYPE_NAMES[target.name]}'."
    )


def _array_or_none(obj):
    """numpy's view of an object with the array or buffer interface, else None."""
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        return np.asarray(obj)
    try:
        memoryview(obj)
    except TypeError:
        return None
    return np.asarray(memoryview(obj))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-d tensor over a Python buffer's bytes (``bytearray``, ``array.array``, a
    ``memoryview`` ...), without a copy: ``count`` elements of ``dtype`` from byte
    ``offset`` (all the rest with ``count=-1``).  A read-only buffer gives torch's warning
    (its writes would be undefined).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> b = bytearray(8)
    >>> t = gt.frombuffer(b, dtype=gt.int32)
    >>> b[0] = 7
    >>> t.tolist()
    [7, 0]
    """
    d = _dt.as_dtype(dtype, "frombuffer")
    view = memoryview(buffer)
    length = view.nbytes
    item = d.numpy.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0:
        if (length - offset) % item != 0:
            raise ValueError(
                f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be "
                f"a multiple of element size ({item})"
            )
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(
            f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    if view.readonly:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    array = np.frombuffer(buffer, dtype=d.numpy, count=count, offset=offset)
    return _finish(array, requires_grad)


def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """An uninitialised tensor of ``size`` with the given ``stride`` (in elements): a view
    of a block just large enough for the elements the strides reach.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.empty_strided((2, 3), (3, 1)).is_contiguous()
    True
    """
    shape = _size((size,), "empty_strided")
    steps = tuple(int(s) for s in stride)
    if len(steps) != len(shape):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(steps)})"
        )
    if any(s < 0 for s in steps):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(steps)}"
        )
    d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype, "empty_strided")
    return _strided(shape, steps, d, requires_grad)


def _strided(shape, steps, d, requires_grad) -> Tensor:
    if 0 in shape:
        needed = 0
    else:
        needed = 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    block = np.empty(needed, dtype=d.numpy)
    item = block.itemsize
    array = np.lib.stride_tricks.as_strided(block, shape, tuple(s * item for s in steps))
    out = _finish(block, False)
    view = _wrap_view(array, out) if array.base is not None else out
    return view.requires_grad_(True) if requires_grad else view


def empty_permuted(
    size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
    pin_memory=False,
) -> Tensor:  # fmt: skip
    """An uninitialised tensor of ``size`` whose memory holds the dims in the order
    ``physical_layout`` (the outermost first): ``empty_permuted((2, 3, 4), (0, 2, 1))`` has
    strides ``(12, 1, 3)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    shape = _size((size,), "empty_permuted")
    order = tuple(int(i) for i in physical_layout)
    if len(order) != len(shape):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(shape)} is not equal to len(physical_layout) = {len(order)}"
        )
    if sorted(order) != list(range(len(shape))):
        if len(set(order)) != len(order):
            raise RuntimeError("Duplicate dim not allowed")
        raise RuntimeError(f"physical_layout {list(order)} is not a permutation of the dims")
    steps = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        steps[dim] = step
        step *= shape[dim]
    d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype, "empty_permuted")
    return _strided(shape, tuple(steps), d, requires_grad)


def fill(input: Tensor, value) -> Tensor:
    """A new tensor of ``input``'s shape and dtype, every element ``value`` (a number or a
    0-d tensor): torch's out-of-place ``fill``.  Its gradient with respect to ``input`` is
    zero (a ``fill_`` of a clone).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.fill(gt.zeros(2, dtype=gt.int64), 3).tolist()
    [3, 3]
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"fill(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.clone().fill_(value)
