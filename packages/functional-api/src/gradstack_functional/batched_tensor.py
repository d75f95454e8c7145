"""``BatchedTensor``: what a function under ``vmap`` sees, one sample of a batch.

A batched tensor wraps a *physical* value (the whole batch) and records which dim of the
value is the batch (``bdim``) and the number of the vmap level that batches it.  User code
sees the *logical* tensor, one sample: ``x.shape`` has no batch dim, ``x.sum(0)`` sums the
sample's first dim.  Every op on a batched tensor reaches vmap's layer on the dispatch
point (``batching_layer``), which applies the op's batching rule to the physical values.
Nested vmaps nest wrappers: the value of a level-2 batched tensor may be a level-1 one.

Note [Logical shape without storage]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor's shape, dtype and dims are read by tensor-core (and by the methods that
normalise ``dim`` arguments before they dispatch) from its numpy storage.  A batched
tensor's storage is therefore a read-only, zero-stride array of its logical shape and
dtype, one element long (shared by all batched tensors of that shape and dtype): shape,
dtype, ``dim()`` and ``numel()`` are right, and the methods that would read *values* are
overridden here to raise torch's vmap errors (``.item()``, ``bool(x)``, ``.tolist()`` ...).
The element is NaN for floating dtypes, so a path that reads the storage anyway gives
NaN rather than plausible numbers.  The autograd layer never sees a batched tensor: vmap's
layer sits above it and hands it the physical values (Note [Transforms on physical
tensors] in ``eager_transforms``).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_functional.func import vmap
>>> shapes = []
>>> _ = vmap(lambda x: shapes.append(tuple(x.shape)) or x)(gt.zeros(5, 3))
>>> shapes
[(3,)]
"""

from __future__ import annotations

import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor import extension as _ext

from . import _levels

__all__ = ["BatchedTensor", "is_batched", "make_batched", "unwrap", "flatten_levels", "nest"]

ITEM_ERROR = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a "
    "bug report."
)
CONTROL_FLOW_ERROR = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)
STORAGE_ERROR = "Cannot access data pointer of Tensor that doesn't have storage"

_DUMMIES: dict = {}


def _dummy(dtype: np.dtype, shape: tuple) -> Tensor:
    """The shared storage-less stand-in of a logical shape (Note [Logical shape without
    storage])."""
    key = (dtype, shape)
    t = _DUMMIES.get(key)
    if t is None:
        fill = np.nan if dtype.kind == "f" else 0
        one = np.full((), fill, dtype=dtype)
        a = np.lib.stride_tricks.as_strided(one, shape=shape, strides=(0,) * len(shape))
        a.flags.writeable = False
        t = _ext.wrap(a)
        if len(_DUMMIES) > 4096:  # shapes vary without bound only in odd programs
            _DUMMIES.clear()
        _DUMMIES[key] = t
    return t


