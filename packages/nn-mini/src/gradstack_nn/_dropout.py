"""Channel-wise dropout: ``dropout1d``, ``dropout2d``, ``dropout3d``.

As torch's ``_dropout_impl`` with ``feature_dropout``: one Bernoulli draw per channel
(the noise has shape ``(N, C, 1, ...)``, drawn with ``bernoulli_(1 - p)`` from torch's
generator, so the same seed gives torch's masks), divided by ``1 - p``, then one product
with the input (MulBackward0).  Unbatched inputs get a batch dim for the draw.

Examples
--------
>>> import gradstack_tensor as gt
>>> y = dropout2d(gt.ones(1, 4, 2, 2), p=0.5)
>>> sorted({v for v in y.flatten().tolist()})  # whole channels are 0 or 2
[0.0, 2.0]
"""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = ["dropout1d", "dropout2d", "dropout3d"]


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


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
