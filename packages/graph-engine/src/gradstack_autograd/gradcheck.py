"""Numerical gradient checking: ``gradcheck`` and ``gradgradcheck``, with torch's options.

Both compare analytical derivatives (backward and, on request, forward mode) with central
finite differences, in the inputs' own dtype: use float64 inputs (the default tolerances
assume it).  Every option of torch's signature does what torch documents:

- ``check_backward_ad`` / ``check_forward_ad``: which analytical Jacobians are compared
  (reverse mode from ``grad``, forward mode from ``forward_ad`` dual tensors);
- ``fast_mode``: compares the scalars ``v^T J u`` for random unit vectors ``u`` (one per
  input) and ``v`` (one per output) instead of whole Jacobians: one directional finite
  difference per input and one vector-Jacobian product per output (torch's fast
  gradcheck, pytorch#53876), with ``atol`` scaled by ``sum(u) * sum(v)``;
- ``nondet_tol``: the analytical Jacobian is computed twice and must agree to this
  tolerance (0: bit for bit) - the "reentrant" check;
- ``check_grad_dtypes``: each gradient has its input's dtype;
- ``check_undefined_grad``: backward works when output gradients are missing (treated as
  zeros) and then gives zero input gradients;
- ``check_batched_grad``: a batched backward (``grad(..., is_grads_batched=True)``) gives
  the vector-Jacobian products one at a time would;
- ``check_batched_forward_grad``: a batch of tangents (``make_batched_dual``) gives the
  Jacobian-vector products one at a time would;
- ``masked``: concerns sparse tensors only; gradstack has none, so dense inputs are
  checked whole either way, as torch checks dense inputs.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_autograd import gradcheck
>>> x = gt.randn(3, dtype=gt.float64, requires_grad=True)
>>> gradcheck(lambda t: (t.sin() * t).sum(), (x,))
True
>>> gradcheck(lambda t: t.exp(), (x,), check_forward_ad=True, fast_mode=True)
True
"""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

from . import forward_ad as fwAD
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


