"""Functions torch has as single ops, written here as compositions of gradstack's ops.

``lerp``, ``addcmul``, ``addcdiv``, ``masked_select`` and ``broadcast_tensors`` compute
torch's values (the same formulas, in the same order of operations) from ops that already
have kernels, derivatives, batching rules and profiler names, so they differentiate
everywhere autograd is loaded.  (``histc`` and ``histogram`` are in ``histograms.py``.)

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

from ._dispatch import OPS, dispatch
from ._out import _CPP_NAMES, _SCALAR_NAMES, write_out
from ._promotion import can_cast_inplace
from ._signatures import checked
from ._tensor import Tensor

__all__ = [
    "put",
    "renorm",
    "norm_except_dim",
    "vdot",
    "dist",
    "as_strided",
    "lerp",
    "addcmul",
    "addcdiv",
    "masked_select",
    "broadcast_tensors",
    "movedim",
    "moveaxis",
    "std_mean",
    "var_mean",
]


def _tensor_arg(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def lerp(input, end, weight, *, out=None) -> Tensor:
    """``input + weight * (end - input)``, with torch's two-sided formula: for
    ``|weight| >= 0.5`` it is ``end - (end - input) * (1 - weight)`` (exact at weight 1).

    ``input`` and ``end`` must have one dtype, as in torch; ``weight`` is a number or a
    tensor of that dtype.
    """
    _tensor_arg(input, "lerp", "input")
    _tensor_arg(end, "lerp", "end")
    if end.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {_CPP_NAMES[input.dtype.name]} for `end` but got dtype "
            f"{_CPP_NAMES[end.dtype.name]}"
        )
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {_CPP_NAMES[input.dtype.name]} for `weight` but got dtype "
            f"{_CPP_NAMES[weight.dtype.name]}"
        )
    if isinstance(out, Tensor) and not can_cast_inplace(input.dtype, out.dtype):
        raise RuntimeError(  # torch checks out before the kernel's dtype
            f"result type {_SCALAR_NAMES[input.dtype.name]} can't be cast to the desired "
            f"output type {_SCALAR_NAMES[out.dtype.name]}"
        )
    if not (input.is_floating_point() or input.is_complex()):
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_SCALAR_NAMES[input.dtype.name]}'"
        )
    low = _half_precision(input, end, weight)
    if low is not None:  # Note [Half-precision composites compute in float32]
        input, end = input.float(), end.float()
        weight = weight.float() if isinstance(weight, Tensor) else weight
    diff = end - input
    if not isinstance(weight, Tensor):
        w = float(weight)
        result = input + w * diff if abs(w) < 0.5 else end - diff * (1.0 - w)
    else:
        small = weight.abs() < 0.5
        result = (input + weight * diff).where(small, end - diff * (1 - weight))
    if low is not None:
        result = result.to(low)
    return (
        result
        if out is None
        else write_out("lerp", result, out, rule="cast", inputs=(input, end, weight))
    )


# Note [Half-precision composites compute in float32]: torch's addcmul, addcdiv and lerp
# kernels for float16 and bfloat16 read each operand as float, compute the whole formula in
# float and round once; composed of our ops, each step rounded to the low precision (a
# third of pytorch/examples-style ``addcmul(x, y, z, value=0.8)`` and a quarter of
# ``lerp(x, y, 0.8)`` were an ulp off in bfloat16 and float16).  So when every tensor
# operand has one of those dtypes, the composite computes on float32 copies and rounds
# its result once.
def _half_precision(*operands):
    """The dtype (float16 or bfloat16) shared by every tensor operand, else None."""
    dtypes = {t.dtype for t in operands if isinstance(t, Tensor)}
    if len(dtypes) == 1:
        (dt,) = dtypes
        if dt.name in ("float16", "bfloat16"):
            return dt
    return None


def _integral(t: Tensor) -> bool:
    return not t.is_floating_point()


def _scalar_for(input: Tensor, value):
    """torch casts ``value`` to an integer input's type (``value=2.5`` is 2 for int64)."""
    if _integral(input) and isinstance(value, float):
        return int(value)
    return value


