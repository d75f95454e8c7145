"""The functional forms of torch's less common layers, composed of gradstack ops:
``bilinear``, ``alpha_dropout``/``feature_alpha_dropout``, ``rrelu``,
``lp_pool1d``/``lp_pool2d``, ``channel_shuffle`` and ``local_response_norm``.

Each checks its arguments as torch does (the same exception types and words) and then
computes torch's formula with existing differentiable ops, so every one differentiates to
any order; the graph holds the nodes of the parts (``bilinear``: a product and a sum,
where torch records one ``ViewBackward0`` over ``_trilinear``).

Note [Random layers draw torch's numbers]
tensor-core's generator is torch's CPU generator, so a layer that draws what torch's
kernel draws, in the same order and dtype, gives torch's numbers after the same
``manual_seed``.  ``alpha_dropout`` draws its noise with ``bernoulli_(1 - p)`` on a tensor
of the input's (or, feature-wise, ``(N, C, 1, ...)``) shape, as torch's ``_dropout_impl``;
``rrelu`` in training draws one float64 ``uniform(lower, upper)`` per element ``<= 0``, in
row-major order, with the bounds first rounded to the input's compute type (float for
float32 inputs), as torch's ``_rrelu_with_noise_train`` loop does.  That loop is compiled
without FMA (whatever the CPU capability, where ``uniform_``'s kernel fuses the
multiply-add), so the slopes are ``uniform_(0, 1)``'s exact ``u53`` values scaled and
shifted in two roundings: torch's float64 slopes bit for bit.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[-2.0, 4.0]])
>>> rrelu(x, 0.25, 0.75).tolist()  # evaluation: the slope (lower + upper) / 2
[[-1.0, 4.0]]
>>> lp_pool1d(gt.tensor([[[3.0, 4.0, 1.0, 1.0]]]), 2, 2).tolist()
[[[5.0, 1.4142135381698608]]]
>>> channel_shuffle(gt.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
[0.0, 2.0, 1.0, 3.0]
"""

from __future__ import annotations

import math

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = [
    "bilinear",
    "alpha_dropout",
    "feature_alpha_dropout",
    "rrelu",
    "rrelu_",
    "lp_pool1d",
    "lp_pool2d",
    "channel_shuffle",
    "local_response_norm",
]


# -------------------------------------------------------------------------------------
# bilinear


