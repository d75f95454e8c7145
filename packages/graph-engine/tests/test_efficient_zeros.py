"""Note [Efficient zeros]: ``sgn``'s gradient (and so the second derivatives of ``abs`` and
the norms, whose formulas multiply by ``self.sgn()``) is torch's efficient zero, which stays
zero through later formulas that multiply it by inf or NaN.  Each case runs in gradstack and
in torch and compares the numbers."""

from __future__ import annotations

import math

import gradstack_autograd
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _node

torch = pytest.importorskip("torch")

INF = math.inf


def _grad(lib):
    return gradstack_autograd.grad if lib is gt else torch.autograd.grad


def _values(out):
    return [None if v is None else np.asarray(_real(v).tolist()).tolist() for v in out]


def _real(v):
    # torch returns its ZeroTensor itself, whose tolist() raises: clone() materializes it
    return v.clone() if getattr(v, "_is_zerotensor", lambda: False)() else v


def _both(program):
    ours, theirs = program(gt), program(torch)
    assert _values(ours) == _values(theirs), (ours, theirs)
    return _values(ours)


def test_sgn_values_and_dtypes_are_signs():
    for values, dtype in (
        ([-2.0, -0.0, 0.0, 3.0, math.nan], "float32"),
        ([-2, 0, 3], "int64"),
        ([0, 1, 7], "uint8"),
        ([True, False], "bool"),
    ):
        ours = gt.tensor(values, dtype=getattr(gt, dtype)).sgn()
        theirs = torch.tensor(values, dtype=getattr(torch, dtype)).sgn()
        assert ours.tolist() == theirs.tolist()
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    t = gt.tensor([-2.0, 5.0])
    assert t.sgn_() is t and t.tolist() == [-1.0, 1.0]
    assert gt.sgn(gt.tensor([-0.5])).tolist() == [-1.0]


def test_sgn_backward_is_named_and_gives_zeros():
    x = gt.tensor([1.0, -2.0], requires_grad=True)
    y = x.sgn()
    assert y.grad_fn.name() == "SgnBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    x.grad.add_(1.0)  # (torch's ZeroTensor .grad refuses this; ours is real zeros)
    assert x.grad.tolist() == [1.0, 1.0]


