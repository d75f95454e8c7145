"""Normalisations as functions: ``batch_norm`` and ``layer_norm`` (one op of the
registry each: NativeBatchNormBackward0, NativeLayerNormBackward0), and, composed of means
and elementwise ops, ``group_norm``, ``rms_norm``, ``instance_norm``,
``local_response_norm`` and ``normalize``.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[[1.0], [3.0]]])
>>> [round(v, 4) for v in group_norm(x, 1).flatten().tolist()]
[-1.0, 1.0]
>>> [round(v, 4) for v in rms_norm(gt.tensor([3.0, 4.0]), (2,)).tolist()]
[0.8485, 1.1314]
>>> [round(v, 4) for v in normalize(gt.tensor([[3.0, 4.0]]))[0].tolist()]
[0.6, 0.8]
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_autograd import Function
from gradstack_tensor import Tensor
from gradstack_tensor.extension import checked_arguments

from ._utils import _check_tensor
from .padding import pad
from .pooling import avg_pool2d

__all__ = [
    "batch_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "instance_norm",
    "local_response_norm",
    "normalize",
]

_OP = gt.get_op


@checked_arguments(
    "layer_norm",
    "Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps",
    first=0,
)
def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims to zero mean and unit
    (biased) variance, then scale by ``weight`` and shift by ``bias``
    (NativeLayerNormBackward0)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _OP("layer_norm")(input, tuple(normalized_shape), weight, bias, eps)


def _verify_batch_size(size) -> None:
    values = size[0]
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation over dim 1 of an ``(N, C, *)`` input (NativeBatchNormBackward0).

    In training, the batch statistics normalise and the running statistics (when given)
    are updated in place with ``momentum`` (the unbiased variance); in evaluation, the
    running statistics normalise.
    """
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    return _OP("batch_norm")(
        input, weight, bias, running_mean, running_var, bool(training), momentum, eps
    )


@checked_arguments(
    "group_norm", "Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps", first=0
)
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


@checked_arguments(
    "rms_norm", "Tensor input, int[] normalized_shape, Tensor? weight, float? eps", first=0
)
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


def _update_instance_stats(input, running_mean, running_var, momentum, dims, count):
    """torch's running statistics of an instance norm.

    Note [Instance norm's running statistics, in torch's order]
    torch runs a batch norm over the ``(1, N * C, *)`` view with the running statistics
    repeated ``N`` times, then stores the mean over ``N`` of the ``N`` updated copies: each
    sample's mean (and unbiased variance) is accumulated in double, rounded to the
    statistics' dtype, mixed in as ``momentum * stat + (1 - momentum) * running`` in that
    dtype, and the copies are averaged.  Averaging the samples' means first and mixing once
    (the algebraically equal order) gave results a few ulps off torch's.
    """
    n, c = input.shape[0], input.shape[1]
    x = input.detach().to(gt.float64)
    mean = x.mean(dims, keepdim=True)
    for running, stat in (
        (running_mean, mean),
        (running_var, (x - mean).pow(2).sum(dims, keepdim=True) / (count - 1)),
    ):
        if running is not None:
            stat = stat.reshape(n, c).to(running.dtype)
            running.copy_((stat * momentum + running * (1 - momentum)).mean(0))


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
    c = input.shape[1]
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
                _update_instance_stats(input, running_mean, running_var, momentum, dims, count)
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


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x**2 over size neighbouring channels) ** beta`` for an
    ``(N, C, *)`` input with at least one spatial dim, as torch's composite: the squares
    padded over channels and averaged by an ``avg_pool2d`` with a ``(size, 1)`` window
    (torch pools a 5-d view with ``avg_pool3d``: the same windows)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} "
            "dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = tuple(input.shape)
    div = div.unsqueeze(1) if dim == 3 else div.reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    if dim > 3:
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    x = _check_tensor(input, "normalize", "input")
    denom = x.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(x)
    if out is None:
        return x / denom
    return out.copy_(x / denom)


# Note [torch's legacy cross-map LRN]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``nn.CrossMapLRN2d`` is not ``local_response_norm``: torch's autograd ``Function``
# (torch/nn/_functions.py) sums the squares with a running window that adds channel
# ``c + pre_pad - 1`` and removes channel ``c - pre_pad`` only when ``c > pre_pad``, so
# channel 0's square is never removed (pre_pad = (size - 1) // 2 + 1), and its hand-written
# backward uses a window of its own (the one ``inverse_pre_pad = size - (size - 1) / 2``
# centres), not the derivative of that forward.  Both windows are 0/1 matrices over the
# channels here, built by running torch's loops on indices, so values and gradients are
# torch's.  torch's backward cannot be differentiated again (its ``out=`` ops raise); this
# one is written with differentiable ops and so differentiates torch's backward formula.


def _cross_map_windows(channels: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The forward's and the backward's channel windows of torch's CrossMapLRN2d, as
    ``(channels, channels)`` 0/1 matrices: row ``c`` marks the channels summed for ``c``."""
    forward = np.zeros((channels, channels))
    pre_pad = int((size - 1) / 2 + 1)
    forward[0, : min(pre_pad, channels)] = 1.0
    for c in range(1, channels):
        forward[c] = forward[c - 1]
        if c < channels - pre_pad + 1:
            forward[c, c + pre_pad - 1] += 1.0
        if c > pre_pad:
            forward[c, c - pre_pad] -= 1.0
    backward = np.zeros((channels, channels))
    inverse_pre_pad = int(size - (size - 1) / 2)
    for c in range(channels):
        lo, hi = c - inverse_pre_pad, c - inverse_pre_pad + size - 1
        backward[c, max(lo, 0) : min(hi, channels - 1) + 1] = 1.0
    return forward, backward


def _channel_mix(window: np.ndarray, t: Tensor) -> Tensor:
    """``sum_j window[c, j] * t[:, j]`` for an ``(N, C, H, W)`` tensor."""
    n, c, h, w = t.shape
    mixed = gt.tensor(window, dtype=t.dtype) @ t.reshape(n, c, h * w)
    return mixed.reshape(n, c, h, w)


def _cross_map_scale(input: Tensor, window: np.ndarray, size, alpha, k) -> Tensor:
    return _channel_mix(window, input * input).mul(alpha / size).add(k)


class _CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        forward, backward = _cross_map_windows(input.shape[1], size)
        ctx.save_for_backward(input)
        ctx.args = (size, alpha, beta, k, forward, backward)
        return input * _cross_map_scale(input, forward, size, alpha, k).pow(-beta)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        size, alpha, beta, k, forward, backward = ctx.args
        scale = _cross_map_scale(input, forward, size, alpha, k)
        output = input * scale.pow(-beta)
        accum = _channel_mix(backward, grad_output * output / scale)
        grad = scale.pow(-beta) * grad_output - input * accum * (2 * alpha * beta / size)
        return grad, None, None, None, None


def _cross_map_lrn2d(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
) -> Tensor:
    """torch's legacy ``CrossMapLRN2d`` function (Note [torch's legacy cross-map LRN]) for
    a 4-d input."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    return _CrossMapLRN2d.apply(input, size, alpha, beta, k)
