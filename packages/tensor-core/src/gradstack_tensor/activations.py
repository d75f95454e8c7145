"""The activations torch has as Tensor methods and top-level functions, not only in
``nn.functional``: ``hardshrink`` and ``prelu`` (``gradstack_nn.functional`` calls these).

Both select with ``where``, so their gradients are torch's: the input's gradient where the
input is kept, zero (``hardshrink``) or the slope (``prelu``) elsewhere, and ``prelu``'s
weight gets the sum of ``grad * x`` over the positions it scales.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.hardshrink(gt.tensor([-1.0, 0.3, 0.7])).tolist()
[-1.0, 0.0, 0.699999988079071]
>>> gt.prelu(gt.tensor([-2.0, 3.0]), gt.tensor([0.25])).tolist()
[-0.5, 3.0]
"""

from __future__ import annotations

from ._signatures import checked
from ._tensor import Tensor
from .autocast_mode import autocast_function
from .functions import where

__all__ = ["hardshrink", "prelu"]


def _tensor(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


@checked("hardshrink", "Tensor input, float lambd", first=0)
def hardshrink(input, lambd=0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = _tensor(input, "hardshrink", "input")
    return where((x > lambd) | (x < -lambd), x, 0.0)


@autocast_function("prelu")
def prelu(input, weight) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; a weight of several elements holds
    one slope per channel (dim 1, or dim 0 of a 1-d input)."""
    x = _tensor(input, "prelu", "input")
    w = _tensor(weight, "prelu", "weight")
    if w.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.dim()}"
        )
    if w.numel() != 1:
        channels = x.shape[1] if x.dim() >= 2 else (x.shape[0] if x.dim() == 1 else 1)
        if w.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {w.numel()} and channel size = {channels}."
            )
        if x.dim() >= 2:
            w = w.reshape(*((channels,) + (1,) * (x.dim() - 2)))
    return where(x > 0, x, w * x)
