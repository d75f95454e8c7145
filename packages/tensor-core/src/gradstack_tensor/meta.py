"""Meta tensors: tensors with a shape and a dtype and no data (``device='meta'``).

Note [Meta tensors carry no data]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's meta device holds tensors without storage; a model moved or built there
(``model.to('meta')``, ``with torch.device('meta'):``) keeps its structure, the shapes and
dtypes of its parameters, and no memory, ready to be called with other parameters
(``torch.func.functional_call``), given real ones (``Module.to_empty`` then
``load_state_dict``), or used to learn the shapes a program makes.  gradstack marks the
storage, not the tensor: a meta tensor's array is a :class:`MetaStorage`, a read-only view
of one element broadcast to the shape (so "a tensor always has storage" holds and shapes
and dtypes read as usual), and every tensor sharing it (a view, a ``Parameter`` whose
``.data`` was set to it) is meta too.

Ops on meta tensors give meta tensors, through the same dispatch point as any op, so
autograd records their nodes as for real tensors.  Once the first meta tensor exists the
kernel level (``_dispatch.pyx``'s ``_run_marked``, below every layer) asks whether an
argument is meta and, if so, runs :func:`_run_on_meta` instead of the kernel:

- an elementwise op (the op table's elementwise kinds) is shape arithmetic: the broadcast
  of its tensors' shapes, and its result dtype from the kernel run on one-element
  stand-ins of the same dimensionality (torch's promotion treats 0-d tensors apart);
- an op that writes into a meta tensor (``add_``, ``uniform_``, ``copy_``, ``fill_``, an
  index assignment ...) writes nothing and returns it, as torch's: a random fill draws no
  number from the generator, so building a model on the meta device leaves the random
  stream where it was;
- every other op runs its own kernel on *stand-ins*: real arrays of the tensors' shapes
  and dtypes whose one element is broadcast (no memory for the inputs), and its tensor
  results become meta tensors of their shapes and dtypes.  The kernel's own checks give
  torch's errors for bad shapes, and the shapes are the kernel's, so they cannot drift from
  the real op's.  This is computation on zeros, not torch's shape formulas: it costs the
  op's time and its result's memory for a moment, which is fine for the models people
  build on the meta device here and is the price of one rule for every op.

Values still cannot be read (``tolist``, ``item``, ``numpy``) or copied out (``.to('cpu')``),
as in torch; numpy refuses to compute with a :class:`MetaStorage` (a guard for code that
reads a tensor's array directly), and a backward formula that computes on arrays (the
fused first-order kernels) raises that error rather than return data: backward through
meta tensors is not supported.  ``t.to('meta')`` of a tensor that requires grad is a leaf
that requires grad (torch records a ``ToCopyBackward0``).

Examples
--------
>>> import gradstack_tensor as gt
>>> m = gt.ones(2, 3).to("meta")
>>> m.device, m.shape, m.is_meta
(device(type='meta'), gradstack.Size([2, 3]), True)
>>> m
tensor(..., device='meta', size=(2, 3))
>>> (m @ gt.ones(3, 4).to("meta")).sum(1)
tensor(..., device='meta', size=(2,))
"""

from __future__ import annotations

import numpy as np

from ._dispatch import (
    KIND_BINARY,
    KIND_BINARY_FLOAT,
    KIND_COMPARE,
    KIND_UNARY,
    KIND_UNARY_FLOAT,
    note_meta_storage,
)
from ._out import map_tensors
from ._tensor import Tensor, _set_meta_storage, _wrap
from ._tensor import _data as data_of

__all__ = ["MetaStorage", "meta_array", "is_meta_array"]

_NO_DATA = (
    "meta tensors have no data: gradstack creates, moves and inspects them (shape, dtype) "
    "but does not compute with them; swap in real tensors (torch.func.functional_call) first"
)


