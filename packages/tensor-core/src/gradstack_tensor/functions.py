"""The function forms of the ops: ``gradstack_tensor.sin(t)``, ``add(a, b, alpha=2)`` ...

Each calls the same dispatch point as the Tensor method of the same name, so the layers
above (autograd, profiler) see one op whichever form the user wrote.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.add(gt.tensor([1., 2.]), 1).tolist()
[2.0, 3.0]
>>> gt.cat([gt.zeros(2), gt.ones(1)]).tolist()
[0.0, 0.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from ._dispatch import OPS, dispatch
from ._out import _SCALAR_NAMES, write_out
from ._tensor import Tensor, _data, _wrap

# Ops of one tensor argument: name -> one-line description.
_UNARY = {
    "neg": "-input",
    "abs": "|input|",
    "sign": "the sign (-1, 0, 1) of each element",
    "relu": "max(input, 0)",
    "floor": "rounded down",
    "ceil": "rounded up",
    "round": "rounded half to even",
    "trunc": "rounded towards zero",
    "exp": "e ** input",
    "exp2": "2 ** input",
    "expm1": "e ** input - 1",
    "log": "natural logarithm",
    "log2": "base-2 logarithm",
    "log10": "base-10 logarithm",
    "log1p": "log(1 + input)",
    "sqrt": "square root",
    "rsqrt": "1 / sqrt(input)",
    "reciprocal": "1 / input",
    "sin": "sine",
    "cos": "cosine",
    "tan": "tangent",
    "asin": "arcsine",
    "acos": "arccosine",
    "atan": "arctangent",
    "sinh": "hyperbolic sine",
    "cosh": "hyperbolic cosine",
    "tanh": "hyperbolic tangent",
    "sigmoid": "1 / (1 + exp(-input))",
    "logical_not": "elementwise not",
    "bitwise_not": "bitwise not",
}

# Ops of two arguments (tensors or numbers, broadcast).
_BINARY = {
    "mul": "input * other",
    "pow": "input ** exponent",
    "maximum": "elementwise maximum",
    "minimum": "elementwise minimum",
    "remainder": "Python's modulus",
    "floor_divide": "input // other",
    "atan2": "atan(input / other) with quadrant",
    "eq": "input == other",
    "ne": "input != other",
    "lt": "input < other",
    "le": "input <= other",
    "gt": "input > other",
    "ge": "input >= other",
    "logical_and": "elementwise and",
    "logical_or": "elementwise or",
    "logical_xor": "elementwise xor",
    "bitwise_and": "input & other",
    "bitwise_or": "input | other",
    "bitwise_xor": "input ^ other",
}

__all__ = sorted(
    list(_UNARY)
    + [n + "_" for n in _UNARY if n + "_" in OPS]
    + list(_BINARY)
    + [
        "add",
        "sub",
        "subtract",
        "multiply",
        "div",
        "divide",
        "true_divide",
        "rsub",
        "clamp",
        "clip",
        "clamp_min",
        "clamp_max",
        "where",
        "square",
        "sum",
        "mean",
        "prod",
        "max",
        "min",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "var",
        "std",
        "norm",
        "logsumexp",
        "softmax",
        "log_softmax",
        "cumsum",
        "matmul",
        "mm",
        "bmm",
        "dot",
        "outer",
        "mv",
        "addmm",
        "t",
        "transpose",
        "permute",
        "reshape",
        "squeeze",
        "unsqueeze",
        "flatten",
        "narrow",
        "select",
        "split",
        "chunk",
        "unbind",
        "cat",
        "concat",
        "concatenate",
        "stack",
        "clone",
        "detach",
        "masked_fill",
        "all",
        "any",
        "numel",
        "is_tensor",
        "flip",
        "tril",
        "triu",
        "index_select",
        "gather",
        "diag",
        "trace",
        "sort",
        "topk",
        "swapaxes",
        "ravel",
        "zeros_like_",
        "clamp_",
        "fill_",
        "zero_",
        "allclose",
        "equal",
        "isclose",
        "isnan",
        "isinf",
        "isfinite",
        "erf",
        "erfinv",
        "count_nonzero",
        "bernoulli",
        "multinomial",
    ]
)
__all__.remove("zeros_like_")


def _make_unary(name, text):
    op = OPS[name]

    def fn(input):
        return dispatch(op, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {text}."
    return fn


# torch's function forms that take Tensors only (a Python number is a TypeError), and those
# whose first argument must be a Tensor
_TENSORS_ONLY = {"maximum", "minimum", "atan2", "logical_and", "logical_or", "logical_xor"}
_TENSOR_FIRST = {"eq", "ne", "lt", "le", "gt", "ge"}


def _make_binary(name, text):
    op = OPS[name]
    both = name in _TENSORS_ONLY
    first = both or name in _TENSOR_FIRST

    def fn(input, other):
        if first and not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        if both and not isinstance(other, Tensor):
            raise TypeError(
                f"{name}(): argument 'other' (position 2) must be Tensor, not "
                f"{type(other).__name__}"
            )
        return dispatch(op, (input, other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {text}, broadcasting ``input`` and ``other``."
    return fn


for _name, _text in _UNARY.items():
    globals()[_name] = _make_unary(_name, _text)
    if _name + "_" in OPS:
        globals()[_name + "_"] = _make_unary(_name + "_", _text + ", in place")
for _name, _text in _BINARY.items():
    globals()[_name] = _make_binary(_name, _text)
multiply = globals()["mul"]


def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcast."""
    return dispatch(OPS["add"], (input, other, alpha))


