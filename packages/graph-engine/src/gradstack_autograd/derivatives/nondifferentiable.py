"""Ops whose outputs never require grad, and floor_divide's NotImplemented node."""

from __future__ import annotations

from ._table import NO_JVP, _not_differentiable, register
from .batching import arg_extreme, inplace, pointwise, random_tensor_params, reduction, unary

__all__: list[str] = []


# comparisons, logical and bitwise ops: booleans and integers carry no gradient
_not_differentiable("eq", "ne", "lt", "le", "gt", "ge", batch=pointwise)
_not_differentiable("logical_and", "logical_or", "logical_xor", batch=pointwise)
_not_differentiable("logical_not", batch=unary)
_not_differentiable("bitwise_and", "bitwise_or", "bitwise_xor", batch=pointwise)
_not_differentiable("bitwise_left_shift", "bitwise_right_shift", batch=pointwise)
_not_differentiable("bitwise_not", batch=unary)
_not_differentiable("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", batch=inplace)
_not_differentiable("bitwise_left_shift_", "bitwise_right_shift_", batch=inplace)
_not_differentiable("logical_not_", batch=inplace)
_not_differentiable("isnan", "isinf", "isfinite", batch=unary)

# indices and counts
_not_differentiable("argmax", "argmin", batch=arg_extreme)
_not_differentiable("count_nonzero", batch=reduction(keepdim_pos=None))

# detach: a new tensor that shares storage but leaves the graph
_not_differentiable("detach", batch=unary)


def _floor_divide_not_implemented(ctx, grad):
    # (the in-place variant shares the row: torch names the op that ran, floor_divide_)
    raise RuntimeError(f"derivative for aten::{ctx.entry.op_name} is not implemented")


# Note [floor_divide has no derivative]
# torch 2.13 records a ``NotImplemented`` node for floor_divide of a tensor that requires
# grad: the result requires grad, and backward through it raises.  (``div(...,
# rounding_mode="floor")`` is a different op in torch, with zero gradients.)
register("floor_divide(self, other)", "NotImplemented", inputs="self, other", batch=pointwise)(
    _floor_divide_not_implemented
)

# Note [binomial has no derivative]
# torch 2.13 records a ``NotImplemented`` node for binomial of a count or probability that
# requires grad; backward through it raises (its derivatives.yaml row is
# ``not_implemented("binomial")``).
register(
    "binomial(count, prob, generator)",
    "NotImplemented",
    inputs="count, prob",
    inplace_variant=False,
    batch=random_tensor_params(inplace=False),
)(_floor_divide_not_implemented)
NO_JVP["binomial"] = "torch has no derivative for binomial (Note [binomial has no derivative])"

# ops whose node exists but whose backward raises, as torch's NotImplemented nodes (and
# the in-place inverse hyperbolic functions: Note [torch has no derivative for in-place
# asinh, acosh, atanh] in arithmetic.py)
NOT_IMPLEMENTED = ("floor_divide", "floor_divide_", "asinh_", "acosh_", "atanh_", "binomial")
