"""The dropouts as functions: ``dropout`` (elementwise), ``dropout1d``/``2d``/``3d`` (whole
channels), and ``alpha_dropout``/``feature_alpha_dropout`` (SELU's, which keep zero mean
and unit variance).

As torch's ``_dropout_impl``: the noise is drawn with ``bernoulli_(1 - p)`` from torch's
generator (the same seed gives torch's masks; channel-wise, one draw per channel: the noise
has shape ``(N, C, 1, ...)``, and unbatched inputs get a batch dim for the draw), scaled,
then multiplied with the input in one product (MulBackward0).

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
>>> dropout(gt.ones(3), training=False).tolist()
[1.0, 1.0, 1.0]
>>> _ = gt.manual_seed(0)
>>> y = dropout2d(gt.ones(1, 4, 2, 2), p=0.5)
>>> sorted({v for v in y.flatten().tolist()})  # whole channels are 0 or 2
[0.0, 2.0]
"""

from __future__ import annotations

import math
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor, kernels

__all__ = [
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """During training, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; the identity otherwise.

    As torch's CPU dropout: the mask is ``empty_like(input).bernoulli_(1 - p)`` divided by
    ``1 - p`` (torch's generator: the same seed gives torch's mask), then one
    multiplication by it (MulBackward0), ``input.mul_(mask)`` with ``inplace=True``.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        noise = gt.zeros((), dtype=input.dtype)
    else:
        with ag.no_grad():
            noise = _noise_like(input).bernoulli_(1.0 - p).div_(1.0 - p)
    return input.mul_(noise) if inplace else input * noise


def _noise_like(input: Tensor) -> Tensor:
    """``empty_like(input)`` for dropout's noise.

    Note [Dropout's noise is gradstack's block]
    The noise is saved for the backward and freed by it; made by ``empty_like``, a
    factory, its block was glibc's, which trimmed it off the top of its heap after the
    backward and page-faulted it back in at the next step (minGPT: the three masks of a
    block, 2.3 MiB, each step).  For a C-contiguous float input the noise is allocated as
    an op's result instead (``kernels.result_empty``), so the block cache reuses it; the
    same draws (``bernoulli_`` fills a contiguous tensor in order either way).
    """
    if (
        type(input) is Tensor
        and (input.dtype is gt.float32 or input.dtype is gt.float64)
        and not input.is_meta
        and input.is_contiguous()
    ):
        return gt.from_numpy(kernels.result_empty(tuple(input.shape), input.dtype.numpy))
    return gt.empty_like(input)


# -------------------------------------------------------------------------------------
# channel-wise dropout


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        noise = gt.zeros((), dtype=input.dtype)
    else:
        shape = (input.shape[0], input.shape[1]) + (1,) * (input.dim() - 2)
        with ag.no_grad():
            noise = gt.empty(shape, dtype=input.dtype).bernoulli_(1.0 - p).div_(1.0 - p)
    return input.mul_(noise) if inplace else input * noise


def _maybe_unbatched(input: Tensor, batched: bool, p: float, training: bool, inplace: bool):
    if batched:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(input.unsqueeze(0), p, training, inplace)  # (in place: a view)
    return input if inplace else out.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    (scaling the others by ``1 / (1 - p)``) in training."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _maybe_unbatched(input, input.dim() == 3, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of an ``(N, C, H, W)`` input with probability ``p``; a 3-d input
    is taken as ``(N, C, L)``, with torch's warning."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            UserWarning,
            stacklevel=2,
        )
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p``."""
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            UserWarning,
            stacklevel=2,
        )
    return _maybe_unbatched(input, input.dim() == 5, p, training, inplace)


# -------------------------------------------------------------------------------------
# alpha dropout


# (torch's constant in aten/src/ATen/native/Dropout.cpp: SELU's alpha * scale)
_ALPHA = 1.7580993408473766


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
