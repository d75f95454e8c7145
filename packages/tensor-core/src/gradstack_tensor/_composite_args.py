"""Argument checks and small helpers shared by tensor-core's composite modules
(``matrix_builders``, ``combinatorics``, ``covariance``, ``integration``, ``counting``,
``scans``, ``indexed_writes`` and the number functions of ``elementwise_composites``):
torch's errors for a wrong argument type, dtype names as torch prints them, and the
write of an in-place variant's result."""

from __future__ import annotations

import numpy as np

from ._out import _SCALAR_NAMES
from ._tensor import Tensor, _wrap


def _gt():
    import gradstack_tensor as gt

    return gt


def _tensor(x, fname: str, name: str = "input", position: int | None = None) -> Tensor:
    """``x``, or torch's TypeError when it is not a Tensor (``(position N)`` after the
    argument's name where torch's message has it)."""
    if not isinstance(x, Tensor):
        at = "" if position is None else f" (position {position})"
        raise TypeError(f"{fname}(): argument '{name}'{at} must be Tensor, not {type(x).__name__}")
    return x


def method_form(module: str, name: str, method: str, doc: str, check=_tensor):
    """The function `module`.``<name>(input)``: the Tensor method `method` of `input`,
    after ``check(input, name)`` (torch's TypeError for a non-Tensor)."""

    def function(input):
        return getattr(check(input, name), method)()

    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = doc
    return function


def _int(value, fname: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fname}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _long(a) -> Tensor:
    return _wrap(np.array(a, dtype=np.int64, order="C"))


def _name(dtype) -> str:
    return _SCALAR_NAMES[dtype.name]


def _floating(dtype) -> bool:
    return dtype.name.startswith("float")


def _integral(dtype) -> bool:
    return dtype.name.startswith(("int", "uint"))


def _zeros(shape, dtype) -> Tensor:
    return _gt().zeros(tuple(shape), dtype=dtype)


def _write_inplace(fname: str, input: Tensor, result: Tensor) -> Tensor:
    """``input.copy_(result)`` after torch's checks of an in-place op's result."""
    if tuple(result.shape) != tuple(input.shape):
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if result.dtype is not input.dtype and not _gt().can_cast(result.dtype, input.dtype):
        raise RuntimeError(
            f"result type {_name(result.dtype)} can't be cast to the desired output type "
            f"{_name(input.dtype)}"
        )
    return input.copy_(result)
