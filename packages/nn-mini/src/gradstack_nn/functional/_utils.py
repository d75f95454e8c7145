"""Helpers that the modules of :mod:`gradstack_nn.functional` share (private): torch's
names of the scalar types, its argument checks, and the int pairs and triples of the
spatial functions."""

from __future__ import annotations

import gradstack_autograd as ag
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.dtypes import SCALAR_TYPE_NAMES

_TORCH_TYPE_NAMES = SCALAR_TYPE_NAMES  # torch's names of the scalar types


def _type_name(t: Tensor) -> str:
    return _TORCH_TYPE_NAMES.get(t.dtype.name, t.dtype.name)


def _not_differentiable(fn: str, name: str, t: Tensor | None) -> None:
    if t is not None and t.requires_grad and ag.is_grad_enabled():
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
            "This input cannot have requires_grad True."
        )


def _check_tensor(x, fname: str, name: str) -> Tensor:
    """``x``, or torch's TypeError naming the function ``fname`` and its argument ``name``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _pair(value, name: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 1:
        return _pair(value[0], name)
    if (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return int(value[0]), int(value[1])
    raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")


def _triple(value, name: str) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        v = int(value)
        return (v, v, v)
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return _triple(value[0], name)
        if len(value) == 3 and all(isinstance(v, (int, np.integer)) for v in value):
            return tuple(int(v) for v in value)  # type: ignore[return-value]
    raise TypeError(f"{name} must be an int or a tuple of three ints, got {value!r}")