_FAILED_BATCHED_GRAD_MSG = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: a "
    "backward formula is wrong (or unsupported) when the incoming gradients carry a batch "
    "dimension (Note [Batched formulas] in derivatives._formulas). Pass check_batched_grad=False "
    "to skip this check."
)
_FAILED_BATCHED_FWD_MSG = (
    "gradcheck failed while testing batched forward-mode gradients: a forward formula is "
    "wrong (or unsupported) for a batch of tangents (Note [Batched tangents] in "
    "forward_ad.py). Pass check_batched_forward_grad=False to skip this check."
)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    out = fn(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _allclose(a, n, rtol, atol):
    return bool(np.allclose(a, n, rtol=rtol, atol=atol))


# -------------------------------------------------------------------------------------
# Jacobians


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
    jac: list[list[np.ndarray] | None] = []
    for x in inputs:
        if not isinstance(x, Tensor) or not x.requires_grad:
            jac.append(None)
            continue
        cols = [np.zeros((o.numel(), x.numel()), dtype=np.float64) for o in outs]
        for j in range(x.numel()):
            direction = np.zeros(x.numel())
            direction[j] = 1.0
            for k, d in enumerate(_directional(fn, inputs, x, direction, eps, len(outs))):
                cols[k][:, j] = d
        jac.append(cols)
    return jac


def _directional(fn, inputs, x, direction, eps, n_outputs):
    """``(f(x + eps d) - f(x - eps d)) / (2 eps)`` for each output, flattened."""
    data = x.detach().numpy()
    orig = data.copy()
    step = (eps * direction).reshape(data.shape).astype(data.dtype)
    try:
        data[...] = orig + step
        plus = _values(fn, inputs, n_outputs)
        data[...] = orig - step
        minus = _values(fn, inputs, n_outputs)
    finally:
        data[...] = orig
    return [((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)]


def _values(fn, inputs, n_outputs):
    outs = _outputs(fn, inputs)
    if len(outs) != n_outputs:
        raise GradcheckError(
            f"the function returned {len(outs)} tensors for perturbed inputs but {n_outputs} "
            "at the original inputs"
        )
    return [o.detach().numpy().astype(np.float64) for o in outs]


def _vjp_rows(output, diff, v):
    """Input gradients of ``v . output``: one per differentiable input (None if unused)."""
    return _grad(output, diff, v, retain_graph=True, allow_unused=True)


def _analytical_rows(output, diff, basis_rows, check_grad_dtypes):
    """Vector-Jacobian products of ``output`` with each row of ``basis_rows`` (arrays of
    the output's numel), stacked per input as ``(rows, numel_input)``; checks sizes and,
    with ``check_grad_dtypes``, dtypes (torch's _stack_and_check_tensors)."""
    shape, dtype = tuple(output.shape), output.detach().numpy().dtype
    jac = [np.zeros((len(basis_rows), x.numel())) for x in diff]
    for r, row in enumerate(basis_rows):
        v = gt.from_numpy(np.array(row.reshape(shape), dtype=dtype, order="C"))
        for k, (x, g) in enumerate(zip(diff, _vjp_rows(output, diff, v))):
            if g is None:
                continue
            if tuple(g.shape) != tuple(x.shape):
                raise GradcheckError("Analytical gradient has incorrect size")
            if check_grad_dtypes and g.dtype is not x.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            jac[k][r, :] = g.detach().numpy().reshape(-1)
    return jac


def _analytical_checked(output, diff, basis_rows, nondet_tol, check_grad_dtypes):
    """:func:`_analytical_rows`, computed twice: the reentrant check with ``nondet_tol``."""
    first = _analytical_rows(output, diff, basis_rows, check_grad_dtypes)
    second = _analytical_rows(output, diff, basis_rows, check_grad_dtypes)
    for a, b in zip(first, second):
        if a.size and np.max(np.abs(a - b)) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}."
            )
    return first


def get_analytical_jacobian(fn, inputs):
    """``J[i][o]`` from the backward pass: one vector-Jacobian product per output element."""
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    outs = _outputs(fn, inputs)
    jac = {id(x): [np.zeros((o.numel(), x.numel())) for o in outs] for x in diff}
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        rows = _analytical_rows(o, diff, list(np.eye(o.numel())), False)
        for x, j in zip(diff, rows):
            jac[id(x)][k] = j
    return [jac.get(id(x)) if isinstance(x, Tensor) and x.requires_grad else None for x in inputs]


def _jvp(fn, inputs, index, tangent):
    """The tangents of ``fn``'s outputs for ``tangent`` on input ``index`` (forward mode);
    zeros for outputs forward mode leaves without one."""
    with fwAD.dual_level():
        args = tuple(
            fwAD.make_dual(x.detach(), tangent)
            if i == index
            else (x.detach() if isinstance(x, Tensor) else x)
            for i, x in enumerate(inputs)
        )
        out = []
        for o in _as_tuple(fn(*args)):
            if not isinstance(o, Tensor):
                continue
            primal, t = fwAD.unpack_dual(o)
            out.append(gt.zeros_like(primal) if t is None else t)
        return out


def _forward_columns(fn, inputs, index, directions, outputs, keep, check_grad_dtypes):
    """``J u`` for each direction ``u`` (arrays of input ``index``'s numel), for each
    output ``outputs[k]`` with ``k`` in ``keep`` (the differentiable ones)."""
    x = inputs[index]
    cols = [np.zeros((outputs[k].numel(), len(directions))) for k in keep]
    for c, u in enumerate(directions):
        t = gt.from_numpy(
            np.array(u.reshape(tuple(x.shape)), dtype=x.detach().numpy().dtype, order="C")
        )
        tangents = _jvp(fn, inputs, index, t)
        for pos, k in enumerate(keep):
            tg = tangents[k]
            if check_grad_dtypes and tg.dtype is not outputs[k].dtype:
                raise GradcheckError("Forward AD gradient has dtype mismatch")
            cols[pos][:, c] = tg.detach().numpy().reshape(-1)
    return cols


