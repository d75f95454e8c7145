"""torch's elementwise and product functions that are aliases or compositions of existing
ops: the comparison and trigonometric aliases, ``deg2rad``, ``frac``, ``signbit``,
``logaddexp``, ``xlogy``, ``nan_to_num``, ``sinc``, ``logit``, ``float_power``,
``ldexp``, ``nansum``/``nanmean``, ``aminmax``, ``take_along_dim``, ``cross``,
``cumprod``, the ``add*`` products (``baddbmm``, ``addbmm``, ``addmv``, ``addr``), and
``absolute``, ``negative``, ``rot90``, ``isposinf``, ``isneginf``, ``isreal``,
``is_floating_point``, ``is_complex``, ``can_cast``, ``result_type``, ``copysign``,
``fmax``, ``fmin``, and the number functions ``hypot``, ``gcd`` (``gcd_``), ``lcm``
(``lcm_``) and ``heaviside``.

The in-place variants of the methods torch has only on ``Tensor`` (``hypot_``,
``heaviside_``) are here too but not in ``__all__`` (torch has no ``torch.hypot_``):
``Tensor`` methods call them.

Note [A branch that where does not take is computed on a safe input]
A composite that selects with ``where`` gives the branch it does not take a zero
gradient, which its own backward then multiplies: ``0 * inf`` or ``0 / 0`` would be NaN.
So that branch reads a harmless input where it is not taken (``sinc`` divides by 1 at 0,
``xlogy`` takes the log of 1 where ``x == 0``), and the first derivatives are torch's.
Known differences: ``sinc``'s second derivative at 0 is 0 here, NaN in torch (the true
value is ``-pi**2 / 3``); ``ldexp``'s gradient for a negative integer exponent is
``2 ** other`` here, 0 in torch (its formula raises the integer 2 to it).

Note [heaviside carries no gradient]
torch records a node for ``heaviside`` whose backward raises ("the derivative for
'heaviside' is not implemented").  Its value is a step (zero gradient almost everywhere,
``values`` where the input is zero), and a composite cannot make a node that raises, so
here the result never requires grad: ``backward`` through it finds no path instead of
raising.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.logaddexp(gt.tensor([0.0]), gt.tensor([0.0])).tolist()
[0.6931471824645996]
>>> gt.nan_to_num(gt.tensor([float("nan"), 1.0]), nan=-1.0).tolist()
[-1.0, 1.0]
>>> gt.cumprod(gt.tensor([1.0, 2.0, 3.0]), 0).tolist()
[1.0, 2.0, 6.0]
"""

from __future__ import annotations

import math

import numpy as np

from ._composite_args import _floating as _floating_dtype
from ._composite_args import _integral, _name, _write_inplace, _zeros, method_form
from ._composite_args import _tensor as _t
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap
from .autocast_mode import autocast_function

__all__ = [
    "angle",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "arccos",
    "arcsin",
    "arcsinh",
    "arccosh",
    "arctanh",
    "arctan",
    "arctan2",
    "fix",
    "positive",
    "deg2rad",
    "rad2deg",
    "frac",
    "signbit",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "nan_to_num",
    "sinc",
    "logit",
    "float_power",
    "ldexp",
    "nansum",
    "nanmean",
    "aminmax",
    "take_along_dim",
    "cross",
    "cumprod",
    "baddbmm",
    "addbmm",
    "addmv",
    "addr",
    "absolute",
    "negative",
    "rot90",
    "isposinf",
    "isneginf",
    "isreal",
    "is_floating_point",
    "is_complex",
    "can_cast",
    "result_type",
    "copysign",
    "fmax",
    "fmin",
    "hypot",
    "gcd",
    "gcd_",
    "lcm",
    "lcm_",
    "heaviside",
]


def _gt():
    import gradstack_tensor as gt

    return gt


# ---------------------------------------------------------------------------- aliases


def greater(input, other):
    """``input > other`` (torch's alias of ``gt``)."""
    return _t(input, "greater") > other


def greater_equal(input, other):
    """``input >= other``."""
    return _t(input, "greater_equal") >= other


