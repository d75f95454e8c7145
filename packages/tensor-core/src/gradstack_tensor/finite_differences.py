"""torch's ``gradient``: a function's derivative estimated from its samples by finite
differences, second-order accurate inside (central differences) and first- or
second-order at the edges (``edge_order``), along each dim asked for.

It is torch's ``gradient_helper``/``gradient_helper_float`` (ATen's ``ReduceOps.cpp``)
written with slices, arithmetic and ``cat`` in torch's order of operations (so float32
values are torch's, and gradients flow through those ops): a number spacing ``h`` gives
``(f[2:] - f[:-2]) / h / 2`` inside; tensor coordinates give the weights of unevenly spaced
samples.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.gradient(gt.tensor([1.0, 4.0, 9.0, 16.0]))[0].tolist()
[3.0, 4.0, 6.0, 7.0]
>>> gt.gradient(gt.tensor([1.0, 4.0, 9.0, 16.0]), spacing=2.0, edge_order=2)[0].tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from ._dispatch import OPS, dispatch
from ._shapes import _normalize_dim
from ._tensor import Tensor

__all__ = ["gradient"]

_SIGNATURE_ERROR = (
    "gradient() received an invalid combination of arguments - got ({got}), but expected one "
    "of:\n * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Numbers spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Numbers spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)"
)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _type_error(input, spacing, dim, edge_order):
    parts = ["Tensor"]
    for name, v, default in (("spacing", spacing, None), ("dim", dim, None), ("edge_order",
                             edge_order, 1)):  # fmt: skip
        if v is not default:
            parts.append(f"{name}={type(v).__name__}")
    return TypeError(_SIGNATURE_ERROR.format(got=", ".join(parts)))


def _dims(input: Tensor, dim):
    """The dims asked for (all when None), checked as torch's ``dim_list_to_bitset``."""
    if dim is None:
        return list(range(input.dim())), False
    listed = [dim] if _is_int(dim) else list(dim)
    dims = [_normalize_dim(d, input.dim()) for d in listed]
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return dims, True


def _pre_check(input: Tensor, spacing_size: int, dims, dim_given: bool, edge_order) -> None:
    """torch's ``pre_check_gradient``, in its order."""
    if input.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if not dim_given and spacing_size != input.dim():
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
            f"a list of length {spacing_size}"
        )
    if dim_given and spacing_size != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{spacing_size} and a dim argument of length {len(dims)}."
        )
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )


def _slice(t: Tensor, dim: int, start: int, stop: int | None = None) -> Tensor:
    """``at::slice(t, dim, start, stop)`` (negative bounds from the end)."""
    n = t.shape[dim]
    lo = start + n if start < 0 else start
    hi = n if stop is None else (stop + n if stop < 0 else stop)
    return t.narrow(dim, lo, max(hi - lo, 0))


def _cat(prepend: Tensor, center: Tensor, append: Tensor, dim: int) -> Tensor:
    return dispatch(OPS["cat"], ([prepend, center, append], dim))


def _along_number(f: Tensor, d: int, h, edge_order: int) -> Tensor:
    """torch's ``gradient_helper_float`` along ``d`` for the spacing ``h``."""
    center = (_slice(f, d, 2) - _slice(f, d, 0, -2)) / h
    if edge_order == 1:
        prepend = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h
        append = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / h
    else:
        prepend = (
            _slice(f, d, 0, 1) * -1.5 + _slice(f, d, 1, 2) * 2 - _slice(f, d, 2, 3) * 0.5
        ) / h
        append = (
            _slice(f, d, -3, -2) * 0.5 + _slice(f, d, -2, -1) * -2 + _slice(f, d, -1) * 1.5
        ) / h
    return _cat(prepend, center / 2, append, d)


def _along_coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """torch's ``gradient_helper`` along ``d`` for the coordinates ``x`` (1-d)."""
    if x.dim() != 1:
        raise RuntimeError(
            "torch.gradient expected each element of spacing to have one dimension, but got an "
            f"element with {x.dim()} dimensions!"
        )
    shape = [1] * f.dim()
    shape[d] = -1
    ax_dx = x.diff(1, 0)
    dx1, dx2 = ax_dx[:-1], ax_dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(f, d, 0, -2) + b * _slice(f, d, 1, -1) + c * _slice(f, d, 2)
    h0, h1, hm1, hm2 = ax_dx[0], ax_dx[1] if ax_dx.shape[0] > 1 else None, ax_dx[-1], None
    if edge_order == 1:
        prepend = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h0
        append = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / hm1
    else:
        hm2 = ax_dx[-2]
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = (-h0) / (h1 * (h0 + h1))
        prepend = a * _slice(f, d, 0, 1) + b * _slice(f, d, 1, 2) + c * _slice(f, d, 2, 3)
        a = hm1 / (hm2 * (hm1 + hm2))
        b = -(hm1 + hm2) / (hm1 * hm2)
        c = (2 * hm1 + hm2) / (hm1 * (hm1 + hm2))
        append = a * _slice(f, d, -3, -2) + b * _slice(f, d, -2, -1) + c * _slice(f, d, -1)
    return _cat(prepend, center, append, d)


def gradient(input, *, spacing=None, dim=None, edge_order=1) -> tuple:
    """The derivative of the function sampled by ``input`` along each dim (every dim, or
    ``dim``), by finite differences: one tensor per dim.

    Parameters
    ----------
    input : Tensor
        The samples.
    spacing : number, list of numbers, or list of 1-d tensors, optional
        The distance between samples (1 by default; one per dim in a list), or each dim's
        sample coordinates.
    dim : int or list of ints, optional
        The dims to differentiate along (all by default).
    edge_order : int
        1 or 2: the order of the one-sided differences at the edges.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.gradient(gt.tensor([[1.0, 2.0, 4.0], [2.0, 5.0, 9.0]]), dim=1)[0].tolist()
    [[1.0, 1.5, 2.0], [3.0, 3.5, 4.0]]
    >>> x = gt.tensor([0.0, 1.0, 3.0])
    >>> gt.gradient(x * x, spacing=[x])[0].tolist()
    [1.0, 2.0, 4.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if not _is_int(edge_order) or not (
        dim is None
        or _is_int(dim)
        or (isinstance(dim, (list, tuple)) and all(_is_int(d) for d in dim))
    ):
        raise _type_error(input, spacing, dim, edge_order)
    if spacing is None or _is_number(spacing):
        dims, dim_given = _dims(input, dim)
        hs = [1.0 if spacing is None else spacing] * len(dims)
    elif isinstance(spacing, (list, tuple)) and all(_is_number(h) for h in spacing):
        dims, dim_given = _dims(input, dim)
        hs = list(spacing)
    elif isinstance(spacing, (list, tuple)) and all(isinstance(h, Tensor) for h in spacing):
        dims, dim_given = _dims(input, dim)
        hs = list(spacing)
    else:
        raise _type_error(input, spacing, dim, edge_order)
    _pre_check(input, len(hs), dims, dim_given, edge_order)
    return tuple(
        _along_coordinates(input, d, h, edge_order)
        if isinstance(h, Tensor)
        else _along_number(input, d, h, edge_order)
        for d, h in zip(dims, hs)
    )
