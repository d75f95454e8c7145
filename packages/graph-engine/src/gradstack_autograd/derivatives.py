"""The derivative table: one entry per op of gradstack_tensor.

Each ``@register("op(arg, ...)", node, inputs=..., save=...)`` row builds the op's entry
(a ``Derivative``, ``entry(name)``), by argument name as torch's derivatives.yaml:

- ``"mul(self, other)"``: the op and the names of its positional arguments (tensor-core's
  canonical order);
- ``node``: the name of the backward node, as torch names it (``MulBackward0``), or a
  function of the op's arguments for ops whose torch name depends on them;
- ``inputs``: the differentiable arguments (``next_functions`` has one entry per input,
  ``(None, 0)`` when that argument needs no gradient);
- ``save``: the values the formula reads, ``"result"`` (the op's output) last; tensors are
  saved with their version; ``save_for``/``output_for`` save a value only when a gradient
  that reads it is wanted (Note [Save what a gradient needs], _layer.pyx);
- ``fused``: the kernel that may replace the first-order formula (Note [Native
  first-order formulas], _native.pyx);
- the function: ``formula(ctx, grad) -> tuple`` with one gradient (or None) per input.
  ``ctx`` is the node: ``ctx.saved_value("self")`` unpacks a saved value,
  ``ctx.needs_input_grad``, ``ctx.input_shape(i)``, ``ctx.fused(...)`` and ``ctx.extra``
  are there too.

The same entry holds the op's forward formula (``entry.jvp``, set by ``@jvp``) and vmap's
batching rule (``entry.batch_rule``, set by ``batching_rules``); the engine, the native
fast path, forward mode and vmap read nothing else.

Note [Entries by name]
~~~~~~~~~~~~~~~~~~~~~~
Rows name arguments, never positions, so that a row reads as torch's derivatives.yaml
and users find the same names on the nodes (``grad_fn._saved_self``, Note [Saved values
by name] in _layer.pyx).  ``register`` resolves the names to positions once; recording a
node (the hot path) works with positions only and costs nothing more.

Note [Formulas are written with gradstack ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Formulas use Tensor operations, so with ``create_graph=True`` (grad mode on during the
backward pass) they are recorded like any other computation and can be differentiated
again, to any order.  Without it, the engine runs them under no-grad and a few hot
formulas take their entry's fused Cython kernel instead (``ctx.fused``); the tests check both paths
against each other.

Note [Broadcasting is the engine's job]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A formula may return a gradient with the *broadcast* shape of the op's output: the engine
reduces it to the input's shape (and casts it to the input's dtype) in one place
(``validate_grad``), so formulas never repeat that logic.

Ops that are not differentiable (comparisons, argmax ...) are listed in
``NOT_DIFFERENTIABLE``; a test fails if an op of the registry is in neither place.

Note [Forward formulas sit with their backward formulas]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each op's forward-mode (JVP) formula follows its backward formula: ``@jvp("mul")`` right
after the ``mul`` row sets the entry's ``jvp`` (and its in-place variant's), so that one
op is read and changed in one place, as torch's derivatives.yaml keeps ``self:`` and
``result:`` formulas together.  A formula shared by several ops follows the last of
their rows (the entries must exist when ``@jvp`` runs).  forward_ad calls it as
``formula(args, out, tangents, lead)``:

- ``args``: the op's arguments (for an in-place op, ``args[0]`` is ``self`` *before* the
  write);
- ``out``: the op's result (a tuple for ops with several outputs);
- ``tangents``: one per differentiable input of the entry (per element of the list for
  ``cat``/``stack``), None for a zero tangent;
- ``lead``: the batch prefix every tangent carries, ``()`` normally, ``(batch,)`` for
  batched tangents (Note [Batched tangents] in ``forward_ad``).

It returns the output's tangent (broadcastable to ``lead + out.shape``; forward_ad expands
and casts it), None for a zero tangent, or a tuple with one entry per output.  Tangents
are computed with gradstack ops, as the backward formulas, so that a tangent computed with
grad mode on is part of the graph and can be differentiated backward again; many are the
backward formula's transpose (``t * cos(x)`` for sin, ``t @ b + a @ t_b`` for matmul).
Every differentiable op has a forward formula or a reason in ``NO_JVP``; a test fails
otherwise.

Note [Aligning a batch of tangents]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tangent has its input's shape, which for broadcasting ops may have fewer dims than the
output: unbatched that broadcasts as numpy does, but with a batch prefix ``(B,) + (3,)``
against ``(2, 3)`` would pair B with 2.  ``_pad`` inserts the missing unit dims after the
prefix first.  Dims given to an op (sum's ``dim``, transpose's ...) are shifted past the
prefix with ``_shift``.
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, register_op
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import wrap as _wrap

from . import _grad_mode as _modes  # (this module has a function named _grad_mode)
from . import _layer, _native

try:
    from gradstack_tensor import kernels as _kernels
except ImportError:  # pragma: no cover
    _kernels = None

__all__ = [
    "register",
    "entry",
    "jvp",
    "NO_JVP",
    "NOT_DIFFERENTIABLE",
    "NOT_IMPLEMENTED",
    "ZERO_GRADIENT",
]


def _names(spec) -> tuple:
    """``"self, other"`` (or a tuple of names) as a tuple of names."""
    if spec is None:
        return ()
    if isinstance(spec, str):
        return tuple(n.strip() for n in spec.split(",") if n.strip())
    return tuple(spec)


def _parse_signature(op):
    """``"mul(self, other)"`` -> ``("mul", ("self", "other"))``; a bare name takes ``self``."""
    name, paren, rest = op.partition("(")
    if not paren:
        return name.strip(), ("self",)
    if not rest.endswith(")"):
        raise ValueError(f"register: bad op signature {op!r} (expected 'name(arg, ...)')")
    return name.strip(), _names(rest[:-1])


def _position(op_name, signature, name):
    if name not in signature:
        raise ValueError(f"register({op_name!r}): {name!r} is not an argument of {signature}")
    return signature.index(name)


def register(
    op,
    node,
    *,
    inputs=None,
    save=(),
    list_input=False,
    extra=None,
    inplace_variant=True,
    save_for=None,
    output_for=None,
    fused=None,
    sizes=(),
):
    """Decorator making ``formula`` the backward formula of ``op``'s entry (and of its
    in-place variant's); everything is given by argument name (Note [Entries by name]).

    Parameters
    ----------
    op : str
        The op and its positional arguments as torch names them: ``"mul(self, other)"``
        (the order of the op's canonical signature in tensor-core; a bare name means
        ``"name(self)"``).
    node : str or callable
        torch's node name (``"MulBackward0"``), or ``fn(args) -> str`` for ops whose name
        depends on the overload.
    inputs : str or tuple, optional
        The differentiable arguments (default: the first); ``next_functions`` has one entry
        per input, in this order.
    save : str or tuple, optional
        The saved values, by argument name, with ``"result"`` (the op's output) last when
        the formula reads it.  Formulas read them as ``ctx.saved_value("self")``, users as
        ``grad_fn._saved_self`` (torch's attributes).
    save_for : dict, optional
        ``{saved name: input names}``: that value is saved only when the gradient of one
        of those inputs is wanted (Note [Save what a gradient needs], _layer.pyx).
    output_for : str or tuple, optional
        Inputs of which one must be a tensor for ``"result"`` to be saved (torch's
        overloads: ``pow(Tensor, Scalar)`` saves no result).
    fused : str, optional
        The kernel that may replace the first-order formula (``ctx.fused(...)`` runs it;
        Note [Native first-order formulas] in _native.pyx).
    sizes : str or tuple, optional
        Inputs whose shapes torch exposes as ``_saved_<name>_sym_sizes``.
    """
    op_name, signature = _parse_signature(op)
    input_names = _names(inputs) or signature[:1]
    save_names = _names(save)
    save_output = bool(save_names) and save_names[-1] == "result"
    arg_names = save_names[:-1] if save_output else save_names
    if "result" in arg_names:
        raise ValueError(f"register({op!r}): 'result' must be the last saved value")
    input_pos = tuple(_position(op_name, signature, n) for n in input_names)
    save_pos = tuple(_position(op_name, signature, n) for n in arg_names)
    save_for_pos = None
    if save_for is not None:
        unknown = set(save_for) - set(arg_names)
        if unknown:
            raise ValueError(f"register({op!r}): save_for names unsaved values {unknown}")
        save_for_pos = tuple(
            None if n not in save_for else tuple(input_names.index(i) for i in _names(save_for[n]))
            for n in arg_names
        )
    output_for_pos = None
    if output_for is not None:
        output_for_pos = tuple(input_names.index(n) for n in _names(output_for))
    size_of = tuple((n, input_names.index(n)) for n in _names(sizes))

    def make(name, formula):
        return _layer.Derivative(
            name,
            node,
            formula,
            inputs=input_pos,
            save=save_pos,
            save_output=save_output,
            list_input=list_input,
            extra=extra,
            save_for=save_for_pos,
            output_for=output_for_pos,
            signature=signature,
            fused=fused,
            sizes=size_of,
        )

    def deco(formula):
        OPS[op_name].derivative = make(op_name, formula)
        inplace = op_name + "_"
        if inplace_variant and inplace in OPS and OPS[inplace].inplace:
            OPS[inplace].derivative = make(inplace, formula)
        return formula

    return deco


def entry(op_name):
    """The table row of ``op_name`` (a ``Derivative``), or None."""
    return OPS[op_name].derivative


def _not_differentiable(*names):
    for name in names:
        OPS[name].derivative = _layer.Derivative(
            name, "NotDifferentiable", None, differentiable=False
        )
    return names


# -------------------------------------------------------------------------------------
# helpers


def _grad_mode() -> bool:
    return _modes.is_grad_enabled()


def _expand_reduced(grad, shape, dim, keepdim, lead=()):
    """Broadcast the gradient of a reduction back to the input's ``shape`` (after ``lead``)."""
    if lead and (dim is None or dim == ()) and grad.dim() == len(lead):
        return grad.reshape(tuple(lead) + (1,) * len(shape)).expand(tuple(lead) + tuple(shape))
    if dim is not None and not keepdim and len(shape) > 0:
        dims = dim if isinstance(dim, tuple) else (dim,)
        for d in sorted(d % len(shape) for d in dims):
            grad = grad.unsqueeze(d + len(lead))
    return grad.expand(tuple(lead) + tuple(shape))


def _reduced_count(shape, dim):
    if dim is None or dim == ():
        return math.prod(shape)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return math.prod(shape[d % len(shape)] for d in dims) if shape else 1


def _keep(t, shape, dim, keepdim, lead=()):
    """A reduction's result reshaped to broadcast against its input (keepdim=True form).

    ``lead`` is the batch prefix ``t`` carries in a batched backward (see ``_lead``).
    """
    if dim is None or dim == ():
        return t.reshape(tuple(lead) + (1,) * len(shape)) if shape else t
    return t if keepdim else _expand_dims(t, shape, dim, len(lead))


def _expand_dims(t, shape, dim, nl=0):
    if not shape:
        return t  # Note [Dims of a 0-d tensor]: reducing a 0-d tensor over dim 0 keeps it 0-d
    dims = dim if isinstance(dim, tuple) else (dim,)
    for d in sorted(d % len(shape) for d in dims):
        t = t.unsqueeze(d + nl)
    return t


# Note [Batched formulas]
# In a batched backward (Note [Batched backward] in _engine.pyx) every incoming gradient
# has one extra leading dim, the batch.  Elementwise and matmul formulas broadcast over it
# as written; formulas that use shapes or dims take the prefix from ``_lead(grad)`` (``()``
# outside a batched pass, so the ordinary path is unchanged) and index-like ones go
# through ``_batch_scatter``/``_batch_gather``, which index flat positions so that any key works.


def _lead(grad):
    """``(batch,)`` in a batched backward, else ``()`` (Note [Batched formulas])."""
    return (grad.shape[0],) if _modes.grads_batched() else ()


def _sum_all(t, lead):
    """``t.sum()`` over everything but the batch prefix ``lead``."""
    if not lead:
        return t.sum()
    return t.sum(tuple(range(len(lead), t.dim()))) if t.dim() > len(lead) else t


def _dim_after(dim, grad, lead):
    """``dim`` of the unbatched tensor, as a dim of the batched ``grad``."""
    return dim % (grad.dim() - len(lead)) + len(lead)


def _positions(shape, key):
    """The flat (row-major) position in ``shape`` of each element of ``x[key]``."""
    return np.asarray(np.arange(math.prod(shape), dtype=np.intp).reshape(shape)[key])


def _batch_scatter(grad, key, shape):
    """``index_scatter(grad, key, shape)``, keeping the batch dim of a batched backward."""
    if not _modes.grads_batched():
        return index_scatter(grad, key, shape)
    b = grad.shape[0]
    pos = _positions(tuple(shape), key).reshape(-1)
    flat = index_scatter(grad.reshape(b, -1), (slice(None), pos), (b, math.prod(shape)))
    return flat.reshape((b,) + tuple(shape))


def _batch_gather(grad, key, shape):
    """``grad[key]`` (``grad`` of shape ``shape``), keeping the batch dim of a batched backward."""
    if not _modes.grads_batched():
        return _getitem_np(grad, key)
    b = grad.shape[0]
    pos = _positions(tuple(shape), key)
    r = _getitem_np(grad.reshape(b, -1), (slice(None), pos.reshape(-1)))
    return r.reshape((b,) + pos.shape)


def _is_tensor(x):
    return isinstance(x, Tensor)


def _detached(x):
    """``x`` outside the graph (numbers pass through): for values a formula uses as constants."""
    return x.detach() if isinstance(x, Tensor) else x


def _zeros(grad):
    """Zeros shaped like ``grad``, not ``grad * 0`` (Note [Masks select, never multiply])."""
    return gt.zeros_like(grad)


# Note [Masks select, never multiply]
# A gradient that is zero on part of the input must be *selected* to zero
# (``where(mask, grad, 0)``, ``masked_fill``), never multiplied by a 0/1 mask: an incoming
# gradient of inf or nan times 0 is nan, so ``x.clamp(min=0).sqrt()`` at x = -1 (sqrt's
# gradient at 0 is inf) would give nan where torch gives 0.  Formulas follow torch's own
# choice per op: where torch multiplies by a mask (``abs``'s sign, ``amax``'s count-scaled
# mask), so do we, so that both give the same nan in the same place.


# -------------------------------------------------------------------------------------
# forward-mode helpers (Note [Forward formulas sit with their backward formulas])


# ops that are differentiable backward but have no forward formula, with the reason
NO_JVP: dict[str, str] = {
    name: "torch has no derivative for floor_divide (Note [floor_divide has no derivative] "
    "in derivatives.py)"
    for name in ("floor_divide", "floor_divide_")
}


def jvp(*op_names, inplace_variant=True):
    """Decorator setting the forward formula of ``op_names`` (and of their ``_`` variants)."""

    def deco(formula):
        for name in op_names:
            op = OPS.get(name)
            if op is None or op.derivative is None:
                continue  # not in this build's registry: the coverage test tells
            op.derivative.jvp = formula
            inplace = OPS.get(name + "_")
            if (
                inplace_variant
                and inplace is not None
                and inplace.inplace
                and inplace.derivative is not None
            ):
                inplace.derivative.jvp = formula
        return formula

    return deco


def _pad(t, x, out, lead):
    """Tangent ``t`` of ``x`` aligned against ``out`` (Note [Aligning a batch of tangents])."""
    if t is None or not lead:
        return t
    missing = out.dim() - x.dim()
    if missing <= 0:
        return t
    return t.reshape(tuple(lead) + (1,) * missing + tuple(x.shape))


def _shift(dim, x, lead):
    """Dim ``dim`` of ``x`` as a dim of its (batched) tangent."""
    return dim % max(x.dim(), 1) + len(lead)


def _tangent_sum(a, b):
    """``a + b`` where None is a zero tangent."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _reduced(dim, x, lead):
    """The dims of the tangent that a reduction of ``x`` over ``dim`` sums over."""
    n = x.dim()
    if dim is None or dim == ():
        return tuple(range(len(lead), len(lead) + n))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted(d % n + len(lead) for d in dims)) if n else ()


def _sum_over(t, dims, keepdim):
    return t.sum(dims, keepdim=keepdim) if dims else t


def _keepdims(r, x, dim, keepdim):
    """A reduction's result of ``x`` (no batch) in keepdim form, to broadcast against ``x``."""
    if x.dim() == 0 or keepdim:
        return r
    if dim is None or dim == ():
        return r.reshape((1,) * x.dim())
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    for d in sorted(d % x.dim() for d in dims):
        r = r.unsqueeze(d)
    return r


def _take(t, key, shape, lead):
    """``t[key]`` for the tangent ``t`` of a tensor of ``shape`` (numpy-style ``key``)."""
    if not lead:
        return _getitem_np(t, key)
    b = math.prod(lead)
    pos = _positions(tuple(shape), key)
    r = _getitem_np(t.reshape(b, -1), (slice(None), pos.reshape(-1)))
    return r.reshape(tuple(lead) + pos.shape)


def _put(t, key, shape, lead):
    """zeros(lead + shape) with the tangent ``t`` added at ``key`` (getitem's adjoint)."""
    if not lead:
        return index_scatter(t, key, tuple(shape))
    b = math.prod(lead)
    pos = _positions(tuple(shape), key).reshape(-1)
    flat = index_scatter(t.reshape(b, -1), (slice(None), pos), (b, math.prod(shape)))
    return flat.reshape(tuple(lead) + tuple(shape))


def _zero_tangents(lead, like):
    return gt.zeros(tuple(lead) + tuple(like.shape), dtype=like.dtype)


def _mask(cond, dtype):
    return cond.to(dtype)


def _binary(args, out, tangents, lead, da, db):
    """``t_a * da + t_b * db`` for an elementwise op of two (broadcast) arguments."""
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        ta = _pad(ta, a, out, lead)
        r = ta if da is None else ta * da(a, b, out)
    if tb is not None:
        tb = _pad(tb, b, out, lead)
        r = _tangent_sum(r, tb if db is None else tb * db(a, b, out))
    return r


def _unary(name, coefficient):
    """The forward formula ``t * coefficient(x, out)`` of an elementwise op of one argument."""

    def formula(args, out, tangents, lead):
        (t,) = tangents
        return t * coefficient(args[0], out)

    formula.__name__ = f"_jvp_{name}"
    return formula


def _extreme_jvp_of(args, out, tangents, lead, wins):
    """torch's ``other_t + where(a == b, 0.5, wins(a, b)) * (self_t - other_t)``, with a
    missing tangent as torch's zero tensor (it contributes exactly nothing)."""
    a, b = args[0], args[1]
    ta, tb = tangents
    w = gt.where(a == b, 0.5, _mask(wins(a, b), out.dtype))
    ta = _pad(ta, a, out, lead) if ta is not None else None
    tb = _pad(tb, b, out, lead) if tb is not None else None
    if tb is None:
        return w * ta
    return tb + w * (-tb if ta is None else ta - tb)


def _along(t, x, indices, dim, keepdim, lead):
    """The tangent at ``indices`` along ``dim`` (max/min/sort/topk's selected elements)."""
    axis = dim % x.dim()
    idx = _data(indices)
    if not keepdim and idx.ndim < x.dim():
        idx = np.expand_dims(idx, axis)
    r = _take(t, _along_axis_key(idx, axis), tuple(x.shape), lead)
    if not keepdim and _data(indices).ndim < x.dim():
        r = r.squeeze(axis + len(lead))
    return r


def _extreme_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    (t,) = tangents
    if dim is None:
        # ties share the tangent evenly, as the backward formula shares the gradient
        mask = _mask(x == out, out.dtype)
        return _sum_over(t * mask, _reduced(None, x, lead), False) / mask.sum()
    if x.dim() == 0:
        return (t, None)
    return (_along(t, x, out[1], dim, keepdim, lead), None)


def _var_tangent(args, t, lead):
    """torch's var_jvp: var's backward formula of the tangent (keepdim), summed over the
    reduced dims (so ``n <= correction`` gives torch's inf/nan, not a Python error)."""
    x, dim, correction, keepdim = args[0], args[1], args[2], args[3]
    per_element = var_backward(t, x, dim, correction, True, lead)
    return _sum_over(per_element, _reduced(dim, x, lead), keepdim)


def _matmul_left(ta, a, b, lead):
    """``ta @ b`` where ``ta`` is the (batched) tangent of ``a``: torch's matmul shapes."""
    if not lead:
        return ta @ b
    row = a.dim() == 1
    col = b.dim() == 1
    ta = ta.unsqueeze(-2) if row else ta
    bb = b.unsqueeze(-1) if col else b
    a_batch, b_batch = max(a.dim(), 2) - 2, bb.dim() - 2
    if b_batch > a_batch:
        shape = tuple(ta.shape)
        ta = ta.reshape(shape[: len(lead)] + (1,) * (b_batch - a_batch) + shape[len(lead) :])
    r = ta @ bb
    if row:
        r = r.squeeze(-2)
    return r.squeeze(-1) if col else r


def _matmul_right(a, tb, b, lead):
    """``a @ tb`` where ``tb`` is the (batched) tangent of ``b``: torch's matmul shapes."""
    if not lead:
        return a @ tb
    row = a.dim() == 1
    col = b.dim() == 1
    aa = a.unsqueeze(-2) if row else a
    tb = tb.unsqueeze(-1) if col else tb
    a_batch, b_batch = aa.dim() - 2, max(b.dim(), 2) - 2
    if a_batch > b_batch:
        shape = tuple(tb.shape)
        tb = tb.reshape(shape[: len(lead)] + (1,) * (a_batch - b_batch) + shape[len(lead) :])
    r = aa @ tb
    if row:
        r = r.squeeze(-2)
    return r.squeeze(-1) if col else r


def _sorted_jvp(dim_position):
    def formula(args, out, tangents, lead):
        x = args[0]
        dim = args[dim_position] if len(args) > dim_position else -1
        (t,) = tangents
        if x.dim() == 0:
            return (t, None)
        return (_along(t, x, out[1], dim, True, lead), None)

    return formula


def _pieces_jvp(args, out, tangents, lead):
    x, dim = args[0], args[2] if len(args) > 2 else 0
    (t,) = tangents
    d = _shift(dim, x, lead)
    pieces, start = [], 0
    for o in out:
        size = o.shape[dim % x.dim()]
        pieces.append(t.narrow(d, start, size))
        start += size
    return tuple(pieces)


# -------------------------------------------------------------------------------------
# arithmetic


@register(
    "add(self, other, alpha)",
    "AddBackward0",
    inputs="self, other",
    save="alpha",
    fused="add_backward",
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
)
def _pow(ctx, grad):
    a, b, out = ctx.saved_value("self"), ctx.saved_value("exponent"), ctx.saved_value("result")
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:
        if _is_tensor(b):
            ga = gt.where(b == 0, 0.0, grad * (b * a.pow(b - 1)))
        elif b == 0:
            ga = _zeros(grad)
        else:
            ga = grad * (b * a.pow(b - 1))
    if need_b:
        base = a if _is_tensor(a) else gt.full((), float(a), dtype=out.dtype)
        # d/db a**b = a**b * log(a); torch masks a == 0 (with b >= 0) to 0, then multiplies
        gb = grad * gt.where((base == 0) & (b >= 0), 0.0, out * base.log())
    return ga, gb


@jvp("pow")
def _pow_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = None
    if ta is not None:
        ta = _pad(ta, a, out, lead)
        if isinstance(b, Tensor):
            r = gt.where(b == 0, 0.0, ta * (b * a.pow(b - 1)))
        elif b == 0:
            r = gt.zeros_like(ta)  # torch's zeros, not ta * 0 (Note [Masks select, never multiply])
        else:
            r = ta * (b * a.pow(b - 1))
    if tb is not None:
        tb = _pad(tb, b, out, lead)
        base = a if isinstance(a, Tensor) else gt.full((), float(a), dtype=out.dtype)
        # d/db a**b = a**b log(a); torch masks a == 0 (with b >= 0) to 0, then multiplies
        r = _tangent_sum(r, tb * gt.where((base == 0) & (b >= 0), 0.0, out * base.log()))
    return r


@register("neg(self)", "NegBackward0")
def _neg(ctx, grad):
    return (-grad,)


@jvp("neg")
def _neg_jvp(args, out, tangents, lead):
    return -tangents[0]


@register("abs(self)", "AbsBackward0", save="self")
def _abs(ctx, grad):
    return (grad * ctx.saved_value("self").sign(),)


jvp("abs")(_unary("abs", lambda x, o: x.sign()))


@register("relu(self)", "ReluBackward0", save="result", fused="relu_backward")
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


@register("exp(self)", "ExpBackward0", save="result")
def _exp(ctx, grad):
    return (grad * ctx.saved_value("result"),)


jvp("exp")(_unary("exp", lambda x, o: o))


@register("exp2(self)", "Exp2Backward0", save="result")
def _exp2(ctx, grad):
    return (grad * ctx.saved_value("result") * math.log(2.0),)


jvp("exp2")(_unary("exp2", lambda x, o: o * math.log(2.0)))


@register("expm1(self)", "Expm1Backward0", save="result")
def _expm1(ctx, grad):
    return (grad * (ctx.saved_value("result") + 1),)


jvp("expm1")(_unary("expm1", lambda x, o: o + 1))


@register("log(self)", "LogBackward0", save="self")
def _log(ctx, grad):
    return (grad / ctx.saved_value("self"),)


jvp("log")(_unary("log", lambda x, o: x.reciprocal()))


@register("log2(self)", "Log2Backward0", save="self")
def _log2(ctx, grad):
    return (grad / (ctx.saved_value("self") * math.log(2.0)),)


jvp("log2")(_unary("log2", lambda x, o: (x * math.log(2.0)).reciprocal()))


@register("log10(self)", "Log10Backward0", save="self")
def _log10(ctx, grad):
    return (grad / (ctx.saved_value("self") * math.log(10.0)),)


jvp("log10")(_unary("log10", lambda x, o: (x * math.log(10.0)).reciprocal()))


@register("log1p(self)", "Log1PBackward0", save="self")
def _log1p(ctx, grad):
    return (grad / (ctx.saved_value("self") + 1),)


jvp("log1p")(_unary("log1p", lambda x, o: (x + 1).reciprocal()))


@register("sqrt(self)", "SqrtBackward0", save="result")
def _sqrt(ctx, grad):
    return (grad / (2 * ctx.saved_value("result")),)


jvp("sqrt")(_unary("sqrt", lambda x, o: (2 * o).reciprocal()))


@register("rsqrt(self)", "RsqrtBackward0", save="result")
def _rsqrt(ctx, grad):
    out = ctx.saved_value("result")
    return (-0.5 * grad * out * out * out,)


jvp("rsqrt")(_unary("rsqrt", lambda x, o: -0.5 * o * o * o))


@register("reciprocal(self)", "ReciprocalBackward0", save="result")
def _reciprocal(ctx, grad):
    out = ctx.saved_value("result")
    return (-grad * out * out,)


jvp("reciprocal")(_unary("reciprocal", lambda x, o: -(o * o)))


@register("sin(self)", "SinBackward0", save="self", fused="sin_backward")
def _sin(ctx, grad):
    x = ctx.saved_value("self")
    fused = ctx.fused(grad, x)
    return (fused if fused is not None else grad * x.cos(),)


jvp("sin")(_unary("sin", lambda x, o: x.cos()))


@register("cos(self)", "CosBackward0", save="self", fused="cos_backward")
def _cos(ctx, grad):
    x = ctx.saved_value("self")
    fused = ctx.fused(grad, x)
    return (fused if fused is not None else -grad * x.sin(),)


jvp("cos")(_unary("cos", lambda x, o: -x.sin()))


@register("tan(self)", "TanBackward0", save="result")
def _tan(ctx, grad):
    out = ctx.saved_value("result")
    return (grad * (1 + out * out),)


jvp("tan")(_unary("tan", lambda x, o: 1 + o * o))


@register("asin(self)", "AsinBackward0", save="self")
def _asin(ctx, grad):
    x = ctx.saved_value("self")
    return (grad / (1 - x * x).sqrt(),)


jvp("asin")(_unary("asin", lambda x, o: (1 - x * x).rsqrt()))


@register("acos(self)", "AcosBackward0", save="self")
def _acos(ctx, grad):
    x = ctx.saved_value("self")
    return (-grad / (1 - x * x).sqrt(),)


jvp("acos")(_unary("acos", lambda x, o: -(1 - x * x).rsqrt()))


@register("atan(self)", "AtanBackward0", save="self")
def _atan(ctx, grad):
    x = ctx.saved_value("self")
    return (grad / (1 + x * x),)


jvp("atan")(_unary("atan", lambda x, o: (1 + x * x).reciprocal()))


@register("sinh(self)", "SinhBackward0", save="self")
def _sinh(ctx, grad):
    return (grad * ctx.saved_value("self").cosh(),)


jvp("sinh")(_unary("sinh", lambda x, o: x.cosh()))


@register("cosh(self)", "CoshBackward0", save="self")
def _cosh(ctx, grad):
    return (grad * ctx.saved_value("self").sinh(),)


jvp("cosh")(_unary("cosh", lambda x, o: x.sinh()))


@register("tanh(self)", "TanhBackward0", save="result", fused="tanh_backward")
def _tanh(ctx, grad):
    out = ctx.saved_value("result")
    fused = ctx.fused(grad, out)
    return (fused if fused is not None else grad * (1 - out * out),)


jvp("tanh")(_unary("tanh", lambda x, o: 1 - o * o))


@register("sigmoid(self)", "SigmoidBackward0", save="result", fused="sigmoid_backward")
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
    register(_name, _name.capitalize() + "Backward0")(_zero_grad_formula)


@jvp("sign", "floor", "ceil", "round", "trunc")
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


@register("maximum(self, other)", "MaximumBackward0", inputs="self, other", save="self, other")
def _maximum(ctx, grad):
    return _select_extreme(ctx, grad, lambda a, b: a < b, lambda a, b: a > b)


@jvp("maximum")
def _maximum_jvp(args, out, tangents, lead):
    return _extreme_jvp_of(args, out, tangents, lead, lambda a, b: a > b)


@register("minimum(self, other)", "MinimumBackward0", inputs="self, other", save="self, other")
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


# torch wraps a number divisor into a tensor here: DivBackward2 either way
@register("div_rounding(self, other, rounding_mode)", "DivBackward2", inputs="self, other")
def _div_rounding(ctx, grad):
    """``div(a, b, rounding_mode=...)`` is piecewise constant: zero gradients, as torch's
    (``grad.new_zeros``), for each input that wants one."""
    need_a, need_b = ctx.needs_input_grad
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


@register("erf(self)", "ErfBackward0", save="self")
def _erf(ctx, grad):
    x = ctx.saved_value("self")  # torch: 2 / sqrt(pi) * exp(-x**2) * grad
    return ((2.0 / math.sqrt(math.pi)) * (-(x.pow(2))).exp() * grad,)


@jvp("erf")
def _erf_jvp(args, out, tangents, lead):
    x = args[0]
    return tangents[0] * ((2.0 / math.sqrt(math.pi)) * (-(x.pow(2))).exp())


@register("erfinv(self)", "ErfinvBackward0", save="self")
def _erfinv(ctx, grad):
    x = ctx.saved_value("self")  # torch: 0.5 * sqrt(pi) * exp(erfinv(x)**2) * grad
    return (0.5 * math.sqrt(math.pi) * x.erfinv().pow(2).exp() * grad,)


@jvp("erfinv")
def _erfinv_jvp(args, out, tangents, lead):
    return tangents[0] * (0.5 * math.sqrt(math.pi) * out.pow(2).exp())


@register("atan2(self, other)", "Atan2Backward0", inputs="self, other", save="self, other")
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


@register("clamp(self, min, max)", _clamp_name, inputs="self, min, max", save="self, min, max")
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


@register("where(condition, self, other)", "WhereBackward0", inputs="self, other", save="condition")
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


@register("masked_fill(self, mask, value)", _masked_fill_name, inputs="self, value", save="mask")
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


# -------------------------------------------------------------------------------------
# reductions


def _sum_name(args):
    return "SumBackward0" if args[1] is None or args[1] == () else "SumBackward1"


def _differentiable_dtype(name, position):
    """An ``extra=`` check at record time: torch refuses a reduction whose ``dtype=`` (the
    argument at ``position``) makes the result of a tensor that requires grad an integer
    ("Autograd not support dtype")."""
    types = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
             "uint8": "Byte", "bool": "Bool"}  # fmt: skip

    def check(args, out):
        if len(args) > position and args[position] is not None and not out.is_floating_point():
            raise RuntimeError(f"Autograd not support dtype: {types[out.dtype.name]}")
        return None

    check.__name__ = f"_{name}_dtype_check"
    return check


@register(
    "sum(self, dim, keepdim, dtype)",
    _sum_name,
    save="dim, keepdim",
    sizes="self",
    extra=_differentiable_dtype("sum", 3),
)
def _sum(ctx, grad):
    dim, keepdim = ctx.saved_value("dim"), ctx.saved_value("keepdim")
    return (_expand_reduced(grad, ctx.input_shape(0), dim, keepdim, _lead(grad)),)


@jvp("sum")
def _sum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    return _sum_over(tangents[0], _reduced(dim, x, lead), keepdim)


def _mean_name(args):
    return "MeanBackward0" if args[1] is None or args[1] == () else "MeanBackward1"


@register("mean(self, dim, keepdim, dtype)", _mean_name, save="dim, keepdim", sizes="self")
def _mean(ctx, grad):
    dim, keepdim = ctx.saved_value("dim"), ctx.saved_value("keepdim")
    shape = ctx.input_shape(0)
    return (_expand_reduced(grad, shape, dim, keepdim, _lead(grad)) / _reduced_count(shape, dim),)


@jvp("mean")
def _mean_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    dims = _reduced(dim, x, lead)
    return (
        _sum_over(tangents[0], dims, keepdim) / max(_reduced_count(tuple(x.shape), dim), 1)
        if dims
        else tangents[0]
    )


@register(
    "prod(self, dim, keepdim, dtype)",
    lambda a: "ProdBackward0" if a[1] is None else "ProdBackward1",
    save="self, dim, keepdim, result",
    extra=_differentiable_dtype("prod", 3),
)
def _prod(ctx, grad):
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)
    lead = _lead(grad)
    g = _keep(grad, shape, dim, keepdim, lead)
    zeros = int((x == 0).sum())
    if not zeros:
        return (g * (_keep(out, shape, dim, keepdim) / x),)
    if dim is None and zeros > 1 and not _grad_mode():
        # two zeros: every partial product is 0 (torch returns zeros, not grad * 0)
        return (gt.zeros(lead + tuple(shape), dtype=grad.dtype),)
    if (x.numel() if dim is None else shape[dim % len(shape)]) == 1:
        # torch's prod_safe_zeros_backward: a slice of one element passes grad through
        # (no graph to x under create_graph)
        return (g,)
    # with zeros, no division: d prod / d x_i is the product of the others
    return (g * _prod_of_others(x, dim),)


