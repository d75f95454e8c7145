"""Arithmetic and elementwise math: add ... pow, unary functions, where, clamp, masked_fill."""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of, take_byproduct, wrap

from .. import _backward_kernels
from .._layer import run_fused
from .._node import efficient_zeros, saved_tensors_hooks_active
from ._formulas import _detached, _grad_mode, _is_tensor, _lead, _sum_all, _zeros
from ._table import NO_JVP, jvp, register
from ._tangents import _binary, _extreme_jvp_of, _pad, _tangent_sum, _unary
from .batching import inplace, per_sample, pointwise, unary

__all__: list[str] = []


@register(
    "add(self, other, alpha)",
    "AddBackward0",
    inputs="self, other",
    save="alpha",
    fused="add_backward",
    batch=pointwise,
    keeps_zero="self, other",
)
def _add(ctx, grad):
    alpha = ctx.saved_value("alpha")
    return grad, (grad if alpha == 1 else grad * alpha)


@jvp("add")
def _add_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1
    return _binary(args, out, tangents, lead, None, None if alpha == 1 else (lambda a, b, o: alpha))


@register(
    "sub(self, other, alpha)",
    "SubBackward0",
    inputs="self, other",
    save="alpha",
    fused="sub_backward",
    batch=pointwise,
    keeps_zero="self",
)
def _sub(ctx, grad):
    alpha = ctx.saved_value("alpha")
    return grad, (-grad if alpha == 1 else grad * -alpha)


@jvp("sub")
def _sub_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1
    return _binary(args, out, tangents, lead, None, lambda a, b, o: -alpha)


@register(
    "rsub(self, other, alpha)",
    lambda args: "RsubBackward0" if _is_tensor(args[1]) else "RsubBackward1",
    inputs="self, other",
    save="alpha",
    batch=pointwise,
)
def _rsub(ctx, grad):
    alpha = ctx.saved_value("alpha")
    return (-grad if alpha == 1 else grad * -alpha), grad


@jvp("rsub")
def _rsub_jvp(args, out, tangents, lead):
    alpha = args[2] if len(args) > 2 else 1  # out = other - alpha * input
    return _binary(args, out, tangents, lead, lambda a, b, o: -alpha, None)