def _mismatch(a, n, out_idx, in_idx, forward, fast):
    mode = " computed with forward mode" if forward else ""
    msg = (
        f"Jacobian{mode} mismatch for output {out_idx} with respect to input {in_idx},\n"
        f"numerical:{n}\nanalytical:{a}\n"
    )
    if fast:
        msg += (
            "\nThe above quantities relating the numerical and analytical jacobians are "
            "computed in fast mode (v^T J u for random unit vectors u, v). Run with "
            "fast_mode=False to compare the whole Jacobians."
        )
    return GradcheckError(msg)


# -------------------------------------------------------------------------------------
# slow and fast comparisons


def _slow_check(func, inputs, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, forward):
    numerical = get_numerical_jacobian(func, inputs, eps)  # [input][output]
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    all_out = _outputs(func, inputs)
    keep = [k for k, o in enumerate(all_out) if o.requires_grad]
    if forward:
        for pos, i in enumerate(diff_idx):
            directions = list(np.eye(inputs[i].numel()))
            cols = _forward_columns(func, inputs, i, directions, all_out, keep, check_grad_dtypes)
            for o, k in enumerate(keep):
                a, n = cols[o], numerical[i][k]
                if not _allclose(a, n, rtol, atol):
                    raise _mismatch(a, n, o, pos, True, False)
        return
    diff = [inputs[i] for i in diff_idx]
    for o, k in enumerate(keep):
        out = outputs[o]
        rows = _analytical_checked(
            out, diff, list(np.eye(out.numel())), nondet_tol, check_grad_dtypes
        )
        for pos, i in enumerate(diff_idx):
            a, n = rows[pos], numerical[i][k]
            if not _allclose(a, n, rtol, atol):
                raise _mismatch(a, n, o, pos, False, False)


def _unit_random(rng, n):
    """A random vector of ``n`` entries in [0, 1), scaled to unit norm (torch's fast mode)."""
    u = rng.random(n)
    norm = np.linalg.norm(u)
    return u / norm if norm else u


def _fast_check(func, inputs, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, forward):
    """torch's fast gradcheck: ``v^T J u`` (backward) or ``J u`` (forward), never whole
    Jacobians; ``atol`` scaled by ``sum(u) sum(v)`` (torch's _adjusted_atol)."""
    rng = np.random.default_rng(0)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    all_out = _outputs(func, inputs)
    keep = [k for k, o in enumerate(all_out) if o.requires_grad]
    all_u = [_unit_random(rng, inputs[i].numel()) for i in diff_idx]
    all_v = None if forward else [_unit_random(rng, o.numel()) for o in outputs]
    diff = [inputs[j] for j in diff_idx]
    # v^T J for each output: one vector-Jacobian product (twice: the reentrant check)
    vjps = (
        None
        if forward
        else [
            _analytical_checked(o, diff, [v], nondet_tol, check_grad_dtypes)
            for o, v in zip(outputs, all_v or ())
        ]
    )
    for pos, (i, u) in enumerate(zip(diff_idx, all_u)):
        ju = _directional(func, inputs, inputs[i], u, eps, len(all_out))
        if forward:
            cols = _forward_columns(func, inputs, i, [u], all_out, keep, check_grad_dtypes)
            for o, k in enumerate(keep):
                a, n = cols[o][:, 0], ju[k]
                if not _allclose(a, n, rtol, atol * float(u.sum())):
                    raise _mismatch(a, n, o, pos, True, True)
            continue
        assert all_v is not None and vjps is not None  # (made when not forward)
        for o, k in enumerate(keep):
            n = np.array([all_v[o] @ ju[k]])
            a = np.array([vjps[o][pos][0] @ u])
            if not _allclose(a, n, rtol, atol * float(u.sum()) * float(all_v[o].sum())):
                raise _mismatch(a, n, o, pos, False, True)


