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
from ._out import _SCALAR_NAMES, check_out_dtype, write_out
from ._tensor import Tensor, _data, _wrap

# Ops of one tensor argument: name -> one-line description.
_UNARY = {
    "neg": "-input",
    "abs": "absolute value",
    "sign": "the sign (-1, 0, 1) of each element",
    "sgn": "the sign (-1, 0, 1) of each element (sign's values; an efficient-zero gradient)",
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
    "asinh": "inverse hyperbolic sine",
    "acosh": "inverse hyperbolic cosine (NaN below 1)",
    "atanh": "inverse hyperbolic tangent",
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
        "diagonal",
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
        "lgamma",
        "digamma",
        "polygamma",
        "mvlgamma",
        "count_nonzero",
        "bernoulli",
        "multinomial",
    ]
)
__all__.remove("zeros_like_")


# Note [out= on the function forms]
# torch gives ``out=`` to most function forms (not to the methods, nor to ``relu``,
# ``rsub``, ``masked_fill``, the views and the is* predicates).  The function computes its
# result as usual, then ``write_out`` checks ``out`` by the op's dtype rule (``_OUT_RULES``;
# Note [Which dtypes out= accepts] in _out.py), refuses it when autograd would be needed,
# resizes it (with torch's warning) and copies the values in.
_SAME_DTYPE = {"neg", "abs", "sign", "sgn", "floor", "ceil", "round", "trunc", "bitwise_not"}
_NO_OUT = {"relu"}


def _unary_rule(name):
    return (
        None
        if name in _NO_OUT or name.endswith("_")
        else ("same" if name in _SAME_DTYPE else "cast")
    )


def _make_unary(name, text):
    op = OPS[name]
    rule = _unary_rule(name)
    if rule is None:

        def fn(input):
            return dispatch(op, (input,))

        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"Elementwise {text}."
        return fn

    def fn(input, *, out=None):
        result = dispatch(op, (input,))
        if out is None:
            return result
        return write_out(name, result, out, rule=rule, inputs=(input,))

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

    def fn(input, other, *, out=None):
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
        result = dispatch(op, (input, other))
        if out is None:
            return result
        return write_out(name, result, out, rule="cast", inputs=(input, other))

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


def _out(name, result, out, rule="cast", input_dtype=None, inputs=()):
    """``result``, or ``result`` written into ``out``; ``inputs``: an elementwise op's
    tensors, which ``out`` may not partly overlap (torch's check)."""
    if out is None:
        return result
    return write_out(name, result, out, rule=rule, input_dtype=input_dtype, inputs=inputs)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcast."""
    return _out("add", dispatch(OPS["add"], (input, other, alpha)), out, inputs=(input, other))


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``, broadcast."""
    return _out("sub", dispatch(OPS["sub"], (input, other, alpha)), out, inputs=(input, other))


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    _tensor(input, "rsub")
    return dispatch(OPS["rsub"], (input, other, alpha))


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other`` (true division; integer inputs give floats)."""
    if rounding_mode is not None:
        result = _tensor(input, "div").div(other, rounding_mode=rounding_mode)
    else:
        result = dispatch(OPS["div"], (input, other))
    return _out("div", result, out, inputs=(input, other))


divide = true_divide = div


def square(input, *, out=None):
    """``input ** 2``."""
    return _out("square", dispatch(OPS["pow"], (input, 2)), out, inputs=(input,))


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002 - torch's names
    """Elements limited to ``[min, max]`` (either bound may be None)."""
    return _out("clamp", dispatch(OPS["clamp"], (input, min, max)), out, "same", inputs=(input,))


clip = clamp


def clamp_min(input, min, *, out=None):  # noqa: A002
    return _out(
        "clamp_min", dispatch(OPS["clamp"], (input, min, None)), out, "same", inputs=(input,)
    )


def clamp_max(input, max, *, out=None):  # noqa: A002
    return _out(
        "clamp_max", dispatch(OPS["clamp"], (input, None, max)), out, "same", inputs=(input,)
    )


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcast)."""
    if input is None and other is None:
        if out is not None:
            raise TypeError(
                "where() received an invalid combination of arguments - got (Tensor, "
                "out=Tensor): the one-argument form takes no out"
            )
        return tuple(_wrap(i.astype("int64")) for i in np.nonzero(_data(condition)))
    if out is not None:  # torch's out= overload takes tensors only
        for position, (arg, label) in enumerate(((input, "input"), (other, "other")), 2):
            if not isinstance(arg, Tensor):
                raise TypeError(
                    f"where(): argument '{label}' (position {position}) must be Tensor, not "
                    f"{type(arg).__name__}"
                )
    return _out(
        "where",
        dispatch(OPS["where"], (condition, input, other)),
        out,
        "where",
        inputs=(condition, input, other),
    )


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
    rule = _OUT_RULES.get(name)
    if rule is None:

        def fn(input, *args, **kwargs):
            return getattr(_tensor(input, name), name)(*args, **kwargs)

    else:

        def fn(input, *args, out=None, **kwargs):
            method = getattr(_tensor(input, name), name)
            if out is None:
                return method(*args, **kwargs)
            return _method_out(name, rule, input, method, args, kwargs, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or getattr(Tensor, name).__doc__ or f"See ``Tensor.{name}``."
    return fn


# the rule of each method form that takes out= (Note [Which dtypes out= accepts]); "dim"
# marks reductions whose result is a (values, indices) pair when a dim is given
_OUT_RULES = {
    "sum": "in_out_dtype",
    "prod": "in_out_dtype",
    "cumsum": "in_out_dtype",
    "mean": "mean",
    "max": "dim",
    "min": "dim",
    "amax": "amax",
    "amin": "amax",
    "argmax": "long",
    "argmin": "long",
    "var": "cast",
    "std": "cast",
    "norm": "exact",
    "logsumexp": "logsumexp",
    "softmax": "exact",
    "log_softmax": "exact",
    "matmul": "matmul",
    "mm": "exact",
    "bmm": "exact",
    "dot": "dot",
    "outer": "cast",
    "mv": "exact",
    "all": "bool",
    "any": "bool",
    "tril": "exact",
    "triu": "exact",
    "index_select": "same_scalar",
    "gather": "exact",
    "diag": "exact",
    "sort": ("exact", "long"),
    "topk": ("exact", "long"),
}


def _has_dim(args, kwargs) -> bool:
    return bool(args) or kwargs.get("dim", kwargs.get("axis")) is not None


def _method_out(name, rule, input, method, args, kwargs, out):
    """``method(*args, **kwargs)`` written into ``out`` by torch's rules for ``name``."""
    in_dtype = input.dtype
    if rule == "in_out_dtype":
        # sum/prod/cumsum compute in out's dtype; sum and prod take out= only with a dim
        if name != "cumsum" and not _has_dim(args, kwargs):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, "
                f"out=Tensor): out= needs dim (torch's {name}(input, dim, keepdim=False, *, "
                "dtype=None, out=None))"
            )
        if isinstance(out, Tensor) and kwargs.get("dtype") is None:
            kwargs = {**kwargs, "dtype": out.dtype}
        return write_out(name, method(*args, **kwargs), out)
    if rule == "mean":
        # over all elements, torch checks that the input casts to out before it refuses an
        # integral input; over a dim, the result's cast is checked after
        if isinstance(out, Tensor) and not _has_dim(args, kwargs):
            check_out_dtype("mean", name, in_dtype, out, in_dtype)
        result = method(*args, **kwargs)
        return write_out(name, result, out, rule="cast")
    if rule == "exact" and name in ("softmax", "log_softmax") and kwargs.get("dtype") is None:
        if isinstance(out, Tensor) and len(args) < 2:  # the result has the input's dtype
            check_out_dtype("exact", name, in_dtype, out)
    if rule == "dim":
        rule = ("exact", "long") if _has_dim(args, kwargs) else "max_all"
        if args and isinstance(args[0], Tensor):  # max(input, other): maximum's rule
            rule = "cast"
    elif rule == "logsumexp":
        rule = "floating"
    elif rule == "matmul":
        other = args[0] if args else kwargs.get("other")
        dims = (input.dim(), other.dim() if isinstance(other, Tensor) else -1)
        rule = "dot" if dims == (1, 1) else "exact"
    result = method(*args, **kwargs)
    return write_out(name, result, out, rule=rule, input_dtype=in_dtype)


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
    "diagonal",
    "trace",
    "sort",
    "topk",
    "swapaxes",
    "ravel",
    "numel",
):
    globals()[_name] = _method_form(_name)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return _out("addmm", dispatch(OPS["addmm"], (input, mat1, mat2, beta, alpha)), out, "exact")


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dimension."""
    return _out("cat", dispatch(OPS["cat"], (tuple(tensors), dim)), out, "cat")


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Stack equally shaped tensors along a new dimension."""
    return _out("stack", dispatch(OPS["stack"], (tuple(tensors), dim)), out, "cat")


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


