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
from ._op_table import ROWS, OpRow
from ._out import _SCALAR_NAMES, check_out_dtype, write_out
from ._signatures import MISSING, checked
from ._tensor import Tensor, _data, _wrap

# Note [Function forms from the op table]
# A row of the op table with the "function" form (``_op_table.py``) gets its function here,
# made from the row: its parameters (``input`` and the row's ``params``), the checks of its
# argument kinds (torch's TypeError for a number where the schema says Tensor), ``out=`` by
# the row's rule (Note [out= on the function forms]), and for a unary op with an in-place
# form the in-place function (``exp_``).  The source of each is written from the row and
# compiled once at import, so that each has its own signature, as a hand-written one would.
#
# Note [out= on the function forms]
# torch gives ``out=`` to most function forms (not to the methods, nor to ``relu``,
# ``rsub``, ``masked_fill``, the views and the is* predicates).  The function computes its
# result as usual, then ``write_out`` checks ``out`` by the op's dtype rule (``_OUT_RULES``,
# or the row's ``out``; Note [Which dtypes out= accepts] in _out.py), refuses it when
# autograd would be needed, resizes it (with torch's warning) and copies the values in.


def _function_source(row: OpRow, inplace: bool) -> tuple[str, str]:
    """The name and the source of ``row``'s function form (or of its in-place form), which
    calls the op ``_op_<name>``."""
    name = row.inplace_name if inplace else row.name
    rule = None if inplace else row.out
    params = ["input"] + ([row.params] if row.params else [])
    if rule is not None:
        params.append("out=None" if "*" in row.params else "*, out=None")
    names = row.param_names
    kinds = row.arg_kinds
    lines = [f"def {name}({', '.join(params)}):"]
    if len(kinds) > 1:
        for position, (arg, kind) in enumerate(zip(("input", *names), kinds), 1):
            if kind == "Tensor":
                lines += [
                    f"    if not isinstance({arg}, Tensor):",
                    f"        raise TypeError(f\"{name}(): argument '{arg}' (position "
                    f'{position}) must be Tensor, not {{type({arg}).__name__}}")',
                ]
    call = "(" + ", ".join(["input", *names]) + ("," if not names else "") + ")"
    if rule is None:
        lines.append(f"    return dispatch(_op_{name}, {call})")
    else:
        tensors = "(" + ", ".join(["input", *names[:1]]) + ("," if not names else "") + ")"
        lines += [
            f"    result = dispatch(_op_{name}, {call})",
            "    if out is None:",
            "        return result",
            f"    return write_out({name!r}, result, out, rule={rule!r}, inputs={tensors})",
        ]
    return name, "\n".join(lines) + "\n"


def _functions(rows) -> dict:
    """The function forms of ``rows`` by name (Note [Function forms from the op table]):
    their sources compiled at once, each calling its op (``_op_<name>``)."""
    forms = [(row, False) for row in rows if "function" in row.forms]
    forms += [(row, True) for row, _ in forms if row.inplace_form and row.unary]
    namespace: dict = {"dispatch": dispatch, "Tensor": Tensor, "write_out": write_out}
    sources = []
    for row, inplace in forms:
        name, source = _function_source(row, inplace)
        namespace[f"_op_{name}"] = OPS[name]
        sources.append(source)
    exec(compile("\n\n".join(sources), "<function forms of the op table>", "exec"), namespace)
    made = {}
    for row, inplace in forms:
        name = row.inplace_name if inplace else row.name
        fn = made[name] = namespace[name]
        fn.__module__ = __name__
        summary = (row.inplace_doc if inplace else row.doc).split("\n\n")[0]
        fn.__doc__ = (
            f"{summary}\n\nThe function form of :meth:`Tensor.{name}` (``input`` is ``self``)."
        )
        if not inplace:
            made.update((alias, fn) for alias in row.aliases)
        else:  # torch.arcsinh_ is asinh_: the in-place method aliases have functions too
            made.update((alias, fn) for alias in row.method_aliases if alias.endswith("_"))
    return made


_FROM_TABLE = _functions(ROWS)  # the function forms made from the op table, by name
globals().update(_FROM_TABLE)

# Note [torch's functions that are a method's call]
# torch has a function for these methods (``torch.erf_(t)``, ``torch.msort(t)``,
# ``torch.adjoint(t)``, ``torch.is_signed(t)``): each is the method called on ``input``
# (``_method_form``, with the method's docstring), so that its checks, results and graph
# are the method's.  The census of torch's names (docs/census.md) listed them as missing.
_TORCH_FUNCTIONS_OF_METHODS = (
    # in-place forms of ops whose function form is written by hand or is a composite
    "addmv_", "arccos_", "arcsin_", "arctan_", "as_strided_", "clamp_max_", "clamp_min_", "clip_",
    "conj_physical_", "deg2rad_", "detach_", "erf_", "erfc_", "fix_", "frac_", "ldexp_",
    "logit_", "nan_to_num_", "negative_", "rad2deg_", "resize_as_", "sinc_", "square_",
    "xlogy_",
    # out-of-place
    "adjoint", "as_strided_scatter", "conj", "conj_physical", "ger", "get_device", "is_conj",
    "is_distributed", "is_inference", "is_neg", "is_nonzero", "is_same_size", "is_signed",
    "msort", "narrow_copy", "nonzero_static",
    "resolve_conj", "resolve_neg", "split_with_sizes", "take",
)  # fmt: skip