@register(
    "mul(self, other)",
    "MulBackward0",
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": "self"},
    fused="mul_backward",
    batch=pointwise,
    keeps_zero="self, other",
)
def _mul(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("other")
    need_a, need_b = ctx.needs_input_grad
    if need_a and need_b:
        fused = ctx.fused(grad, a, b)
        if fused is not None:
            return fused
    return (grad * b if need_a else None), (grad * a if need_b else None)


@jvp("mul")
def _mul_jvp(args, out, tangents, lead):
    return _binary(args, out, tangents, lead, lambda a, b, o: b, lambda a, b, o: a)


@register(
    "div(self, other)",
    "DivBackward0",
    inputs="self, other",
    save="self, other",
    save_for={"self": "other"},
    fused="div_backward",
    batch=pointwise,
    keeps_zero="self",
)
def _div(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("other")
    need_a, need_b = ctx.needs_input_grad
    if need_a and need_b:
        fused = ctx.fused(grad, a, b)
        if fused is not None:
            return fused
    ga = grad / b if need_a else None
    # torch's div_tensor_other_backward: (a / b) / b, never b * b (which overflows float16)
    gb = -grad * ((a / b) / b) if need_b else None
    return ga, gb


@jvp("div")
def _div_jvp(args, out, tangents, lead):
    # d(a/b) = t_a / b - t_b * (a/b) / b
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        r = _pad(ta, a, out, lead) / b
    if tb is not None:
        r = _tangent_sum(r, -_pad(tb, b, out, lead) * out / b)
    return r


def _pow_name(args):
    if not _is_tensor(args[0]):
        return "PowBackward2"
    return "PowBackward1" if _is_tensor(args[1]) else "PowBackward0"


@register(
    "pow(self, exponent)",
    _pow_name,
    inputs="self, exponent",
    save="self, exponent, result",
    output_for="exponent",
    batch=pointwise,
    keeps_zero={"PowBackward0": "self", "PowBackward1": "self, exponent"},
)
def _pow(ctx, grad):
    a, b, out = ctx.saved_value("self"), ctx.saved_value("exponent"), ctx.saved_value("result")
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:
        if _is_tensor(b):
            ga = gt.where(b == 0, 0.0, grad * (b * a.pow(b - 1)))
        elif b == 0 and type(b) is not bool:
            ga = _zeros(grad)
        else:
            # Note [A bool exponent is not zero]: torch's pow_backward tests the Scalar
            # with equal(0.0), which is false for a bool, then computes in double:
            # pow(False) gives 0 * a**-1, NaN where a is 0, and a graph under create_graph
            b = float(b) if type(b) is bool else b
            # a square's first-order gradient in one pass (the same bits: 2 * a is exact)
            ga = run_fused(_backward_kernels.square_backward, (grad, a)) if b == 2 else None
            if ga is None:
                ga = grad * (b * a.pow(b - 1))
    if need_b:
        gb = grad * _pow_exponent_factor(a, b, out)
    return ga, gb


def _number_log(a):
    """``log(a)`` of a Python number as torch's std::log of the double: -inf at 0, NaN
    below."""
    a = float(a)
    return math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)


def _pow_exponent_factor(a, b, out):
    """d/db a**b = a**b * log(a); torch masks a == 0 (with b >= 0) to 0.  A number base
    stays a double, as torch's Scalar: ``2**40`` is inf in float16 (fuzz seed 27 #3684)."""
    if _is_tensor(a):
        return gt.where((a == 0) & (b >= 0), 0.0, out * a.log())
    factor = out * _number_log(a)
    return gt.where(b >= 0, 0.0, factor) if float(a) == 0 else factor


@jvp("pow")
def _pow_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        ta = _pad(ta, a, out, lead)
        if isinstance(b, Tensor):
            r = gt.where(b == 0, 0.0, ta * (b * a.pow(b - 1)))
        elif b == 0 and type(b) is not bool:
            r = gt.zeros_like(ta)  # torch's zeros, not ta * 0 (Note [Masks select, never multiply])
        else:
            b = float(b) if type(b) is bool else b  # Note [A bool exponent is not zero]
            r = ta * (b * a.pow(b - 1))
    if tb is not None:
        tb = _pad(tb, b, out, lead)
        r = _tangent_sum(r, tb * _pow_exponent_factor(a, b, out))
    return r


@register("neg(self)", "NegBackward0", batch=unary)
def _neg(ctx, grad):
    return (-grad,)


@jvp("neg")
def _neg_jvp(args, out, tangents, lead):
    return -tangents[0]


@register("abs(self)", "AbsBackward0", save="self", batch=unary, keeps_zero="self")
def _abs(ctx, grad):
    # torch: grad * self.sgn(), whose own gradient is an efficient zero (Note [Efficient zeros])
    return (grad * ctx.saved_value("self").sgn(),)


jvp("abs")(_unary("abs", lambda x, o: x.sign()))


@register("relu(self)", "ReluBackward0", save="result", fused="relu_backward", batch=unary)
def _relu(ctx, grad):
    out = ctx.saved_value("result")
    fused = ctx.fused(grad, out)
    if fused is not None:
        return (fused,)
    # torch's threshold_backward: nan passes
    return (_depends_on(gt.where(out <= 0, 0.0, grad), out),)


@jvp("relu")
def _relu_jvp(args, out, tangents, lead):
    return gt.where(out <= 0, 0.0, tangents[0])  # torch's threshold_backward of the tangent


def _depends_on(result, saved):
    """``result``, made a function of ``saved`` in the graph (with a zero derivative).

    Note [Gradients that depend on a saved value]
    torch's relu gradient is ``threshold_backward(grad, result, 0)``: under
    ``create_graph=True`` it requires grad through the saved result, even for a constant
    incoming gradient, and differentiating it again gives zeros, not "does not require
    grad".  ``where(all-false, saved, result)`` has ``result``'s values exactly (no
    ``0 * inf``) and a zero derivative towards ``saved``.
    """
    if not _grad_mode() or result.requires_grad or not saved.requires_grad:
        return result
    return gt.where(gt.zeros_like(saved, dtype=gt.bool), saved, result)


@register("exp(self)", "ExpBackward0", save="result", batch=unary, keeps_zero="self")
def _exp(ctx, grad):
    return (grad * ctx.saved_value("result"),)


jvp("exp")(_unary("exp", lambda x, o: o))


@register("exp2(self)", "Exp2Backward0", save="result", batch=unary, keeps_zero="self")
def _exp2(ctx, grad):
    return (grad * ctx.saved_value("result") * math.log(2.0),)


jvp("exp2")(_unary("exp2", lambda x, o: o * math.log(2.0)))


@register("expm1(self)", "Expm1Backward0", save="result", batch=unary, keeps_zero="self")
def _expm1(ctx, grad):
    return (grad * (ctx.saved_value("result") + 1),)


jvp("expm1")(_unary("expm1", lambda x, o: o + 1))


@register("log(self)", "LogBackward0", save="self", batch=unary, keeps_zero="self")
def _log(ctx, grad):
    return (grad / ctx.saved_value("self"),)


jvp("log")(_unary("log", lambda x, o: x.reciprocal()))


@register("log2(self)", "Log2Backward0", save="self", batch=unary, keeps_zero="self")
def _log2(ctx, grad):
    return (grad / (ctx.saved_value("self") * math.log(2.0)),)


jvp("log2")(_unary("log2", lambda x, o: (x * math.log(2.0)).reciprocal()))


@register("log10(self)", "Log10Backward0", save="self", batch=unary, keeps_zero="self")
def _log10(ctx, grad):
    return (grad / (ctx.saved_value("self") * math.log(10.0)),)


jvp("log10")(_unary("log10", lambda x, o: (x * math.log(10.0)).reciprocal()))


@register("log1p(self)", "Log1PBackward0", save="self", batch=unary, keeps_zero="self")
def _log1p(ctx, grad):
    return (grad / (ctx.saved_value("self") + 1),)


jvp("log1p")(_unary("log1p", lambda x, o: (x + 1).reciprocal()))


@register("sqrt(self)", "SqrtBackward0", save="result", batch=unary, keeps_zero="self")
def _sqrt(ctx, grad):
    return (grad / (2 * ctx.saved_value("result")),)


jvp("sqrt")(_unary("sqrt", lambda x, o: (2 * o).reciprocal()))


@register("rsqrt(self)", "RsqrtBackward0", save="result", batch=unary, keeps_zero="self")
def _rsqrt(ctx, grad):
    out = ctx.saved_value("result")
    return (-0.5 * grad * out * out * out,)


jvp("rsqrt")(_unary("rsqrt", lambda x, o: -0.5 * o * o * o))


@register("reciprocal(self)", "ReciprocalBackward0", save="result", batch=unary)
def _reciprocal(ctx, grad):
    out = ctx.saved_value("result")
    return (-grad * (out * out),)  # torch's grouping: 1e300 squared is inf, and 0 * inf NaN


jvp("reciprocal")(_unary("reciprocal", lambda x, o: -(o * o)))


# Note [sin and cos keep each other]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The float32 sin (cos) of a tensor that requires grad computes cos(x) (sin(x)) in the same
# pass, for almost nothing (Note [sin and cos from one pass] in tensor-core's _kernels.pyx),
# and leaves it as the op's by-product when the autograd layer asks for it (the entries
# say ``byproduct=True``: it asks only when it records the op).  The entry's ``extra``
# takes it when the node is recorded, so that the first-order backward is one multiply
# (``sin_backward_from_cos``), where it would evaluate cos(x) again: half the backward
# cost of a sin.  torch saves x alone, and so do these nodes (``_saved_self``, the version
# check, hooks): the other function is kept beside it, and only used when
#   - the unpacked x is the forward's array itself (an unpack hook that returns another
#     tensor gets the formula computed from that tensor),
#   - no default saved-tensor hooks were set when the op ran (they decide where saved
#     data lives: nothing is kept behind their back),
#   - the fused path may run at all (no create_graph, no forward AD).
# The formula takes it out when it first runs, so the graph holds it until the first
# backward only (a second one, with retain_graph, evaluates cos(x) again): one array per
# sin or cos beside what torch keeps, until then.


def _keep_other_function(args, out):
    """sin's/cos's ``extra``: [x's array, the other function of x] (Note [sin and cos keep
    each other]), or None."""
    if saved_tensors_hooks_active():
        return None
    x = args[0]
    other = take_byproduct(x, out) if isinstance(x, Tensor) else None
    return None if other is None else [data_of(x), other]


def _from_the_forward(ctx, grad, x, kernel):
    """The gradient from the forward's other function, or None (Note [sin and cos keep
    each other]); the node lets go of that array in any case."""
    kept = ctx.extra
    if not kept:
        return None
    source, other = kept
    kept.clear()
    if data_of(x) is not source:
        return None
    return run_fused(kernel, (grad, wrap(other)))


@register(
    "sin(self)",
    "SinBackward0",
    save="self",
    fused="sin_backward",
    batch=unary,
    extra=_keep_other_function,
    byproduct=True,
    keeps_zero="self",
)
def _sin(ctx, grad):
    x = ctx.saved_value("self")
    fused = _from_the_forward(ctx, grad, x, _backward_kernels.sin_backward_from_cos)
    if fused is None:
        fused = ctx.fused(grad, x)
    return (fused if fused is not None else grad * x.cos(),)


jvp("sin")(_unary("sin", lambda x, o: x.cos()))


@register(
    "cos(self)",
    "CosBackward0",
    save="self",
    fused="cos_backward",
    batch=unary,
    extra=_keep_other_function,
    byproduct=True,
    keeps_zero="self",
)
def _cos(ctx, grad):
    x = ctx.saved_value("self")
    fused = _from_the_forward(ctx, grad, x, _backward_kernels.cos_backward_from_sin)
    if fused is None:
        fused = ctx.fused(grad, x)
    return (fused if fused is not None else -grad * x.sin(),)


jvp("cos")(_unary("cos", lambda x, o: -x.sin()))


@register("tan(self)", "TanBackward0", save="result", batch=unary, keeps_zero="self")
def _tan(ctx, grad):
    out = ctx.saved_value("result")
    return (grad * (1 + out * out),)


jvp("tan")(_unary("tan", lambda x, o: 1 + o * o))


@register("asin(self)", "AsinBackward0", save="self", batch=unary, keeps_zero="self")
def _asin(ctx, grad):
    x = ctx.saved_value("self")
    return (grad / (1 - x * x).sqrt(),)


jvp("asin")(_unary("asin", lambda x, o: (1 - x * x).rsqrt()))


@register("acos(self)", "AcosBackward0", save="self", batch=unary, keeps_zero="self")
def _acos(ctx, grad):
    x = ctx.saved_value("self")
    return (-grad / (1 - x * x).sqrt(),)


jvp("acos")(_unary("acos", lambda x, o: -(1 - x * x).rsqrt()))


@register("atan(self)", "AtanBackward0", save="self", batch=unary, keeps_zero="self")
def _atan(ctx, grad):
    x = ctx.saved_value("self")
    return (grad / (1 + x * x),)


jvp("atan")(_unary("atan", lambda x, o: (1 + x * x).reciprocal()))


@register(
    "asinh(self)",
    "AsinhBackward0",
    save="self",
    batch=unary,
    keeps_zero="self",
    inplace_variant=False,
)
def _asinh(ctx, grad):
    x = ctx.saved_value("self")  # torch: grad * (self.pow(2) + 1).rsqrt()
    return (grad * (x.pow(2) + 1).rsqrt(),)


jvp("asinh")(_unary("asinh", lambda x, o: (x.pow(2) + 1).rsqrt()))


@register(
    "acosh(self)",
    "AcoshBackward0",
    save="self",
    batch=unary,
    keeps_zero="self",
    inplace_variant=False,
)
def _acosh(ctx, grad):
    x = ctx.saved_value("self")  # torch: grad * (self.pow(2) - 1).rsqrt()
    return (grad * (x.pow(2) - 1).rsqrt(),)


jvp("acosh")(_unary("acosh", lambda x, o: (x.pow(2) - 1).rsqrt()))


@register(
    "atanh(self)",
    "AtanhBackward0",
    save="self",
    batch=unary,
    keeps_zero="self",
    inplace_variant=False,
)
def _atanh(ctx, grad):
    x = ctx.saved_value("self")  # torch: grad * 1 / (1 - self.pow(2))
    return (grad * (1 / (1 - x.pow(2))),)


jvp("atanh")(_unary("atanh", lambda x, o: 1 / (1 - x.pow(2))))


# Note [torch has no derivative for in-place asinh, acosh, atanh]
# torch's derivatives.yaml gives ``asinh_``, ``acosh_`` and ``atanh_`` a node of their
# own (AsinhBackward1 ...) whose formula is not_implemented("inplace version of asinh"):
# backward through them raises.  So do these rows.


def _inplace_not_implemented(name):
    def formula(ctx, grad):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented."
        )

    return formula


