"""Kernels of the complex-number ops: ``view_as_real``, ``view_as_complex``, ``conj``,
``conj_physical``, ``angle`` (of a complex tensor), ``polar`` and ``complex``.

``real`` and ``imag`` are not ops: as in torch they are ``view_as_real(z)[..., 0]`` and
``[..., 1]`` (their ``grad_fn`` is torch's ``SelectBackward0``), written in
``complex_ops.py``.

``conj`` of a complex tensor is a lazy conjugate view and ``_neg_view`` a lazy negative
view (Note [The conjugate and negative bits] in ``lazy_views.py``).
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import lazy_views
from ._dispatch import OPS
from ._tensor import Tensor, _data, _wrap, _wrap_view

__all__: list[str] = []

_TYPE_NAMES = _dt.SCALAR_TYPE_NAMES


def scalar_type_name(d) -> str:
    """torch's C++ name of a dtype in messages (``Float``, ``ComplexDouble`` ...)."""
    return _TYPE_NAMES[d.name]


def _tensor_arg(x, fname, arg="self"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x


@OPS["view_as_real"].set_kernel
def view_as_real(input):
    x = _data(_tensor_arg(input, "view_as_real"))
    if lazy_views.kind_of(input) == "conj":
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, "
            "be warned that the resulting tensor will NOT alias the original."
        )
    if x.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    r = _as_real_view(x, part)
    return _wrap_view(r, input)


def _as_real_view(x: np.ndarray, part: np.dtype) -> np.ndarray:
    """The float view of a complex array: one more dim of 2 (real, imaginary), the other
    strides unchanged."""
    pair = np.lib.stride_tricks.as_strided(
        x.real, shape=x.shape + (2,), strides=x.strides + (part.itemsize,), writeable=True
    )
    if not x.flags.writeable:
        pair.flags.writeable = False
    return pair


@OPS["view_as_complex"].set_kernel
def view_as_complex(input):
    x = _data(_tensor_arg(input, "view_as_complex"))
    d = _dt.from_numpy_dtype(x.dtype)
    if d not in (_dt.float32, _dt.float64):
        if d is _dt.float16:
            raise RuntimeError(
                "view_as_complex of a float16 tensor needs complex32, which gradstack does not "
                "have; convert with .float() first"
            )
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {scalar_type_name(d)}"
        )
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.strides[-1] != x.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * x.itemsize) for s in x.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if _offset(x) % (2 * x.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    whole = np.dtype(np.complex64 if x.dtype == np.float32 else np.complex128)
    r = x.view(whole)[..., 0]
    return _wrap_view(r, input)


def _owner(x: np.ndarray):
    """The outermost array owning ``x``'s memory (a buffer for ``np.ndarray``)."""
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


def _offset(x: np.ndarray) -> int:
    """``x``'s byte offset into the memory of the array that owns it."""
    owner = _owner(x)
    return x.__array_interface__["data"][0] - owner.__array_interface__["data"][0]


@OPS["conj"].set_kernel
def conj(input):
    x = _data(_tensor_arg(input, "conj"))
    if x.dtype.kind != "c":
        return input
    return _flip(input, "conj")


@OPS["_neg_view"].set_kernel
def neg_view(input):
    _tensor_arg(input, "_neg_view")
    return _flip(input, "neg")


def _flip(t, kind):
    """A lazy ``kind`` view of ``t``; of a lazy ``kind`` view, the memory it mirrors (the
    bit cleared: ``z.conj().conj()`` aliases ``z``)."""
    own = lazy_views.kind_of(t)
    if own is None:
        return lazy_views.make_lazy(t, kind)
    if own != kind:
        raise NotImplementedError(
            f"a lazy {kind} view of a lazy {own} view: resolve it first (resolve_{own}())"
        )
    return _wrap_view(lazy_views.source_alias(t), t._gs_lazy_view.base)


@OPS["conj_physical"].set_kernel
def conj_physical(input):
    x = _data(_tensor_arg(input, "conj_physical"))
    return _wrap(np.conj(x)) if x.dtype.kind == "c" else _wrap(x.copy())


@OPS["angle"].set_kernel
def angle(input):
    x = _data(_tensor_arg(input, "angle"))
    return _wrap(np.ascontiguousarray(np.angle(x)))


def _real_pair(a, b, fname, first, second):
    ta = _tensor_arg(a, fname, first)
    tb = _tensor_arg(b, fname, second)
    xa, xb = _data(ta), _data(tb)
    da, db = _dt.from_numpy_dtype(xa.dtype), _dt.from_numpy_dtype(xb.dtype)
    if not (da.is_floating_point and db.is_floating_point):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{scalar_type_name(da)} and {scalar_type_name(db)}"
        )
    if da is not db:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(da)} but got scalar type "
            f"{scalar_type_name(db)} for second argument"
        )
    if da is _dt.float16:
        raise RuntimeError(
            f"{fname}(): float16 parts need complex32, which gradstack does not have"
        )
    try:
        shape = np.broadcast_shapes(xa.shape, xb.shape)
    except ValueError:
        from ._shapes import broadcast_error

        raise broadcast_error(xa.shape, xb.shape) from None
    return xa, xb, da.to_complex().numpy, shape


@OPS["polar"].set_kernel
def polar(abs, angle):  # noqa: A002 - torch's argument names
    r, theta, cd, shape = _real_pair(abs, angle, "polar", "abs", "angle")
    out = np.empty(shape, dtype=cd)
    out.real = r * np.cos(theta)
    out.imag = r * np.sin(theta)
    return _wrap(out)


@OPS["complex"].set_kernel
def complex_(real, imag):
    re, im, cd, shape = _real_pair(real, imag, "complex", "real", "imag")
    out = np.empty(shape, dtype=cd)
    out.real = re
    out.imag = im
    return _wrap(out)