class BatchedTensor(Tensor):
    """One sample of a batch, as a function under ``vmap`` sees it.

    Attributes ``_gs_value`` (the physical tensor), ``_gs_bdim`` (its batch dim) and
    ``_gs_level`` (the vmap level's number) are vmap's; everything else is a Tensor's.
    Create them with :func:`make_batched`.
    """

    # -- values: not available inside vmap (torch's errors) -----------------------------

    def item(self):
        raise RuntimeError(ITEM_ERROR)

    def __float__(self):
        raise RuntimeError(ITEM_ERROR)

    def __int__(self):
        raise RuntimeError(ITEM_ERROR)

    def __index__(self):
        raise RuntimeError(ITEM_ERROR)

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_ERROR)

    def __contains__(self, element):
        raise RuntimeError(CONTROL_FLOW_ERROR)

    def tolist(self):
        raise RuntimeError(STORAGE_ERROR)

    def numpy(self, *, force=False):
        raise RuntimeError(STORAGE_ERROR)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(STORAGE_ERROR)

    def data_ptr(self):
        raise RuntimeError(STORAGE_ERROR)

    def storage_offset(self):
        raise RuntimeError(STORAGE_ERROR)

    def __format__(self, spec):
        if self.dim() == 0 and spec:
            raise RuntimeError(ITEM_ERROR)
        return repr(self)

    def __repr__(self):
        value = repr(self._gs_value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._gs_level}, bdim={self._gs_bdim}, value=\n    {value}\n)"

    # -- layout: the physical value's, without the batch dim ----------------------------

    def stride(self, dim=None):
        strides = list(self._gs_value.stride())
        del strides[self._gs_bdim]
        if dim is None:
            return tuple(strides)
        n = len(strides)
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                f"{max(n, 1) - 1}], but got {dim})"
            )
        return strides[dim % n] if n else 1

    def is_contiguous(self, memory_format=None):
        expected = 1
        for size, stride in reversed(list(zip(self.shape, self.stride()))):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    @property
    def data(self):
        return make_batched(self._gs_value.data, self._gs_bdim, self._gs_level)

    @data.setter
    def data(self, value):
        raise RuntimeError("vmap: setting .data of a tensor being vmapped over is not supported")

    # -- reductions that Tensor computes without an op --------------------------------

    def all(self, dim=None, keepdim=False):
        return _reduce_bool(self, "all", dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return _reduce_bool(self, "any", dim, keepdim)

    # -- autograd: a batched tensor is never part of a graph (torch: requires_grad False)

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError(
                "vmap: requires_grad_() on a tensor being vmapped over is not supported: "
                "differentiate inside vmap with gradstack.func.grad / vjp / jacrev instead."
            )
        return self


def _reduce_bool(t: BatchedTensor, name: str, dim, keepdim):
    """``all``/``any`` of a batched tensor: ``ne(0)`` then an ``amax``/``amin`` reduction
    (ops with batching rules) instead of Tensor's direct numpy call."""
    nz = t.ne(0)
    if dim is None:
        return nz.amin() if name == "all" else nz.amax()
    return nz.amin(dim, keepdim) if name == "all" else nz.amax(dim, keepdim)


def is_batched(x) -> bool:
    """Whether ``x`` is a :class:`BatchedTensor`."""
    return type(x) is BatchedTensor


def make_batched(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """The batched tensor whose physical value is ``value``, batched along ``bdim``."""
    shape = tuple(value.shape)
    logical = shape[:bdim] + shape[bdim + 1 :]
    # (a batched value's storage is its stand-in, of the right dtype too)
    t = Tensor._make_subclass(BatchedTensor, _dummy(_ext.data_of(value).dtype, logical))
    d = t.__dict__
    d["_gs_value"] = value
    d["_gs_bdim"] = bdim
    d["_gs_level"] = level
    return t


def unwrap(x, level: int):
    """``(value, bdim)`` of a tensor batched at ``level``, else ``(x, None)``."""
    if type(x) is BatchedTensor and x._gs_level == level:
        return x._gs_value, x._gs_bdim
    return x, None


def flatten_levels(x):
    """``(physical, {level: dim})``: the innermost value and where each level's batch dim
    is in it (an unbatched tensor gives ``(x, {})``)."""
    chain = []
    while type(x) is BatchedTensor:
        chain.append((x._gs_level, x._gs_bdim))
        x = x._gs_value
    dims: dict = {}
    # innermost wrapper first: its bdim indexes the physical tensor directly; each outer
    # one indexes the logical tensor of the wrapper inside it (physical dims of the inner
    # levels removed)
    taken: list = []
    for level, bdim in reversed(chain):
        free = [i for i in range(x.dim()) if i not in taken]
        phys = free[bdim]
        dims[level] = phys
        taken.append(phys)
    return x, dims


def nest(phys, dims: dict):
    """The batched tensor (nested by level, lowest innermost) over ``phys`` whose level
    ``L``'s batch dim is ``phys``'s dim ``dims[L]``; the inverse of :func:`flatten_levels`."""
    out = phys
    taken: list = []
    for level in sorted(dims):
        phys_dim = dims[level]
        free = [i for i in range(phys.dim()) if i not in taken]
        out = make_batched(out, free.index(phys_dim), level)
        taken.append(phys_dim)
    return out


def level_sizes(x) -> dict:
    """``{level: batch size}`` of every level ``x`` is batched at."""
    phys, dims = flatten_levels(x)
    shape = tuple(phys.shape)
    return {lv: shape[d] for lv, d in dims.items()}


def check_alive(x) -> None:
    """Raise if ``x`` is batched at a vmap level that is no longer open (it escaped)."""
    while type(x) is BatchedTensor:
        if _levels.find(x._gs_level) is None:
            raise RuntimeError(
                "vmap: a tensor created inside vmap (level "
                f"{x._gs_level}) was used after that vmap returned. Return it from the "
                "function instead of keeping a reference to it."
            )
        x = x._gs_value