for _n in ("asinh", "acosh", "atanh"):
    register(f"{_n}_(self)", f"{_n.capitalize()}Backward1", batch=inplace)(
        _inplace_not_implemented(_n)
    )
    NO_JVP[f"{_n}_"] = (
        "torch has no derivative for the in-place inverse hyperbolic functions (Note [torch "
        "has no derivative for in-place asinh, acosh, atanh] in derivatives.arithmetic)"
    )


@register("sinh(self)", "SinhBackward0", save="self", batch=unary, keeps_zero="self")
def _sinh(ctx, grad):
    return (grad * ctx.saved_value("self").cosh(),)


jvp("sinh")(_unary("sinh", lambda x, o: x.cosh()))


@register("cosh(self)", "CoshBackward0", save="self", batch=unary, keeps_zero="self")
def _cosh(ctx, grad):
    return (grad * ctx.saved_value("self").sinh(),)


jvp("cosh")(_unary("cosh", lambda x, o: x.sinh()))


@register("tanh(self)", "TanhBackward0", save="result", fused="tanh_backward", batch=unary)
def _tanh(ctx, grad):
    out = ctx.saved_value("result")
    fused = ctx.fused(grad, out)
    return (fused if fused is not None else grad * (1 - out * out),)


jvp("tanh")(_unary("tanh", lambda x, o: 1 - o * o))