@jvp("prod")
def _prod_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = args[2] if len(args) > 2 else False
    (t,) = tangents
    if x.dim() == 0:
        return t
    if not bool((x == 0).any()):
        partial = _keepdims(out, x, dim, keepdim) / x
    else:
        partial = _prod_of_others(x, dim)  # Note [prod's gradient with zeros]
    return _sum_over(t * partial, _reduced(dim, x, lead), keepdim)


def _prod_of_others(x, dim):
    """For each element, the product of the other elements of its slice along ``dim``.

    Note [prod's gradient with zeros]
    ``out / x`` is 0/0 where x is zero.  The product of the others, computed as a product
    over an (n, n) broadcast with ones on the diagonal, is exact and made of ops that
    differentiate again (torch gets the same from exclusive cumprods), so second
    derivatives are right too: d2 prod(a, b, 0)/db dz = a, not 0.
    """
    if dim is None:
        return _prod_of_others(x.reshape(-1), 0).reshape(x.shape)
    axis = dim % x.dim()
    xt = x.transpose(axis, -1)
    n = xt.shape[-1]
    rows = xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n)
    others = gt.where(gt.eye(n, dtype=gt.bool), 1.0, rows).prod(-1)
    return others.transpose(axis, -1)


def _selected_indices(args, out):
    """The indices a selecting op chose (a copy, kept by the node).

    Note [Selections keep their indices, not their values]
    As torch's MaxBackward0/SortBackward0/TopkBackward0, the node needs the indices only:
    saving the values (the op's output) would make an in-place write to them, legal in
    torch, fail backward's version check.
    """
    return _data(out[1]).copy() if isinstance(out, tuple) else None


