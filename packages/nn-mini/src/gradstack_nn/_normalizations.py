"""``group_norm`` and ``rms_norm``, composed of means and elementwise ops.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[[1.0], [3.0]]])
>>> [round(v, 4) for v in group_norm(x, 1).flatten().tolist()]
[-1.0, 1.0]
>>> [round(v, 4) for v in rms_norm(gt.tensor([3.0, 4.0]), (2,)).tolist()]
[0.8485, 1.1314]
"""

from __future__ import annotations

import numpy as np
from gradstack_tensor import Tensor

__all__ = ["group_norm", "rms_norm"]


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each of ``num_groups`` groups of channels (dim 1) of each sample over the
    group's channels and positions (biased variance), then scale and shift per channel."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"group_norm(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    grouped = input.reshape(n, num_groups, -1)
    mean = grouped.mean(-1, keepdim=True)
    var = grouped.var(-1, keepdim=True, correction=0)
    out = ((grouped - mean) / (var + eps).sqrt()).reshape(*input.shape)
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


def rms_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """``input / sqrt(mean(input ** 2) + eps)`` over the trailing ``normalized_shape`` dims
    (``eps`` defaults to the dtype's machine epsilon, as torch), times ``weight``."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape) :]) != shape or len(shape) > input.dim():
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype.numpy).eps)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    out = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out