@register("sigmoid(self)", "SigmoidBackward0", save="result", fused="sigmoid_backward", batch=unary)
def _sigmoid(ctx, grad):
    out = ctx.saved_value("result")
    fused = ctx.fused(grad, out)
    return (fused if fused is not None else grad * out * (1 - out),)


jvp("sigmoid")(_unary("sigmoid", lambda x, o: o * (1 - o)))


def _zero_grad_formula(ctx, grad):
    return (_zeros(grad),)


# piecewise-constant ops: the gradient is zero almost everywhere (torch defines it so)
ZERO_GRADIENT = ("sign", "floor", "ceil", "round", "trunc")
for _name in ZERO_GRADIENT:
    register(_name, _name.capitalize() + "Backward0", batch=unary)(_zero_grad_formula)


@register("sgn", "SgnBackward0", batch=unary, keeps_zero="self")
def _sgn(ctx, grad):
    """torch's sgn_backward for real dtypes: an efficient zero, which later formulas keep
    zero even where they multiply it by inf or NaN (Note [Efficient zeros])."""
    return (efficient_zeros(grad),)


@jvp("sign", "sgn", "floor", "ceil", "round", "trunc")
def _zero_jvp(args, out, tangents, lead):
    """Piecewise-constant ops: a tangent of zeros (as torch's zeros_like, not None, so that
    later ops see zeros: derivatives.ZERO_GRADIENT)."""
    return gt.zeros_like(tangents[0])


