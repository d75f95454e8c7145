"""Numerical gradient checking: ``gradcheck`` and ``gradgradcheck``.

Both compare the analytical Jacobian (from the backward pass) with central finite
differences, in the inputs' own dtype: use float64 inputs (the default tolerances assume
it).  ``fast_mode`` compares random projections ``u^T J v`` instead of full Jacobians.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_autograd import gradcheck
>>> x = gt.randn(3, dtype=gt.float64, requires_grad=True)
>>> gradcheck(lambda t: (t.sin() * t).sum(), (x,))
True
"""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

from .graph_api import grad as _grad

__all__ = [
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "get_numerical_jacobian",
    "get_analytical_jacobian",
]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when gradients do not match."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    out = fn(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def get_numerical_jacobian(fn, inputs, eps=1e-6):
    """``J[i][o]``: d output o / d input i by central differences, shape (numel_o, numel_i).

    Note [Finite differences run with grad mode on]
    ``fn`` is evaluated in the caller's grad mode, not under ``no_grad``: gradgradcheck's
    ``fn`` is itself a backward pass (``grad(..., create_graph=True)``), which needs its
    outputs to require grad.  Under no_grad it would see no differentiable output, return
    nothing, and the check would compare empty Jacobians (always "passing").  Inputs are
    perturbed through their numpy arrays, which no version counter sees.
    """
    inputs = _as_tuple(inputs)
    outs = _outputs(fn, inputs)
    jac = []
    for x in inputs:
        row = []
        if not isinstance(x, Tensor) or not x.requires_grad:
            jac.append(None)
            continue
        data = x.detach().numpy()
        cols = [np.zeros((o.numel(), x.numel()), dtype=np.float64) for o in outs]
        for j in range(x.numel()):
            idx = np.unravel_index(j, x.shape) if x.dim() else ()
            orig = data[idx].item() if x.dim() else data.item()
            data[idx] = orig + eps
            plus = _values(fn, inputs, len(outs))
            data[idx] = orig - eps
            minus = _values(fn, inputs, len(outs))
            data[idx] = orig
            for k in range(len(outs)):
                cols[k][:, j] = ((plus[k] - minus[k]) / (2 * eps)).reshape(-1)
        row.extend(cols)
        jac.append(row)
    return jac


def _values(fn, inputs, n_outputs):
    outs = _outputs(fn, inputs)
    if len(outs) != n_outputs:
        raise GradcheckError(
            f"the function returned {len(outs)} tensors for perturbed inputs but {n_outputs} "
            "at the original inputs"
        )
    return [o.detach().numpy().astype(np.float64) for o in outs]


def get_analytical_jacobian(fn, inputs):
    """``J[i][o]`` from the backward pass: one vector-Jacobian product per output element."""
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(fn, inputs)
    jac = {id(x): [np.zeros((o.numel(), x.numel())) for o in outs] for x in diff}
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            v = np.zeros(o.numel(), dtype=o.detach().numpy().dtype)
            v[r] = 1
            gs = _grad(
                o, diff, gt.from_numpy(v.reshape(o.shape)), retain_graph=True, allow_unused=True
            )
            for x, g in zip(diff, gs):
                if g is not None:
                    jac[id(x)][k][r, :] = g.detach().numpy().reshape(-1)
    return [jac.get(id(x)) if isinstance(x, Tensor) and x.requires_grad else None for x in inputs]


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_batched_forward_grad=False,
    check_forward_ad=False,
    check_backward_ad=True,
    fast_mode=False,
    masked=None,
):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Parameters
    ----------
    func : callable
        Takes the inputs, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple
        Tensors with ``requires_grad=True`` are checked (use float64).
    eps, atol, rtol : float
        Finite-difference step and comparison tolerances.
    raise_exception : bool
        Raise :class:`GradcheckError` on a mismatch (else return False).
    fast_mode : bool
        Compare ``u^T J v`` for random ``u``, ``v`` instead of whole Jacobians.
    check_forward_ad : bool
        Also check forward-mode AD (needs gradstack_autograd.forward_ad).

    Returns
    -------
    bool
        True when every Jacobian matches.
    """
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )
    for i, x in enumerate(diff):
        if x.dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point.",
                stacklevel=2,
            )
    if check_backward_ad:
        numerical = get_numerical_jacobian(func, inputs, eps)
        analytical = get_analytical_jacobian(func, inputs)
        rng = np.random.default_rng(0)
        for i, (num, ana) in enumerate(zip(numerical, analytical)):
            if num is None:
                continue
            for o, (n, a) in enumerate(zip(num, ana)):
                if fast_mode:
                    u = rng.standard_normal(n.shape[0])
                    v = rng.standard_normal(n.shape[1])
                    n_cmp, a_cmp = np.array([u @ n @ v]), np.array([u @ a @ v])
                else:
                    n_cmp, a_cmp = n, a
                if not np.allclose(a_cmp, n_cmp, rtol=rtol, atol=atol):
                    return _fail(
                        f"Jacobian mismatch for output {o} with respect to input {i},\n"
                        f"numerical:{n_cmp}\nanalytical:{a_cmp}\n",
                        raise_exception,
                    )
        if check_undefined_grad and not _check_undefined_grad(func, inputs, raise_exception):
            return False
    if check_forward_ad:
        from . import forward_ad

        ok = forward_ad._gradcheck_forward(func, inputs, eps=eps, atol=atol, rtol=rtol)
        if not ok:
            return _fail("Jacobian computed with forward mode mismatch", raise_exception)
    return True


def _check_undefined_grad(func, inputs, raise_exception):
    """Backward with zero output gradients must give zeros (or None), not garbage."""
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if not outs:
        return True
    grads = _grad(outs, diff, [gt.zeros_like(o) for o in outs], allow_unused=True)
    for g in grads:
        if g is not None and not bool((g == 0).all()):
            return _fail(
                "Backward is not reentrant/linear: zero output gradients gave a "
                "nonzero input gradient",
                raise_exception,
            )
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_fwd_over_rev=False,
    check_rev_over_rev=True,
    fast_mode=False,
    masked=False,
):
    """Check second derivatives: gradcheck of the function ``(inputs, v) -> v^T J``.

    ``grad_outputs`` defaults to random float64 tensors (requiring grad) shaped like the
    outputs.
    """
    inputs = _as_tuple(inputs)
    # one vector per differentiable output (integer outputs such as indices get none)
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        grad_outputs = tuple(
            gt.from_numpy(
                rng.standard_normal(o.shape).astype(o.detach().numpy().dtype)
            ).requires_grad_(True)
            for o in outs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        out = [o for o in _outputs(func, ins) if o.requires_grad]
        pairs = list(zip(out, gos))
        gs = _grad(
            [p[0] for p in pairs],
            [ins[i] for i in diff_idx],
            [p[1] for p in pairs],
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_derivative,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        check_undefined_grad=False,
        fast_mode=fast_mode,
    )