@register(
    "max(self, dim, keepdim)",
    lambda a: "MaxBackward1" if a[1] is None else "MaxBackward0",
    save="self, dim, keepdim",
    extra=_selected_indices,
)
def _max(ctx, grad, grad_indices=None):
    return _extreme_backward(ctx, grad, lambda x: x.amax())


@register(
    "min(self, dim, keepdim)",
    lambda a: "MinBackward1" if a[1] is None else "MinBackward0",
    save="self, dim, keepdim",
    extra=_selected_indices,
)
def _min(ctx, grad, grad_indices=None):
    return _extreme_backward(ctx, grad, lambda x: x.amin())


jvp("max", "min")(_extreme_jvp)


def _extreme_backward(ctx, grad, extreme):
    """max/min: over everything, the gradient is shared evenly by the elements equal to the
    result (by the NaNs when the result is NaN: torch's evenly_distribute_backward); along
    a dim, it goes to the selected index (a scatter, not a one-hot product)."""
    x, dim, keepdim = (ctx.saved_value(k) for k in ("self", "dim", "keepdim"))
    if grad is None:
        return (None,)
    lead = _lead(grad)
    if dim is None:
        nan = x != x
        mask = nan if bool(nan.any()) else (x == extreme(x.detach()))
        g = _keep(grad, tuple(x.shape), None, False, lead) if lead else grad
        return (gt.where(mask, g / mask.sum(), 0.0),)
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)
    axis = dim % len(shape)
    idx = ctx.extra
    g = grad
    if not keepdim:
        idx = np.expand_dims(idx, axis)
        g = g.unsqueeze(axis + len(lead))
    return (_batch_scatter(g, _along_axis_key(idx, axis), shape),)


