"""``gradstack_nn.init`` (``gradstack.nn.init``): in-place parameter initialisation.

Each function fills its tensor in place under ``no_grad`` (so it works on leaf
parameters that require grad), draws from gradstack's seeded generator (or
``generator=``), and returns the tensor.  The formulas are torch's.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter, init
>>> w = Parameter(gt.empty(100, 20))
>>> _ = init.kaiming_uniform_(w, a=5 ** 0.5)   # what Linear does: bound 1/sqrt(fan_in)
>>> bool(w.abs().max() <= 1 / 20 ** 0.5)
True
>>> init.zeros_(w).sum().item()
0.0
"""

from __future__ import annotations

import math
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: 1 (linear, sigmoid), 5/3 (tanh),
    sqrt(2) (relu), sqrt(2 / (1 + slope**2)) (leaky_relu), 3/4 (selu)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _check(tensor, name):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"init.{name}: expected a gradstack Tensor, got {type(tensor).__name__}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``."""
    _check(tensor, "uniform_")
    with ag.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with values drawn from N(mean, std**2)."""
    _check(tensor, "normal_")
    with ag.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Fill ``tensor`` from N(mean, std**2) restricted to ``[a, b]`` (by rejection)."""
    _check(tensor, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with ag.no_grad():
        tensor.normal_(mean, std, generator=generator)
        for _ in range(1000):
            bad = (tensor < a) | (tensor > b)
            if not bad.any():
                break
            fresh = gt.empty_like(tensor).normal_(mean, std, generator=generator)
            tensor.copy_(gt.where(bad, fresh, tensor))
        else:  # pragma: no cover - only for [a, b] far in the tails
            tensor.clamp_(a, b)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``."""
    _check(tensor, "constant_")
    with ag.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    _check(tensor, "zeros_")
    with ag.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity matrix."""
    _check(tensor, "eye_")
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ag.no_grad():
        return tensor.copy_(gt.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: each output channel of
    each of the ``groups`` copies its input channel of the same index at the kernel's
    centre (as many as the channels allow), so the convolution is the identity on them.

    >>> import gradstack_tensor as gt
    >>> w = dirac_(gt.empty(2, 2, 3))
    >>> w[0, 0].tolist(), w[0, 1].tolist()
    ([0.0, 1.0, 0.0], [0.0, 0.0, 0.0])
    """
    _check(tensor, "dirac_")
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    centre = tuple(n // 2 for n in sizes[2:])
    with ag.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``.

    ``Linear`` uses ``a=sqrt(5)``, which gives ``bound = 1 / sqrt(fan_in)``.
    """
    _check(tensor, "kaiming_uniform_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``."""
    _check(tensor, "kaiming_normal_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill ``tensor`` (2 or more dims, viewed as ``(rows, numel // rows)``) with a
    (semi-)orthogonal matrix times ``gain``: torch's method, the Q of the QR decomposition
    of a standard normal matrix with the signs of R's diagonal folded in (Saxe et al.).

    >>> import gradstack_tensor as gt
    >>> w = orthogonal_(gt.empty(3, 5))
    >>> bool(((w @ w.t()) - gt.eye(3)).abs().max() < 1e-5)
    True
    """
    _check(tensor, "orthogonal_")
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with ag.no_grad():
        flattened = gt.empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator)
    a = flattened.numpy().astype(np.float64)
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with ag.no_grad():
        tensor.copy_(gt.from_numpy(np.ascontiguousarray(q.reshape(tuple(tensor.shape)))))
        tensor.mul_(gain)
    return tensor