class MetaStorage(np.ndarray):
    """The array behind a meta tensor: one element broadcast to the shape, and numpy
    refuses to compute with it (Note [Meta tensors carry no data])."""

    # Note [A meta tensor's strides]
    # The array's own strides are zeros (one element broadcast), so a meta tensor's torch
    # strides are kept beside it: ``_el_strides``, in elements, set when a view op or
    # as_strided makes it (None: contiguous, what every other op gives).  stride() and
    # is_contiguous() read them; no data is read or written.
    _el_strides = None
    el_offset = 0  # torch's storage_offset(), in elements

    @property
    def el_strides(self) -> tuple:
        """torch's strides of the meta tensor, in elements."""
        if self._el_strides is not None:
            return self._el_strides
        return contiguous_strides(self.shape)

    def is_contiguous_layout(self) -> bool:
        """torch's ``is_contiguous()`` of these strides (size-1 dims and 0-size skip)."""
        if 0 in self.shape:
            return True
        expected = 1
        for d, s in zip(reversed(self.shape), reversed(self.el_strides), strict=True):
            if d != 1:
                if s != expected:
                    return False
                expected *= d
        return True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(f"numpy's {ufunc.__name__} on a meta tensor: {_NO_DATA}")

    def __array_function__(self, func, types, args, kwargs):
        raise NotImplementedError(f"numpy's {func.__name__} on a meta tensor: {_NO_DATA}")


def _has_meta(args) -> bool:
    """Whether an argument (or an element of a list/tuple argument) is a meta tensor."""
    for a in args:
        if type(a) in (tuple, list):
            for t in a:
                if isinstance(t, Tensor) and type(data_of(t)) is MetaStorage:
                    return True
        elif isinstance(a, Tensor) and type(data_of(a)) is MetaStorage:
            return True
    return False


_ELEMENTWISE = (KIND_BINARY, KIND_BINARY_FLOAT, KIND_COMPARE, KIND_UNARY, KIND_UNARY_FLOAT)


def _stand_in(t, probe: bool):
    """A real tensor standing in for ``t``: its dtype, and its shape (or, with ``probe``,
    one element of its dimensionality), one element broadcast (no memory)."""
    a = data_of(t)
    if type(a) is not MetaStorage:
        if not probe:
            return t
        shape = (1,) * a.ndim
        return _wrap(np.broadcast_to(np.zeros((), dtype=a.dtype), shape))
    shape = (1,) * a.ndim if probe else a.shape
    return _wrap(np.broadcast_to(np.zeros((), dtype=a.dtype), shape))


def _stand_ins(args, probe: bool = False) -> tuple:
    out = []
    for a in args:
        if type(a) in (tuple, list):
            out.append(type(a)(_stand_in(t, probe) if isinstance(t, Tensor) else t for t in a))
        elif isinstance(a, Tensor):
            out.append(_stand_in(a, probe))
        else:
            out.append(a)
    return tuple(out)


def contiguous_strides(shape) -> tuple:
    """torch's contiguous strides of ``shape``, in elements (a size-0 or 1 dim counts 1)."""
    strides, step = [], 1
    for d in reversed(tuple(shape)):
        strides.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(strides))


