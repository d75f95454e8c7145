"""``out=``: writing a function's result into a given tensor, with torch's rules.

Every function form that torch gives an ``out=`` argument takes one here too (the
factories, the elementwise ops, reductions, matrix products, joins ...).  The function
computes its result as usual, then :func:`write_out` puts it into ``out``:

- ``out`` must be a Tensor (or, for ops with two results, a tuple of two);
- the result's dtype must cast to ``out``'s by torch's ``canCast`` (never floating to
  integral, nor anything to bool): ``RuntimeError: result type Float can't be cast to the
  desired output type Long``; the values are cast to ``out``'s dtype;
- ``out`` of another shape is resized, with torch's UserWarning when it had elements
  (resizing an empty ``out`` is silent; so is any resize by the factories);
- an op with ``out=`` is not differentiable: when its result would require grad, or
  ``out`` requires grad under grad mode, torch's RuntimeError ``add(): functions with
  out=... arguments don't support automatic differentiation, but one of the arguments
  requires grad.``  A factory (``factory=True``) refuses only a leaf ``out`` that
  requires grad, and names itself ``aten::zeros()``, as torch's composite factories do;
- writing counts as an in-place change of ``out`` (its version goes up), and ``out`` is
  returned.

Examples
--------
>>> import gradstack_tensor as gt
>>> o = gt.empty(0)
>>> gt.add(gt.ones(3), 1, out=o) is o, o.tolist()
(True, [2.0, 2.0, 2.0])
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes as _dt
from ._promotion import can_cast_inplace
from ._tensor import Tensor, _data, _wrap

__all__: list[str] = []

_SCALAR_NAMES = _dt.SCALAR_TYPE_NAMES

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does "
    "not match the required output shape {new}. This behavior is deprecated, and in a "
    "future PyTorch release outputs will not be resized unless they have zero elements. You "
    "can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0)."
)


def _no_grad_error(name: str) -> RuntimeError:
    return RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def check_out(out, name: str, n: int = 1):
    """``out`` checked to be a Tensor (or a tuple of ``n`` tensors)."""
    outs = out if n > 1 else (out,)
    if n > 1 and (not isinstance(out, (tuple, list)) or len(out) != n):
        raise TypeError(
            f"{name}(): argument 'out' must be a tuple of {n} Tensors, not {type(out).__name__}"
        )
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    return out


def resize_into(out: Tensor, shape, warn: bool, stacklevel: int = 4) -> None:
    """Give ``out`` new storage of ``shape`` (its dtype kept) when its shape differs."""
    shape = tuple(shape)
    if tuple(out.shape) == shape:
        return
    if warn and out.numel() != 0:
        warnings.warn(
            _RESIZE_WARNING.format(old=list(out.shape), new=list(shape)),
            UserWarning,
            stacklevel=stacklevel,
        )
    out.data = _wrap(np.empty(shape, dtype=_data(out).dtype))


# Note [Observers of out= writes]: an ``out=`` write is a numpy copy into the tensor, not
# an op on the dispatch point, so a layer does not see it; graph-engine's
# ``allow_mutation_on_saved_tensors`` must clone a saved tensor before it is written, and
# registers here (``extension.add_out_write_observer``): each observer is called with the
# ``out`` tensor after the checks, before it is resized or written.
_out_write_observers: list = []


def add_out_write_observer(fn) -> None:
    """Call ``fn(out)`` before every ``out=`` write (Note [Observers of out= writes])."""
    _out_write_observers.append(fn)


def remove_out_write_observer(fn) -> None:
    """Stop calling ``fn`` (one registration of it)."""
    _out_write_observers.remove(fn)


def _write_one(
    name: str,
    result,
    out: Tensor,
    warn: bool,
    factory: bool,
    rule=None,
    input_dtype=None,
    inputs=(),
) -> Tensor:
    if not isinstance(result, Tensor):
        result = _wrap(np.asarray(result))
    if result.requires_grad:
        raise _no_grad_error(name)
    if out.requires_grad and (out.is_leaf or not factory) and _grad_enabled():
        raise _no_grad_error(f"aten::{name}" if factory else name)
    _check_no_partial_overlap(out, inputs)
    rd, od = result.dtype, out.dtype
    if rule is not None:
        check_out_dtype(rule, name, rd, out, input_dtype)
    if not can_cast_inplace(rd, od):
        raise RuntimeError(
            f"result type {_SCALAR_NAMES[rd.name]} can't be cast to the desired output type "
            f"{_SCALAR_NAMES[od.name]}"
        )
    _check_no_partial_overlap(out, (result,))  # the result too may share out's memory
    src = _data(result)
    for observer in tuple(_out_write_observers):
        observer(out)
    resize_into(out, src.shape, warn, stacklevel=5)
    dst = _data(out)
    if not dst.flags.writeable:
        raise RuntimeError(
            f"{name}(): unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded view). Please clone() the tensor "
            "before performing the operation."
        )
    np.copyto(dst, src, casting="unsafe")
    out._bump_version(name)
    return out


def map_tensors(fn, out):
    """An op's result with ``fn`` applied to each Tensor in it: a Tensor, or a tuple (a
    named one keeps its type) or list of results; anything else as it is."""
    if isinstance(out, Tensor):
        return fn(out)
    if isinstance(out, tuple):
        items = [map_tensors(fn, o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    if isinstance(out, list):
        return [map_tensors(fn, o) for o in out]
    return out


def _check_no_partial_overlap(out: Tensor, inputs) -> None:
    """torch's check for elementwise ops: ``out`` may be an input itself (the same view),
    but not share only part of its memory with one (``add(x[1:], 1, out=x[:-1])``)."""
    dst = _data(out)
    for t in inputs:
        if isinstance(t, Tensor):
            src = _data(t)
            if dst.size and src.size and np.shares_memory(dst, src) and not _same_view(dst, src):
                raise RuntimeError(
                    "unsupported operation: some elements of the input tensor and the "
                    "written-to tensor refer to a single memory location. Please clone() the "
                    "tensor before performing the operation."
                )


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.shape == b.shape
        and a.strides == b.strides
    )


def _grad_enabled() -> bool:
    """Whether grad mode is on: the autograd layer records an op on a leaf that requires
    grad only then (tensor-core alone never records)."""
    from ._dispatch import OPS

    probe = _wrap(np.zeros((), dtype=np.float32))
    probe.requires_grad_(True)
    return OPS["neg"](probe).requires_grad


def write_out(
    name: str,
    result,
    out,
    *,
    warn: bool = True,
    factory: bool = False,
    rule=None,
    input_dtype=None,
    inputs=(),
):
    """Write ``result`` (a tensor, or a tuple of them) into ``out``; returns ``out``.

    ``warn``: torch's UserWarning when an ``out`` with elements is resized (factories
    resize silently); ``factory``: the grad rule and error name of torch's factories;
    ``rule``: which dtypes ``out`` may have (:func:`check_out_dtype`; a tuple of rules for
    a tuple of results), ``input_dtype`` the input's dtype that some rules compare with;
    ``inputs``: the tensors of an elementwise op, which ``out`` may not partly overlap.
    Every ``out`` is checked before any is written.
    """
    if isinstance(result, tuple):
        check_out(out, name, len(result))
        rules = rule if isinstance(rule, tuple) else (rule,) * len(result)
        for r, o, ru in zip(result, out, rules, strict=True):
            if ru is not None and not r.requires_grad and not o.requires_grad:
                check_out_dtype(ru, name, r.dtype, o, input_dtype)
        written = tuple(
            _write_one(name, r, o, warn, factory, ru, input_dtype)
            for r, o, ru in zip(result, out, rules, strict=True)
        )
        return type(result)(*written) if hasattr(result, "_fields") else written
    check_out(out, name)
    return _write_one(name, result, out, warn, factory, rule, input_dtype, inputs)


# C++'s names of the scalar types, as torch's "Expected out tensor to have dtype ..." says them
# (every dtype's, bfloat16's and the complex ones' too, as torch's messages name them)
_CPP_NAMES = _dt.CPP_TYPE_NAMES


def check_out_dtype(rule: str, name: str, result_dtype, out, input_dtype=None) -> None:
    """torch's check of ``out``'s dtype for an op of kind ``rule``, before anything is
    written (Note [Which dtypes out= accepts]).

    Note [Which dtypes out= accepts]
    torch's kernels differ in what ``out`` may be, and their words differ with them:
    - ``"cast"``: TensorIterator ops with promotion (``add``, ``exp``, ``mean``, ``lerp`` ...):
      any dtype the result casts to (checked by :func:`write_out`);
    - ``"same"``: ops without promotion (``neg``, ``abs``, ``floor``, ``clamp`` ...):
      ``Found dtype Double but expected Float``;
    - ``"exact"``: structured kernels (``mm``, ``bmm``, ``addmm``, ``softmax``, ``gather``,
      ``max``/``min`` with dim, ``sort``, ``topk`` ...): ``Expected out tensor to have
      dtype float, but got double instead``; ``"long"``: the same, for index results;
    - one wording each for ``max`` of all elements, ``mean`` of all elements,
      ``amax``/``amin``, ``where``, ``index_select``/``masked_select``, ``dot``,
      ``all``/``any`` (bool results), ``logsumexp`` (floating results), ``cat``/``stack``
      (a TypeError) and ``histc``.
    ``sum``, ``prod`` and ``cumsum`` compute in ``out``'s dtype and accept any.
    """
    od = out.dtype
    o_name, r_name = _SCALAR_NAMES[od.name], _SCALAR_NAMES[result_dtype.name]
    in_dtype = input_dtype if input_dtype is not None else result_dtype
    if rule == "cast":
        return
    if rule == "same" and od is not result_dtype:
        raise RuntimeError(f"Found dtype {o_name} but expected {r_name}")
    if rule in ("exact", "long") and od is not result_dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_CPP_NAMES[result_dtype.name]}, but got "
            f"{_CPP_NAMES[od.name]} instead"
        )
    if rule == "amax" and od is not in_dtype:
        raise RuntimeError(
            f"Expected the dtype for input and out to match, but got {_SCALAR_NAMES[in_dtype.name]}"
            f" for input's dtype and {o_name} for out's dtype."
        )
    if rule == "max_all" and not can_cast_inplace(result_dtype, od):
        raise RuntimeError(
            "Expected canCast( typeMetaToScalarType(self.dtype()), "
            "typeMetaToScalarType(out.dtype())) to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    if rule == "mean" and not can_cast_inplace(in_dtype, od):
        raise RuntimeError(
            f"mean.dtype_out(): input types can't be cast to the desired output type {o_name}"
        )
    if rule == "where" and od is not result_dtype:
        raise RuntimeError(f"Expected out type to be {r_name} but got {o_name}")
    if rule == "same_scalar" and od is not in_dtype:
        raise RuntimeError(f"{name}(): self and result must have the same scalar type")
    if rule == "dot" and od is not in_dtype:
        raise RuntimeError(
            f"result dtype {o_name} does not match input dtype {_SCALAR_NAMES[in_dtype.name]}"
        )
    if rule == "bool" and od.name not in ("bool", "uint8"):
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {o_name}")
    if rule == "floating" and od.name not in ("float16", "float32", "float64"):
        raise RuntimeError(
            f"{name}(): Expected floating point type for result tensor, but got: {o_name}"
        )
    if rule == "cat" and not can_cast_inplace(result_dtype, od):
        raise TypeError(
            f"torch.cat(): input types can't be cast to the desired output type {o_name}"
        )
    if rule == "histc" and od is not in_dtype:
        raise RuntimeError(
            "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
            f"input {_CPP_NAMES[in_dtype.name]} and hist {_CPP_NAMES[od.name]}"
        )


def inputs_require_grad(*args) -> bool:
    """Whether a tensor among ``args`` (or inside a list/tuple of them) requires grad."""
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and inputs_require_grad(*a):
            return True
    return False


def factory_dtype(dtype, out, name: str):
    """The dtype of a factory called with ``out=``: ``out``'s, which ``dtype`` must match."""
    check_out(out, name)
    if dtype is not None and _dt.as_dtype(dtype, name) is not out.dtype:
        raise RuntimeError(
            f"dtype {_SCALAR_NAMES[_dt.as_dtype(dtype).name]} does not match dtype of out "
            f"parameter ({_SCALAR_NAMES[out.dtype.name]})"
        )
    return out.dtype