def _amax_backward(ctx, grad):
    """torch's scale_grad_by_count: ``(grad / count) * mask``; a mask product, as torch's
    (a NaN result leaves an empty mask and a NaN gradient there, as in torch)."""
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    o = _keep(out, shape, dim, keepdim)
    mask = x == o
    count = mask.sum() if dim is None or dim == () else mask.sum(dim, keepdim=True)
    return ((_keep(grad, shape, dim, keepdim, _lead(grad)) / count) * mask,)


register("amax(self, dim, keepdim)", "AmaxBackward0", save="self, dim, keepdim, result")(
    _amax_backward
)
register("amin(self, dim, keepdim)", "AminBackward0", save="self, dim, keepdim, result")(
    _amax_backward
)


@jvp("amax", "amin")
def _amax_jvp(args, out, tangents, lead):
    """torch's amaxamin_jvp: ``where(mask, t, 0).sum(dim) / mask.sum(dim)``."""
    x, dim = args[0], args[1] if len(args) > 1 else ()
    keepdim = args[2] if len(args) > 2 else False
    mask = x == _keepdims(out, x, dim, keepdim)
    dims = _reduced(dim, x, lead)
    count = mask.sum(_reduced(dim, x, ()), keepdim=keepdim) if dims else mask
    return _sum_over(gt.where(mask, tangents[0], 0.0), dims, keepdim) / count


def _two_over(dof):
    """``2 / dof`` as C++ divides doubles: ``inf`` at 0 (Python would raise)."""
    return 2.0 / dof if dof != 0 else math.inf


def var_backward(grad, x, dim, correction, keepdim, lead=()):
    """torch's var_backward: ``2 / (n - correction) * grad * (x - mean)``.

    Over everything (or a 0-d ``x``) with ``n <= correction`` the result is ``grad`` times
    nan where ``x`` equals its mean and inf elsewhere, as torch's; along dims the factor is
    ``2 / (n - correction)`` as a double division (inf at 0, negative below).  Also the
    forward formula: ``var_jvp`` is this with the tangent as ``grad`` and ``keepdim=True``.
    """
    shape = tuple(x.shape)
    if not shape or dim is None or dim == ():
        # a batched gradient of the result (lead only) broadcasts after the batch dims
        reduced = lead and grad.dim() == len(lead)
        g = grad.reshape(tuple(lead) + (1,) * len(shape)) if reduced else grad
        dof = math.prod(shape) - correction
        if dof <= 0:
            return g * gt.where(x == x.mean(), math.nan, math.inf)
        return _two_over(dof) * g * (x - x.mean())
    g = _keep(grad, shape, dim, keepdim, lead)
    dof = _reduced_count(shape, dim) - correction
    return _two_over(dof) * g * (x - x.mean(dim, keepdim=True))


@register(
    "var(self, dim, correction, keepdim)", "VarBackward0", save="self, dim, correction, keepdim"
)
def _var(ctx, grad):
    x, dim, correction, keepdim = (
        ctx.saved_value(k) for k in ("self", "dim", "correction", "keepdim")
    )
    return (var_backward(grad, x, dim, correction, keepdim, _lead(grad)),)


@jvp("var")
def _var_jvp(args, out, tangents, lead):
    return _var_tangent(args, tangents[0], lead)


@register(
    "std(self, dim, correction, keepdim)",
    "StdBackward0",
    save="self, dim, correction, keepdim, result",
)
def _std(ctx, grad):
    """torch's std_backward: var's gradient of ``grad / (2 std)``, 0 where std is 0 (a
    constant input has a zero gradient, not 0/0)."""
    x, dim, correction, keepdim, out = (
        ctx.saved_value(k) for k in ("self", "dim", "correction", "keepdim", "result")
    )
    grad_var = (grad / (out * 2)).masked_fill(out == 0, 0.0)
    return (var_backward(grad_var, x, dim, correction, keepdim, _lead(grad)),)


@jvp("std")
def _std_jvp(args, out, tangents, lead):
    # torch: var_jvp / (2 std), 0 where std is 0
    return (_var_tangent(args, tangents[0], lead) / (out * 2)).masked_fill(out == 0, 0.0)