def less(input, other):
    """``input < other``."""
    return _t(input, "less") < other


def less_equal(input, other):
    """``input <= other``."""
    return _t(input, "less_equal") <= other


def not_equal(input, other):
    """``input != other``."""
    return _t(input, "not_equal") != other


arccos = method_form(__name__, "arccos", "acos", "``acos``.")
arcsinh = method_form(__name__, "arcsinh", "asinh", "``asinh`` (torch's alias).")
arccosh = method_form(__name__, "arccosh", "acosh", "``acosh`` (torch's alias).")
arctanh = method_form(__name__, "arctanh", "atanh", "``atanh`` (torch's alias).")
arcsin = method_form(__name__, "arcsin", "asin", "``asin``.")
arctan = method_form(__name__, "arctan", "atan", "``atan``.")


def arctan2(input, other):
    """``atan2``."""
    return _gt().atan2(_t(input, "arctan2"), other)


fix = method_form(__name__, "fix", "trunc", "``trunc``.")


def positive(input):
    """``input`` itself (refused for bool, as torch)."""
    x = _t(input, "positive")
    if x.dtype.name == "bool":
        raise RuntimeError(
            "The `+` operator, on a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )
    return x


# ---------------------------------------------------------------------------- elementwise


def _floating(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.to(_gt().get_default_dtype())


def deg2rad(input):
    """Degrees to radians: ``input * (pi / 180)``."""
    return _floating(_t(input, "deg2rad")) * (math.pi / 180.0)


def rad2deg(input):
    """Radians to degrees: ``input * (180 / pi)``."""
    return _floating(_t(input, "rad2deg")) * (180.0 / math.pi)


def frac(input):
    """The fractional part, ``input - trunc(input)`` (sign of the input)."""
    x = _t(input, "frac")
    if not x.is_floating_point():
        raise RuntimeError(f"\"frac_cpu\" not implemented for '{x.dtype.name}'")
    return x - x.trunc().detach()


def signbit(input):
    """Whether the sign bit is set (True for -0.0 and negative numbers): a bool tensor."""
    return _wrap(np.signbit(_data(_t(input, "signbit"))))


def _logaddexp(a: Tensor, b: Tensor, base_log, exp_fn, log1p_fn) -> Tensor:
    gt = _gt()
    m = gt.maximum(a, b)
    # equal infinities: the sum is that infinity (|a - b| would be NaN there)
    same_inf = (a == b) & a.isinf()
    d = gt.where(same_inf, 0.0, (a - b).abs())
    return gt.where(same_inf, a, m + log1p_fn(exp_fn(-d)) / base_log)


def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, computed as ``max + log1p(exp(-|input - other|))``
    (torch's formula, stable for large values)."""
    a, b = _floating(_t(input, "logaddexp")), _floating(_t(other, "logaddexp", "other"))
    return _logaddexp(a, b, 1.0, lambda t: t.exp(), lambda t: t.log1p())


def logaddexp2(input, other):
    """``log2(2**input + 2**other)``."""
    a, b = _floating(_t(input, "logaddexp2")), _floating(_t(other, "logaddexp2", "other"))
    return _logaddexp(a, b, math.log(2.0), lambda t: t.exp2(), lambda t: t.log1p())


def _in_result_dtype(input, other) -> tuple[Tensor, Tensor]:
    """``input`` and ``other`` as tensors of the dtype torch gives their op (the promotion
    of both, integers as the default float).

    Note [xlogy computes in its result dtype]: the composites below mix their operands with
    ``where``, whose result is as wide as its widest operand, so a number or a 0-d tensor
    operand decided the dtype: ``xlogy(half, 0.5)`` was float32 and ``xlogy(float32,
    tensor(0.5, dtype=float64))`` float64, where torch's are half and float32."""
    gt = _gt()
    dt = result_type(input, other)
    if not dt.is_floating_point:
        dt = gt.get_default_dtype()
    x = input if isinstance(input, Tensor) else gt.tensor(input, dtype=dt)
    y = other if isinstance(other, Tensor) else gt.tensor(other, dtype=dt)
    return x.to(dt), y.to(dt)


@checked("xlogy", "float input, float other", first=0)
def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN), as
    torch's; Note [A branch that where does not take is computed on a safe input]."""
    gt = _gt()
    x, y = _in_result_dtype(input, other)
    zero = x == 0
    safe = gt.where(zero, 1.0, y)
    out = gt.where(zero, 0.0, x * safe.log())
    if x.requires_grad:
        # torch's gradient for ``input`` is log(other) where input is 0 too, 0 only where
        # other <= 0 as well: a term whose value is 0 and whose derivative is that log
        # (0 * log(other) would be NaN where other is inf, so that one gets 0)
        live = zero & (y > 0) & (y != float("inf"))
        log_there = gt.where(live, y, 1.0).log()
        out = out + gt.where(live, (x - x.detach()) * log_there, 0.0)
    return gt.where(y.isnan(), float("nan"), out)


@checked("nan_to_num")
def nan_to_num(input, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None):
    """``input`` with NaN, +inf and -inf replaced (by default by 0 and the dtype's largest
    and lowest finite values)."""
    gt = _gt()
    x = _t(input, "nan_to_num")
    if not x.is_floating_point():
        return x.clone()
    info = np.finfo(x.dtype.numpy)
    nan = 0.0 if nan is None else nan  # (torch's nan is a float? too)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = gt.where(x.isnan(), nan, x)
    out = gt.where(x == float("inf"), hi, out)
    return gt.where(x == float("-inf"), lo, out)


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0 (Note [A branch that where does not take is computed
    on a safe input])."""
    gt = _gt()
    x = _floating(_t(input, "sinc"))
    zero = x == 0
    px = gt.where(zero, 1.0, x) * math.pi
    return gt.where(zero, 1.0, px.sin() / px)


@checked("logit")
def logit(input, eps: float | None = None):
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    x = _floating(_t(input, "logit"))
    if eps is not None:
        x = x.clamp(eps, 1.0 - eps)
    return (x / (1 - x)).log()


@checked("float_power", "float input, float exponent", first=0)
def float_power(input, exponent):
    """``input ** exponent`` in double precision (complex not supported)."""
    gt = _gt()
    base = input.to(gt.float64) if isinstance(input, Tensor) else input
    power = exponent.to(gt.float64) if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor) and not isinstance(power, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument")
    if not isinstance(base, Tensor):
        return gt.tensor(float(base), dtype=gt.float64) ** power
    return base**power


@checked("ldexp")
def ldexp(input, other):
    """``input * 2 ** other``."""
    gt = _gt()
    x = _floating(_t(input, "ldexp"))
    return x * gt.pow(2.0, other if isinstance(other, Tensor) else gt.tensor(other)).to(x.dtype)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):
    """The sum, NaNs counted as 0."""
    gt = _gt()
    x = _t(input, "nansum")
    clean = gt.where(x.isnan(), 0.0, x) if x.is_floating_point() else x
    return clean.sum(dim, keepdim, dtype=dtype) if dim is not None else clean.sum(dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """The mean of the elements that are not NaN."""
    x = _t(input, "nanmean")
    if not x.is_floating_point():
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{x.dtype.name}"
        )
    kept = x.isnan().logical_not()
    count = kept.sum(dim, keepdim) if dim is not None else kept.sum()
    return nansum(x, dim, keepdim, dtype=dtype) / count


def aminmax(input, *, dim=None, keepdim: bool = False):
    """``(amin, amax)`` over ``dim`` (all elements by default)."""
    from .return_types import aminmax as _aminmax_type

    x = _t(input, "aminmax")
    if dim is None:
        lo, hi = x.amin(), x.amax()
        if keepdim:
            shape = (1,) * x.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
    else:
        lo, hi = x.amin(dim, keepdim), x.amax(dim, keepdim)
    return _aminmax_type(lo, hi)


def take_along_dim(input, indices, dim=None):
    """``input`` read at ``indices`` along ``dim`` after both broadcast over the other
    dims (torch's composite of ``gather``); flattened when ``dim`` is None."""
    gt = _gt()
    x = _t(input, "take_along_dim")
    idx = _t(indices, "take_along_dim", "indices")
    if dim is None:
        return x.reshape(-1).gather(0, idx.reshape(-1))
    if x.dim() != idx.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {x.dim()} dimensions for input, and {idx.dim()} dimensions for "
            "indices"
        )
    axis = dim % max(x.dim(), 1)
    x_shape, i_shape = list(x.shape), list(idx.shape)
    x_shape[axis] = i_shape[axis] = 1
    shape = list(np.broadcast_shapes(tuple(x_shape), tuple(i_shape)))
    xs, ii = list(shape), list(shape)
    xs[axis], ii[axis] = x.shape[axis], idx.shape[axis]
    return x.expand(tuple(xs)).gather(axis, gt.broadcast_to(idx, tuple(ii)))


def cross(input, other, dim: int | None = None):
    """The cross product of 3-vectors along ``dim`` (the first dim of size 3 when None,
    with torch's warning), broadcast."""
    import warnings

    gt = _gt()
    a, b = gt.broadcast_tensors(_t(input, "cross"), _t(other, "cross", "other"))
    if dim is None:
        sizes = [i for i, n in enumerate(a.shape) if n == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        dim = sizes[0]
    axis = dim % max(a.dim(), 1)
    if a.shape[axis] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[axis]} and "
            f"{b.shape[axis]}"
        )
    a0, a1, a2 = (a.select(axis, i) for i in range(3))
    b0, b1, b2 = (b.select(axis, i) for i in range(3))
    return gt.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)