# the methods whose function form is the method called on ``input``, with torch's
# ``out=`` checks (``_method_form``)
_METHOD_FORMS = (
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
    "norm", "logsumexp", "softmax", "log_softmax", "cumsum", "matmul", "mm", "bmm", "dot",
    "outer", "mv", "t", "transpose", "permute", "reshape", "squeeze", "unsqueeze", "flatten",
    "narrow", "select", "split", "chunk", "unbind", "clone", "detach", "all", "any", "flip",
    "tril", "triu", "index_select", "gather", "diag", "diagonal", "trace", "sort", "topk",
    "swapaxes", "ravel", "numel",
)  # fmt: skip

__all__ = sorted(
    list(_FROM_TABLE)
    + [
        "div",
        "divide",
        "round",
        "round_",
        "true_divide",
        "rsub",
        "clamp",
        "clip",
        "clamp_min",
        "clamp_max",
        "where",
        "square",
        "addmm",
        "cat",
        "concat",
        "concatenate",
        "stack",
        "masked_fill",
        "is_tensor",
        "clamp_",
        "fill_",
        "zero_",
        "allclose",
        "equal",
        "isclose",
        "erf",
        "erfc",
        "erfinv",
        "lgamma",
        "digamma",
        "polygamma",
        "mvlgamma",
        "count_nonzero",
        "bernoulli",
        "multinomial",
        "poisson",
        "binomial",
        "real",
    ]
    + list(_METHOD_FORMS)
    + list(_TORCH_FUNCTIONS_OF_METHODS)
)


def _out(name, result, out, rule="cast", input_dtype=None, inputs=()):
    """``result``, or ``result`` written into ``out``; ``inputs``: an elementwise op's
    tensors, which ``out`` may not partly overlap (torch's check)."""
    if out is None:
        return result
    return write_out(name, result, out, rule=rule, input_dtype=input_dtype, inputs=inputs)


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


def round(input, *, decimals=None, out=None):  # noqa: A001 - torch's name
    """Rounded to the nearest integer, halves to even; with ``decimals``, to that many
    decimal places (see :meth:`Tensor.round`)."""
    result = _tensor(input, "round").round(decimals=decimals)
    return _out("round", result, out, "same", inputs=(input,))


def round_(input, *, decimals=None):
    """In-place :func:`round`; returns ``input``."""
    return _tensor(input, "round_").round_(decimals=decimals)


def square(input, *, out=None):
    """``input ** 2``."""
    _tensor(input, "square")
    return _out("square", dispatch(OPS["pow"], (input, 2)), out, inputs=(input,))


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002 - torch's names
    """Elements limited to ``[min, max]`` (either bound may be None)."""
    return _out("clamp", dispatch(OPS["clamp"], (input, min, max)), out, "same", inputs=(input,))


clip = clamp


def clamp_min(input, min, *, out=None):  # noqa: A002
    if min is None:
        raise TypeError("clamp_min(): argument 'min' must be Tensor or Number, not NoneType")
    return _out(
        "clamp_min", dispatch(OPS["clamp"], (input, min, None)), out, "same", inputs=(input,)
    )


def clamp_max(input, max, *, out=None):  # noqa: A002
    if max is None:
        raise TypeError("clamp_max(): argument 'max' must be Tensor or Number, not NoneType")
    return _out(
        "clamp_max", dispatch(OPS["clamp"], (input, None, max)), out, "same", inputs=(input,)
    )


