"""sin and cos keep each other for backward (Note [sin and cos keep each other] in
derivatives/arithmetic.py): the float32 forward leaves the other function of x, the
first-order gradient is one multiply with it, and it gives the same bits as evaluating it
again; it is let go after the first backward, and never used where torch would compute
from something else (an unpack hook's tensor, create_graph, saved-tensor hooks)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _backward_kernels as B

F32 = np.float32
OTHER = {"sin": "cos", "cos": "sin"}


def make_x(shape=(300, 400), seed=0):
    a = np.random.default_rng(seed).uniform(-4, 4, shape).astype(F32)
    return gt.tensor(a, requires_grad=True), a


def recomputed(op, g, a):
    """The gradient by the kernel that evaluates the other function again."""
    kernel = B.sin_backward if op == "sin" else B.cos_backward
    return kernel(np.ascontiguousarray(g, F32), np.ascontiguousarray(a))


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_the_node_keeps_the_other_function_and_lets_it_go(op):
    x, a = make_x()
    y = getattr(x, op)()
    kept = y.grad_fn.extra
    assert kept is not None
    np.testing.assert_array_equal(kept[1], getattr(np, OTHER[op])(a.astype(np.float64)).astype(F32))
    g = np.random.default_rng(1).uniform(-2, 2, a.shape).astype(F32)
    y.backward(gt.tensor(g), retain_graph=True)
    assert not y.grad_fn.extra  # let go after the first backward
    first = x.grad.numpy().copy()
    assert first.tobytes() == recomputed(op, g, a).tobytes()
    x.grad = None
    y.backward(gt.tensor(g))  # the second backward evaluates it again: the same bits
    assert x.grad.numpy().tobytes() == first.tobytes()


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_a_broadcast_gradient_and_strided_inputs(op):
    _, a = make_x((64, 90), seed=2)
    views = [(lambda t: t, lambda n: n), (lambda t: t.t(), lambda n: n.T)]
    views.append((lambda t: t[::3], lambda n: n[::3]))
    for view, np_view in views:
        x = gt.tensor(a, requires_grad=True)
        v = view(x)
        (getattr(v, op)().sum() * 3).backward()
        want = np.zeros_like(a)
        np_view(want)[...] = recomputed(op, np.full(tuple(v.shape), 3, F32), np_view(a))
        np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_create_graph_and_second_order(op):
    x, a = make_x((50,), seed=3)
    (g,) = ag.grad(getattr(x, op)().sum(), x, create_graph=True)
    (gg,) = ag.grad(g.sum(), x)
    a64 = a.astype(np.float64)
    want = -np.sin(a64) if op == "sin" else -np.cos(a64)
    np.testing.assert_allclose(gg.numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_an_unpack_hook_that_returns_another_tensor_is_followed(op):
    x, a = make_x((40,), seed=4)
    y = getattr(x, op)()
    other = np.linspace(-1, 1, 40).astype(F32)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda packed: gt.tensor(other))
    y.backward(gt.ones(40))
    assert x.grad.numpy().tobytes() == recomputed(op, np.ones(40, F32), other).tobytes()


def test_nothing_is_kept_under_saved_tensors_hooks():
    x, _ = make_x((30,), seed=5)
    with ag.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = x.sin()
    assert y.grad_fn.extra is None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_nothing_is_kept_for_float64_nor_in_place_nor_under_no_grad():
    x64 = gt.tensor(np.linspace(-2, 2, 5000), requires_grad=True)
    assert x64.sin().grad_fn.extra is None
    x, _ = make_x((5000,), seed=6)
    y = x.clone()
    y.sin_()
    assert y.grad_fn.extra is None  # (an in-place op's input is the clone it saved)
    from gradstack_tensor.extension import take_byproduct

    with ag.no_grad():
        y = x.sin()  # nothing records it: no by-product is made, none is kept
    assert take_byproduct(x, y) is None
    z = x.cos()
    assert z.grad_fn.extra is not None
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.detach().numpy()), rtol=1e-6)


def test_an_in_place_write_of_x_is_still_an_error():
    x, _ = make_x((5000,), seed=7)
    w = x * 1
    y = w.sin()
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(8).uniform(-5, 5, (200, 30)).astype(F32)
    g = np.random.default_rng(9).uniform(-1, 1, (200, 30)).astype(F32)
    x = gt.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    (x.sin() * x.cos()).backward(gt.tensor(g))
    (tx.sin() * tx.cos()).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_the_backward_does_not_evaluate_the_other_function_again(op, monkeypatch):
    def must_not_run(*args):
        raise AssertionError("the kept function was not used")

    monkeypatch.setattr(B, "sin_backward" if op == "sin" else "cos_backward", must_not_run)
    _, a = make_x((64, 90), seed=10)
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[::3]):
        x = gt.tensor(a, requires_grad=True)
        getattr(view(x), op)().sum().backward()
        y = getattr(view(x), op)()
        y.backward(gt.ones(tuple(y.shape)))
