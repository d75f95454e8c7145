"""The activation functions: ``relu``, ``leaky_relu``, ``sigmoid``, ``tanh``, ``gelu``,
``silu``, ``logsigmoid``, ``softmax`` and ``log_softmax`` (one op of the registry each);
the ones nn-mini composes from gradstack ops (``elu``, ``selu``, ``celu``, ``softplus``,
``hardtanh``, ``relu6``, ``hardsigmoid``, ``hardswish``, ``mish``, ``softsign``,
``tanhshrink``, ``softmin``, ``threshold``, ``glu``, ``prelu``, ``hardshrink``,
``softshrink``); and the random ``rrelu`` and ``gumbel_softmax``.

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
>>> relu(gt.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
>>> [round(v, 4) for v in elu(gt.tensor([-1.0, 0.0, 2.0])).tolist()]
[-0.6321, 0.0, 2.0]
>>> hardtanh(gt.tensor([-2.0, 0.5, 3.0])).tolist()
[-1.0, 0.5, 1.0]
>>> rrelu(gt.tensor([[-2.0, 4.0]]), 0.25, 0.75).tolist()  # evaluation: the slope (0.25 + 0.75) / 2
[[-1.0, 4.0]]
"""

from __future__ import annotations

import functools
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.extension import checked_arguments

from ._utils import _type_name

__all__ = [
    "relu",
    "relu_",
    "leaky_relu",
    "leaky_relu_",
    "sigmoid",
    "tanh",
    "gelu",
    "silu",
    "logsigmoid",
    "softmax",
    "log_softmax",
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
    "rrelu",
    "rrelu_",
    "gumbel_softmax",
]

_OP = gt.get_op


# Note [Half-precision activations compute in float32]: torch's float16 and bfloat16
# activation kernels read the input as float, compute the whole formula in float and round
# once; computed in the input's dtype (numpy's float16 loops, or our composites' parts
# rounded one by one) 611 of 4000 float16 leaky_relu results, 1192 of silu's, 1835 of
# gelu's and a quarter of bfloat16 mish/hardswish/selu/glu were an ulp off.  So for those
# two dtypes these functions compute on a float32 copy and round the result once (the
# in-place forms keep computing in the input's dtype).  The cost: such a result's
# ``grad_fn`` is the cast's node (ToCopyBackward0), not the activation's.
def _half_in_float32(inplace_at: int | None = None):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(input, *args, **kwargs):
            if isinstance(input, Tensor) and input.dtype in (gt.float16, gt.bfloat16):
                inplace = kwargs.get("inplace", False)
                if inplace_at is not None and len(args) >= inplace_at:
                    inplace = args[inplace_at - 1]
                if not inplace:
                    return fn(input.float(), *args, **kwargs).to(input.dtype)
            return fn(input, *args, **kwargs)

        return wrapper

    return decorate


# -------------------------------------------------------------------------------------
# the activations that are one op of the registry


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (in place with ``inplace=True``)."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return input.relu_()


@_half_in_float32(inplace_at=2)
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere (LeakyReluBackward0)."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _OP("leaky_relu")(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu` (torch names its node LeakyReluBackward1, gradstack
    LeakyReluBackward0: one node name per op and its in-place twin)."""
    return _OP("leaky_relu_")(input, negative_slope)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return input.tanh()


@_half_in_float32()
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``input * Phi(input)`` (Phi the standard normal CDF), or with ``approximate="tanh"``
    ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x**3)))`` (GeluBackward0)."""
    return _OP("gelu")(input, approximate)


@_half_in_float32(inplace_at=1)
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (SiluBackward0), in place with ``inplace=True``."""
    return _OP("silu_" if inplace else "silu")(input)


@_half_in_float32()
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, stable for large ``|input|`` (LogSigmoidBackward0)."""
    return _OP("log_sigmoid")(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``, computed stably (SoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:  # as torch: cast first (ToCopyBackward0), then the softmax
        input = input.to(dtype)
    return input.softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably (LogSoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(dim)


# -------------------------------------------------------------------------------------
# composed activations (Note [Activations keep torch's derivative at every point])


_SELU_ALPHA = 1.6732632423543772848170429916717

_SELU_SCALE = 1.0507009873554804934193349852946


def _tensor(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(x)}'")
    return x


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


@_half_in_float32(inplace_at=1)
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    x = _tensor(input, "selu")
    return _in_place(x, _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


@checked_arguments("celu", "Tensor input, float alpha, bool inplace", first=0)
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x = _tensor(input, "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _in_place(x, _elu(x, alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


@_half_in_float32()
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    x = _tensor(input, "softplus")
    return _OP("softplus")(x, beta, threshold)


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


@_half_in_float32(inplace_at=1)
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; its gradient is ``1 / 6`` strictly inside ``(-3, 3)``."""
    x = _tensor(input, "hardsigmoid")
    inside = (x > -3.0) & (x < 3.0)
    result = gt.where(inside, x / 6.0 + 0.5, (x.detach() > 0).to(x.dtype))
    return _in_place(x, result, inplace)


@_half_in_float32(inplace_at=1)
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``; gradient ``x / 3 + 0.5`` strictly inside ``(-3, 3)``, 0 at
    -3 and 1 at 3, as torch's."""
    x = _tensor(input, "hardswish")
    middle = x * (x + 3.0) / 6.0
    result = gt.where(x <= -3.0, 0.0, gt.where(x < 3.0, middle, x))
    return _in_place(x, result, inplace)


@_half_in_float32(inplace_at=1)
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
    return softmax(-input, dim, _stacklevel + 1, dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    x = _tensor(input, "threshold")
    return _in_place(x, gt.where(x > threshold, x, value), inplace)


def threshold_(input: Tensor, threshold_: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return threshold(input, threshold_, value, inplace=True)


@_half_in_float32()
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


# ``prelu`` and ``hardshrink`` are tensor-core's (torch has them as Tensor methods and
# top-level functions too)
prelu = gt.prelu
hardshrink = gt.hardshrink


@checked_arguments("softshrink", "Tensor input, float lambd", first=0)
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    x = _tensor(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return gt.where(x > lambd, x - lambd, gt.where(x < -lambd, x + lambd, 0.0))


# -------------------------------------------------------------------------------------
# random activations (Note [Random layers draw torch's numbers] in dropouts.py)


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


@checked_arguments(
    "rrelu", "Tensor input, float lower, float upper, bool training, bool inplace", first=0
)
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
        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = _rrelu_noise(input, lower, upper)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample of the Gumbel-softmax distribution over ``dim``, as
    ``torch.nn.functional.gumbel_softmax``: ``softmax((logits + g) / tau)`` with Gumbel
    noise ``g = -log(Exponential(1))``; with ``hard``, the one-hot vector of its maximum
    that differentiates as the soft sample (``y_hard - y_soft.detach() + y_soft``).

    Note [gumbel_softmax draws torch's noise]
    The noise is drawn as torch draws it, ``-empty_like(logits).exponential_().log()``,
    from tensor-core's generator (torch's CPU generator), so after the same
    ``manual_seed`` the samples are torch's.  ``eps`` is deprecated and unused, as in
    torch (a warning when it is given).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> y = gumbel_softmax(gt.zeros(2, 5), hard=True)
    >>> y.sum(-1).tolist(), sorted(set(y.flatten().tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -gt.empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = gt.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