def _select_extreme(ctx, grad, a_loses, b_loses):
    """maximum/minimum: ties share the gradient equally; a NaN operand gets it whole, and
    so does the other one (neither compares less), exactly as torch's formulas."""
    a, b = ctx.saved_value("self"), ctx.saved_value("other")
    need_a, need_b = ctx.needs_input_grad
    shared = gt.where(a == b, grad / 2, grad)
    return (
        shared.masked_fill(a_loses(a, b), 0.0) if need_a else None,
        shared.masked_fill(b_loses(a, b), 0.0) if need_b else None,
    )


@register(
    "maximum(self, other)",
    "MaximumBackward0",
    inputs="self, other",
    save="self, other",
    batch=pointwise,
)
def _maximum(ctx, grad):
    return _select_extreme(ctx, grad, lambda a, b: a < b, lambda a, b: a > b)


@jvp("maximum")
def _maximum_jvp(args, out, tangents, lead):
    return _extreme_jvp_of(args, out, tangents, lead, lambda a, b: a > b)


@register(
    "minimum(self, other)",
    "MinimumBackward0",
    inputs="self, other",
    save="self, other",
    batch=pointwise,
)
def _minimum(ctx, grad):
    return _select_extreme(ctx, grad, lambda a, b: a > b, lambda a, b: a < b)