def sub(input, other, *, alpha=1):
    """``input - alpha * other``, broadcast."""
    return dispatch(OPS["sub"], (input, other, alpha))


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    _tensor(input, "rsub")
    return dispatch(OPS["rsub"], (input, other, alpha))


def div(input, other, *, rounding_mode=None):
    """``input / other`` (true division; integer inputs give floats)."""
    if rounding_mode is not None:
        return _tensor(input, "div").div(other, rounding_mode=rounding_mode)
    return dispatch(OPS["div"], (input, other))


divide = true_divide = div


def square(input):
    """``input ** 2``."""
    return dispatch(OPS["pow"], (input, 2))


def clamp(input, min=None, max=None):  # noqa: A002 - torch's names
    """Elements limited to ``[min, max]`` (either bound may be None)."""
    return dispatch(OPS["clamp"], (input, min, max))


clip = clamp


def clamp_min(input, min):  # noqa: A002
    return dispatch(OPS["clamp"], (input, min, None))


def clamp_max(input, max):  # noqa: A002
    return dispatch(OPS["clamp"], (input, None, max))


def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcast)."""
    if input is None and other is None:
        return tuple(_wrap(i.astype("int64")) for i in np.nonzero(_data(condition)))
    return dispatch(OPS["where"], (condition, input, other))


def masked_fill(input, mask, value):
    return dispatch(OPS["masked_fill"], (input, mask, value))


def clamp_(input, min=None, max=None):  # noqa: A002
    """Limit ``input`` to ``[min, max]`` in place."""
    return dispatch(OPS["clamp_"], (input, min, max))


def fill_(input, value):
    """Fill ``input`` with ``value`` in place."""
    return dispatch(OPS["fill_"], (input, value))


def zero_(input):
    """Fill ``input`` with zeros in place."""
    return dispatch(OPS["zero_"], (input,))


def _tensor(x, name) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def _method_form(name, doc=None):
    def fn(input, *args, **kwargs):
        return getattr(_tensor(input, name), name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or getattr(Tensor, name).__doc__ or f"See ``Tensor.{name}``."
    return fn


for _name in (
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "norm",
    "logsumexp",
    "softmax",
    "log_softmax",
    "cumsum",
    "matmul",
    "mm",
    "bmm",
    "dot",
    "outer",
    "mv",
    "t",
    "transpose",
    "permute",
    "reshape",
    "squeeze",
    "unsqueeze",
    "flatten",
    "narrow",
    "select",
    "split",
    "chunk",
    "unbind",
    "clone",
    "detach",
    "all",
    "any",
    "flip",
    "tril",
    "triu",
    "index_select",
    "gather",
    "diag",
    "trace",
    "sort",
    "topk",
    "swapaxes",
    "ravel",
    "numel",
):
    globals()[_name] = _method_form(_name)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return dispatch(OPS["addmm"], (input, mat1, mat2, beta, alpha))


def cat(tensors, dim=0):
    """Concatenate tensors along an existing dimension."""
    return dispatch(OPS["cat"], (tuple(tensors), dim))


concat = concatenate = cat


def stack(tensors, dim=0):
    """Stack equally shaped tensors along a new dimension."""
    return dispatch(OPS["stack"], (tuple(tensors), dim))


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a gradstack Tensor."""
    return isinstance(obj, Tensor)


