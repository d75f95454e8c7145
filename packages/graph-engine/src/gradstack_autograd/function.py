"""Custom differentiable operations: ``Function`` with ``forward``/``backward`` and ``ctx``.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_autograd import Function
>>> class Exp(Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...     @staticmethod
...     def backward(ctx, grad):
...         (y,) = ctx.saved_tensors
...         return grad * y
>>> x = gt.tensor([0., 1.], requires_grad=True)
>>> y = Exp.apply(x)
>>> y.grad_fn.name()
'ExpBackward'
>>> y.sum().backward(); [round(v, 4) for v in x.grad.tolist()]
[1.0, 2.7183]

Note [ctx attributes and double backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``forward`` runs under no-grad, so a float tensor computed there and kept as a ``ctx``
attribute is cut off from the inputs: a second differentiation through ``backward`` would
silently miss its dependence on them (pytorch#58509).  gradstack records such attributes
when ``forward`` returns and raises if ``backward`` then runs with ``create_graph=True``,
saying which attribute and what to do instead.  Tensors passed to ``save_for_backward``
are tracked properly and never trigger this.
"""

from __future__ import annotations

import functools
import traceback
from typing import Any

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import _grad_mode, _layer, _node
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class FunctionCtx:
    """The methods a custom ``Function``'s ``ctx`` offers in ``forward``."""

    def save_for_backward(self, *tensors):
        """Save tensors (inputs or outputs of ``forward``, or None) for ``backward``.

        They are checked for in-place modification when unpacked via ``saved_tensors``.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is "
                    f"a {type(t).__name__}; store other values as ctx attributes"
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for a forward-mode ``jvp`` (kept as given)."""
        self._saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declare inputs that ``forward`` modified in place (and returns)."""
        self._dirty = tuple(args)

    def mark_non_differentiable(self, *args):
        """Declare outputs that are not differentiable (e.g. indices)."""
        self._non_differentiable = tuple(args)

    def set_materialize_grads(self, value: bool):
        """With False, ``backward`` receives None (not zeros) for outputs without gradient."""
        self._materialize_grads = bool(value)


class BackwardCFunction(_node.Node, FunctionCtx):
    """The node of a custom Function: it is also the ``ctx`` its methods receive."""

    _forward_cls: Any = None  # the Function subclass (its backward), set per subclass

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, unpacked and version-checked."""
        return self._saved_tensors

    @property
    def needs_input_grad(self):
        """One bool per argument of ``forward``: whether its gradient is needed."""
        return self.__dict__.get("_needs_input_grad", ())

    def apply(self, grads):
        cls = self._forward_cls
        if self.__dict__.get("_materialize_grads", True):
            grads = tuple(
                g if g is not None else gt.zeros(shape, dtype=dtype)
                for g, (shape, dtype) in zip(grads, self._output_meta)
            )
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.next_edges)
        if len(result) > n_args:
            extra = result[n_args:]
            if any(r is not None for r in extra):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(result)})"
                )
            result = result[:n_args]
        elif len(result) < n_args:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_args}, got {len(result)})"
            )
        return tuple(None if e[0] is None else r for r, e in zip(result, self.next_edges))


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": cls.__module__},
        )
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations.

    Subclass it with two static methods, ``forward(ctx, *args)`` (or ``forward(*args)``
    plus ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``
    returning one gradient per argument of ``forward`` (None for non-tensors), and call
    ``YourFunction.apply(*args)``.
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Function objects are not instantiated: call YourFunction.apply(*args) instead."
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs (runs under no-grad)."""
        raise NotImplementedError("You must implement the forward function for custom Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: fill ``ctx`` from the inputs and output, for a ctx-less ``forward``."""
        return _SETUP_CONTEXT_NOT_OVERRIDDEN

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Compute the gradients of the inputs from those of the outputs."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, if an input requires grad, record the backward node."""
        ctx = cls._backward_cls()
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        return _wrap_outputs(cls, ctx, args, output, record)


_SETUP_CONTEXT_NOT_OVERRIDDEN = object()


def _wrap_outputs(cls, ctx, args, output, record):
    single = isinstance(output, Tensor)
    outputs = (output,) if single else tuple(output) if isinstance(output, (tuple, list)) else None
    if outputs is None:
        raise TypeError(
            f"{cls.__name__}.forward must return a Tensor or a tuple of Tensors, got "
            f"{type(output).__name__}"
        )
    dirty = ctx.__dict__.get("_dirty", ())
    non_diff = ctx.__dict__.get("_non_differentiable", ())
    input_ids = {id(a): a for a in args if isinstance(a, Tensor)}
    if not record:
        for t in dirty:
            t._bump_version(f"{cls.__name__}.forward")
        return output
    ctx._needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx.next_edges = tuple(_layer.edge_of(a) for a in args)
    ctx.sequence_nr = _node.new_sequence_nr()
    if _grad_mode.is_anomaly_enabled():
        # the forward stack for anomaly mode, without apply() and this function
        ctx.anomaly_trace = "".join(traceback.format_stack()[:-2])
    wrapped = []
    meta = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wrapped.append(out)
            meta.append(((), None))
            continue
        if id(out) in input_ids and not any(out is d for d in dirty):
            out = _layer.alias_of(out)  # an input returned as is becomes a new view of it
        elif any(out is d for d in dirty):
            if out.is_leaf and out.requires_grad:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation "
                    f"({cls.__name__}.forward marked it dirty)."
                )
            out._bump_version(f"{cls.__name__}.forward")
        meta.append((tuple(out.shape), out.dtype))
        if not any(out is n for n in non_diff) and out.is_floating_point():
            _layer.attach_output(out, ctx, i)
        wrapped.append(out)
    ctx.num_outputs = len(outputs)
    ctx._output_meta = tuple(meta)
    _save_ctx_tensors(ctx, args, wrapped)
    return wrapped[0] if single else tuple(wrapped)