@jvp("minimum")
def _minimum_jvp(args, out, tangents, lead):
    return _extreme_jvp_of(args, out, tangents, lead, lambda a, b: a < b)


def _remainder_name(args):
    if not _is_tensor(args[0]):
        return "NotImplemented"  # torch: remainder(Scalar, Tensor) has no derivative
    return "RemainderBackward1" if _is_tensor(args[1]) else "RemainderBackward0"


# both values are read only by the divisor's gradient: torch saves them only then, so a
# later in-place write into the dividend does not fail a backward that never reads it
@register(
    "remainder(self, other)",
    _remainder_name,
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": "other"},
    batch=pointwise,
    keeps_zero={"RemainderBackward1": "self"},
)
def _remainder(ctx, grad):
    need_a, need_b = ctx.needs_input_grad
    gb = None
    if need_b:
        a, b = ctx.saved_value("self"), ctx.saved_value("other")
        if not _is_tensor(a):
            raise RuntimeError("derivative for aten::remainder is not implemented")
        # torch's -grad * self.div(other, rounding_mode="floor"): the rounded quotient has
        # zero gradients (DivBackward2), yet under create_graph the result requires grad
        gb = -grad * gt.div(a, b, rounding_mode="floor")
    return (grad if need_a else None), gb


@jvp("remainder")
def _remainder_jvp(args, out, tangents, lead):
    return _binary(
        args,
        out,
        tangents,
        lead,
        None,
        lambda a, b, o: -gt.floor_divide(_detached(a), _detached(b)),
    )


# torch's Scalar overloads, which its C++ library code calls (Note [Scalar overloads] in
# gradstack_tensor/_impl_elementwise.py): the number is saved as it is
@register(
    "mul_scalar(self, other)",
    "MulBackward1",
    inputs="self",
    save="other",
    batch=pointwise,
)
def _mul_scalar(ctx, grad):
    return (grad * ctx.saved_value("other"),)


@jvp("mul_scalar")
def _mul_scalar_jvp(args, out, tangents, lead):
    return tangents[0] * args[1]


@register(
    "div_scalar(self, other)",
    "DivBackward1",
    inputs="self",
    save="other",
    batch=pointwise,
)
def _div_scalar(ctx, grad):
    return (grad / ctx.saved_value("other"),)


@jvp("div_scalar")
def _div_scalar_jvp(args, out, tangents, lead):
    return tangents[0] / args[1]


# torch wraps a number divisor into a tensor here: DivBackward2 either way
@register(
    "div_rounding(self, other, rounding_mode)",
    "DivBackward2",
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": ("self", "other")},
    batch=pointwise,
)
def _div_rounding(ctx, grad):
    """``div(a, b, rounding_mode=...)`` is piecewise constant: zero gradients, as torch's
    (``grad.new_zeros``), for each input that wants one.

    torch's entry names ``self`` and ``other`` in its formulas (the rounding mode picks
    zeros at run time), so it saves them as div's would and reads them in backward: an
    operand written in place since fails backward with the version error, as in torch
    (fuzz seed 4 #2573)."""
    need_a, need_b = ctx.needs_input_grad
    ctx.saved_value("self")  # (the reads check the versions; None when not saved)
    ctx.saved_value("other")
    return (_zeros(grad) if need_a else None), (_zeros(grad) if need_b else None)


@jvp("div_rounding")
def _div_rounding_jvp(args, out, tangents, lead):
    """``div(a, b, rounding_mode=...)``: a tangent of zeros, as its zero gradients."""
    return _binary(
        args,
        out,
        tangents,
        lead,
        lambda a, b, o: gt.zeros_like(o),
        lambda a, b, o: gt.zeros_like(o),
    )


