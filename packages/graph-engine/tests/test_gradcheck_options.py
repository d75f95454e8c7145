"""Every option of gradcheck/gradgradcheck does what torch documents.

Each option is shown to catch a deliberately wrong derivative (a custom ``Function`` with a
wrong backward, or a registered op with a wrong forward formula or batching) and to pass
the right one; the options that change how the check runs (``fast_mode``) are also
measured (function and backward calls).
"""

from __future__ import annotations

import itertools

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import (
    Function,
    GradcheckError,
    derivatives,
    gradcheck,
    gradgradcheck,
)

_ids = itertools.count()


def f64(values):
    return gt.tensor(values, dtype=gt.float64, requires_grad=True)


X = [0.3, -1.2, 2.0, 0.7]


def sin_function(scale=1.0, wrong_at=None, noise=0.0, calls=None):
    """A custom Function for sin whose backward is off by ``scale`` (or by 0.5 at one
    element, or noisy), counting its backward calls in ``calls``."""
    rng = np.random.default_rng(0)

    class Sin(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            if calls is not None:
                calls["backward"] += 1
            (x,) = ctx.saved_tensors
            r = g * x.cos() * scale
            if wrong_at is not None:
                bump = np.zeros(tuple(x.shape))
                bump[wrong_at] = 0.5
                r = r + g * gt.from_numpy(bump)
            if noise:  # noise proportional to g: zero output gradients still give zeros
                r = r + g * gt.from_numpy(rng.standard_normal(tuple(x.shape)) * noise)
            return r

    return Sin


@pytest.fixture
def sin_op():
    """``make(backward, jvp)``: a registered op computing sin with the given formulas
    (``backward(ctx, grad, x)``, ``jvp(t, x)``); removed from the registry afterwards."""
    made = []

    def make(backward=None, jvp=None):
        name = f"_gradcheck_test_sin_{next(_ids)}"
        op = gt.register_op(name, lambda x: gt.from_numpy(np.sin(x.detach().numpy())))
        made.append(name)

        def formula(ctx, grad):
            x = ctx.saved_value("self")
            return ((backward or (lambda c, g, x: g * x.cos()))(ctx, grad, x),)

        derivatives.register(name, "TestSinBackward", save="self")(formula)

        def tangent(args, out, tangents, lead):
            return (jvp or (lambda t, x: t * x.cos()))(tangents[0], args[0])

        derivatives.jvp(name)(tangent)
        return lambda x: gt.dispatch(op, (x,))

    yield make
    for name in made:
        del gt.OPS[name]


# -------------------------------------------------------------------------------------
# the Jacobian comparisons


@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_backward_is_caught_and_right_one_passes(fast_mode):
    assert gradcheck(sin_function().apply, (f64(X),), fast_mode=fast_mode)
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        gradcheck(sin_function(scale=1.1).apply, (f64(X),), fast_mode=fast_mode)
    # one wrong entry of the Jacobian is enough, even through random projections
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(sin_function(wrong_at=2).apply, (f64(X),), fast_mode=fast_mode)
    assert (
        gradcheck(
            sin_function(scale=1.1).apply, (f64(X),), fast_mode=fast_mode, raise_exception=False
        )
        is False
    )


def test_fast_mode_never_builds_whole_jacobians():
    """Slow mode: 2 evaluations per input element and 2 backward passes (the reentrant
    check) per output element; fast mode: a handful, whatever the size."""
    n = 60
    counts = {}
    for fast in (False, True):
        calls = {"func": 0, "backward": 0}
        fn = sin_function(calls=calls)

        def func(x, fn=fn, calls=calls):
            calls["func"] += 1
            return fn.apply(x)

        assert gradcheck(
            func, (f64(np.linspace(-2, 2, n)),), fast_mode=fast, check_undefined_grad=False
        )
        counts[fast] = calls
    assert counts[False]["func"] >= 2 * n and counts[False]["backward"] >= 2 * n
    assert counts[True]["func"] <= 6 and counts[True]["backward"] <= 4, counts[True]
    assert "fast mode" in _message(
        lambda: gradcheck(sin_function(1.1).apply, (f64(X),), fast_mode=True)
    )


def _message(call):
    with pytest.raises(GradcheckError) as e:
        call()
    return str(e.value)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_check_forward_ad_catches_a_wrong_jvp(sin_op, fast_mode):
    right = sin_op()
    wrong_jvp = sin_op(jvp=lambda t, x: t * x.cos() * 1.1)
    x = f64(X)
    assert gradcheck(right, (x,), check_forward_ad=True, fast_mode=fast_mode)
    assert gradcheck(wrong_jvp, (x,), fast_mode=fast_mode)  # backward alone is right
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch"):
        gradcheck(wrong_jvp, (x,), check_forward_ad=True, fast_mode=fast_mode)


def test_check_backward_ad_false_skips_the_backward_checks(sin_op):
    wrong_backward = sin_op(backward=lambda c, g, x: g * x.cos() * 1.1)
    x = f64(X)
    assert gradcheck(wrong_backward, (x,), check_backward_ad=False, check_forward_ad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(wrong_backward, (x,), check_forward_ad=True)
    with pytest.raises(
        AssertionError, match="at least one of check_forward_ad or check_backward_ad"
    ):
        gradcheck(wrong_backward, (x,), check_backward_ad=False)


# -------------------------------------------------------------------------------------
# the other checks


def test_nondet_tol_bounds_the_difference_between_two_backward_runs():
    noisy = sin_function(noise=1e-9).apply
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(noisy, (f64(X),))
    assert gradcheck(noisy, (f64(X),), nondet_tol=1e-6)
    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(noisy, (f64(X),), fast_mode=True)


def test_check_grad_dtypes_catches_a_gradient_of_another_dtype(monkeypatch):
    # the engine casts every gradient to its input's dtype and a hook may not change it
    # (torch's "hook ... has changed the type of value"), so only a broken backward could
    # hand gradcheck another dtype: simulate one
    import sys

    gc_mod = sys.modules["gradstack_autograd.gradcheck"]

    x = f64(X)
    x.register_hook(lambda g: g.float())
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        gradcheck(lambda t: t.sin(), (x,))
    real = gc_mod._vjp_rows
    monkeypatch.setattr(
        gc_mod,
        "_vjp_rows",
        lambda *a: [None if g is None else g.float() for g in real(*a)],
    )
    assert gradcheck(lambda t: t.sin(), (f64(X),), atol=1e-4, rtol=1e-3)
    with pytest.raises(GradcheckError, match="dtype mismatch"):
        gradcheck(lambda t: t.sin(), (f64(X),), check_grad_dtypes=True, atol=1e-4, rtol=1e-3)
    monkeypatch.setattr(gc_mod, "_vjp_rows", real)
    assert gradcheck(lambda t: t.sin(), (f64(X),), check_grad_dtypes=True)


def two_outputs(buggy):
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)  # missing output gradients arrive as None
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            if buggy and gb is None and not bool((ga != 0).any()):
                return gt.ones_like(x)  # a wrong value only for a zero ga and a missing gb
            ga = ga if ga is not None else gt.zeros_like(x)
            gb = gb if gb is not None else gt.zeros_like(x)
            return ga * x.cos() - gb * x.sin()

    return SinCos


def test_check_undefined_grad_catches_a_backward_that_mishandles_a_missing_gradient():
    assert gradcheck(two_outputs(False).apply, (f64(X),))
    buggy = two_outputs(True).apply
    assert gradcheck(buggy, (f64(X),), check_undefined_grad=False)
    with pytest.raises(GradcheckError, match="undefined or zero"):
        gradcheck(buggy, (f64(X),))


def test_backward_must_scale_with_the_output_gradient():
    class Offset(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if not bool((g != 0).any()):
                return gt.full(tuple(g.shape), 1e-3, dtype=g.dtype)  # nonzero for a zero g
            return g * 2

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(Offset.apply, (f64(X),), check_undefined_grad=False)


def test_check_batched_grad_catches_a_formula_that_mixes_up_the_batch(sin_op):
    def batch_flipping(ctx, g, x):
        r = g * x.cos()
        return r.flip(0) if g.dim() > x.dim() else r  # wrong only for a batch of gradients

    wrong = sin_op(backward=batch_flipping)
    right = sin_op()
    x = f64(X)
    assert gradcheck(wrong, (x,))
    assert gradcheck(right, (x,), check_batched_grad=True)
    with pytest.raises(GradcheckError, match="batched gradient"):
        gradcheck(wrong, (x,), check_batched_grad=True)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(
            right, (x,), check_batched_grad=True, check_backward_ad=False, check_forward_ad=True
        )


def test_check_batched_forward_grad_catches_a_jvp_that_mixes_up_the_batch(sin_op):
    def batch_flipping(t, x):
        r = t * x.cos()
        return r.flip(0) if t.dim() > x.dim() else r

    wrong = sin_op(jvp=batch_flipping)
    right = sin_op()
    x = f64(X)
    assert gradcheck(wrong, (x,), check_forward_ad=True)
    assert gradcheck(right, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    with pytest.raises(GradcheckError, match="batched forward-mode"):
        gradcheck(wrong, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="requires check_forward_ad"):
        gradcheck(right, (x,), check_batched_forward_grad=True)


def test_masked_concerns_sparse_inputs_only():
    """gradstack's tensors are dense: masked=True checks them whole, as torch does."""
    assert gradcheck(lambda t: t.sin(), (f64(X),), masked=True)
    with pytest.raises(GradcheckError):
        gradcheck(sin_function(1.1).apply, (f64(X),), masked=True)


def test_no_differentiable_output_needs_a_zero_numerical_jacobian():
    assert gradcheck(lambda t: (t > 0).double(), (f64(X),))  # piecewise constant: zero
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (f64(X),))


# -------------------------------------------------------------------------------------
# gradgradcheck


def test_gradgradcheck_check_fwd_over_rev(sin_op):
    """A first derivative that is right reverse-over-reverse but wrong forward-over-reverse:
    its backward formula calls an op whose jvp is wrong."""
    cos_wrong_jvp = sin_op(jvp=lambda t, x: t * x.cos() * 1.1)  # used only inside the formula
    op = sin_op(backward=lambda c, g, x: g * cos_wrong_jvp(x + np.pi / 2))
    x = f64(X)
    assert gradgradcheck(op, (x,))
    with pytest.raises(GradcheckError, match="forward mode mismatch"):
        gradgradcheck(op, (x,), check_fwd_over_rev=True)
    assert gradgradcheck(sin_op(), (x,), check_fwd_over_rev=True)
    assert gradgradcheck(
        sin_op(),
        (x,),
        check_fwd_over_rev=True,
        check_rev_over_rev=False,
        check_undefined_grad=False,
    )
    with pytest.raises(AssertionError, match="at least one of check_fwd_over_rev"):
        gradgradcheck(op, (x,), check_rev_over_rev=False)


def test_gradgradcheck_non_contiguous_grad_outputs():
    seen = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            seen.append(g.is_contiguous())
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = f64([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    assert gradgradcheck(Square.apply, (x,), gen_non_contig_grad_outputs=True)
    assert False in seen
    seen.clear()
    assert gradgradcheck(Square.apply, (x,))
    assert all(seen)


def test_gradgradcheck_passes_its_options_on(sin_op):
    def batch_flipping(ctx, g, x):
        r = g * x.cos()
        return r.flip(0) if g.dim() > x.dim() else r

    x = f64(X)
    assert gradgradcheck(sin_op(), (x,), check_batched_grad=True, fast_mode=True, nondet_tol=1e-12)
    # the first derivative of ``t -> flip-wrong-sin(t) * t`` runs the flipping formula
    wrong = sin_op(backward=batch_flipping)
    with pytest.raises(GradcheckError, match="batched gradient"):
        gradgradcheck(lambda t: wrong(t) * t, (x,), check_batched_grad=True)
    assert (
        gradgradcheck(lambda t: wrong(t) * t, (x,), raise_exception=False, check_batched_grad=True)
        is False
    )