def where(condition, input=MISSING, other=MISSING, *, out=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcast); with ``condition``
    alone, the indices where it holds (``nonzero(as_tuple=True)``).  torch has no
    ``where(condition, input)``, nor a None ``input`` or ``other``."""
    if not isinstance(condition, Tensor):
        raise TypeError(
            "where(): argument 'condition' (position 1) must be Tensor, not "
            f"{type(condition).__name__}"
        )
    if input is MISSING and other is MISSING:
        if out is not None:
            raise TypeError(
                "where() received an invalid combination of arguments - got (Tensor, "
                "out=Tensor): the one-argument form takes no out"
            )
        return tuple(_wrap(i.astype("int64")) for i in np.nonzero(_data(condition)))
    if input is MISSING or other is MISSING:
        raise TypeError(
            "where() received an invalid combination of arguments: pass condition alone, or "
            "condition, input and other (torch's where(Tensor condition, Tensor input, "
            "Tensor other))"
        )
    for position, (arg, label) in enumerate(((input, "input"), (other, "other")), 2):
        if arg is None:
            raise TypeError(
                f"where(): argument '{label}' (position {position}) must be Tensor or Number, "
                "not NoneType"
            )
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


for _name in _METHOD_FORMS:
    globals()[_name] = _method_form(_name)

for _name in _TORCH_FUNCTIONS_OF_METHODS:  # Note [torch's functions that are a method's call]
    globals()[_name] = _method_form(_name)


def real(input):
    """The real part of ``input``: ``input.real`` (``input`` itself for real dtypes, as
    torch's ``real``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([1.0, 2.0])
    >>> real(x) is x
    True
    """
    return _tensor(input, "real").real


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return _out("addmm", dispatch(OPS["addmm"], (input, mat1, mat2, beta, alpha)), out, "exact")


def _axis(name, dim, axis):
    """torch's numpy-style ``axis`` for ``dim`` (``cat(ts, axis=1)``): the alias, unless both
    were given."""
    if axis is None:
        return dim
    if dim != 0:
        raise TypeError(f"{name}() received both 'dim' and its alias 'axis'; pass one of them")
    return axis


def cat(tensors, dim=0, *, out=None, axis=None):
    """Concatenate tensors along an existing dimension (``axis`` is torch's alias of
    ``dim``)."""
    tensors = _tensor_sequence("cat", tensors)
    dim = _axis("cat", dim, axis)
    return _out("cat", dispatch(OPS["cat"], (tensors, dim)), out, "cat")


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None, axis=None):
    """Stack equally shaped tensors along a new dimension (``axis`` is torch's alias of
    ``dim``)."""
    tensors = _tensor_sequence("stack", tensors)
    dim = _axis("stack", dim, axis)
    return _out("stack", dispatch(OPS["stack"], (tensors, dim)), out, "cat")


def _tensor_sequence(name, tensors) -> tuple:
    """``tensors`` as a tuple, with torch's TypeError when it is not a tuple or list of
    Tensors (``cat(None)`` said "'NoneType' object is not iterable")."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{name}(): expected Tensor as element {i} in argument 'tensors' (position "
                f"1), but got {type(t).__name__}"
            )
    return tuple(tensors)


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a gradstack Tensor."""
    return isinstance(obj, Tensor)


def _values(x):
    return _data(x) if isinstance(x, Tensor) else np.asarray(x)


def erf(input, *, out=None):
    """The error function, elementwise (``ErfBackward0``; ``_impl_special.py``).

    >>> import gradstack_tensor as gt
    >>> round(gt.erf(gt.tensor(1.0)).item(), 6)
    0.842701
    """
    return _out("erf", dispatch(OPS["erf"], (input,)), out, inputs=(input,))


def erfc(input, *, out=None):
    """The complementary error function ``1 - erf(input)``, computed without cancelling
    (``erfc(5.)`` is 1.5e-12, where ``1 - erf(5.)`` is 0 in float32).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.erfc(gt.tensor([0.0, 5.0], dtype=gt.float64)).tolist()
    [1.0, 1.5374597944280351e-12]
    """
    return _out("erfc", dispatch(OPS["erfc"], (input,)), out, inputs=(input,))


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


@checked("mvlgamma")
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
    """Elementwise ``|input - other| <= atol + rtol * |other|``, as a bool tensor."""
    _tensor_args("isclose", input, other)
    return _wrap(
        np.isclose(_values(input), _values(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether all elements are close: ``|input - other| <= atol + rtol * |other|``."""
    _tensor_args("allclose", input, other)
    return bool(
        np.allclose(_values(input), _values(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def _tensor_args(name, input, other):
    """torch's TypeError for an ``input`` or ``other`` that is not a Tensor (a number, a
    str or a list is not compared: numpy would compare it, or fail in its own words)."""
    for position, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
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


def poisson(input, generator=None):
    """A Poisson draw for each rate of ``input``; torch's numbers after the same
    ``manual_seed`` (its rejection sampler, step for step: ``random_samplers.py``).

    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> gt.poisson(gt.tensor([0.5, 4.0, 30.0])).tolist()
    [2.0, 5.0, 26.0]
    """
    return dispatch(OPS["poisson"], (input, generator))


def binomial(count, prob, generator=None):
    """A Binomial(``count``, ``prob``) draw for each pair of elements; torch's numbers after
    the same ``manual_seed``.

    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> gt.binomial(gt.tensor([10.0, 100.0]), gt.tensor([0.5, 0.3])).tolist()
    [7.0, 31.0]
    """
    return dispatch(OPS["binomial"], (count, prob, generator))


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