@register("erf(self)", "ErfBackward0", save="self", batch=unary, keeps_zero="self")
def _erf(ctx, grad):
    x = ctx.saved_value("self")  # torch: 2 / sqrt(pi) * exp(-x**2) * grad
    return ((2.0 / math.sqrt(math.pi)) * (-(x.pow(2))).exp() * grad,)


@jvp("erf")
def _erf_jvp(args, out, tangents, lead):
    x = args[0]
    return tangents[0] * ((2.0 / math.sqrt(math.pi)) * (-(x.pow(2))).exp())


@register("erfinv(self)", "ErfinvBackward0", save="self", batch=unary)
def _erfinv(ctx, grad):
    x = ctx.saved_value("self")  # torch: 0.5 * sqrt(pi) * exp(erfinv(x)**2) * grad
    return (0.5 * math.sqrt(math.pi) * x.erfinv().pow(2).exp() * grad,)


@jvp("erfinv")
def _erfinv_jvp(args, out, tangents, lead):
    return tangents[0] * (0.5 * math.sqrt(math.pi) * out.pow(2).exp())


@register("lgamma(self)", "LgammaBackward0", save="self", batch=unary)
def _lgamma(ctx, grad):
    return (grad * ctx.saved_value("self").digamma(),)


@jvp("lgamma")
def _lgamma_jvp(args, out, tangents, lead):
    return tangents[0] * args[0].digamma()


@register("digamma(self)", "DigammaBackward0", save="self", batch=unary)
def _digamma(ctx, grad):
    return (grad * ctx.saved_value("self").polygamma(1),)


@jvp("digamma")
def _digamma_jvp(args, out, tangents, lead):
    return tangents[0] * args[0].polygamma(1)


@register("polygamma(self, n)", "PolygammaBackward0", save="self, n",
          batch=per_sample("polygamma's order is an argument; rare in vmap"))  # fmt: skip
def _polygamma(ctx, grad):
    return (grad * ctx.saved_value("self").polygamma(ctx.saved_value("n") + 1),)


@jvp("polygamma")
def _polygamma_jvp(args, out, tangents, lead):
    return tangents[0] * args[0].polygamma(args[1] + 1)