def _check_bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias) -> None:
    """torch's checks in ``at::bilinear``, in its order and words."""
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got "
                f"{input1.shape[i]} and {input2.shape[i]}"
            )
    for n, (t, d) in enumerate(((input1, 1), (input2, 2)), 1):
        if t.shape[-1] != weight.shape[d]:
            raise RuntimeError(
                f"bilinear(): input{n} size does not match weight size: got {t.shape[-1]} "
                f"but expected {weight.shape[d]}"
            )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
            f"expected {weight.shape[0]}"
        )


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    ``input1`` is ``(*, in1)``, ``input2`` ``(*, in2)`` with the same leading dims,
    ``weight`` ``(out, in1, in2)``; computed as one product of ``input1`` with the weight
    viewed as ``(in1, out * in2)``, then a product with ``input2`` summed over ``in2``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> w = gt.ones(2, 3, 4)
    >>> bilinear(gt.ones(5, 3), gt.ones(5, 4), w, gt.tensor([0.0, 1.0])).tolist()[0]
    [12.0, 13.0]
    """
    _check_bilinear(input1, input2, weight, bias)
    out_features, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    mixed = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (mixed.reshape(-1, out_features, in2) * x2.unsqueeze(1)).sum(-1)
    out = out.reshape(*lead, out_features)
    return out + bias if bias is not None else out


# -------------------------------------------------------------------------------------
# alpha dropout

# (torch's constant in aten/src/ATen/native/Dropout.cpp: SELU's alpha * scale)
_ALPHA = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool):
    """torch's ``_dropout_impl`` with ``alpha_dropout``: dropped elements go to SELU's
    negative saturation ``-alpha``, and the affine map ``a * x + b`` keeps the mean and
    the variance (Note [Random layers draw torch's numbers])."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:  # (torch: a product with zeros, without the shift)
        zero = gt.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (input.dim() - 2)
    with ag.no_grad():
        noise = gt.empty(shape, dtype=input.dtype).bernoulli_(1.0 - p)
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
    out = input.mul_(noise) if inplace else input * noise
    return out.add_(b)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False):
    """In training, set each element to SELU's saturation ``-1.7581`` with probability
    ``p`` and map all by ``a * x + b`` so that zero mean and unit variance are kept; the
    identity otherwise (note: ``training`` defaults to False, as torch's).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> alpha_dropout(gt.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    >>> y = alpha_dropout(gt.zeros(1000), 0.2, training=True)
    >>> sorted({round(v, 4) for v in y.tolist()})
    [-1.2362, 0.309]
    """
    _check_p(p)
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """:func:`alpha_dropout` of whole channels: one draw per ``(n, c)`` of an
    ``(N, C, ...)`` input."""
    _check_p(p)
    return _alpha_dropout(input, p, training, inplace, feature=True)


# -------------------------------------------------------------------------------------
# randomized leaky ReLU


def _check_bounds(lower: float, upper: float) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_noise(input: Tensor, lower: float, upper: float) -> Tensor:
    """The slope of each element: 1 where positive, else a uniform draw (Note [Random
    layers draw torch's numbers])."""
    if not input.is_floating_point():
        type_name = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char"}
        raise NotImplementedError(
            f'"rrelu_with_noise_out_cpu" not implemented for '
            f"'{type_name.get(input.dtype.name, input.dtype.name)}'"
        )
    with ag.no_grad():
        values = input.detach().contiguous().numpy()
        negative = values <= 0  # (NaN: False, slope 1, as torch's test)
        if input.dtype is not gt.float64:  # (torch's opmath type, float, holds the bounds)
            lower, upper = float(np.float32(lower)), float(np.float32(upper))
        # (u53 draws, then torch's `u * (upper - lower) + lower` unfused: Note [Random
        # layers draw torch's numbers])
        u = gt.empty(int(negative.sum()), dtype=gt.float64).uniform_(0.0, 1.0).numpy()
        noise = np.ones(values.shape, dtype=values.dtype)
        noise[negative] = (u * (upper - lower) + lower).astype(values.dtype)
        return gt.tensor(noise)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: in training, each element ``<= 0`` is multiplied by a slope
    drawn from ``U(lower, upper)``; in evaluation, by ``(lower + upper) / 2`` (a
    ``leaky_relu``).  ``training`` defaults to False, as torch's."""
    _check_bounds(lower, upper)
    if not training:
        from .functional import leaky_relu

        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = _rrelu_noise(input, lower, upper)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


# -------------------------------------------------------------------------------------
# power-average pooling


def _lp_finish(out: Tensor, count: int, norm_type: float) -> Tensor:
    """torch's ``(sign(out) * relu(abs(out))).mul(count).pow(1 / norm_type)``."""
    return (out.sign() * out.abs().relu()).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last dim of an
    ``(N, C, L)`` or ``(C, L)`` input (``p = inf``: the maximum of ``|x|``); computed as
    torch's: an ``avg_pool1d`` of ``x ** p`` times the window size."""
    from ._pooling import avg_pool1d, max_pool1d

    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, kernel_size, norm_type)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last two dims of an
    ``(N, C, H, W)`` or ``(C, H, W)`` input, as :func:`lp_pool1d`."""
    from ._convolution import max_pool2d
    from ._pooling import avg_pool2d

    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, kw * kh, norm_type)


# -------------------------------------------------------------------------------------
# channel shuffle and local response normalisation


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the ``C`` channels (dim 1) into ``groups`` groups and interleave them:
    ``(N, g, C / g, *)`` transposed to ``(N, C / g, g, *)`` and viewed back."""
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    grouped = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return grouped.reshape(tuple(input.shape))


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x**2 over size neighbouring channels) ** beta`` for an
    ``(N, C, *)`` input with at least one spatial dim, as torch's composite: the squares
    padded over channels and averaged by an ``avg_pool2d`` with a ``(size, 1)`` window
    (torch pools a 5-d view with ``avg_pool3d``: the same windows)."""
    from ._padding import pad
    from ._pooling import avg_pool2d

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