def addcmul(input, tensor1, tensor2, *, value=1, out=None) -> Tensor:
    """``input + value * tensor1 * tensor2`` (torch's order: ``(value * t1) * t2``)."""
    for t, name in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(t, "addcmul", name)
    value = _scalar_for(input, value)
    operands = (input, tensor1, tensor2)
    low = _half_precision(input, tensor1, tensor2)
    if low is not None:  # Note [Half-precision composites compute in float32]
        input, tensor1, tensor2 = input.float(), tensor1.float(), tensor2.float()
    prod = tensor1 * tensor2 if value == 1 else value * tensor1 * tensor2
    result = input + prod
    if low is not None:
        result = result.to(low)
    return (
        result if out is None else write_out("addcmul", result, out, rule="cast", inputs=operands)
    )


def addcdiv(input, tensor1, tensor2, *, value=1, out=None) -> Tensor:
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
    operands = (input, tensor1, tensor2)
    low = _half_precision(input, tensor1, tensor2)
    if low is not None:  # Note [Half-precision composites compute in float32]
        input, tensor1, tensor2 = input.float(), tensor1.float(), tensor2.float()
    quotient = tensor1 / tensor2 if value == 1 else value * tensor1 / tensor2
    result = input + quotient
    if low is not None:
        result = result.to(low)
    return (
        result if out is None else write_out("addcdiv", result, out, rule="cast", inputs=operands)
    )


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
    return tuple(t.expand(tuple(shape)) for t in tensors)


def masked_select(input, mask, *, out=None) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-d tensor; the two
    broadcast together first."""
    _tensor_arg(input, "masked_select", "input")
    _tensor_arg(mask, "masked_select", "mask")
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a, m = broadcast_tensors(input, mask)
    if out is None:
        return a[m]
    return write_out("masked_select", a[m], out, rule="same_scalar", input_dtype=input.dtype)


def _dims(value, ndim: int, what: str) -> tuple:
    items = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    out = []
    for d in items:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"movedim(): argument '{what}' must be an int or a tuple of ints")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                f"{max(ndim, 1) - 1}], but got {d})"
            )
        out.append(int(d) % max(ndim, 1))
    return tuple(out)


def _unique(dims: tuple, what: str) -> None:
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(dims)})")


def movedim(input, source, destination) -> Tensor:
    """``input`` with its dims ``source`` moved to the positions ``destination`` (the
    other dims keep their order): a view, as ``torch.movedim`` (PermuteBackward0).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.zeros(2, 3, 4).movedim(0, -1).shape
    gradstack.Size([3, 4, 2])
    >>> gt.zeros(2, 3, 4).movedim((0, 1), (2, 0)).shape
    gradstack.Size([3, 4, 2])
    """
    x = _tensor_arg(input, "movedim", "input")
    if isinstance(source, (int, np.integer)) != isinstance(destination, (int, np.integer)):
        raise TypeError(
            "movedim() received an invalid combination of arguments: source and destination "
            "must both be ints or both be tuples of ints"
        )
    n = x.dim()
    src, dst = _dims(source, n, "source"), _dims(destination, n, "destination")
    _unique(src, "source")
    _unique(dst, "destination")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    if n == 0:
        return x.permute(())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [next(rest) if o is None else o for o in order]
    return x.permute(tuple(order))


moveaxis = movedim


def _spread_and_mean(name, input, dim, unbiased, keepdim, correction):
    x = _tensor_arg(input, name, "input")
    if isinstance(dim, bool):  # torch.std_mean(x, False): the old unbiased argument
        dim, unbiased = None, dim
    method = getattr(x, name.split("_")[0])
    if unbiased is None:  # (the method's unbiased, when given, is a bool)
        spread = method(dim, keepdim=keepdim, correction=correction)
    else:
        spread = method(dim, unbiased, keepdim, correction=correction)
    return spread, x.mean(dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None) -> tuple:
    """``(std, mean)`` over ``dim``, with :meth:`Tensor.std`'s correction (two ops, as
    torch's values; torch records one StdMeanBackward0 node).

    >>> import gradstack_tensor as gt
    >>> [round(v.item(), 4) for v in std_mean(gt.tensor([1.0, 2.0, 4.0]))]
    [1.5275, 2.3333]
    """
    return _spread_and_mean("std_mean", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None) -> tuple:
    """``(var, mean)`` over ``dim``, with :meth:`Tensor.var`'s correction."""
    return _spread_and_mean("var_mean", input, dim, unbiased, keepdim, correction)