@register(
    "atan2(self, other)",
    "Atan2Backward0",
    inputs="self, other",
    save="self, other",
    batch=pointwise,
    keeps_zero="self, other",
)
def _atan2(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("other")
    denom = a * a + b * b
    recip = gt.where(denom == 0, 0.0, denom.reciprocal())  # torch: 0 where both are 0
    need_a, need_b = ctx.needs_input_grad
    return (grad * b * recip if need_a else None), (grad * -a * recip if need_b else None)


@jvp("atan2")
def _atan2_jvp(args, out, tangents, lead):
    return _binary(
        args,
        out,
        tangents,
        lead,
        lambda a, b, o: b / (a * a + b * b),
        lambda a, b, o: -a / (a * a + b * b),
    )


def _clamp_name(args):
    # torch: clamp.Tensor (a tensor bound) -> ClampBackward0, clamp (numbers) -> ClampBackward1
    return "ClampBackward0" if any(_is_tensor(b) for b in args[1:3]) else "ClampBackward1"


@register(
    "clamp(self, min, max)",
    _clamp_name,
    inputs="self, min, max",
    save="self, min, max",
    batch=pointwise,
)
def _clamp(ctx, grad):
    """torch's clamp_backward / clamp_backward_min_max: the gradient goes to ``x`` inside
    ``[lo, hi]``, to the bound that decided the value outside it; when ``lo > hi`` the
    result is ``hi`` everywhere, so ``hi`` gets it all.  A NaN ``x`` gets nothing."""
    x, lo, hi = ctx.saved_value("self"), ctx.saved_value("min"), ctx.saved_value("max")
    need_x, need_lo, need_hi = ctx.needs_input_grad
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if need_x:
            gx = gt.where((x >= lo) & (x <= hi), grad, 0.0)
        if need_lo:
            glo = gt.where((x < lo) & (lo < hi), grad, 0.0)
        if need_hi:
            ghi = gt.where((x > hi) | (hi < lo), grad, 0.0)
    elif lo is not None:
        gx = gt.where(x >= lo, grad, 0.0) if need_x else None
        glo = gt.where(x < lo, grad, 0.0) if need_lo else None
    elif hi is not None:
        gx = gt.where(x <= hi, grad, 0.0) if need_x else None
        ghi = gt.where(x > hi, grad, 0.0) if need_hi else None
    return gx, glo, ghi


@jvp("clamp")
def _clamp_jvp(args, out, tangents, lead):
    """Number bounds: torch's clamp_backward of the tangent (``where`` on ``[lo, hi]``).
    Tensor bounds: torch's clamp_jvp, which picks one tangent per element (note: at a tie
    ``x == lo`` it picks ``lo``'s, unlike the backward formula; torch does the same)."""
    x = args[0]
    lo = args[1] if len(args) > 1 else None
    hi = args[2] if len(args) > 2 else None
    tx, tlo, thi = (tuple(tangents) + (None, None, None))[:3]
    if not (isinstance(lo, Tensor) or isinstance(hi, Tensor)):
        if tx is None:
            return None
        keep = gt.ones_like(x, dtype=gt.bool)
        if lo is not None:
            keep = keep & (x >= lo)
        if hi is not None:
            keep = keep & (x <= hi)
        return gt.where(keep, _pad(tx, x, out, lead), 0.0)
    if tx is None and tlo is None and thi is None:
        return None

    def tangent(t, primal):
        return _pad(t, primal, out, lead) if t is not None else 0.0

    t_x, t_lo, t_hi = tangent(tx, x), tangent(tlo, lo), tangent(thi, hi)
    if lo is not None and hi is not None:
        inner = gt.where(x < lo, t_lo, gt.where(x > hi, t_hi, t_x))
        return gt.where(lo > hi, t_hi, inner)
    if lo is not None:
        return gt.where(x > lo, t_x, t_lo)
    return gt.where(x < hi, t_x, t_hi)


@register(
    "where(condition, self, other)",
    "WhereBackward0",
    inputs="self, other",
    save="condition",
    batch=pointwise(value_positions=(1, 2)),
)
def _where(ctx, grad):
    cond = ctx.saved_value("condition")
    need_a, need_b = ctx.needs_input_grad
    return (
        gt.where(cond, grad, 0.0) if need_a else None,
        gt.where(cond, 0.0, grad) if need_b else None,
    )


@jvp("where")
def _where_jvp(args, out, tangents, lead):
    cond, a, b = args[0], args[1], args[2]
    ta, tb = tangents
    ta = _pad(ta, a, out, lead) if ta is not None else 0.0
    tb = _pad(tb, b, out, lead) if tb is not None else 0.0
    return gt.where(cond, ta, tb)


def _masked_fill_name(args):
    return "MaskedFillBackward1" if _is_tensor(args[2]) else "MaskedFillBackward0"


def _masked_fill_rule(args, bdims):
    value, vb = args[2], bdims[2]
    if isinstance(value, Tensor) and vb is not None:
        # a per-sample fill value: where(mask, value, input)
        return pointwise("where", (1, 2))((args[1], args[2], args[0]), (bdims[1], vb, bdims[0]))
    return pointwise("masked_fill", (0,))(args, bdims)


@register(
    "masked_fill(self, mask, value)",
    _masked_fill_name,
    inputs="self, value",
    save="mask",
    batch=_masked_fill_rule,
)
def _masked_fill(ctx, grad):
    mask = ctx.saved_value("mask")
    gv = _sum_all(gt.where(mask, grad, 0.0), _lead(grad)) if ctx.needs_input_grad[1] else None
    return grad.masked_fill(mask, 0.0), gv


@jvp("masked_fill")
def _masked_fill_jvp(args, out, tangents, lead):
    x, mask, value = args[0], args[1], args[2]
    tx, tv = tangents
    r = None
    if tx is not None:
        r = _pad(tx, x, out, lead).masked_fill(mask, 0.0)
    if tv is not None:
        r = _tangent_sum(r, gt.where(mask, _pad(tv, value, out, lead), 0.0))
    return r
