"""Indexing: torch's index keys translated for numpy, ``__setitem__`` with torch's checks in
torch's order, and the errors torch gives for bad indices and bad shapes.

``index_key`` is shared by ``__getitem__`` (``_impl_shape.py``) and the extension API; the
``setitem_`` kernel is registered on the op table here.
"""

from __future__ import annotations

import re

import numpy as np

from ._dispatch import OPS
from ._impl_elementwise import (
    SCALAR_TYPE,
    _array,
    repeats_elements,
    scalar_as,
    warn_at_caller,
    writable_alias,
)
from ._shapes import check_no_partial_overlap
from ._tensor import Tensor, _data


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
    if isinstance(src, complex):
        if dst.dtype.kind != "c":
            raise RuntimeError(
                f"value cannot be converted to type {input.dtype} without overflow: a complex "
                "number needs a complex tensor"
            )
        src = dst.dtype.type(src)
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
