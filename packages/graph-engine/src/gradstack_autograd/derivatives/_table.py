"""The derivative table's machinery: ``register``, ``jvp``, ``entry`` (the package's notes)."""

from __future__ import annotations

from gradstack_tensor import OPS

from .. import _derivative
from . import batching

__all__ = ["register", "entry", "jvp", "NO_JVP", "NOT_DIFFERENTIABLE"]


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
    save_if=None,
    output_for=None,
    fused=None,
    sizes=(),
    batch=None,
    batch_inplace=None,
    shown=None,
    byproduct=False,
    keeps_zero=None,
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
    save_if : dict, optional
        ``{saved name: predicate(args)}``: that value (``"result"`` included) is saved only
        for the calls where the predicate holds, as torch's overloads save different values
        (``max(x)`` saves ``self`` and its result, ``max(x, dim)`` only the indices it chose).
    output_for : str or tuple, optional
        Inputs of which one must be a tensor for ``"result"`` to be saved (torch's
        overloads: ``pow(Tensor, Scalar)`` saves no result).
    fused : str, optional
        The kernel that may replace the first-order formula (``ctx.fused(...)`` runs it;
        Note [Native first-order formulas] in _native.pyx).
    sizes : str or tuple, optional
        Inputs whose shapes torch exposes as ``_saved_<name>_sym_sizes``.
    batch : callable, RuleKind or PerSample, optional
        vmap's batching rule (Note [A batching rule per entry] in ``batching``): a rule
        ``(args, batch_dims) -> (out, out_batch_dims)``, a kind of rule that the op's name
        configures (``unary``, ``reduction(keepdim_pos=None)`` ...), or ``per_sample(reason)``
        for an op that runs once per sample.
    batch_inplace : optional
        The in-place variant's rule, as ``batch``; by default the ``inplace`` kind when the
        op has a rule.
    byproduct : bool, optional
        The op's kernel may leave a by-product for the formula (the cos(x) of a float32
        ``sin``), which ``extra`` takes: the autograd layer asks for it when it records the
        out-of-place op (Note [A kernel's by-product] in tensor-core's _elementwise.pyx).
    keeps_zero : str or dict, optional
        The inputs to which the node hands on torch's efficient zero unchanged when it
        receives nothing else (Note [Efficient zeros] in _node.pyx): those whose formula in
        torch is a product with ``grad`` (``grad * f(x)``), where a ZeroTensor stays one.
        The others (formulas starting with ``-grad``, through mm, where ...) run on real
        zeros, as torch materializes its ZeroTensor there.  ``{node name: inputs}`` for an
        op whose node name depends on the overload.  Read off torch 2.13 by feeding each
        node the efficient zero of ``sgn`` with 0, -0, +-inf, NaN and tiny values in its
        formula (tests/test_efficient_zeros.py compares every listed node with torch).
    shown : Shown, optional
        How torch shows the saved values that are not tensors, as ``grad_fn._saved_<name>``
        (a ``Shown`` from ``derivatives._shown``: dims as torch's uint64 tuple, a loss's
        reduction as its enum ...); the formula still reads them as saved.
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
    save_if_pos = output_if = None
    if save_if is not None:
        output_if = save_if.get("result")
        if output_if is not None and not save_output:
            raise ValueError(f"register({op!r}): save_if names 'result', which is not saved")
        save_if = {k: v for k, v in save_if.items() if k != "result"}
        unknown = set(save_if) - set(arg_names)
        if unknown:
            raise ValueError(f"register({op!r}): save_if names unsaved values {unknown}")
        save_if_pos = tuple(save_if.get(n) for n in arg_names)
    output_for_pos = None
    if output_for is not None:
        output_for_pos = tuple(input_names.index(n) for n in _names(output_for))
    size_of = tuple((n, input_names.index(n)) for n in _names(sizes))
    keeps = _keeps_zero(op, keeps_zero, input_names, list_input)

    def make(name, formula):
        d = _derivative.Derivative(
            name,
            node,
            formula,
            inputs=input_pos,
            save=save_pos,
            save_output=save_output,
            list_input=list_input,
            extra=extra,
            save_for=save_for_pos,
            save_if=save_if_pos,
            output_if=output_if,
            output_for=output_for_pos,
            signature=signature,
            fused=fused,
            sizes=size_of,
        )
        if shown is not None:
            d.shown, d.shown_names = shown.fn, shown.names
        d.byproduct = byproduct and name == op_name
        d.keeps_zero = keeps
        return d

    def deco(formula):
        OPS[op_name].derivative = make(op_name, formula)
        _set_batch_rule(op_name, batch)
        inplace = op_name + "_"
        if inplace_variant and inplace in OPS and OPS[inplace].inplace:
            OPS[inplace].derivative = make(inplace, formula)
            default = batching.inplace if batch is not None else None
            _set_batch_rule(inplace, batch_inplace if batch_inplace is not None else default)
        return formula

    return deco


def _keeps_zero(op, spec, input_names, list_input):
    """``register``'s ``keeps_zero`` as the entry holds it: True (every input), a bool per
    input, a dict of those by node name, or None."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        return {
            node: _keeps_zero(op, names, input_names, list_input) for node, names in spec.items()
        }
    names = _names(spec)
    unknown = set(names) - set(input_names)
    if unknown:
        raise ValueError(f"register({op!r}): keeps_zero names no input {sorted(unknown)}")
    keeps = tuple(n in names for n in input_names)
    return True if all(keeps) or list_input else keeps


def entry(op_name):
    """The table row of ``op_name`` (a ``Derivative``), or None."""
    return OPS[op_name].derivative


# the ops whose outputs never require grad (``_not_differentiable``), in table order
NOT_DIFFERENTIABLE: list[str] = []


def _not_differentiable(*names, batch=None):
    """Entries for ops whose outputs never require grad; ``batch`` as in ``register``."""
    for name in names:
        OPS[name].derivative = _derivative.Derivative(
            name, "NotDifferentiable", None, differentiable=False
        )
        _set_batch_rule(name, batch)
        NOT_DIFFERENTIABLE.append(name)
    return names


def _set_batch_rule(op_name, batch):
    """Store ``batch`` (a rule, a kind or ``per_sample``) in ``op_name``'s entry."""
    if batch is None:
        return
    if isinstance(batch, batching.PerSample):
        batching.FALLBACK[op_name] = batch.reason
        return
    rule = batch.bind(op_name) if isinstance(batch, batching.RuleKind) else batch
    OPS[op_name].derivative.batch_rule = rule


# ops that are differentiable backward but have no forward formula, with the reason
NO_JVP: dict[str, str] = {
    name: "torch has no derivative for floor_divide (Note [floor_divide has no derivative] "
    "in derivatives.nondifferentiable)"
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