# Note [Strides of a meta view]
# These ops' kernels only re-stride numpy arrays (never copy, never read): run on a probe
# with the meta tensor's strides over one element, their results' strides are torch's.
# The probe is never read (its strides reach beyond its one element), and the result is a
# meta tensor of those strides over one broadcast element as any other.  Other view ops
# (view, view_as_real ...) give contiguous strides.
_RESTRIDING = frozenset(
    {"alias", "detach", "chunk", "diagonal", "expand", "expand_as", "narrow", "permute",
     "select", "split", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze"}
)  # fmt: skip


def _basic_index(index) -> bool:
    """Whether ``index`` is numpy's basic indexing (ints, slices, None, Ellipsis): a view."""
    items = index if type(index) is tuple else (index,)
    return all(i is None or i is Ellipsis or type(i) is slice or (type(i) is int) for i in items)


# ops of a result of their first tensor's shape (not of the elementwise kinds) whose layout
# follows their tensors' as an elementwise op's
_LAYOUT_KEEPING = frozenset({"clone", "round_decimals"})


def _kept_layout(args, shape):
    """The strides an elementwise result (or a clone) keeps: its tensors' when they all have
    its shape and one dense, non-overlapping layout (a transposed tensor plus one gives a
    transposed result, as torch's TensorIterator and preserve_format), else None
    (contiguous).  A simplification of torch's rule for mixed layouts."""
    layouts = set()
    for t in args:
        if isinstance(t, Tensor) and t.dim():
            a = data_of(t)
            if tuple(a.shape) != tuple(shape) or type(a) is not MetaStorage:
                return None
            layouts.add(a.el_strides)
    if len(layouts) != 1:
        return None
    strides = layouts.pop()
    order = sorted(range(len(shape)), key=lambda i: strides[i])
    expected = 1
    for i in order:
        if shape[i] != 1:
            if strides[i] != expected:
                return None
            expected *= shape[i]
    return strides


def _strided_probe(t):
    """One element of ``t``'s dtype seen with ``t``'s shape and torch strides (never read:
    Note [Strides of a meta view]), and the address its offsets count from."""
    a = data_of(t)
    one = np.zeros(1, dtype=a.dtype)
    item = one.itemsize
    probe = np.lib.stride_tricks.as_strided(
        one, a.shape, tuple(s * item for s in a.el_strides), writeable=False
    )
    return _wrap(probe), _address(one) - a.el_offset * item


def _address(a) -> int:
    return a.__array_interface__["data"][0]


def _meta_like(out, origin, new_axes=False):
    """Meta tensors of the shapes and strides of a restriding kernel's results; with
    ``new_axes`` (an index with None), a new size-1 dim gets torch's unsqueeze stride
    (the next dim's size times its stride) where numpy's is 0."""
    if isinstance(out, Tensor):
        a = data_of(out)
        strides = [s // a.itemsize for s in a.strides]
        if new_axes:
            for i in reversed(range(a.ndim)):
                if a.shape[i] == 1 and strides[i] == 0:
                    strides[i] = a.shape[i + 1] * strides[i + 1] if i + 1 < a.ndim else 1
        offset = (_address(a) - origin) // a.itemsize if a.size else 0
        return _wrap(meta_array(a.shape, a.dtype, strides=strides, offset=offset))
    if isinstance(out, (tuple, list)):
        return type(out)(_meta_like(o, origin, new_axes) for o in out)
    return out


def _meta_tensor(t):
    a = data_of(t)
    return _wrap(meta_array(a.shape, a.dtype))


def _as_meta(out, view_of=None):
    """The op's result with every tensor made meta (a view op's keeps its strides)."""
    if view_of is not None and isinstance(out, Tensor):
        return _wrap(data_of(out).view(MetaStorage))
    return map_tensors(_meta_tensor, out)


def _tensor_shapes(args) -> list:
    return [tuple(data_of(a).shape) for a in args if isinstance(a, Tensor)]


def _check_one_device(op, args) -> None:
    """torch's RuntimeError for a real tensor among an op's meta operands.

    Note [Meta and real operands do not mix]
    torch runs an op on one device: a real (CPU) tensor beside a meta one is refused, named
    from the device of the first tensor argument ("Tensor on device meta is not on the
    expected device cpu!" for ``linear(cpu_input, meta_weight)``).  Two kinds of real
    tensor may come along, as torch lets them: a 0-d tensor (a scalar) of an elementwise
    op, and integer or bool tensors of an op that is not elementwise (indices, masks).
    """
    tensors = _flat_tensors(args)
    first_meta = type(data_of(tensors[0])) is MetaStorage if tensors else True
    elementwise = op.kind in _ELEMENTWISE
    for a in tensors:
        if type(data_of(a)) is MetaStorage:
            continue
        if elementwise and not a.dim():
            continue
        if not elementwise and not (a.is_floating_point() or a.is_complex()):
            continue
        if first_meta:
            raise RuntimeError("Tensor on device cpu is not on the expected device meta!")
        raise RuntimeError("Tensor on device meta is not on the expected device cpu!")


def _flat_tensors(args) -> list:
    """The tensors of ``args``, those in a list or tuple argument too."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(t for t in a if isinstance(t, Tensor))
    return out


def _run_on_meta(op, args):
    """An op with a meta tensor among its arguments (Note [Meta tensors carry no data])."""
    if op.inplace:
        target = args[0] if args else None
        if not (isinstance(target, Tensor) and type(data_of(target)) is MetaStorage):
            raise NotImplementedError(
                f"{op.name}() into a real tensor from a meta tensor: {_NO_DATA} (torch: "
                "Cannot copy out of meta tensor; no data!)"
            )
        if op.kind in _ELEMENTWISE:
            shapes = _tensor_shapes(args)
            try:
                shape = np.broadcast_shapes(*shapes)
            except ValueError:
                shape = None
            if shape != tuple(data_of(target).shape):
                raise RuntimeError(
                    f"output with shape {list(data_of(target).shape)} doesn't match the "
                    f"broadcast shape {list(shape) if shape is not None else shapes}"
                )
        target._bump_version(op.name)
        return target
    _check_one_device(op, args)
    if op.kind in _ELEMENTWISE:
        try:
            shape = np.broadcast_shapes(*_tensor_shapes(args))
        except ValueError:
            shape = None  # the kernel on stand-ins raises torch's error
        if shape is not None:
            probe = op.run_kernel(*_stand_ins(args, probe=True))
            if isinstance(probe, Tensor):
                strides = _kept_layout(args, shape)
                return _wrap(meta_array(shape, data_of(probe).dtype, strides=strides))
    first = args[0] if args else None
    if op.name in _LAYOUT_KEEPING and isinstance(first, Tensor):
        a = data_of(first)
        if type(a) is MetaStorage:
            out = op.run_kernel(*_stand_ins(args, probe=True))  # its dtype and checks
            dtype = data_of(out).dtype
            return _wrap(meta_array(a.shape, dtype, strides=_kept_layout(args, a.shape)))
    if (
        isinstance(first, Tensor)
        and type(data_of(first)) is MetaStorage
        and (op.name in _RESTRIDING or (op.name == "getitem" and _basic_index(args[1])))
    ):
        probe, origin = _strided_probe(first)
        return _meta_like(op.run_kernel(probe, *args[1:]), origin, new_axes=op.name == "getitem")
    stand_ins = _stand_ins(args)
    out = op.run_kernel(*stand_ins)
    return _as_meta(out, view_of=stand_ins[0] if op.is_view else None)


def meta_array(shape, dtype, strides=None, offset=0) -> MetaStorage:
    """A :class:`MetaStorage` of ``shape`` and ``dtype`` (one element of memory), whose
    torch strides are ``strides`` (elements; default contiguous) and storage offset
    ``offset``."""
    note_meta_storage(_has_meta, _run_on_meta)
    base = np.broadcast_to(np.zeros((), dtype=dtype), tuple(shape))
    out = base.view(MetaStorage)
    if strides is not None:
        out._el_strides = tuple(int(s) for s in strides)
    if offset:
        out.el_offset = int(offset)
    return out


def meta_tensor(shape, dtype, strides, offset=0) -> Tensor:
    """A meta tensor of ``shape``, numpy ``dtype``, torch ``strides`` and storage
    ``offset`` (as_strided's)."""
    return _wrap(meta_array(shape, dtype, strides=strides, offset=offset))


_set_meta_storage(MetaStorage)


def is_meta_array(a) -> bool:
    """Whether the array ``a`` is a meta tensor's storage."""
    return type(a) is MetaStorage


def no_data_error(what: str) -> NotImplementedError:
    """The error of reading a meta tensor's values (``what``: the method)."""
    return NotImplementedError(f"{what}: {_NO_DATA}")
