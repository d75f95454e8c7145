"""torch's numerical integration: ``trapezoid`` (and its alias ``trapz``) and
``cumulative_trapezoid``, the trapezoidal rule written with ``narrow``, arithmetic,
``sum`` and ``cumsum``, so that it differentiates through them.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.trapezoid(gt.tensor([1.0, 5.0, 10.0])).item()
10.5
"""

from __future__ import annotations

import numpy as np

from ._composite_args import _int, _tensor, _zeros
from ._shapes import _normalize_dim
from ._signatures import checked
from ._tensor import Tensor

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid"]


def _spacing(y: Tensor, x: Tensor, axis: int, fname: str) -> Tensor:
    """``x``'s differences along ``axis``, shaped to broadcast with ``y``'s (torch's
    trapezoid: a 1-d ``x`` lies along ``axis``, a shorter one gets leading 1s)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[axis]:
            raise RuntimeError(f"{fname}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[axis] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    m = x.shape[axis]
    return x.narrow(axis, 1, max(m - 1, 0)) - x.narrow(axis, 0, max(m - 1, 0))


def _dx_number(dx, fname: str) -> float:
    if isinstance(dx, Tensor):
        if dx.numel() != 1:
            raise TypeError(f"{fname}(): argument 'dx' must be Number, not Tensor")
        dx = dx.item()
    if isinstance(dx, (bool, np.bool_)):
        raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")
    if isinstance(dx, complex) or not isinstance(dx, (int, float, np.integer, np.floating)):
        if isinstance(dx, complex):
            raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")
        raise TypeError(f"{fname}(): argument 'dx' must be Number, not {type(dx).__name__}")
    return float(dx)


def _integration_args(fname, y, x, dx, dim):
    y = _tensor(y, fname, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{fname}() received an invalid combination of arguments: both x and dx")
    if x is not None:
        _tensor(x, fname, "x")
    dim = _int(dim, fname, "dim")
    return y, x, dim


def _sides(y: Tensor, axis: int):
    """``y`` without its last and without its first element along ``axis``."""
    n = y.shape[axis]
    return y.narrow(axis, 0, max(n - 1, 0)), y.narrow(axis, min(n, 1), max(n - 1, 0))


@checked("trapezoid")
def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples ``y`` at points ``x`` (a tensor), or
    spaced by ``dx`` (a number, 1 by default).  Zero samples integrate to zeros.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.trapezoid(gt.tensor([1.0, 5.0, 10.0])).item()
    10.5
    >>> gt.trapezoid(gt.tensor([1.0, 5.0, 10.0]), gt.tensor([1.0, 3.0, 6.0])).item()
    28.5
    """
    y, x, dim = _integration_args("trapezoid", y, x, dx, dim)
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = _normalize_dim(dim, y.dim())
    if y.shape[axis] == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != axis)
        return _zeros(shape, y.dtype)
    if x is None:
        step = 1.0 if dx is None else _dx_number(dx, "trapezoid")
        if y.dtype.name == "bool":
            raise RuntimeError(
                "trapezoid: received a bool input for `y`, but bool is not supported"
            )
        ends = y.select(axis, 0) + y.select(axis, -1)
        return (y.sum(axis) - ends * 0.5) * step
    if y.dtype.name == "bool" or x.dtype.name == "bool":
        raise RuntimeError(
            "trapezoid: received a bool input for `x` or `y`, but bool is not supported"
        )
    spacing = _spacing(y, x, axis, "trapezoid")
    left, right = _sides(y, axis)
    return ((left + right) * spacing).sum(axis) / 2.0


@checked("trapz", "Tensor x")
def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """torch's alias of ``trapezoid``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.trapz(gt.tensor([1.0, 5.0, 10.0]), dx=2).item()
    21.0
    """
    return trapezoid.__wrapped__(y, x, dx=dx, dim=dim)  # (x checked here)


@checked("cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim``: one fewer element there than ``y``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cumulative_trapezoid(gt.tensor([1.0, 5.0, 10.0])).tolist()
    [3.0, 10.5]
    """
    fname = "cumulative_trapezoid"
    y, x, dim = _integration_args(fname, y, x, dx, dim)
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    axis = _normalize_dim(dim, y.dim())
    if x is None:
        step = 1.0 if dx is None else _dx_number(dx, fname)
        if y.dtype.name == "bool":
            raise RuntimeError(f"{fname}: received a bool input for `y`, but bool is not supported")
        left, right = _sides(y, axis)
        return (step / 2.0 * (left + right)).cumsum(axis)
    if y.dtype.name == "bool" or x.dtype.name == "bool":
        raise RuntimeError(
            f"{fname}: received a bool input for `x` or `y`, but bool is not supported"
        )
    spacing = _spacing(y, x, axis, fname)
    left, right = _sides(y, axis)
    return ((left + right) * spacing).cumsum(axis) / 2.0