def test_a_zero_from_sgn_stays_zero_times_inf():
    def program(lib):
        x = lib.tensor([-INF, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
        return _grad(lib)((x * w).sgn().sum(), [x, w])

    assert _both(program) == [[0.0, 0.0], [0.0, 0.0]]


def test_sign_gives_real_zeros_that_inf_turns_into_nan():
    # torch's sign has zeros_like(grad), not an efficient zero: the difference is kept
    def program(lib):
        x = lib.tensor([-INF, 2.0], dtype=lib.float64)
        w = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
        return _grad(lib)((x * w).sign().sum(), [w])

    (g,) = program(gt)
    (expected,) = program(torch)
    assert math.isnan(g[0].item()) and math.isnan(expected[0].item())
    assert g[1].item() == expected[1].item() == 0.0


def test_second_order_of_norm_minus_inf_at_inf_is_zero_not_nan():
    # fuzz seed 20 #6970, shrunk
    def program(lib):
        x2 = lib.tensor([-1.0], dtype=lib.float64).log1p_()  # -inf
        x4 = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        x7 = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        v = lib.norm(x2.outer(x7), p=-INF)
        loss = v * 0.5 + x4 * 0.5
        gr = _grad(lib)(loss, [x4, x7], create_graph=True)
        s = (gr[0] * gr[0]).sum() + (gr[1] * gr[1]).sum()
        return _grad(lib)(s, [x4, x7], allow_unused=True)

    with np.errstate(all="raise"):  # (no 0 * inf reaches numpy any more)
        assert _both(program) == [None, [0.0]]


@pytest.mark.parametrize("p", [1, 1.5, 0.5, INF])
def test_second_order_of_norms_and_abs_through_inf(p):
    def program(lib):
        x = lib.tensor([-INF, 2.0, -3.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = _grad(lib)(lib.norm(x * w, p=p) + (x * w).abs().sum(), [w], create_graph=True)
        return _grad(lib)(g.sum(), [x, w], allow_unused=True)

    ours, theirs = program(gt), program(torch)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(_real(b).tolist()))


def test_efficient_zero_added_to_a_real_gradient_leaves_it_as_it_is():
    def program(lib):
        x = lib.tensor([-INF, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([3.0, -1.0], dtype=lib.float64, requires_grad=True)
        v = x * w
        return _grad(lib)(v.sgn().sum() + (v * 2).sum(), [w])

    assert _both(program) == [[-INF, 4.0]]


def test_hooks_and_retained_grads_see_real_zeros_and_the_zero_stays_efficient():
    seen = []

    def program(lib):
        x = lib.tensor([-INF, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
        v = x * w
        v.retain_grad()
        v.register_hook(lambda g: seen.append(_real(g).tolist()))
        v.sgn().sum().backward()
        return x.grad, w.grad, v.grad

    assert _both(program) == [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    assert seen == [[0.0, 0.0], [0.0, 0.0]]


def test_a_hook_that_returns_a_gradient_replaces_the_efficient_zero():
    def program(lib):
        x = lib.tensor([-INF, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
        v = x * w
        v.register_hook(lambda g: g + 1)
        v.sgn().sum().backward()
        return x.grad, w.grad

    assert _both(program) == [[1.0, 1.0], [-INF, 2.0]]


def test_a_custom_function_receives_real_zeros():
    # torch hands its backward the ZeroTensor itself (whose tolist() raises); ours gets
    # real zeros, and what it returns is an ordinary gradient
    seen = []

    class Double(gradstack_autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(g.tolist())
            return g * 2

    x = gt.tensor([-INF, 2.0], dtype=gt.float64, requires_grad=True)
    w = gt.tensor([1.0, 1.0], dtype=gt.float64, requires_grad=True)
    Double.apply(x * w).sgn().sum().backward()
    assert seen == [[0.0, 0.0]]
    assert x.grad.tolist() == [0.0, 0.0]


def test_a_node_called_by_hand_returns_real_zeros():
    x = gt.tensor([1.0, -2.0], requires_grad=True)
    (g,) = x.sgn().grad_fn(gt.ones(2))
    assert isinstance(g, gt.Tensor) and g.tolist() == [0.0, 0.0]


def test_efficient_zeros_reports_shape_and_dtype():
    z = _node.efficient_zeros(gt.ones(2, 3, dtype=gt.float64))
    assert z.shape == (2, 3) and "float64" in repr(z)


def test_in_place_sgn_on_a_view_and_batched_jacobian():
    y = gt.tensor([3.0, -1.0], requires_grad=True)
    z = y * 1
    z[0:1].sgn_()
    z.sum().backward()
    assert y.grad.tolist() == [0.0, 1.0]
    a = gt.tensor([1.0, -INF], requires_grad=True)
    out = (a * 2).sgn() * 3
    (jac,) = gradstack_autograd.grad(out, [a], gt.eye(2), is_grads_batched=True)
    assert jac.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_node_without_formula_raises_for_an_efficient_zero_too():
    for lib in (gt, torch):
        x = lib.tensor([1.5, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
            _grad(lib)((-1 % x).sgn().sum(), [x])


VALUES = [0.0, -0.0, INF, -INF, math.nan, 1e-300, -1.0, 2.0]
PROBES = {
    # name: (function of lib and the inputs, number of inputs)
    "exp": (lambda L, x: x.exp(), 1),
    "log": (lambda L, x: x.log(), 1),
    "sqrt": (lambda L, x: x.sqrt(), 1),
    "reciprocal": (lambda L, x: x.reciprocal(), 1),
    "tanh": (lambda L, x: x.tanh(), 1),
    "sigmoid": (lambda L, x: x.sigmoid(), 1),
    "neg": (lambda L, x: -x, 1),
    "abs": (lambda L, x: x.abs(), 1),
    "pow_number": (lambda L, x: x**3.5, 1),
    "mul": (lambda L, x, y: x * y, 2),
    "div": (lambda L, x, y: x / y, 2),
    "sub": (lambda L, x, y: x - y, 2),
    "pow": (lambda L, x, y: x**y, 2),
    "remainder": (lambda L, x, y: x.remainder(y), 2),
    "atan2": (lambda L, x, y: x.atan2(y), 2),
    "outer": (lambda L, x, y: L.outer(x, y), 2),
    "matmul": (lambda L, x, y: x.reshape(2, 4) @ y.reshape(4, 2), 2),
    "where": (lambda L, x, y: L.where(x > 0, x, y), 2),
    "sum": (lambda L, x: x.sum(), 1),
    "sum_dim": (lambda L, x: x.reshape(2, 4).sum(0), 1),
    "mean": (lambda L, x: x.mean(), 1),
    "t": (lambda L, x: x.reshape(2, 4).t(), 1),
    "view": (lambda L, x: x.view(2, 4), 1),
    "slice": (lambda L, x: x[2:5], 1),
    "cat": (lambda L, x, y: L.cat([x, y]), 2),
    "norm": (lambda L, x: x.norm(), 1),
    "softmax": (lambda L, x: x.softmax(0), 1),
    "dot": (lambda L, x, y: x.dot(y), 2),
    "addmm": (lambda L, x, y: L.addmm(x[:2], y.reshape(2, 4), y.reshape(4, 2)), 2),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_each_node_keeps_or_materializes_the_zero_as_torch(name):
    # the entries' keeps_zero, input by input: an efficient zero fed through ``sgn``
    # meets 0, -0, inf, NaN and a tiny value in the node's formula
    fn, n = PROBES[name]

    def program(lib):
        xs = [lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)]
        if n == 2:
            xs.append(lib.tensor(VALUES[::-1], dtype=lib.float64, requires_grad=True))
        y = fn(lib, *xs)
        return _grad(lib)(y.sgn(), xs, lib.ones_like(y), allow_unused=True)

    with np.errstate(all="ignore"):
        ours, theirs = program(gt), program(torch)
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(np.asarray(a.tolist()), _real(b).numpy())


def test_register_refuses_a_keeps_zero_that_names_no_input():
    from gradstack_autograd.derivatives import _table

    with pytest.raises(ValueError, match="keeps_zero names no input"):
        _table._keeps_zero("mul(self, other)", "self, exponent", ("self", "other"), False)
    assert _table._keeps_zero("div", "self", ("self", "other"), False) == (True, False)
    assert _table._keeps_zero("mul", "self, other", ("self", "other"), False) is True
    assert _table._keeps_zero("sum", {"SumBackward0": "self"}, ("self",), False) == {
        "SumBackward0": True
    }