@checked("cumprod")
def cumprod(input, dim: int, *, dtype=None, out=None):
    """The cumulative product along ``dim``, as one product per position (its gradient is
    exact at zeros, as torch's ``cumprod_backward``)."""
    gt = _gt()
    x = _t(input, "cumprod")
    if dtype is not None:
        x = x.to(dtype)
    elif not x.is_floating_point() and x.dtype.name != "int64":
        x = x.to(gt.int64)  # torch accumulates integers in int64
    if x.dim() == 0:
        result = x.clone()
    else:
        axis = dim % x.dim()
        n = x.shape[axis]
        if n == 0:
            result = x.clone()
        else:
            running = x.select(axis, 0)
            parts = [running]
            for i in range(1, n):
                running = running * x.select(axis, i)
                parts.append(running)
            result = gt.stack(parts, axis)
    if out is not None:
        from ._out import write_out

        return write_out("cumprod", result, out, rule="exact")
    return result


# ---------------------------------------------------------------------------- products


def _scaled_sum(input, product, beta, alpha):
    p = product if alpha == 1 else product * alpha
    if beta == 0:
        return p  # torch ignores input then (NaN and inf in it do not propagate)
    return (input if beta == 1 else input * beta) + p


@autocast_function("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch."""
    r = _scaled_sum(input, _t(batch1, "baddbmm", "batch1").bmm(batch2), beta, alpha)
    return r if out is None else out.copy_(r)


@autocast_function("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    r = _scaled_sum(input, _t(batch1, "addbmm", "batch1").bmm(batch2).sum(0), beta, alpha)
    return r if out is None else out.copy_(r)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    r = _scaled_sum(input, _t(mat, "addmv", "mat").mv(vec), beta, alpha)
    return r if out is None else out.copy_(r)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    r = _scaled_sum(input, _gt().outer(_t(vec1, "addr", "vec1"), vec2), beta, alpha)
    return r if out is None else out.copy_(r)


# ---------------------------------------------------------------------------------------
# more torch names: predicates, dtype questions, copysign, fmax/fmin


def absolute(input, *, out=None):
    """``abs(input)`` (torch's alias)."""
    return _gt().abs(input, out=out)


def negative(input, *, out=None):
    """``neg(input)`` (torch's alias)."""
    return _gt().neg(input, out=out)


@checked("rot90")
def rot90(input, k: int = 1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (flips and a
    transpose, as torch).

    >>> import gradstack_tensor as gt
    >>> gt.rot90(gt.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    x = _t(input, "rot90")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == x.dim():
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k = k % 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip(d0, d1)
    if k == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


def isposinf(input):
    """Where ``input`` is +inf (a bool tensor)."""
    x = _t(input, "isposinf")
    return x == math.inf if x.is_floating_point() else _gt().zeros_like(x, dtype=_gt().bool)


def isneginf(input):
    """Where ``input`` is -inf (a bool tensor)."""
    x = _t(input, "isneginf")
    return x == -math.inf if x.is_floating_point() else _gt().zeros_like(x, dtype=_gt().bool)


def isreal(input):
    """Where ``input`` has no imaginary part: everywhere, for real tensors."""
    return _gt().ones_like(_t(input, "isreal"), dtype=_gt().bool)


def is_floating_point(input) -> bool:
    """Whether ``input``'s dtype is a floating-point one."""
    return _t(input, "is_floating_point").is_floating_point()


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is complex (complex64, complex128)."""
    return _t(input, "is_complex").is_complex()


def can_cast(from_, to) -> bool:
    """Whether torch casts dtype ``from_`` to ``to`` in an in-place op or ``out=``: not to
    a lower kind (float to integer, anything but bool to bool).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.can_cast(gt.float64, gt.float32), gt.can_cast(gt.float32, gt.int32)
    (True, False)
    """
    from ._promotion import can_cast_inplace
    from .dtypes import dtype

    for name, value in (("from_", from_), ("to", to)):
        if not isinstance(value, dtype):
            raise TypeError(
                f"can_cast(): argument '{name}' must be torch.dtype, not {type(value).__name__}"
            )
    return bool(can_cast_inplace(from_, to))


def result_type(tensor1, tensor2):
    """The dtype torch's promotion gives an op of ``tensor1`` and ``tensor2`` (tensors or
    numbers).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.result_type(gt.tensor([1]), 1.0)
    gradstack.float32
    """
    from .dtypes import result_type as _result_type

    def operand(v, name):
        if isinstance(v, Tensor):
            return (v.dtype, v.dim())
        if isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
            return v
        raise TypeError(
            f"result_type(): argument '{name}' must be Tensor or Number, not {type(v).__name__}"
        )

    return _result_type([operand(tensor1, "tensor1"), operand(tensor2, "tensor2")])


@checked("copysign")
def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a tensor or a number), as a float tensor.

    The gradient reaches ``input`` only: ``copysign(input, other) / input``, 0 where
    ``input`` is 0, as torch's.  Known difference: where ``input`` is inf or NaN the
    gradient is 0 here, NaN in torch (its ratio ``inf / inf``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.copysign(gt.tensor([1.0, -2.0]), gt.tensor([-0.0, 3.0])).tolist()
    [-1.0, 2.0]
    """
    gt = _gt()
    x = _t(input, "copysign")
    if isinstance(other, Tensor):
        dt = gt.result_type(x, other)
        if not dt.is_floating_point:
            dt = gt.get_default_dtype()
        xs = x.to(dt)
        value = np.copysign(_data(xs), _data(other).astype(_data(xs).dtype, copy=False))
    else:
        xs = _floating(x)
        value = np.copysign(_data(xs), np.asarray(other, dtype=_data(xs).dtype))
    value = np.asarray(value, dtype=_data(xs).dtype)
    result = _wrap(np.ascontiguousarray(value))
    if xs.requires_grad:
        # the value is numpy's; the gradient flows through ``xs * (value / xs)``, a
        # product by +-1, where xs is finite and non-zero
        a = _data(xs)
        plain = np.isfinite(a) & (a != 0)
        ratio = np.where(plain, np.divide(value, np.where(plain, a, 1)), 0).astype(a.dtype)
        result = gt.where(_wrap(plain), xs * _wrap(ratio), result)
    if isinstance(other, Tensor) and other.requires_grad:
        # torch gives ``other`` a zero gradient (not none): a zero that depends on it,
        # subtracted as ``0 - 0``, which keeps every value's bits (-0.0 included)
        zero = gt.where(gt.ones_like(other, dtype=gt.bool), 0.0, other)
        result = result - (zero.detach() - zero)
    return _to_out("copysign", result, out)


def _to_out(name, result, out):
    if out is None:
        return result
    from ._out import write_out

    return write_out(name, result, out)


def _extreme_ignoring_nan(fname, input, other, greater: bool, out=None):
    gt = _gt()
    x, y = _t(input, fname), _t(other, fname, "other")
    take = (x >= y) if greater else (x <= y)
    if y.is_floating_point():
        take = take | y.isnan()
    return _to_out(fname, gt.where(take, x, y), out)


def fmax(input, other, *, out=None):
    """The elementwise maximum, ignoring NaN (NaN only where both are); ties take
    ``input``, and so does the gradient, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.fmax(gt.tensor([1.0, float("nan")]), gt.tensor([float("nan"), 2.0])).tolist()
    [1.0, 2.0]
    """
    return _extreme_ignoring_nan("fmax", input, other, True, out)


def fmin(input, other, *, out=None):
    """The elementwise minimum, ignoring NaN; ties take ``input``."""
    return _extreme_ignoring_nan("fmin", input, other, False, out)


# ---------------------------------------------------------------------------- number functions


def hypot(input, other) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow: both are divided by the larger
    magnitude first.  Infinity wins over NaN, as in C's ``hypot``.

    Note [hypot scales by a constant]
    ``m * sqrt((a/m)**2 + (b/m)**2)`` equals the hypotenuse for every ``m > 0``, so ``m``
    (the larger magnitude, 1 where that is 0 or not finite) is detached: the gradient is
    ``a / hypot`` exactly as torch's, and second order and forward mode follow.  Values
    agree with torch's to an ulp or two.  Where an input is infinite the value is inf and
    the gradient 0 (torch: ``a / inf``, NaN for the infinite input).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.hypot(gt.tensor([3.0, 3e30]), gt.tensor([4.0, 4e30])).tolist()
    [5.0, 4.9999999241216036e+30]
    """
    gt = _gt()
    a = _t(input, "hypot")
    b = _t(other, "hypot", "other")
    dtype = gt.result_type(a, b)
    if not _floating_dtype(dtype):
        raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{_name(dtype)}'")
    a, b = a.to(dtype), b.to(dtype)
    m = gt.maximum(a.detach().abs(), b.detach().abs())
    scale = gt.where((m == 0) | ~m.isfinite(), 1.0, m)
    r = scale * ((a / scale).square() + (b / scale).square()).sqrt()
    infinite = a.detach().isinf() | b.detach().isinf()
    if bool(_data(infinite).any()):
        r = gt.where(infinite, float("inf"), r)
    return r


def hypot_(input, other) -> Tensor:
    """In-place ``hypot`` (``Tensor.hypot_``)."""
    return _write_inplace("hypot_", input, hypot(input, other))


def _integer_operands(fname: str, input, other):
    gt = _gt()
    a = _t(input, fname)
    b = _t(other, fname, "other")
    dtype = gt.result_type(a, b)
    if not _integral(dtype):
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for '{_name(dtype)}'")
    np_dtype = _data(_zeros((), dtype)).dtype
    x, y = np.broadcast_arrays(_data(a).astype(np_dtype), _data(b).astype(np_dtype))
    return dtype, x, y


def _euclid(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's ``calc_gcd``: Euclid on the magnitudes, with C's remainder (so the most
    negative integer, whose magnitude wraps, gives torch's results)."""
    a, b = np.abs(x), np.abs(y)
    with np.errstate(all="ignore"):
        while True:
            live = a != 0
            if not live.any():
                return b
            c = a.copy()
            safe = np.where(live, a, 1)
            a = np.where(live, np.fmod(b, safe), a)
            b = np.where(live, c, b)


def gcd(input, other) -> Tensor:
    """The greatest common divisor of integer tensors, elementwise (broadcast); 0 for
    ``gcd(0, 0)``.  No gradient (integers).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.gcd(gt.tensor([12, -18, 0]), gt.tensor([8, 12, 5])).tolist()
    [4, 6, 5]
    """
    _, x, y = _integer_operands("gcd", input, other)
    return _wrap(np.ascontiguousarray(_euclid(x, y)))


def lcm(input, other) -> Tensor:
    """The least common multiple of integer tensors, elementwise (broadcast): ``|a / gcd *
    b|``, 0 when either is 0; it wraps around on overflow as torch's (in C's ``int`` for
    8- and 16-bit dtypes).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.lcm(gt.tensor([4, -6, 0]), gt.tensor([6, 4, 5])).tolist()
    [12, 12, 0]
    """
    _, x, y = _integer_operands("lcm", input, other)
    g = _euclid(x, y)
    # (torch computes a / g * b and its abs in C's int for 8- and 16-bit dtypes)
    wide = np.int32 if x.dtype.itemsize < 4 else x.dtype
    with np.errstate(all="ignore"):
        xw, yw, gw = x.astype(wide), y.astype(wide), g.astype(wide)
        safe = np.where(gw == 0, 1, gw).astype(wide)
        value = np.abs((xw // safe) * yw)
        value = np.where(gw == 0, 0, value).astype(wide)
    return _wrap(np.ascontiguousarray(value.astype(x.dtype)))


def gcd_(input, other) -> Tensor:
    """In-place ``gcd``: ``input`` holds the result.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.gcd_(gt.tensor([12, 9]), gt.tensor([8, 6])).tolist()
    [4, 3]
    """
    return _write_inplace("gcd_", _t(input, "gcd_"), gcd(input, other))


def lcm_(input, other) -> Tensor:
    """In-place ``lcm``: ``input`` holds the result.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.lcm_(gt.tensor([4, 3]), gt.tensor([6, 5])).tolist()
    [12, 15]
    """
    return _write_inplace("lcm_", _t(input, "lcm_"), lcm(input, other))


def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 where ``input < 0`` (and NaN), 1 where ``input > 0``,
    ``values`` where ``input == 0``; both of one dtype.  Note [heaviside carries no
    gradient].

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.heaviside(gt.tensor([-1.5, 0.0, 2.0]), gt.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    x = _t(input, "heaviside")
    v = _t(values, "heaviside", "values")
    if x.dtype is not v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _gt().broadcast_shapes(tuple(x.shape), tuple(v.shape))
    a, b = _data(x), _data(v)
    out = np.where(a == 0, b, (a > 0).astype(a.dtype)).astype(a.dtype)
    return _wrap(np.ascontiguousarray(out))


def heaviside_(input, values) -> Tensor:
    """In-place ``heaviside`` (``Tensor.heaviside_``)."""
    return _write_inplace("heaviside_", input, heaviside(input, values))


def angle(input, *, out=None) -> Tensor:
    """The argument of each element of a real tensor: ``pi`` where it is negative, 0
    elsewhere (``-0.0`` and ``inf`` included), NaN where it is NaN; an integer or bool
    tensor gives the default float dtype.  The gradient is zero (torch's for real
    inputs), so the result stays in the graph.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.angle(gt.tensor([-1, 0, 2])).tolist()
    [3.1415927410125732, 0.0, 0.0]
    """
    gt = _gt()
    x = _t(input, "angle")
    if x.is_complex():  # an op of its own, torch's AngleBackward0
        from ._out import write_out

        r = gt.dispatch(gt.OPS["angle"], (x,))
        return r if out is None else write_out("angle", r, out, rule="same")
    if not x.is_floating_point():
        x = x.to(gt.get_default_dtype())
    xd = _data(x)
    base = _wrap(np.where(xd < 0, np.pi, 0.0).astype(xd.dtype))
    # (0 * x carries NaN through and keeps the result in the graph with a zero gradient)
    result = x.masked_fill(x.isinf(), 0.0) * 0 + base
    if out is not None:
        from ._out import write_out

        return write_out("angle", result, out, rule="same")
    return result