def _values(x):
    return _data(x) if isinstance(x, Tensor) else np.asarray(x)


def isnan(input):
    """Where ``input`` is NaN (a bool tensor)."""
    return dispatch(OPS["isnan"], (input,))


def isinf(input):
    """Where ``input`` is +-inf (a bool tensor)."""
    return dispatch(OPS["isinf"], (input,))


def isfinite(input):
    """Where ``input`` is neither NaN nor +-inf (a bool tensor)."""
    return dispatch(OPS["isfinite"], (input,))


def erf(input):
    """The error function, elementwise (``ErfBackward0``; ``_impl_special.py``).

    >>> import gradstack_tensor as gt
    >>> round(gt.erf(gt.tensor(1.0)).item(), 6)
    0.842701
    """
    return dispatch(OPS["erf"], (input,))


def erfinv(input):
    """The inverse error function, elementwise (``ErfinvBackward0``): ``+-inf`` at
    ``+-1``, NaN outside ``[-1, 1]``."""
    return dispatch(OPS["erfinv"], (input,))


def count_nonzero(input, dim=None, *, axis=None):
    """The number of non-zero elements of ``input`` (over ``dim``: an int or a tuple;
    ``axis`` is numpy's name for it, as torch accepts).

    >>> import gradstack_tensor as gt
    >>> count_nonzero(gt.tensor([[0, 1], [2, 0]]), dim=0).tolist()
    [1, 1]
    """
    if axis is not None:
        return _tensor(input, "count_nonzero").count_nonzero(dim, axis=axis)
    return dispatch(OPS["count_nonzero"], (input, dim))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _wrap(
        np.isclose(_values(input), _values(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether all elements are close: ``|input - other| <= atol + rtol * |other|``."""
    return bool(
        np.allclose(_values(input), _values(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements (see :meth:`Tensor.equal`)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"equal(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.equal(other)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws of ``input``'s shape and dtype, 1 with probability ``input`` (or ``p``);
    torch's numbers after the same ``manual_seed``.

    >>> import gradstack_tensor as gt
    >>> gt.bernoulli(gt.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    result = dispatch(OPS["bernoulli"], (input, p, generator))
    return result if out is None else write_out("bernoulli", result, out)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories of each row of ``input`` (non-negative weights,
    not necessarily normalised), with or without replacement; torch's numbers after the
    same ``manual_seed``.

    >>> import gradstack_tensor as gt
    >>> gt.multinomial(gt.tensor([0.0, 0.0, 1.0]), 2, replacement=True).tolist()
    [2, 2]
    """
    if out is not None and isinstance(out, Tensor) and out.dtype.name != "int64":
        raise RuntimeError(
            f"multinomial expects Long tensor out, got: {_SCALAR_NAMES[out.dtype.name]}"
        )
    result = dispatch(OPS["multinomial"], (input, num_samples, replacement, generator))
    return result if out is None else write_out("multinomial", result, out)
