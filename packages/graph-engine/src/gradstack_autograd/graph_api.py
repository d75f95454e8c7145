"""``backward`` and ``grad``: argument checking in torch's words, then the engine.

Examples
--------
>>> import gradstack_tensor as gt, gradstack_autograd as ag
>>> x = gt.tensor([1., 2.], requires_grad=True)
>>> (g,) = ag.grad((x * x).sum(), x)
>>> g.tolist()
[2.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import _engine, _layer

__all__ = ["backward", "grad"]


def _as_tuple(x, name):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, Sequence):
        return tuple(x)
    raise TypeError(f"{name} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _make_grads(outputs, grads, is_grads_batched=False):
    """Check or create the gradient of each output (ones for scalars)."""
    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"got {len(outputs)} tensors and {len(grads)} gradients (pass one gradient per "
            "output; None for single-element outputs)"
        )
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs (output "
                    f"{i} has shape {list(o.shape)}); pass gradient=... with that shape"
                )
            if not o.is_floating_point():
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {o.dtype}"
                )
            out.append(gt.ones_like(o))
            continue
        if not isinstance(g, Tensor):
            g = gt.tensor(g, dtype=o.dtype)
        expected = tuple(o.shape)
        got = tuple(g.shape)[1:] if is_grads_batched else tuple(g.shape)
        if got != expected:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {o.shape}."
                + (
                    " (is_grads_batched=True: the first dim is the batch)"
                    if is_grads_batched
                    else ""
                )
            )
        if g.dtype != o.dtype:
            # torch casts a root gradient to its output's dtype (integer ones included)
            g = g.to(o.dtype)
        out.append(g)
    return tuple(out)


def _check_roots(outputs):
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            raise TypeError(f"element {i} of tensors is a {type(o).__name__}, not a Tensor")
        # a view made under no_grad of a tensor that requires grad reports requires_grad,
        # yet feeds no gradient anywhere: torch refuses it as a root too
        if not o.requires_grad or (o.grad_fn is None and _layer.edge_of(o)[0] is None):
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def _check_inputs(inputs, name="inputs"):
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}[{i}] is a {type(t).__name__}, not a Tensor")
        if not t.requires_grad:
            raise RuntimeError(
                f"One of the differentiated Tensors ({name}[{i}], shape {list(t.shape)}) does "
                "not require grad"
            )


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of graph leaves.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Roots of the backward pass.
    grad_tensors : Tensor or sequence of (Tensor or None), optional
        The gradient of each root (``None`` is allowed for single-element roots).
    retain_graph : bool, optional
        Keep saved tensors for another backward (default: ``create_graph``).
    create_graph : bool
        Record the backward pass, to differentiate again.
    inputs : Tensor or sequence of Tensor, optional
        Accumulate only into these tensors' ``.grad`` (leaves or not).

    Examples
    --------
    >>> import gradstack_tensor as gt, gradstack_autograd as ag
    >>> x = gt.tensor([3.], requires_grad=True)
    >>> ag.backward((x ** 2).sum()); x.grad.tolist()
    [6.0]
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors, "tensors")
    _check_roots(outputs)
    grads = _make_grads(outputs, _as_tuple(grad_tensors, "grad_tensors"))
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs, "inputs")
    if inputs is not None:
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        _check_inputs(inputs)
    _engine.run_backward(
        outputs,
        grads,
        bool(retain_graph),
        bool(create_graph),
        inputs,
        accumulate=True,
        allow_unused=True,
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` is touched).

    Parameters
    ----------
    outputs, inputs : Tensor or sequence of Tensor
    grad_outputs : Tensor or sequence of (Tensor or None), optional
        Vector of the vector-Jacobian product; ``None`` for single-element outputs.
    retain_graph, create_graph : bool
        As for :func:`backward`.
    allow_unused : bool, optional
        Return None for inputs the outputs do not depend on, instead of raising.
    is_grads_batched : bool
        The first dimension of each grad_output is a batch: the result has it too.
    materialize_grads : bool
        Return zeros instead of None for unused inputs (implies ``allow_unused``).

    Returns
    -------
    tuple of Tensor (or None)
        One gradient per input.
    """
    out_t = _as_tuple(outputs, "outputs")
    in_t = _as_tuple(inputs, "inputs")
    if not in_t:
        raise RuntimeError("grad requires non-empty inputs.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when "
            "materialize_grads=True, but got allow_unused=False."
        )
    _check_roots(out_t)
    _check_inputs(in_t)
    if retain_graph is None:
        retain_graph = create_graph
    g_out = _as_tuple(grad_outputs, "grad_outputs")
    if is_grads_batched:
        result = _batched_grad(out_t, in_t, g_out, retain_graph, create_graph, allow_unused)
    else:
        grads = _make_grads(out_t, g_out)
        result = _engine.run_backward(
            out_t,
            grads,
            bool(retain_graph),
            bool(create_graph),
            in_t,
            accumulate=False,
            allow_unused=bool(allow_unused),
        )
    if materialize_grads:
        if is_grads_batched:
            n = _as_tuple(grad_outputs, "grad_outputs")[0].shape[0]
            result = tuple(
                gt.zeros((n,) + tuple(i.shape), dtype=i.dtype) if r is None else r
                for r, i in zip(result, in_t)
            )
        else:
            result = tuple(gt.zeros_like(i) if r is None else r for r, i in zip(result, in_t))
    return result


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """``is_grads_batched``: one batched backward pass when the graph allows it.

    Note [Batched gradients]
    The engine runs a single pass in which every gradient carries the batch as an extra
    leading dim (Note [Batched backward] in _engine.pyx): a jacobian costs one backward,
    not one per row (pytorch#50584).  When a node on the way cannot take a batch (a custom
    Function, an in-place op on a view, a hook), it runs one pass per row of the batch with
    the graph retained and stacks the results: the same numbers, only slower.
    """
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs with a leading batch dim")
    grads = _make_grads(outputs, grad_outputs, is_grads_batched=True)
    batch = {g.shape[0] for g in grads}
    if len(batch) != 1:
        raise RuntimeError(
            f"is_grads_batched=True: grad_outputs have different batch sizes {sorted(batch)}"
        )
    (n,) = batch
    if _engine.unbatchable_reason(outputs, inputs) is None:
        return _engine.run_backward(
            outputs,
            grads,
            bool(retain_graph),
            bool(create_graph),
            inputs,
            accumulate=False,
            allow_unused=bool(allow_unused),
            batch_size=n,
        )
    return _row_by_row_grad(outputs, inputs, grads, n, retain_graph, create_graph, allow_unused)


def _row_by_row_grad(outputs, inputs, grads, n, retain_graph, create_graph, allow_unused):
    """The fallback of :func:`_batched_grad`: one backward per row of the batch, stacked."""
    rows = []
    for b in range(n):
        keep = True if b < n - 1 else bool(retain_graph)
        rows.append(
            _engine.run_backward(
                outputs,
                tuple(g[b] for g in grads),
                keep,
                bool(create_graph),
                inputs,
                accumulate=False,
                allow_unused=bool(allow_unused),
            )
        )
    result: list[Tensor | None] = []
    for i, inp in enumerate(inputs):
        col = [r[i] for r in rows]
        if all(c is None for c in col):
            result.append(None)
        else:
            result.append(gt.stack([c if c is not None else gt.zeros_like(inp) for c in col]))
    return tuple(result)
