"""The activation functions of ``torch.nn.functional`` that nn-mini composes from
gradstack ops: elu, selu, celu, softplus, hardtanh, relu6, hardsigmoid, hardswish, mish,
softsign, tanhshrink, softmin, threshold, glu, prelu, hardshrink, softshrink.

Note [Activations keep torch's derivative at every point]
Each is written so that its gradient is torch's formula everywhere, boundaries included:
``hardtanh``'s is 1 strictly inside ``(min_val, max_val)`` and 0 at the bounds (a
``clamp`` would give 1 there), ``hardswish``'s is ``x / 3 + 0.5`` on ``[-3, 3]``; and a
branch that ``where`` does not select is computed on a clamped input (``expm1(min(x,
0))``), so that its zero gradient never meets an inf (``0 * exp(1000)`` would be NaN).
They record the nodes of their parts (Note [Composites record their parts] in
tensor-core) rather than torch's single node (EluBackward0 ...).  One known difference:
the ELU family's second derivative at exactly ``x = 0`` is ``alpha`` here and 0 in torch,
whose double-backward formula tests ``x < 0`` where its first derivative tests ``x <= 0``;
a composite cannot split the two (first derivatives agree everywhere).  prelu's cross
derivative (of the input's gradient by the weight) at ``x = 0`` is 1 here, 0 in torch.
hardsigmoid has a second derivative here (0 almost everywhere); torch raises "not
implemented"; torch's float64 hardsigmoid gradient multiplies by 1/6 rounded to float32
(its kernel's constant), here by the double 1/6.

Examples
--------
>>> import gradstack_tensor as gt
>>> [round(v, 4) for v in elu(gt.tensor([-1.0, 0.0, 2.0])).tolist()]
[-0.6321, 0.0, 2.0]
>>> hardtanh(gt.tensor([-2.0, 0.5, 3.0])).tolist()
[-1.0, 0.5, 1.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = [
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "softplus",
    "hardtanh",
    "hardtanh_",
    "relu6",
    "hardsigmoid",
    "hardswish",
    "mish",
    "softsign",
    "tanhshrink",
    "softmin",
    "threshold",
    "threshold_",
    "glu",
    "prelu",
    "hardshrink",
    "softshrink",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _tensor(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(x)}'")
    return x


def _type_name(t: Tensor) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte", "bool": "Bool"}.get(t.dtype.name, t.dtype.name)  # fmt: skip


def _in_place(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    return input.copy_(result) if inplace else result


def _elu(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    negative = (x.clamp(max=0.0) * input_scale).expm1() * (alpha * scale)
    return gt.where(x > 0, x * scale if scale != 1 else x, negative)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    x = _tensor(input, "elu")
    return _in_place(x, _elu(x, alpha, 1.0, 1.0), inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    x = _tensor(input, "selu")
    return _in_place(x, _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x = _tensor(input, "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _in_place(x, _elu(x, alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    x = _tensor(input, "softplus")
    scaled = x * beta if beta != 1 else x
    smooth = scaled.clamp(max=threshold).exp().log1p()
    if beta != 1:
        smooth = smooth / beta
    return gt.where(scaled > threshold, x, smooth)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``; its gradient is 1 strictly inside (Note
    [Activations keep torch's derivative at every point])."""
    x = _tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = (x > min_val) & (x < max_val)
    result = gt.where(inside, x, x.detach().clamp(min_val, max_val))
    return _in_place(x, result, inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``: ``hardtanh(x, 0, 6)``, as torch."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; its gradient is ``1 / 6`` strictly inside ``(-3, 3)``."""
    x = _tensor(input, "hardsigmoid")
    inside = (x > -3.0) & (x < 3.0)
    result = gt.where(inside, x / 6.0 + 0.5, (x.detach() > 0).to(x.dtype))
    return _in_place(x, result, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``; gradient ``x / 3 + 0.5`` strictly inside ``(-3, 3)``, 0 at
    -3 and 1 at 3, as torch's."""
    x = _tensor(input, "hardswish")
    middle = x * (x + 3.0) / 6.0
    result = gt.where(x <= -3.0, 0.0, gt.where(x < 3.0, middle, x))
    return _in_place(x, result, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    x = _tensor(input, "mish")
    return _in_place(x, x * softplus(x).tanh(), inplace)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    x = _tensor(input, "softsign")
    return x / (x.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    x = _tensor(input, "tanhshrink")
    return x - x.tanh()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x, dim)``."""
    from .functional import softmax

    return softmax(-input, dim, _stacklevel + 1, dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    x = _tensor(input, "threshold")
    return _in_place(x, gt.where(x > threshold, x, value), inplace)


def threshold_(input: Tensor, threshold_: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return threshold(input, threshold_, value, inplace=True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` for the two halves ``a``, ``b`` of ``input`` along ``dim``."""
    x = _tensor(input, "glu")
    if x.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = x.shape[dim]
    if n % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % x.dim()} is size {n}"
        )
    a, b = x.split(n // 2, dim)
    return a * b.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; a weight of several elements holds
    one slope per channel (dim 1)."""
    x = _tensor(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    w = weight
    if weight.numel() != 1:
        channels = x.shape[1] if x.dim() >= 2 else (x.shape[0] if x.dim() == 1 else 1)
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight.numel()} and channel size = {channels}."
            )
        if x.dim() >= 2:
            w = weight.reshape(*((channels,) + (1,) * (x.dim() - 2)))
    return gt.where(x > 0, x, w * x)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = _tensor(input, "hardshrink")
    return gt.where((x > lambd) | (x < -lambd), x, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    x = _tensor(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return gt.where(x > lambd, x - lambd, gt.where(x < -lambd, x + lambd, 0.0))