def _save_ctx_tensors(ctx, args, outputs):
    to_save = ctx.__dict__.pop("_to_save", ())
    output_ids = {id(o) for o in outputs if isinstance(o, Tensor)}
    ctx.saved = tuple(
        None if t is None else _layer.save_for_function(t, id(t) in output_ids, ctx)
        for t in to_save
    )
    # Note [Tensors kept on ctx are constants of the backward graph]
    # A tensor that forward keeps as a ctx attribute (``ctx.square = x * x``) instead of
    # saving it was computed under no_grad: a double backward treats it as a constant, as
    # torch does (the "what not to do" of torch's double-backward tutorial, whose numbers
    # the users of that tutorial expect to see).  Nothing is checked here.


def once_differentiable(fn):
    """Decorate a custom Function's ``backward`` that cannot itself be differentiated.

    It runs under no-grad; if a second differentiation reaches its results, that raises a
    clear error instead of returning wrong (zero) higher-order gradients.
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _grad_mode.is_grad_enabled():
            return outputs
        requires_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not requires_grad:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        name = ctx.name() if hasattr(ctx, "name") else "a custom Function"
        message = (
            f"trying to differentiate twice a function that was marked with "
            f"@once_differentiable ({name})"
        )
        wrapped = tuple(_delayed_error(o, message) if isinstance(o, Tensor) else o for o in outs)
        return wrapped[0] if single else wrapped

    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


class DelayedError(_node.Node):
    """A node that raises its message if a backward pass ever reaches it."""

    message: str

    def apply(self, grads):
        raise RuntimeError(self.message)


def _delayed_error(t, message):
    node = DelayedError()
    node.message = message
    node.next_edges = (_layer.edge_of(t),)
    node.sequence_nr = _node.new_sequence_nr()
    out = _layer.alias_of(t)
    _layer.attach_output(out, node, 0)
    return out


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (kept for torch compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Kept for torch compatibility; use Function."""
