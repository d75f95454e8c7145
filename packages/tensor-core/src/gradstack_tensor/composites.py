"""Functions torch has as single ops, written here as compositions of gradstack's ops.

``lerp``, ``addcmul``, ``addcdiv``, ``masked_select``, ``broadcast_tensors`` and ``histc``
compute torch's values (the same formulas, in the same order of operations) from ops that
already have kernels, derivatives, batching rules and profiler names, so they differentiate
everywhere autograd is loaded.

Note [Composites record their parts]
A composite records the nodes of its parts (``lerp`` records ``WhereBackward0`` ...)
instead of torch's single node (``LerpBackward0``); values and gradients are torch's.
When one of them earns an op of its own (a fused kernel), it moves to the op table.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.lerp(gt.tensor([1.0, 2.0]), gt.tensor([3.0, 5.0]), 0.5).tolist()
[2.0, 3.5]
>>> gt.addcmul(gt.zeros(2), gt.tensor([1.0, 2.0]), gt.tensor([3.0, 4.0]), value=0.5).tolist()
[1.5, 4.0]
>>> gt.masked_select(gt.arange(6).reshape(2, 3), gt.tensor([True, False, True])).tolist()
[0, 2, 3, 5]
"""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor, _data, _wrap

__all__ = ["lerp", "addcmul", "addcdiv", "masked_select", "broadcast_tensors", "histc"]


def _tensor_arg(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def lerp(input, end, weight) -> Tensor:
    """``input + weight * (end - input)``, with torch's two-sided formula: for
    ``|weight| >= 0.5`` it is ``end - (end - input) * (1 - weight)`` (exact at weight 1).

    ``input`` and ``end`` must have one dtype, as in torch; ``weight`` is a number or a
    tensor of that dtype.
    """
    _tensor_arg(input, "lerp", "input")
    _tensor_arg(end, "lerp", "end")
    if end.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {str(input.dtype).split('.')[-1]} for `end` but got dtype "
            f"{str(end.dtype).split('.')[-1]}"
        )
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {str(input.dtype).split('.')[-1]} for `weight` but got dtype "
            f"{str(weight.dtype).split('.')[-1]}"
        )
    diff = end - input
    if not isinstance(weight, Tensor):
        w = float(weight)
        return input + w * diff if abs(w) < 0.5 else end - diff * (1.0 - w)
    small = weight.abs() < 0.5
    return (input + weight * diff).where(small, end - diff * (1 - weight))


def _integral(t: Tensor) -> bool:
    return not t.is_floating_point()


def _scalar_for(input: Tensor, value):
    """torch casts ``value`` to an integer input's type (``value=2.5`` is 2 for int64)."""
    if _integral(input) and isinstance(value, float):
        return int(value)
    return value


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (torch's order: ``(value * t1) * t2``)."""
    for t, name in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(t, "addcmul", name)
    value = _scalar_for(input, value)
    prod = tensor1 * tensor2 if value == 1 else value * tensor1 * tensor2
    return input + prod


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (torch's order: ``(value * t1) / t2``);
    integer ``tensor1`` and ``tensor2`` are refused, as in torch."""
    for t, name in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(t, "addcdiv", name)
    if _integral(tensor1) and _integral(tensor2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    value = _scalar_for(input, value)
    quotient = tensor1 / tensor2 if value == 1 else value * tensor1 / tensor2
    return input + quotient


def broadcast_tensors(*tensors) -> tuple:
    """Each tensor expanded to the broadcast shape of all of them (views, as torch's).

    >>> import gradstack_tensor as gt
    >>> [tuple(t.shape) for t in broadcast_tensors(gt.ones(2, 1), gt.ones(3))]
    [(2, 3), (2, 3)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        _tensor_arg(t, "broadcast_tensors", f"tensors[{i}]")
    try:
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        from ._shapes import broadcast_error

        shapes = [tuple(t.shape) for t in tensors]
        for a in shapes:
            for b in shapes:
                try:
                    np.broadcast_shapes(a, b)
                except ValueError:
                    raise broadcast_error(a, b) from None
        raise
    return tuple(t.expand(*shape) for t in tensors)


def masked_select(input, mask) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-d tensor; the two
    broadcast together first."""
    _tensor_arg(input, "masked_select", "input")
    _tensor_arg(mask, "masked_select", "mask")
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a, m = broadcast_tensors(input, mask)
    return a[m]


def histc(input, bins=100, min=0, max=0) -> Tensor:  # noqa: A002 - torch's names
    """A histogram of ``input`` with ``bins`` equal bins over ``[min, max]`` (the data's
    range when both are 0); elements outside are ignored; a float tensor of ``input``'s
    dtype, as torch's (integer inputs are refused, as there).

    >>> import gradstack_tensor as gt
    >>> histc(gt.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    _tensor_arg(input, "histc", "input")
    x = _data(input)
    if x.dtype.kind != "f":
        kind = {"b": "Bool", "u": "Byte"}.get(x.dtype.kind, "Long" if x.itemsize == 8 else "Int")
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{kind}'")
    if int(bins) <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    bins = int(bins)
    lo, hi = x.dtype.type(min), x.dtype.type(max)
    if lo == hi and x.size:
        lo, hi = x.min(), x.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(
            f"torch.histc(): range of [{lo}, {hi}] is not finite (pass finite min and max)"
        )
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    flat = x.reshape(-1)
    inside = flat[(flat >= lo) & (flat <= hi)]
    # torch's linear interpolation: the bin of ``elt`` is (elt - lo) * bins / (hi - lo),
    # computed in the input's dtype, with elt == hi in the last bin
    pos = ((inside - lo) * x.dtype.type(bins) / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    counts = np.bincount(pos, minlength=bins).astype(x.dtype)
    return _wrap(counts)
