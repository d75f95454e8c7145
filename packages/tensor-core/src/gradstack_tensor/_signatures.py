"""torch's argument types of the ops and functions that take more than tensors, and the
checks made from them: torch's TypeError naming the argument before any value is read.

Note [Argument checks from torch's signatures]
torch's argument parser checks every argument's type against the op's schema before the op
runs: a wrong type is a TypeError that names the argument (``chunk(): argument 'chunks'
(position 1) must be int, not float``) whatever else is wrong with the call, and a float
is never truncated to an int, nor a list taken for a tensor.  gradstack's kernels written
in Python read their arguments as Python values, so without a check a wrong type either
passed (``t.tril(1.5)``, ``t.chunk(2.5)``: silent misuse) or failed deep inside with
Python's words (``unsupported operand type(s) for %``).

``SIGNATURES`` writes, once per op, torch's types and names of the arguments after the
tensor, in the order the kernel (or the function) takes them.  ``checker`` compiles one
signature into a function that tests each argument (``type(x) is int`` first, so that the
common case costs one comparison) and raises torch's TypeError; ``install`` wraps the
Python kernel of every op named in ``SIGNATURES`` with its checker, once at import, so the
Tensor method, the function form and every other caller of the op get it; functions that
are not one op take it as a decorator, ``@checked("rot90")``.  The ops of the hot path
(the elementwise C kernels, ``sum``, the operators) are not here: they check their
arguments in C.

The types, in torch's schema words (a ``?`` suffix also takes None):

- ``int``: an int or an object with ``__index__`` (a numpy integer, an integer tensor of
  one element), not a bool;
- ``int[]``: an int, or a list or tuple of them (torch's ``int[1]``: ``sum(0)``);
- ``size``: a list or tuple of ints only (torch's ``SymInt[]``: ``new_full((2,), 1.)``);
- ``float``: a real Python or numpy number, or a tensor (torch's ``Scalar``/``float``);
- ``Scalar``: a number (complex included), or a tensor of one element (torch's
  ``Scalar`` where the value is read: ``arange``'s bounds, ``full``'s value);
- ``bool``: a bool (or a numpy bool);
- ``Tensor``: a tensor;
- ``str``: a string.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ._tensor import Tensor

# op or function name -> torch's signature of its arguments after the tensor
SIGNATURES: dict[str, str] = {
    "chunk": "int chunks, int dim",
    **{
        name: f"int dim, Tensor index, Tensor {values}, str reduce, bool include_self"
        for name, values in (
            ("scatter_reduce", "src"),
            ("scatter_reduce_", "src"),
            ("index_reduce", "source"),
            ("index_reduce_", "source"),
        )
    },
    "split": "int[] split_sizes, int dim",  # (torch's split_with_sizes names the list)
    "tril": "int diagonal",
    "triu": "int diagonal",
    "topk": "int k, int dim, bool largest, bool sorted",
    "diag": "int diagonal",
    "rot90": "int k, size dims",
    "histc": "int bins, float min, float max",
    "median": "int dim, bool keepdim",  # (dim=MISSING: over all elements)
    "nanmedian": "int dim, bool keepdim",
    "diff": "int n, int dim, Tensor? prepend, Tensor? append",
    "pixel_shuffle": "int upscale_factor",
    "pixel_unshuffle": "int downscale_factor",
    "norm_except_dim": "int pow, int dim",
    "cumprod": "int dim",
    "dsplit": "int[] indices_or_sections",
    "hsplit": "int[] indices_or_sections",
    "vsplit": "int[] indices_or_sections",
    "tensor_split": "int[] indices_or_sections, int dim",
    "logit": "float? eps",
    "celu": "float alpha",
    "hardshrink": "float lambd",
    "softshrink": "float lambd",
    "nan_to_num": "float? nan, float? posinf, float? neginf",
    "roll": "int[] shifts, int[]? dims",
    "tile": "int[] dims",
    "sum_to_size": "int[] size",
    "broadcast_to": "int[] size",
    "bincount": "Tensor? weights, int minlength",
    "copysign": "float other",
    "mvlgamma": "int p",
    "cholesky": "bool upper",
    "vander": "int? N, bool increasing",
    "searchsorted": "float input",
    "full": "int[] size, Scalar fill_value",  # (first=0)
    "eye": "int n, int? m",  # (first=0)
    "ldexp": "Tensor other",
    "trapezoid": "Tensor x",
    "cumulative_trapezoid": "Tensor x",
}


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


# the default of an argument that torch's signature makes required where gradstack's
# function lets the caller leave it out (``median(input)`` / ``median(input, dim)``), so
# that ``median(input, None)`` can be refused; the checks skip it
MISSING = _MISSING = _Missing()


def _is_int(x) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return False
    try:
        operator.index(x)
    except Exception:  # noqa: BLE001 - any failure of __index__ means "not an int"
        return False
    return True


def _is_ints(x, scalar_ok: bool) -> bool:
    if scalar_ok and _is_int(x):
        return True
    if not isinstance(x, (list, tuple)):
        return False
    return all(type(v) is int or _is_int(v) for v in x)


def _is_real(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating, np.bool_, Tensor))


def is_scalar(x) -> bool:
    """Whether ``x`` is torch's ``Scalar``: a number (complex included), or a tensor of one
    element."""
    if isinstance(x, Tensor):
        return x.numel() == 1
    return isinstance(
        x, (int, float, complex, np.integer, np.floating, np.complexfloating, np.bool_)
    )


def _is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_))


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


# a type's test (of a value that is not None) and its name in torch's messages
_TESTS = {
    "int": ("_is_int", "int"),
    "int[]": ("_is_ints_or_int", "tuple of ints"),
    "size": ("_is_size", "tuple of ints"),
    "float": ("_is_real", "float"),
    "Scalar": ("_is_scalar", "Number"),
    "bool": ("_is_bool", "bool"),
    "Tensor": ("_is_tensor", "Tensor"),
    "str": ("_is_str", "str"),
}
# the test of the common case, which passes without a call
_FAST = {
    "int": "type({x}) is int",
    "float": "type({x}) is float",
    "bool": "type({x}) is bool",
    "Tensor": "type({x}) is _Tensor",
}


def _type_name(x) -> str:
    return type(x).__name__


def argument_error(fname: str, name: str, position: int, expected: str, value) -> TypeError:
    """torch's TypeError for an argument of the wrong type."""
    return TypeError(
        f"{fname}(): argument '{name}' (position {position}) must be {expected}, not "
        f"{_type_name(value)}"
    )


