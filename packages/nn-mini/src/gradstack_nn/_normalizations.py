"""``group_norm``, ``rms_norm`` and ``instance_norm``, composed of means and elementwise ops.

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

__all__ = ["group_norm", "rms_norm", "instance_norm"]


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


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample over its positions (an ``(N, C, *)`` input),
    then scale and shift per channel.  With ``use_input_stats`` the running statistics
    (when given) move towards the batch average of the samples' mean and unbiased
    variance, as torch's; without it they normalise."""
    from gradstack_autograd import no_grad

    if input.dim() < 3:
        raise ValueError(f"instance_norm expects an (N, C, *) input, got {input.dim()}-D")
    n, c = input.shape[0], input.shape[1]
    dims = tuple(range(2, input.dim()))
    shape = (1, c) + (1,) * (input.dim() - 2)
    if use_input_stats:
        count = 1
        for d in dims:
            count *= input.shape[d]
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size "
                f"{list(input.shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, keepdim=True, correction=0)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    batch_mean = mean.detach().reshape(n, c).mean(0)
                    running_mean.mul_(1 - momentum).add_(batch_mean * momentum)
                if running_var is not None:
                    unbiased = var.detach().reshape(n, c) * (count / (count - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.mean(0) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            )
        mean = running_mean.reshape(*shape)
        var = running_var.reshape(*shape)
    out = (input - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out