def erf(input, *, out=None):
    """The error function, elementwise (``ErfBackward0``; ``_impl_special.py``).

    >>> import gradstack_tensor as gt
    >>> round(gt.erf(gt.tensor(1.0)).item(), 6)
    0.842701
    """
    return _out("erf", dispatch(OPS["erf"], (input,)), out, inputs=(input,))


def erfinv(input, *, out=None):
    """The inverse error function, elementwise (``ErfinvBackward0``): ``+-inf`` at
    ``+-1``, NaN outside ``[-1, 1]``."""
    return _out("erfinv", dispatch(OPS["erfinv"], (input,)), out, inputs=(input,))


def lgamma(input, *, out=None):
    """``log|gamma(x)|``, elementwise (``LgammaBackward0``; +inf at the poles;
    Note [The gamma family follows torch's formulas] in ``_impl_special.py``).

    >>> import gradstack_tensor as gt
    >>> gt.lgamma(gt.tensor([1.0, 3.0])).tolist()
    [0.0, 0.6931471824645996]
    """
    return _out("lgamma", dispatch(OPS["lgamma"], (input,)), out, inputs=(input,))


def digamma(input, *, out=None):
    """The digamma function ``d/dx log gamma(x)``, elementwise (``DigammaBackward0``)."""
    return _out("digamma", dispatch(OPS["digamma"], (input,)), out, inputs=(input,))


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma, elementwise (torch's order: ``n`` first)."""
    return _out("polygamma", dispatch(OPS["polygamma"], (input, n)), out, inputs=(input,))


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``:
    ``sum_i lgamma(x - i / 2) + p (p - 1) / 4 log(pi)`` (torch 2.13 no longer checks that
    the elements exceed ``(p - 1) / 2``).

    >>> import gradstack_tensor as gt
    >>> round(gt.mvlgamma(gt.tensor([2.5], dtype=gt.float64), 2).item(), 6)
    0.857048
    """
    import math

    if not isinstance(input, Tensor):
        raise TypeError(f"mvlgamma(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.is_floating_point() else input.to(_default_float())
    # torch's order: lgamma of x + [-(p - 1) / 2, ..., 0] along a new last dim, summed
    offsets = [-p * 0.5 + 0.5 + k * 0.5 for k in range(p)]
    args = stack([x + o for o in offsets], -1)
    return args.lgamma().sum(-1) + p * (p - 1) * math.log(math.pi) / 4


def _default_float():
    from .dtypes import get_default_dtype

    return get_default_dtype()


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