@checked("norm_except_dim")
def norm_except_dim(v, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002 - torch's name
    """The ``pow``-norm of ``v`` over every dim but ``dim``, keeping ``v``'s rank (size 1
    in the dims reduced); ``dim=-1`` is the norm of all of ``v`` (0-d), as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.norm_except_dim(gt.tensor([[3.0, 0.0], [0.0, 4.0]]), 2, 0).tolist()
    [[3.0], [4.0]]
    """
    if not isinstance(v, Tensor):
        raise TypeError(
            f"norm_except_dim(): argument 'v' (position 1) must be Tensor, not {type(v).__name__}"
        )
    if dim == -1:
        return v.norm(pow)
    axes = tuple(d for d in range(v.dim()) if d != dim % max(v.dim(), 1))
    return v.norm(pow, dim=axes, keepdim=True)


def _weight_norm(v, g, dim: int = 0) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))``: weight normalisation's weight (torch's
    ``_weight_norm``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> v = gt.tensor([[3.0, 4.0]])
    >>> _weight_norm(v, gt.tensor([[10.0]]), 0).tolist()
    [[6.0, 8.0]]
    """
    return v * (g / norm_except_dim(v, 2, dim))


def vdot(input, other, *, out=None) -> Tensor:  # noqa: A002 - torch's name
    """The dot product of two 1-d tensors, the first conjugated (real tensors: ``dot``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.vdot(gt.tensor([1.0, 2.0]), gt.tensor([3.0, 4.0])).item()
    11.0
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"vdot(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if not isinstance(other, Tensor):
        raise TypeError(
            f"vdot(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )
    result = dispatch(OPS["vdot"], (input, other))
    return result if out is None else write_out("vdot", result, out, rule="exact")


def dist(input, other, p: float = 2) -> Tensor:  # noqa: A002 - torch's name
    """The ``p``-norm of ``input - other`` (broadcast), over all elements.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.dist(gt.tensor([1.0, 2.0]), gt.tensor([[0.0, 0.0], [1.0, 1.0]]), 1).item()
    4.0
    """
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"dist(): argument '{name}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )
    diff = input - other
    if not (diff.is_floating_point() or diff.is_complex()):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_SCALAR_NAMES.get(str(diff.dtype).split('.')[-1], str(diff.dtype))} instead."
        )
    from .linalg import vector_norm

    return vector_norm(diff, p)


def as_strided(input, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    """``input.as_strided(size, stride, storage_offset)``: a view of ``input``'s storage
    (see :meth:`Tensor.as_strided`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.as_strided(gt.arange(6.0), (2,), (2,), 1).tolist()
    [1.0, 3.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"as_strided(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input.as_strided(size, stride, storage_offset)


def renorm(input, p, dim, maxnorm, *, out=None) -> Tensor:  # noqa: A002 - torch's names
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm``
    scaled down to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, torch's factor);
    differentiable through the norm, as torch's ``renorm_backward``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.renorm(gt.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    from ._shapes import _normalize_dim
    from .linalg import vector_norm

    x = _tensor_arg(input, "renorm", "input")
    for name, value in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"renorm(): argument '{name}' must be Number, not {type(value).__name__}"
            )
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} dimensions")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    d = _normalize_dim(dim, x.dim())
    others = tuple(i for i in range(x.dim()) if i != d)
    norm = vector_norm(x, p, dim=others, keepdim=True)
    factor = (maxnorm / (norm + 1e-7)).where(norm > maxnorm, 1.0)
    result = x * factor
    return result if out is None else write_out("renorm", result, out, rule="same")


def put(input, index, source, accumulate=False) -> Tensor:  # noqa: A002 - torch's names
    """``input`` (as if flattened) with ``source``'s elements written at the flat
    ``index`` positions (added there with ``accumulate``); negative indices count from
    the end.  Differentiable as torch's ``PutBackward0`` (composed with ``index_put``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.put(gt.zeros(2, 2), gt.tensor([0, -1]), gt.tensor([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    from .dtypes import SCALAR_TYPE_NAMES

    x = _tensor_arg(input, "put", "input")
    idx = _tensor_arg(index, "put", "index")
    src = _tensor_arg(source, "put", "source")
    if idx.dtype.name != "int64":
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[idx.dtype.name]}"
        )
    if src.dtype is not x.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{SCALAR_TYPE_NAMES[x.dtype.name]} and source.dtype = "
            f"{SCALAR_TYPE_NAMES[src.dtype.name]}"
        )
    if src.numel() != idx.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {src.numel()}, index.numel() = {idx.numel()}"
        )
    n = x.numel()
    flat = idx.reshape(-1)
    outside = (flat >= n) | (flat < -n)
    if bool(outside.any()):
        bad = int(flat[outside][0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return x.reshape(-1).index_put((flat,), src.reshape(-1), bool(accumulate)).reshape(x.shape)