def _check_no_differentiable_outputs(func, inputs, eps):
    """No output requires grad: the numerical Jacobian must then be zero (torch)."""
    for per_input in get_numerical_jacobian(func, inputs, eps):
        for j in per_input or ():
            if j.size and np.any(j != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# -------------------------------------------------------------------------------------
# the checks beyond the Jacobians


def _check_backward_mul_by_grad_output(outputs, diff):
    """Backward with zero output gradients gives zero input gradients of the right shape."""
    grads = _grad(list(outputs), diff, [gt.zeros_like(o) for o in outputs], allow_unused=True)
    for x, g in zip(diff, grads):
        if g is None:
            continue
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("grad is incorrect size")
        if not bool((g == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")


def _check_undefined_grad(func, inputs):
    """Backward works with missing output gradients (taken as zeros) and gives zeros.

    torch feeds undefined gradients through ``UndefinedGrad`` nodes; here each output in
    turn gets no gradient at all (it is left out of ``grad``'s outputs), the others zeros.
    """
    diff = _diff_inputs(inputs)
    n_outs = sum(1 for o in _outputs(func, inputs) if o.requires_grad)
    # None: every output gets zeros; k: output k gets no gradient at all
    for missing in [None] + (list(range(n_outs)) if n_outs > 1 else []):
        outs = [o for o in _outputs(func, inputs) if o.requires_grad]  # a fresh graph each time
        given = [o for k, o in enumerate(outs) if k != missing]
        try:
            grads = _grad(given, diff, [gt.zeros_like(o) for o in given], allow_unused=True)
        except (RuntimeError, TypeError) as e:  # TypeError: a backward that did ``None * x``
            raise GradcheckError(
                "Expected backward function to handle undefined output grads (a missing "
                f"output gradient counts as zeros): {e}"
            ) from e
        for g in grads:
            if g is not None and not bool((g == 0).all()):
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    "are undefined or zero."
                )


def _batched_mismatch(out_idx, in_idx, res, exp, forward):
    what = "forward-mode " if forward else ""
    msg = _FAILED_BATCHED_FWD_MSG if forward else _FAILED_BATCHED_GRAD_MSG
    return GradcheckError(
        f"For output {out_idx} and input {in_idx}:\n\n{msg}\n\nGot (batched {what}"
        f"gradients):\n{res}\n\nExpected:\n{exp}"
    )


def _check_batched_grad(inputs, output, out_idx):
    """A batched backward of two random output gradients equals two single ones."""
    diff = _diff_inputs(inputs)
    rng = np.random.default_rng(1)
    dtype = output.detach().numpy().dtype
    vs = [rng.standard_normal(tuple(output.shape)).astype(dtype) for _ in range(2)]

    def dense(gs):
        return [
            np.zeros(tuple(x.shape)) if g is None else g.detach().numpy().astype(np.float64)
            for x, g in zip(diff, gs)
        ]

    expected = [dense(_vjp_rows(output, diff, gt.from_numpy(v))) for v in vs]
    try:
        batched = _grad(
            output,
            diff,
            gt.from_numpy(np.stack(vs)),
            retain_graph=True,
            allow_unused=True,
            is_grads_batched=True,
        )
    except RuntimeError as e:
        raise GradcheckError(
            f"While computing batched gradients, got: {e}\n\n{_FAILED_BATCHED_GRAD_MSG}"
        ) from e
    for k, (x, g) in enumerate(zip(diff, batched)):
        res = np.zeros((2,) + tuple(x.shape)) if g is None else g.detach().numpy()
        exp = np.stack([e[k] for e in expected])
        if res.shape != exp.shape or not np.allclose(res, exp):
            raise _batched_mismatch(out_idx, k, res, exp, False)


def _check_batched_forward_grad(func, inputs):
    """A batch of two random tangents per input equals two single forward passes."""
    rng = np.random.default_rng(2)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad and x.is_floating_point()):
            continue
        dtype = x.detach().numpy().dtype
        ts = [rng.standard_normal(tuple(x.shape)).astype(dtype) for _ in range(2)]
        expected = [
            [t.detach().numpy() for t in _jvp(func, inputs, i, gt.from_numpy(v))] for v in ts
        ]
        try:
            with fwAD.dual_level():
                args = tuple(
                    fwAD.make_batched_dual(a.detach(), gt.from_numpy(np.stack(ts)))
                    if j == i
                    else (a.detach() if isinstance(a, Tensor) else a)
                    for j, a in enumerate(inputs)
                )
                result = []
                for o in _as_tuple(func(*args)):
                    if not isinstance(o, Tensor):
                        continue
                    primal, t = fwAD.unpack_dual(o)
                    result.append(
                        np.zeros((2,) + tuple(primal.shape)) if t is None else t.detach().numpy()
                    )
        except RuntimeError as e:
            raise GradcheckError(
                f"While computing batched gradients, got: {e}\n\n{_FAILED_BATCHED_FWD_MSG}"
            ) from e
        for k, res in enumerate(result):
            exp = np.stack([e[k] for e in expected])
            if res.shape != exp.shape or not np.allclose(res, exp):
                raise _batched_mismatch(k, i, res, exp, True)


# -------------------------------------------------------------------------------------
# public entry points


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
        Finite-difference step and comparison tolerances (``|a - n| <= atol + rtol |n|``).
    raise_exception : bool
        Raise :class:`GradcheckError` on a mismatch (else return False).
    nondet_tol : float
        How far two runs of the same backward may differ (0: identical).
    check_undefined_grad, check_grad_dtypes, check_batched_grad, check_batched_forward_grad
        The extra checks of the module docstring.
    check_forward_ad, check_backward_ad : bool
        Compare the forward-mode / reverse-mode Jacobian (at least one of them).
    fast_mode : bool
        Compare ``v^T J u`` for random unit ``u``, ``v`` instead of whole Jacobians.
    masked : bool or None
        For sparse inputs in torch; gradstack's tensors are dense (nothing to mask).

    Returns
    -------
    bool
        True when every check passes.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    func, inputs = _realified(func, _as_tuple(inputs))
    try:
        _gradcheck(
            func,
            inputs,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad,
            check_grad_dtypes=check_grad_dtypes,
            check_batched_grad=check_batched_grad,
            check_batched_forward_grad=check_batched_forward_grad,
            check_forward_ad=check_forward_ad,
            check_backward_ad=check_backward_ad,
            fast_mode=fast_mode,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _realified(func, inputs):
    """``func`` and ``inputs`` with every complex tensor seen as its real pairs.

    Note [A complex gradcheck checks the real function]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    torch's gradcheck of a complex function compares, for the real and the imaginary part
    of each complex input and output, the analytical and the numerical derivatives, with
    the gradient convention of Note [The conjugate Wirtinger gradient]
    (derivatives/_wirtinger.py).  The same comparison is the real gradcheck of the real
    function ``view_as_real(func(view_as_complex(x)))``: a complex input becomes a float
    tensor of its (real, imaginary) pairs, a complex output its pairs, and the backward
    through ``view_as_complex``/``view_as_real`` (torch's formulas: one is the other) hands
    the complex formulas their gradients as torch's engine does.  A function without complex
    inputs or outputs is checked as it is.
    """
    complex_at = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.is_complex()}
    if not complex_at and not any(o.is_complex() for o in _outputs(func, inputs)):
        return func, inputs
    real_inputs = tuple(
        gt.view_as_real(x.detach().resolve_conj()).clone().requires_grad_(x.requires_grad)
        if i in complex_at
        else x
        for i, x in enumerate(inputs)
    )

    def real_func(*args):
        args = tuple(gt.view_as_complex(a) if i in complex_at else a for i, a in enumerate(args))
        outs = func(*args)
        # (a lazy conj output resolved first, as torch's gradcheck does)
        if isinstance(outs, Tensor):
            return gt.view_as_real(outs.resolve_conj()) if outs.is_complex() else outs
        return tuple(
            gt.view_as_real(o.resolve_conj()) if isinstance(o, Tensor) and o.is_complex() else o
            for o in outs
        )

    return real_func, real_inputs


def _gradcheck(
    func,
    inputs,
    *,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_undefined_grad,
    check_grad_dtypes,
    check_batched_grad,
    check_batched_forward_grad,
    check_forward_ad,
    check_backward_ad,
    fast_mode,
):
    diff = _diff_inputs(inputs)
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
                stacklevel=3,
            )
    outputs = tuple(o for o in _outputs(func, inputs) if o.requires_grad)
    check = _fast_check if fast_mode else _slow_check
    modes = ([False] if check_backward_ad else []) + ([True] if check_forward_ad else [])
    for forward in modes:
        if not outputs:
            _check_no_differentiable_outputs(func, inputs, eps)
        else:
            check(func, inputs, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, forward)
    if check_batched_forward_grad:
        _check_batched_forward_grad(func, inputs)
    if not check_backward_ad:
        return
    if check_batched_grad:
        for k, o in enumerate(outputs):
            _check_batched_grad(inputs, o, k)
    if outputs:
        _check_backward_mul_by_grad_output(outputs, diff)
        if check_undefined_grad:
            _check_undefined_grad(func, inputs)


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

    ``grad_outputs`` defaults to random tensors in [-1, 1) (requiring grad) shaped like the
    differentiable outputs, non-contiguous with ``gen_non_contig_grad_outputs``.  The
    options go to :func:`gradcheck`, ``check_rev_over_rev`` as its ``check_backward_ad``
    and ``check_fwd_over_rev`` as its ``check_forward_ad`` (forward mode over the backward
    pass).
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _outputs(func, inputs) if o.requires_grad]
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in, n_out = len(inputs), len(grad_outputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    go_diff = [isinstance(g, Tensor) and g.requires_grad for g in grad_outputs]

    def first_derivative(*args):
        # forward mode hands in detached dual tensors: restore requires_grad (as torch)
        ins = tuple(
            x.requires_grad_() if i in diff_idx and not x.requires_grad else x
            for i, x in enumerate(args[:n_in])
        )
        gos = tuple(
            g.requires_grad_() if go_diff[k] and not g.requires_grad else g
            for k, g in enumerate(args[n_in:])
        )
        out = [o for o in _outputs(func, ins) if o.requires_grad]
        gs = _grad(
            out[:n_out],
            [ins[i] for i in diff_idx],
            list(gos[: len(out)]),
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
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
        masked=masked,
    )


def _random_grad_output(like, noncontiguous):
    """A random ``[-1, 1)`` tensor shaped like ``like`` (float64 for non-float outputs),
    requiring grad; with ``noncontiguous``, every other element of one twice as wide.

    Drawn as torch's ``make_tensor(..., low=-1, high=1)`` draws it, from the global
    generator with ``uniform_``: a program that seeds, calls gradgradcheck and then draws
    again gets torch's numbers (the "Extending PyTorch" page's examples do).
    """
    if like.is_complex():  # (real and imaginary parts drawn as a float64 pair each)
        pairs = _random_grad_output(gt.view_as_real(like.detach().resolve_conj()), noncontiguous)
        return gt.view_as_complex(pairs.detach().contiguous()).requires_grad_(True)
    dtype = like.dtype if like.is_floating_point() else gt.float64
    shape = tuple(like.shape)
    noncontiguous = noncontiguous and math.prod(shape) > 1
    drawn = shape[:-1] + (2 * shape[-1],) if noncontiguous else shape
    values = gt.empty(drawn, dtype=dtype).uniform_(-1.0, 1.0)
    if noncontiguous:
        values = values[..., 1::2]
    return values.requires_grad_(True)