def norm_order(p):
    """The norm's order as a float (``"fro"`` is 2)."""
    return 2.0 if p == "fro" else float(p)


@register(
    "norm(self, ord, dim, keepdim)",
    "LinalgVectorNormBackward0",
    save="self, ord, dim, keepdim, result",
)
def _norm(ctx, grad):
    """torch's norm_backward, case by case (its masks select, Note [Masks select, never
    multiply]); order 0 has no gradient at all (None, as torch's undefined gradient)."""
    x, p, dim, keepdim, out = (
        ctx.saved_value(k) for k in ("self", "ord", "dim", "keepdim", "result")
    )
    shape = ctx.input_shape(0)
    p = norm_order(p)
    if p == 0:
        return (None,)
    g = _keep(grad, shape, dim, keepdim, _lead(grad))
    o = _keep(out, shape, dim, keepdim)
    if p == 1:
        return (x.sign() * g,)
    if p == 2:
        return (g * gt.where(o == 0, 0.0, x / o),)
    if math.isinf(p):
        a = x.abs()
        mask = (a == o) | (a != a)  # the elements at the norm, and NaNs
        count = mask.sum() if dim is None or dim == () else mask.sum(dim, keepdim=True)
        return (x.sign() * ((g / count) * mask),)
    if p < 1:
        scaled = x.sign() * x.abs().pow(p - 1).masked_fill(x == 0, 0.0)
        return (scaled * g * o.pow(1 - p),)
    scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return (scaled * (g / o.pow(p - 1)).masked_fill(o == 0, 0.0),)


@jvp("norm")
def _norm_jvp(args, out, tangents, lead):
    x, p = args[0], args[1] if len(args) > 1 else "fro"
    dim = args[2] if len(args) > 2 else None
    keepdim = args[3] if len(args) > 3 else False
    (t,) = tangents
    p = norm_order(p)
    dims = _reduced(dim, x, lead)
    if p == 0:
        return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)  # torch's zeros
    if p == 1:
        return _sum_over(x.sign() * t, dims, keepdim)
    if p == 2:
        return (_sum_over(x * t, dims, keepdim) / out).masked_fill(out == 0, 0.0)
    if math.isinf(p):
        # torch's norm_jvp: the elements at the norm share the tangent (NaNs with a NaN norm)
        o = _keepdims(out, x, dim, keepdim)
        a = x.abs()
        at_norm = _mask((a == o) | ((x != x) & (o != o)), out.dtype)
        count = at_norm.sum(_reduced(dim, x, ()), keepdim=True) if dims else at_norm
        return _sum_over(x.sign() * t * at_norm / count, dims, keepdim)
    if p < 1:
        weight = x.abs().pow(p - 1).masked_fill(x == 0, 0.0)
        return _sum_over(weight * (x.sign() * t), dims, keepdim) * out.pow(1 - p)
    weight = x.abs().pow(p - 1) * x.sign() if p < 2 else x.abs().pow(p - 2) * x
    return (_sum_over(weight * t, dims, keepdim) / out.pow(p - 1)).masked_fill(out == 0, 0.0)


@register("logsumexp(self, dim, keepdim)", "LogsumexpBackward0", save="self, dim, keepdim, result")
def _logsumexp(ctx, grad):
    x, dim, keepdim, out = (ctx.saved_value(k) for k in ("self", "dim", "keepdim", "result"))
    shape = ctx.input_shape(0)
    return (
        _keep(grad, shape, dim, keepdim, _lead(grad)) * (x - _keep(out, shape, dim, keepdim)).exp(),
    )


@jvp("logsumexp")
def _logsumexp_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    keepdim = args[2] if len(args) > 2 else False
    weights = (x - _keepdims(out, x, dim, keepdim)).exp()
    return _sum_over(tangents[0] * weights, _reduced(dim, x, lead), keepdim)


def _in_float32(grad, out, formula):
    """``formula(grad, out)``, in float32 for float16 tensors and rounded once, as torch's
    CPU softmax kernels compute half precision (their "opmath" type)."""
    if grad.dtype is not gt.float16:
        return formula(grad, out)
    return formula(grad.float(), out.float()).to(gt.float16)


@register("softmax(self, dim, dtype)", "SoftmaxBackward0", save="dim, result")
def _softmax(ctx, grad):
    dim, out = ctx.saved_value("dim"), ctx.saved_value("result")
    return (_in_float32(grad, out, lambda g, o: _softmax_formula(g, o, dim)),)


@jvp("softmax")
def _softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return out * (t - (t * out).sum(d, keepdim=True))


def _softmax_formula(grad, out, dim):
    if out.dim() == 0:  # the sum over the one element is the element (torch's formula,
        return out * (grad - grad * out)  # which stays attached to out: create_graph)
    d = _dim_after(dim, grad, _lead(grad))
    return out * (grad - (grad * out).sum(d, keepdim=True))


@register("log_softmax(self, dim, dtype)", "LogSoftmaxBackward0", save="dim, result")
def _log_softmax(ctx, grad):
    dim, out = ctx.saved_value("dim"), ctx.saved_value("result")
    return (_in_float32(grad, out, lambda g, o: _log_softmax_formula(g, o, dim)),)


@jvp("log_softmax")
def _log_softmax_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.dim() == 0:
        return None
    d = _shift(dim, x, lead)
    return t - (t * out.exp()).sum(d, keepdim=True)


def _log_softmax_formula(grad, out, dim):
    if out.dim() == 0:  # as softmax's: torch's formula with the sum over one element
        return grad - out.exp() * grad
    return grad - out.exp() * grad.sum(_dim_after(dim, grad, _lead(grad)), keepdim=True)


@register(
    "cumsum(self, dim, dtype)",
    "CumsumBackward0",
    save="dim",
    extra=_differentiable_dtype("cumsum", 2),
)
def _cumsum(ctx, grad):
    dim = ctx.saved_value("dim")
    lead = _lead(grad)
    if grad.dim() == len(lead):
        return (grad,)
    d = _dim_after(dim, grad, lead)
    return (grad.flip(d).cumsum(d).flip(d),)


@jvp("cumsum")
def _cumsum_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1]
    (t,) = tangents
    return t if x.dim() == 0 else t.cumsum(_shift(dim, x, lead))


# -------------------------------------------------------------------------------------
# linear algebra


def _matmul_name(args):
    # torch's matmul is a composite: its node is the one its last step records (a batched
    # product ends in an _unsafe_view); a few broadcast cases end in a clone instead
    a, b = args[0], args[1]
    nd = (a.dim() if _is_tensor(a) else 0, b.dim() if _is_tensor(b) else 0)
    return {
        (1, 1): "DotBackward0",
        (2, 2): "MmBackward0",
        (2, 1): "MvBackward0",
        (1, 2): "SqueezeBackward4",
    }.get(nd, "UnsafeViewBackward0")


def _matmul_folded_copy(a, b):
    """The copy of ``a`` that torch's matmul saves for ``b``'s gradient, or None.

    Note [matmul saves its folded operand]
    torch's matmul of a batched ``a`` (3 or more dims) runs mm on ``a.reshape(-1, n)``
    (folded, when ``b`` has at most 2 dims and requires grad) or bmm on ``a`` expanded to
    the broadcast batch and reshaped to 3 dims, and that mm/bmm saves the reshaped ``a``.
    When the reshape cannot view ``a`` (a transposed ``a``), it is a copy: a later in-place
    write into ``a`` does not touch it and backward works (fuzz seed 1 #49746), where
    saving ``a`` itself raised "modified by an inplace operation".  The copy is made with
    the graph (a clone), so that double backward still reaches ``a``.
    """
    if not (_is_tensor(a) and _is_tensor(b)) or a.dim() < 3 or not b.requires_grad:
        return None
    x = _data(a)
    shape: tuple[int, ...]
    if b.dim() <= 2:  # (sizes given in full: -1 is ambiguous for an empty tensor)
        shape = (math.prod(x.shape[:-1]), x.shape[-1])
    else:
        batch = np.broadcast_shapes(x.shape[:-2], _data(b).shape[:-2])
        x = np.broadcast_to(x, batch + x.shape[-2:])
        shape = (math.prod(batch),) + x.shape[-2:]
    try:
        np.reshape(x, shape, copy=False)  # numpy refuses exactly when a copy is needed
    except ValueError:
        return a.clone()
    return None


@register(
    "matmul(self, other)",
    _matmul_name,
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": "self"},  # as the mm/bmm/dot it runs
    extra=lambda args, out: (args[0].dim(), args[1].dim(), _matmul_folded_copy(*args[:2])),
)
def _matmul(ctx, grad):
    a_dim, b_dim, folded = ctx.extra
    a = folded if folded is not None else ctx.saved_value("self")
    b = ctx.saved_value("other")
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if a_dim == 1 and b_dim == 1:
        g = grad.unsqueeze(-1) if _lead(grad) else grad
        return (g * b if need_a else None), (g * a if need_b else None)
    if a_dim == 1:
        if need_a:
            ga = (grad.unsqueeze(-2) @ b.mT).squeeze(-2)
        if need_b:
            gb = a.unsqueeze(-1) @ grad.unsqueeze(-2)
        return ga, gb
    if b_dim == 1:
        if need_a:
            ga = grad.unsqueeze(-1) @ b.unsqueeze(-2)
        if need_b:
            gb = (a.mT @ grad.unsqueeze(-1)).squeeze(-1)
        return ga, gb
    if need_a:
        ga = grad @ b.mT
    if need_b:
        gb = a.mT @ grad
    return ga, gb


@register(
    "mm(self, mat2)",
    "MmBackward0",
    inputs="self, mat2",
    save="self, mat2",
    save_for={"self": "mat2", "mat2": "self"},
    sizes="self, mat2",
)
def _mm(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("mat2")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad @ b.t() if need_a else None), (a.t() @ grad if need_b else None)
    return (grad.mm(b.t()) if need_a else None), (a.t().mm(grad) if need_b else None)


@register(
    "bmm(self, mat2)",
    "BmmBackward0",
    inputs="self, mat2",
    save="self, mat2",
    save_for={"self": "mat2", "mat2": "self"},
)
def _bmm(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("mat2")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad @ b.transpose(1, 2) if need_a else None), (
            a.transpose(1, 2) @ grad if need_b else None
        )
    return (grad.bmm(b.transpose(1, 2)) if need_a else None), (
        a.transpose(1, 2).bmm(grad) if need_b else None
    )


@jvp("matmul", "mm", "bmm")
def _matmul_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = _matmul_left(ta, a, b, lead) if ta is not None else None
    return _tangent_sum(r, _matmul_right(a, tb, b, lead) if tb is not None else None)