def _parse(signature: str) -> list[tuple[str, str, bool]]:
    """``"int chunks, int? dim"`` -> ``[("int", "chunks", False), ("int", "dim", True)]``."""
    params = []
    for part in signature.split(","):
        typ, name = part.split()
        optional = typ.endswith("?")
        params.append((typ.rstrip("?"), name, optional))
    return params


_NAMESPACE = {
    "_M": _MISSING,
    "_is_int": _is_int,
    "_is_ints_or_int": lambda x: _is_ints(x, True),
    "_is_size": lambda x: _is_ints(x, False),
    "_is_real": _is_real,
    "_is_scalar": is_scalar,
    "_is_bool": _is_bool,
    "_is_tensor": _is_tensor,
    "_is_str": lambda x: isinstance(x, str),
    "_error": argument_error,
    "_Tensor": Tensor,
}


@functools.cache
def checker(fname: str, signature: str | None = None, first: int = 1):
    """The check of ``fname``'s arguments (``SIGNATURES[fname]`` unless ``signature`` is
    given; ``first``: the position before the first one, 1 when the signature starts after
    the tensor): ``check(*args, **kwargs)`` raises torch's TypeError for the first argument
    of a wrong type; arguments beyond the signature are not checked.

    Examples
    --------
    >>> check = checker("chunk")
    >>> check(2, 0)
    >>> check(2.5)
    Traceback (most recent call last):
    ...
    TypeError: chunk(): argument 'chunks' (position 2) must be int, not float
    """
    params = _parse(signature if signature is not None else SIGNATURES[fname])
    names = [name for _, name, _ in params]
    lines = [f"def check({', '.join(n + '=_M' for n in names)}, *_args, **_kwargs):"]
    for position, (typ, name, optional) in enumerate(params, first + 1):
        test, expected = _TESTS[typ]
        skip = f"{name} is not _M" + (f" and {name} is not None" if optional else "")
        fast = _FAST.get(typ, "False").format(x=name)
        lines += [
            f"    if not ({fast}) and {skip} and not {test}({name}):",
            f"        raise _error({fname!r}, {name!r}, {position}, {expected!r}, {name})",
        ]
    namespace = dict(_NAMESPACE)
    exec(compile("\n".join(lines) + "\n", f"<argument check of {fname}>", "exec"), namespace)
    return namespace["check"]


# torch's name of the tensor argument where it is not ``input``
_TENSOR_NAMES = {
    "vander": "x",
    "norm_except_dim": "v",
    "searchsorted": "sorted_sequence",
    "trapezoid": "y",
    "trapz": "y",
    "cumulative_trapezoid": "y",
}


def checked(fname: str, signature: str | None = None, *, first: int = 1):
    """Decorate a function with the check of its arguments from the ``first``-th on
    (``checker(fname, signature, first)``; ``first=1``: the arguments after the tensor,
    which is checked to be one, ``first=0``: every argument, the signature naming the
    tensor too).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> @checked("double", "Tensor input, int times", first=0)
    ... def double(input, times=1):
    ...     return input * 2 ** times
    >>> double(gt.ones(1), 2).tolist()
    [4.0]
    >>> double([1.0])
    Traceback (most recent call last):
    ...
    TypeError: double(): argument 'input' (position 1) must be Tensor, not list
    """

    def decorate(fn):
        check = checker(fname, signature, first)
        if first == 0:

            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                check(*args, **kwargs)
                return fn(*args, **kwargs)

        else:
            tensor_name = _TENSOR_NAMES.get(fname, "input")

            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if args and not isinstance(args[0], Tensor):  # (the tensor first, as torch)
                    raise argument_error(fname, tensor_name, 1, "Tensor", args[0])
                check(*args[first:], **kwargs)
                return fn(*args, **kwargs)

        wrapper.__wrapped_unchecked__ = fn  # type: ignore[attr-defined]
        return wrapper

    return decorate


def install(ops) -> None:
    """Wrap the Python kernel of every op of ``SIGNATURES`` in ``ops`` with its check."""
    for name in SIGNATURES:
        op = ops.get(name)
        if op is None or op.kernel is None or hasattr(op.kernel, "__wrapped_unchecked__"):
            continue
        op.set_kernel(checked(name)(op.kernel))