@register(
    "dot(self, tensor)",
    "DotBackward0",
    inputs="self, tensor",
    save="self, tensor",
    save_for={"self": "tensor", "tensor": "self"},
)
def _dot(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("tensor")
    need_a, need_b = ctx.needs_input_grad
    g = grad.unsqueeze(-1) if _lead(grad) else grad
    return (g * b if need_a else None), (g * a if need_b else None)


@jvp("dot")
def _dot_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = (ta * b).sum(-1) if ta is not None else None
    return _tangent_sum(r, (a * tb).sum(-1) if tb is not None else None)


# torch: a[:, None] * b
@register(
    "outer(self, vec2)",
    "MulBackward0",
    inputs="self, vec2",
    save="self, vec2",
    save_for={"self": "vec2", "vec2": "self"},
)
def _outer(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("vec2")
    need_a, need_b = ctx.needs_input_grad
    # torch's outer is a broadcast mul: an integer factor is promoted (mv wants one dtype)
    a = a if a is None or a.dtype is grad.dtype else a.to(grad.dtype)
    b = b if b is None or b.dtype is grad.dtype else b.to(grad.dtype)
    if _lead(grad):
        return (grad @ b if need_a else None), (grad.mT @ a if need_b else None)
    return (grad.mv(b) if need_a else None), (grad.t().mv(a) if need_b else None)


@jvp("outer")
def _outer_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta.unsqueeze(-1) * b if ta is not None else None
    return _tangent_sum(r, a.unsqueeze(-1) * tb.unsqueeze(-2) if tb is not None else None)


@register(
    "mv(self, vec)",
    "MvBackward0",
    inputs="self, vec",
    save="self, vec",
    save_for={"self": "vec", "vec": "self"},
)
def _mv(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("vec")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad.unsqueeze(-1) * b if need_a else None), (grad @ a if need_b else None)
    return (grad.outer(b) if need_a else None), (a.t().mv(grad) if need_b else None)


@jvp("mv")
def _mv_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta @ b if ta is not None else None
    if tb is not None:
        r = _tangent_sum(r, tb @ a.t() if lead else a.mv(tb))
    return r


def _column_major(t):
    return not t.is_contiguous() and t.t().is_contiguous()


@register(
    "addmm(self, mat1, mat2, beta, alpha)",
    "AddmmBackward0",
    inputs="self, mat1, mat2",
    save="mat1, mat2, beta, alpha",
    # each factor only for the other's gradient (as torch's); the layouts it reads in extra
    save_for={"mat1": "mat2", "mat2": "mat1"},
    sizes="mat1, mat2",
    extra=lambda args, out: (_column_major(args[1]), _column_major(args[2])),
)
def _addmm(ctx, grad):
    m1, m2, beta, alpha = (ctx.saved_value(k) for k in ("mat1", "mat2", "beta", "alpha"))
    m1_columns, m2_columns = ctx.extra
    need_in, need_1, need_2 = ctx.needs_input_grad
    g_in = (grad if beta == 1 else grad * beta) if need_in else None
    g1 = g2 = None
    batched = bool(_lead(grad))
    if need_1:
        g1 = grad @ m2.t() if batched else _mm_in_layout_of(m1_columns, grad, m2.t())
        g1 = g1 if alpha == 1 else g1 * alpha
    if need_2:
        g2 = m1.t() @ grad if batched else _mm_in_layout_of(m2_columns, m1.t(), grad)
        g2 = g2 if alpha == 1 else g2 * alpha
    return g_in, g1, g2


@jvp("addmm")
def _addmm_jvp(args, out, tangents, lead):
    inp, m1, m2 = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    t_in, t1, t2 = tangents
    r = None
    if t_in is not None:
        t_in = _pad(t_in, inp, out, lead)
        r = t_in if beta == 1 else t_in * beta
    prod = _tangent_sum(t1 @ m2 if t1 is not None else None, m1 @ t2 if t2 is not None else None)
    if prod is not None:
        r = _tangent_sum(r, prod if alpha == 1 else prod * alpha)
    return r


def _mm_in_layout_of(column_major, a, b):
    """``a.mm(b)``, computed so that the result is column-major when the input was.

    Note [Matmul gradients in their input's layout]
    ``Linear`` multiplies by ``weight.t()``, a column-major view; the gradient for that
    view, ``m1.t() @ grad``, is row-major, so after TBackward0 it is column-major for the
    row-major weight, and accumulating it into ``weight.grad`` is a transposing add (about
    30x slower than a contiguous one for a 512x784 float32 weight).  Computing it as
    ``(b.t() @ a.t()).t()`` for a column-major input gives the same values in the
    input's own layout, as torch's ``mm_mat2_backward`` does.
    """
    if column_major:
        return b.t().mm(a.t()).t()
    return a.mm(b)


@register("trace(self)", "TraceBackward0")
def _trace(ctx, grad):
    n, m = ctx.input_shape(0)
    lead = _lead(grad)
    g = grad.reshape(lead + (1, 1)) if lead else grad
    return (gt.where(gt.eye(n, m, dtype=gt.bool), g, 0.0),)


@jvp("trace")
def _trace_jvp(args, out, tangents, lead):
    x = args[0]
    rows = np.arange(min(x.shape))
    return _take(tangents[0], (rows, rows), tuple(x.shape), lead).sum(-1)  # the diagonal


@register("tril(self, diagonal)", "TrilBackward0", save="diagonal")
def _tril(ctx, grad):
    return (grad.tril(ctx.saved_value("diagonal")),)


@jvp("tril")
def _tril_jvp(args, out, tangents, lead):
    return tangents[0].tril(args[1] if len(args) > 1 else 0)


@register("triu(self, diagonal)", "TriuBackward0", save="diagonal")
def _triu(ctx, grad):
    return (grad.triu(ctx.saved_value("diagonal")),)


@jvp("triu")
def _triu_jvp(args, out, tangents, lead):
    return tangents[0].triu(args[1] if len(args) > 1 else 0)


# torch 2.x: diag of a vector is diag_embed, of a matrix a diagonal copy
@register(
    "diag(self, diagonal)",
    lambda a: "DiagEmbedBackward0" if a[0].dim() == 1 else "DiagonalBackward0_copy",
    save="diagonal",
)
def _diag(ctx, grad):
    k = ctx.saved_value("diagonal")
    shape = ctx.input_shape(0)
    lead = _lead(grad)
    if len(shape) == 1:
        if not lead:
            return (grad.diag(k),)
        rows = np.arange(shape[0]) + max(0, -k)
        return (_batch_gather(grad, (rows, rows + k), tuple(grad.shape[1:])),)
    # 2-D input: scatter the diagonal's gradient back with the index op (linear in grad)
    n, m = shape
    rows = np.arange(max(0, -k), max(0, -k) + grad.shape[len(lead)])
    cols = rows + k
    return (_batch_scatter(grad, (rows, cols), shape),)


@jvp("diag")
def _diag_jvp(args, out, tangents, lead):
    x, k = args[0], args[1] if len(args) > 1 else 0
    (t,) = tangents
    if x.dim() == 1:
        if not lead:
            return t.diag(k)
        rows = np.arange(x.shape[0]) + max(0, -k)
        return _put(t, (rows, rows + k), tuple(out.shape), lead)
    rows = np.arange(out.shape[0]) + max(0, -k)
    return _take(t, (rows, rows + k), tuple(x.shape), lead)


# -------------------------------------------------------------------------------------
# views and shape

# Note [Scatter is getitem's adjoint]
# Every indexing-like op (getitem, select, narrow, index_select, gather, sort, max along a
# dim ...) has a backward that adds the gradient into zeros at the indexed positions.
# That is one linear op, `_index_scatter`, whose own derivative is plain indexing, so both
# are differentiable to any order.


def _index_scatter_kernel(values, key, shape):
    out = np.zeros(shape, dtype=_data(values).dtype)
    np.add.at(out, key, _data(values))
    return _wrap(out)


INDEX_SCATTER = register_op("_index_scatter", _index_scatter_kernel)


def index_scatter(values, key, shape):
    """zeros(shape) with ``values`` added at ``key`` (a numpy index): getitem's adjoint."""
    return gt.dispatch(INDEX_SCATTER, (values, key, tuple(shape)))


@register("_index_scatter(values, key, shape)", "IndexScatterBackward0", save="key")
def _index_scatter_backward(ctx, grad):
    key = ctx.saved_value("key")
    return (_batch_gather(grad, key, tuple(grad.shape[len(_lead(grad)) :])),)


@jvp("_index_scatter")
def _index_scatter_jvp(args, out, tangents, lead):
    return _put(tangents[0], args[1], args[2], lead)


def _getitem_np(t, key):
    """``t[key]`` for a numpy-style key, differentiable (through the getitem op)."""
    return gt.dispatch(OPS["getitem"], (t, _key_for_tensor(key)))


def _key_for_tensor(key):
    return (
        tuple(_wrap(np.asarray(k)) if isinstance(k, np.ndarray) else k for k in key)
        if isinstance(key, tuple)
        else key
    )


def _torch_key(args):
    from gradstack_tensor.extension import index_key

    return index_key(args[1], tuple(args[0].shape))[0]


def _getitem_name(args):
    """The node torch records for ``x[index]``: the last view op its indexing applies.

    torch walks the index left to right: an int selects, a slice that is not the whole
    dimension slices, None unsqueezes, full slices and Ellipsis do nothing (an alias
    if nothing else happens); any tensor/list index makes it an IndexBackward0.
    """
    index = args[1]
    if (isinstance(index, int) and not isinstance(index, bool)) or _int_scalar_tensor(index):
        return "SelectBackward0"
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(0 if _int_scalar_tensor(i) else i for i in items)  # torch selects with it
    if not _basic_index(items):
        return "IndexBackward0"
    shape = args[0].shape
    consuming = sum(1 for i in items if i is not None and i is not Ellipsis)
    name, dim = "AliasBackward0", 0
    for i in items:
        if i is None:
            name = "UnsqueezeBackward0"
        elif i is Ellipsis:
            dim += len(shape) - consuming
        elif isinstance(i, slice):
            if dim < len(shape) and i.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    return name


@register("getitem(self, indices)", _getitem_name, extra=lambda args, out: _torch_key(args))
def _getitem(ctx, grad):
    return (_batch_scatter(grad, ctx.extra, ctx.input_shape(0)),)


@jvp("getitem")
def _getitem_jvp(args, out, tangents, lead):
    (t,) = tangents
    if not lead:
        return gt.dispatch(OPS["getitem"], (t, args[1]))
    return _take(t, _torch_key(args), tuple(args[0].shape), lead)


def _int_scalar_tensor(i):
    """A 0-d integer tensor: torch indexes with it as with an int (a select)."""
    ints = (gt.int64, gt.int32, gt.int16, gt.int8)
    return isinstance(i, Tensor) and i.dim() == 0 and i.dtype in ints


def _basic_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(
        i is None
        or i is Ellipsis
        or (isinstance(i, (int, slice)) and not isinstance(i, bool))
        or _int_scalar_tensor(i)
        for i in items
    )


def _reshape_back(ctx, grad):
    return grad.reshape(_lead(grad) + tuple(ctx.input_shape(0)))


@register("view(self, size)", "ViewBackward0", sizes="self")
def _view(ctx, grad):
    return (_reshape_back(ctx, grad),)


def _reshape_name(args):
    """ViewBackward0 when the result views the input, UnsafeViewBackward0 for a copy (torch)."""
    x = args[0]
    if x.is_contiguous():
        return "ViewBackward0"
    return "ViewBackward0" if _views(x, args) else "UnsafeViewBackward0"


def _views(x, args):
    """Whether reshape(args) / flatten(args) of ``x`` can be a view (no copy)."""
    a = _data(x)
    if len(args) > 1 and isinstance(args[1], (tuple, list)):
        shape = tuple(args[1])
    elif len(args) > 1:  # flatten(start_dim, end_dim)
        s, e = args[1], (args[2] if len(args) > 2 else -1)
        nd = max(a.ndim, 1)
        s, e = s % nd, e % nd
        shape = a.shape[:s] + (-1,) + a.shape[e + 1 :] if a.ndim else (1,)
    else:
        shape = (-1,)
    try:
        np.reshape(a, shape, copy=False)  # numpy refuses exactly when a copy is needed
    except ValueError:
        return False
    return True


@register("reshape(self, shape)", _reshape_name, sizes="self")
def _reshape(ctx, grad):
    return (_reshape_back(ctx, grad),)


@register("flatten(self)", _reshape_name, sizes="self")
def _flatten(ctx, grad):
    return (_reshape_back(ctx, grad),)


@register(
    "squeeze(self, dim)",
    lambda a: (
        "SqueezeBackward0"
        if a[1] is None
        else "SqueezeBackward2"
        if isinstance(a[1], (tuple, list))
        else "SqueezeBackward1"
    ),
    sizes="self",
)
def _squeeze(ctx, grad):
    return (_reshape_back(ctx, grad),)


@register("unsqueeze(self, dim)", "UnsqueezeBackward0", save="dim")
def _unsqueeze(ctx, grad):
    return (_reshape_back(ctx, grad),)


@jvp("view", "reshape", "flatten", "squeeze", "unsqueeze")
def _reshape_jvp(args, out, tangents, lead):
    return tangents[0].reshape(tuple(lead) + tuple(out.shape))


@register("transpose(self, dim0, dim1)", "TransposeBackward0", save="dim0, dim1")
def _transpose(ctx, grad):
    lead = _lead(grad)
    if lead:
        if grad.dim() == 1:
            return (grad,)
        return (
            grad.transpose(
                _dim_after(ctx.saved_value("dim0"), grad, lead),
                _dim_after(ctx.saved_value("dim1"), grad, lead),
            ),
        )
    return (grad.transpose(ctx.saved_value("dim0"), ctx.saved_value("dim1")),)


@jvp("transpose")
def _transpose_jvp(args, out, tangents, lead):
    x, (t,) = args[0], tangents
    if x.dim() == 0:
        return t
    return t.transpose(_shift(args[1], x, lead), _shift(args[2], x, lead))


@register("t(self)", "TBackward0")
def _t(ctx, grad):
    if _lead(grad):
        return (grad.transpose(-1, -2) if grad.dim() == 3 else grad,)
    return (grad.t(),)


@jvp("t")
def _t_jvp(args, out, tangents, lead):
    (t,) = tangents
    return t.transpose(-1, -2) if args[0].dim() == 2 else t


@register("permute(self, dims)", "PermuteBackward0", save="dims")
def _permute(ctx, grad):
    dims = ctx.saved_value("dims")
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    if _lead(grad):
        return (grad.permute(0, *(i + 1 for i in inverse)),)
    return (grad.permute(tuple(inverse)),)


@jvp("permute")
def _permute_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    nl = len(lead)
    return tangents[0].permute((*range(nl), *(d % x.dim() + nl for d in dims)))


@register("expand(self, size)", "ExpandBackward0", sizes="self")
def _expand(ctx, grad):
    return (_native.sum_to_py(grad, ctx.input_shape(0)),)


@register("expand_as(self, other)", "ExpandBackward0", inputs="self")
def _expand_as(ctx, grad):
    return (_native.sum_to_py(grad, ctx.input_shape(0)),)


@jvp("expand", "expand_as")
def _expand_jvp(args, out, tangents, lead):
    return _pad(tangents[0], args[0], out, lead).expand(tuple(lead) + tuple(out.shape))


@register("alias(self)", "AliasBackward0")
def _alias(ctx, grad):
    return (grad,)


@register(
    "narrow(self, dim, start, length)", "SliceBackward0", save="dim, start, length", sizes="self"
)  # torch's narrow is a slice
def _narrow(ctx, grad):
    dim, start, length = (ctx.saved_value(k) for k in ("dim", "start", "length"))
    shape = ctx.input_shape(0)
    key = [slice(None)] * len(shape)
    axis = dim % len(shape)
    start = start + shape[axis] if start < 0 else start
    key[axis] = slice(start, start + length)
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("narrow")
def _narrow_jvp(args, out, tangents, lead):
    x, dim, start, length = args[0], args[1], args[2], args[3]
    return tangents[0].narrow(_shift(dim, x, lead), start, length)


@register("select(self, dim, index)", "SelectBackward0", save="dim, index", sizes="self")
def _select(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    key = [slice(None)] * len(shape)
    key[dim % len(shape)] = index
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("select")
def _select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    return tangents[0].select(_shift(dim, x, lead), index)


def _pieces_backward(ctx, grads, dim):
    shape = ctx.input_shape(0)
    axis = dim % len(shape)
    pieces = ctx.extra
    lead = _lead(next(x for x in grads if x is not None))
    out = []
    for g, size in zip(grads, pieces):
        if g is None:
            piece_shape = list(lead) + list(shape)
            piece_shape[axis + len(lead)] = size
            dt = next(x for x in grads if x is not None).dtype
            g = gt.zeros(piece_shape, dtype=dt)
        out.append(g)
    return (gt.cat(out, axis + len(lead)),)


def _piece_sizes(args, out):
    dim = args[2]
    return tuple(o.shape[dim] for o in out)


@register(
    "split(self, split_size, dim)",
    lambda a: "SplitWithSizesBackward0" if isinstance(a[1], (list, tuple)) else "SplitBackward0",
    save="dim",
    extra=_piece_sizes,
)
def _split(ctx, *grads):
    return _pieces_backward(ctx, grads, ctx.saved_value("dim"))


@register("chunk(self, chunks, dim)", "SplitBackward0", save="dim", extra=_piece_sizes)
def _chunk(ctx, *grads):
    return _pieces_backward(ctx, grads, ctx.saved_value("dim"))


jvp("split", "chunk")(_pieces_jvp)


@register("unbind(self, dim)", "UnbindBackward0", save="dim")
def _unbind(ctx, *grads):
    dim = ctx.saved_value("dim")
    shape = ctx.input_shape(0)
    axis = dim % len(shape)
    piece = shape[:axis] + shape[axis + 1 :]
    dt = next(g for g in grads if g is not None).dtype
    lead = _lead(next(g for g in grads if g is not None))
    return (
        gt.stack(
            [g if g is not None else gt.zeros(lead + tuple(piece), dtype=dt) for g in grads],
            axis + len(lead),
        ),
    )


@jvp("unbind")
def _unbind_jvp(args, out, tangents, lead):
    x, dim = args[0], args[1] if len(args) > 1 else 0
    return tuple(tangents[0].unbind(_shift(dim, x, lead)))


def _cat_sizes(args, out):
    dim = args[1]
    axis = dim % out.dim()
    # a legacy empty 1-d input (shape (0,)) joins any cat and contributes nothing
    return tuple(0 if t.dim() <= axis and t.numel() == 0 else t.shape[axis] for t in args[0])


@register("cat(tensors, dim)", "CatBackward0", list_input=True, save="dim", extra=_cat_sizes)
def _cat(ctx, grad):
    dim = ctx.saved_value("dim")
    lead = _lead(grad)
    axis = _dim_after(dim, grad, lead)
    out, start = [], 0  # type: ignore[var-annotated]
    for i, size in enumerate(ctx.extra):
        shape = ctx.input_shape(i)
        if shape is None:
            out.append(None)
        elif len(shape) == 1 and shape[0] == 0:
            # torch's cat_tensors_backward: an empty 1-d input gets a new empty gradient
            # (not a slice of grad: it takes no part in a create_graph graph)
            out.append(gt.zeros(lead + (0,), dtype=grad.dtype))
        else:
            out.append(grad.narrow(axis, start, size))
        start += size
    return tuple(out)


@jvp("cat")
def _cat_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = []
    for x, t in zip(seq, tangents):
        if x.dim() == 1 and x.shape[0] == 0 and out.dim() > 1:
            continue  # cat skips legacy empty 1-D tensors
        parts.append(t if t is not None else _zero_tangents(lead, x).to(out.dtype))
    return gt.cat(parts, dim % out.dim() + len(lead))


@register("stack(tensors, dim)", "StackBackward0", list_input=True, save="dim")
def _stack(ctx, grad):
    dim = ctx.saved_value("dim")
    return tuple(grad.unbind(_dim_after(dim, grad, _lead(grad))))


@jvp("stack")
def _stack_jvp(args, out, tangents, lead):
    seq, dim = args[0], args[1] if len(args) > 1 else 0
    parts = [
        t if t is not None else _zero_tangents(lead, x).to(out.dtype) for x, t in zip(seq, tangents)
    ]
    return gt.stack(parts, dim % out.dim() + len(lead))


@register("clone(self)", "CloneBackward0")
def _clone(ctx, grad):
    return (grad,)


@register("contiguous(self)", "CloneBackward0")
def _contiguous(ctx, grad):
    return (grad,)


@register("to_dtype(self, dtype)", "ToCopyBackward0")
def _to_dtype(ctx, grad):
    return (grad,)  # the engine casts to the input's dtype


@jvp("alias", "clone", "contiguous", "to_dtype")
def _identity_jvp(args, out, tangents, lead):
    return tangents[0]  # to_dtype: forward_ad casts the tangent to the output's dtype


@register("repeat(self, repeats)", "RepeatBackward0", save="repeats", sizes="self")
def _repeat(ctx, grad):
    sizes = ctx.saved_value("repeats")
    shape = (1,) * (len(sizes) - len(ctx.input_shape(0))) + tuple(ctx.input_shape(0))
    interleaved = []
    for s, d in zip(sizes, shape):
        interleaved += [s, d]
    lead = _lead(grad)
    g = grad.reshape(list(lead) + interleaved).sum(
        tuple(range(len(lead), len(lead) + 2 * len(sizes), 2))
    )
    return (g.reshape(lead + tuple(ctx.input_shape(0))),)


@jvp("repeat")
def _repeat_jvp(args, out, tangents, lead):
    x, sizes = args[0], tuple(args[1])
    t = tangents[0]
    if lead:
        t = t.reshape(tuple(lead) + (1,) * (len(sizes) - x.dim()) + tuple(x.shape))
    return t.repeat(*((1,) * len(lead) + sizes))


@register("flip(self, dims)", "FlipBackward0", save="dims")
def _flip(ctx, grad):
    lead = _lead(grad)
    if lead:
        return (grad.flip(*(_dim_after(d, grad, lead) for d in ctx.saved_value("dims"))),)
    return (grad.flip(*ctx.saved_value("dims")),)


@jvp("flip")
def _flip_jvp(args, out, tangents, lead):
    x, dims = args[0], args[1]
    return tangents[0].flip(*(_shift(d, x, lead) for d in dims))


@register("index_select(self, dim, index)", "IndexSelectBackward0", save="dim, index", sizes="self")
def _index_select(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    if not shape:
        return (grad,)  # a 0-d input: the result is that element
    key = [slice(None)] * len(shape)
    key[dim % len(shape)] = _data(index).reshape(-1)
    return (_batch_scatter(grad, tuple(key), shape),)


@jvp("index_select")
def _index_select_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        return tangents[0]
    return tangents[0].index_select(_shift(dim, x, lead), index)


def _along_axis_key(idx, axis):
    grids = np.indices(idx.shape, sparse=True)
    key = list(grids)
    key[axis] = idx
    return tuple(key)


@register("gather(self, dim, index)", "GatherBackward0", save="dim, index")
def _gather(ctx, grad):
    dim, index = ctx.saved_value("dim"), ctx.saved_value("index")
    shape = ctx.input_shape(0)
    if not shape:  # every element of the result is the 0-d input
        return (_sum_all(grad, _lead(grad)),)
    return (_batch_scatter(grad, _along_axis_key(_data(index), dim % len(shape)), shape),)


@jvp("gather")
def _gather_jvp(args, out, tangents, lead):
    x, dim, index = args[0], args[1], args[2]
    if x.dim() == 0:
        t = tangents[0].reshape(tuple(lead) + (1,) * index.dim())
        return t.expand(tuple(lead) + tuple(index.shape))
    if not lead:
        return tangents[0].gather(dim, index)
    return _take(tangents[0], _along_axis_key(_data(index), dim % x.dim()), tuple(x.shape), lead)


def _sorted_backward(ctx, grad, grad_indices=None):
    dim = ctx.saved_value("dim")
    shape = ctx.input_shape(0)
    if grad is None:
        return (None,)
    if not shape:
        return (grad,)
    return (_batch_scatter(grad, _along_axis_key(ctx.extra, dim % len(shape)), shape),)


# Note [Selections keep their indices, not their values]
register("sort(self, dim, descending)", "SortBackward0", save="dim", extra=_selected_indices)(
    _sorted_backward
)


jvp("sort")(_sorted_jvp(1))
register(
    "topk(self, k, dim, largest, sorted)", "TopkBackward0", save="dim", extra=_selected_indices
)(_sorted_backward)


jvp("topk")(_sorted_jvp(2))


# -------------------------------------------------------------------------------------
# in-place ops without an out-of-place twin


@register("zero_(self)", "ZeroBackward0", inplace_variant=False)
def _zero_(ctx, grad):
    return (_zeros(grad),)


@register(
    "fill_(self, value)",
    lambda a: "FillBackward3" if _is_tensor(a[1]) else "FillBackward2",
    inputs="self, value",
    inplace_variant=False,
)
def _fill_(ctx, grad):
    return _zeros(grad), (_sum_all(grad, _lead(grad)) if ctx.needs_input_grad[1] else None)


@jvp("fill_", inplace_variant=False)
def _fill_jvp(args, out, tangents, lead):
    tv = tangents[1] if len(tangents) > 1 else None
    return _pad(tv, args[1], out, lead) if tv is not None else None


@register("copy_(self, src)", "CopyBackwards", inputs="self, src", inplace_variant=False)
def _copy_(ctx, grad):
    return _zeros(grad), grad


@jvp("copy_", inplace_variant=False)
def _copy_jvp(args, out, tangents, lead):
    ts = tangents[1]
    return _pad(ts, args[1], out, lead) if ts is not None else None


@register(
    "setitem_(self, indices, values)",
    lambda a: "CopySlices" if _basic_index(a[1]) else "IndexPutBackward0",
    inputs="self, values",
    extra=lambda args, out: (_torch_key(args), _whole_key(args[1], tuple(args[0].shape))),
    inplace_variant=False,
)
def _setitem_(ctx, grad):
    key, whole = ctx.extra
    need_self, need_value = ctx.needs_input_grad
    # the written tensor's shape is grad's (input_shape(0) is None when self needs no grad)
    shape = tuple(grad.shape[len(_lead(grad)) :])
    g_self = None
    if need_self and whole:
        # torch's ``x[...] = v``, ``x[:] = v`` is ``x.copy_(v)`` (no view): CopyBackwards'
        # zeros_like, without a graph under create_graph
        g_self = _zeros(grad)
    elif need_self:
        overwritten = np.zeros(shape, dtype=bool)
        overwritten[key] = True
        g_self = gt.where(_wrap(overwritten), 0.0, grad)
    g_value = _batch_gather(grad, key, shape) if need_value else None
    if g_value is not None:
        g_value = _widen_to(g_value, ctx.input_shape(1), _lead(grad))
    return g_self, g_value


@jvp("setitem_", inplace_variant=False)
def _setitem_jvp(args, out, tangents, lead):
    x, value = args[0], args[2]
    t_self, t_value = tangents
    key = _torch_key(args)
    shape = tuple(x.shape)
    overwritten = np.zeros(shape, dtype=bool)
    overwritten[key] = True
    r = gt.where(_wrap(overwritten), 0.0, t_self) if t_self is not None else None
    if t_value is not None:
        pos = _positions(shape, key)
        if lead and value.dim() < pos.ndim:  # Note [Aligning a batch of tangents]
            t_value = t_value.reshape(
                tuple(lead) + (1,) * (pos.ndim - value.dim()) + tuple(value.shape)
            )
        t_value = t_value.expand(tuple(lead) + pos.shape)
        r = _tangent_sum(r, _put(t_value, key, shape, lead))
    return r


def _whole_key(key, shape):
    """Whether torch's indexing of ``key`` makes no view (only Ellipsis and slices of whole
    dims, which torch's applySlicing skips): ``x[key] = v`` is then ``x.copy_(v)``."""
    items = key if isinstance(key, tuple) else (key,)
    if not all(k is Ellipsis or type(k) is slice for k in items):
        return False
    n_ell = sum(k is Ellipsis for k in items)
    if n_ell > 1 or len(items) - n_ell > len(shape):
        return False
    split = next((i for i, k in enumerate(items) if k is Ellipsis), len(items))
    dims = list(range(split)) + list(range(len(shape) - (len(items) - split - 1), len(shape)))
    for k, d in zip((k for k in items if k is not Ellipsis), dims):
        size = shape[d]
        start, stop, step = (
            x if x is None or type(x) is int else "?" for x in (k.start, k.stop, k.step)
        )
        if step not in (None, 1) or start not in (None, 0, -size):
            return False
        if stop is not None and (stop == "?" or stop < size):
            return False
    return True


def _widen_to(g, shape, lead):
    """``g`` (a gradient in the written slice's shape) in ``shape`` when ``shape`` only adds
    leading size-1 dims (``v[None, None, :] = x`` with ``x`` of shape (1, 1, 1, 3)): the
    engine reduces broadcast gradients but cannot add dims back."""
    if shape is None:
        return g
    k = len(shape) - (g.dim() - len(lead))
    if k <= 0 or any(s != 1 for s in shape[:k]):
        return g
    inner = tuple(shape[k:])
    if tuple(g.shape[len(lead) :]) != inner:
        g = _native.sum_to_py(g, inner)
    return g.reshape(tuple(lead) + tuple(shape))


@register(
    "masked_fill_(self, mask, value)",
    _masked_fill_name,
    inputs="self, value",
    save="mask",
    inplace_variant=False,
)
def _masked_fill_(ctx, grad):
    return _masked_fill(ctx, grad)


jvp("masked_fill_", inplace_variant=False)(_masked_fill_jvp)


@register(
    "clamp_(self, min, max)",
    _clamp_name,
    inputs="self, min, max",
    save="self, min, max",
    inplace_variant=False,
)
def _clamp_(ctx, grad):
    return _clamp(ctx, grad)


jvp("clamp_", inplace_variant=False)(_clamp_jvp)


for _name in ("uniform_", "normal_"):
    register(_name, _name.rstrip("_").capitalize() + "Backward0", inplace_variant=False)(
        _zero_grad_formula
    )


@jvp("zero_", "uniform_", "normal_", inplace_variant=False)
def _overwritten_jvp(args, out, tangents, lead):
    """The result does not depend on any input: a tangent of zeros (torch's ``self_t.zero_()``)."""
    return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)


# -------------------------------------------------------------------------------------
# not differentiable: outputs never require grad

NOT_DIFFERENTIABLE = _not_differentiable(
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "bitwise_and_",
    "bitwise_or_",
    "bitwise_xor_",
    "bitwise_not_",
    "logical_not_",
    "argmax",
    "argmin",
    "detach",
    "count_nonzero",
    "isnan",
    "isinf",
    "isfinite",
)


def _floor_divide_not_implemented(ctx, grad):
    # (the in-place variant shares the row: torch names the op that ran, floor_divide_)
    raise RuntimeError(f"derivative for aten::{ctx.entry.op_name} is not implemented")


# Note [floor_divide has no derivative]
# torch 2.13 records a ``NotImplemented`` node for floor_divide of a tensor that requires
# grad: the result requires grad, and backward through it raises.  (``div(...,
# rounding_mode="floor")`` is a different op in torch, with zero gradients.)
register("floor_divide(self, other)", "NotImplemented", inputs="self, other")(
    _floor_divide_not_implemented
)

# ops whose node exists but whose backward raises, as torch's NotImplemented nodes
NOT_IMPLEMENTED = ("floor_divide", "floor_divide_")
