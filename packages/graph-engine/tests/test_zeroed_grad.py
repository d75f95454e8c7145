"""A .grad marked as zeroed receives the next gradient as torch 2.x's None would (Note [A
zeroed .grad receives the gradient as None would] in _node.pyx): taken over or copied,
never added into the zeros; the mark ends at the first write."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd._node import _take_over_count
from gradstack_autograd.zeroed_grads import grad_is_zeroed, mark_grad_zeroed


def leaf(values, dtype=np.float32):
    return gt.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def zeroed(x):
    """``x.grad`` zeroed in place and marked, as nn-mini's default ``zero_grad()`` does."""
    g = x.grad
    g.zero_()
    mark_grad_zeroed(g)
    return g


def test_the_mark_lasts_until_the_next_write():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    g = zeroed(x)
    assert grad_is_zeroed(g) and grad_is_zeroed(x.grad)
    g.add_(1.0)
    assert not grad_is_zeroed(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    assert not grad_is_zeroed(None) and not grad_is_zeroed(np.zeros(2))


def test_a_zeroed_grad_is_replaced_not_added_into():
    x = leaf(np.linspace(-1, 1, 1000))
    (x * 3).sum().backward()
    old = zeroed(x)
    before = _take_over_count()
    (x * 2).sum().backward()
    assert _take_over_count() == before + 1  # the gradient's own array, no pass
    assert x.grad is not old and not grad_is_zeroed(x.grad)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(1000, 2, np.float32))
    np.testing.assert_array_equal(old.numpy(), np.zeros(1000, np.float32))  # left as it was
    (x * 5).sum().backward()  # unmarked: accumulates in place, as before
    np.testing.assert_array_equal(x.grad.numpy(), np.full(1000, 7, np.float32))


def test_a_negative_zero_gradient_stays_negative_as_into_none():
    x = leaf([1.0, 2.0, 3.0])
    (x * 3).sum().backward()
    zeroed(x)
    (x * -0.0).sum().backward()
    assert np.signbit(x.grad.numpy()).all()  # torch 2.x: .grad was None, the gradient is -0.0
    y = leaf([1.0, 2.0, 3.0])
    (y * 3).sum().backward()
    y.grad.zero_()  # not marked: zero_grad(set_to_none=False), 0.0 + -0.0 is +0.0
    (y * -0.0).sum().backward()
    assert not np.signbit(y.grad.numpy()).any()


def test_copied_into_the_zeroed_buffer_when_the_gradient_is_held():
    x = leaf([1.0, -2.0, 4.0])
    (x * 3).sum().backward()
    old = zeroed(x)
    kept = []
    x.register_hook(kept.append)  # the hook keeps the gradient: it may not be taken over
    before = _take_over_count()
    (x * x).sum().backward()
    assert _take_over_count() == before
    assert x.grad is old and not grad_is_zeroed(old)
    assert not np.shares_memory(kept[0].numpy(), old.numpy())
    np.testing.assert_array_equal(old.numpy(), [2.0, -4.0, 8.0])


def test_the_callers_gradient_is_copied_with_the_grads_own_layout():
    x = gt.tensor(np.arange(6.0).reshape(2, 3).T.copy().T, requires_grad=True)  # column-major
    x.backward(gt.ones(2, 3))
    old = zeroed(x)
    given = gt.tensor(np.arange(6.0).reshape(2, 3))
    x.backward(given)
    assert x.grad is old
    assert not np.shares_memory(given.numpy(), old.numpy())
    np.testing.assert_array_equal(old.numpy(), given.numpy())


def test_two_contributions_in_one_backward_are_summed():
    x = leaf([0.5, 1.5])
    (x * 3).sum().backward()
    zeroed(x)
    (x * 2 + x.sin()).sum().backward()  # two paths reach the leaf: one sum, then one .grad
    v = np.array([0.5, 1.5], np.float32)
    np.testing.assert_allclose(x.grad.numpy(), 2 + np.cos(v), rtol=1e-6)


def test_create_graph_gives_a_new_differentiable_grad():
    x = leaf([1.0, 2.0], dtype=np.float64)
    (x * 3).sum().backward()
    old = zeroed(x)
    (x**3).sum().backward(create_graph=True)
    assert x.grad is not old and x.grad.requires_grad
    np.testing.assert_array_equal(x.grad.detach().numpy(), [3.0, 12.0])
    (gh,) = ag.grad(x.grad.sum(), [x])
    np.testing.assert_array_equal(gh.numpy(), [6.0, 12.0])  # d(3x^2)/dx


def test_post_accumulate_hooks_see_the_new_grad():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    zeroed(x)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (x * 4).sum().backward()
    assert seen == [[4.0, 4.0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch_none_semantics(dtype):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(0)
    w0 = r.uniform(-1, 1, (4, 3)).astype(dtype)
    xs = [r.uniform(-1, 1, (5, 4)).astype(dtype) for _ in range(3)]

    def run(lib, zero):
        w = lib.tensor(w0.copy(), requires_grad=True)
        grads = []
        for x in xs:
            ((lib.tensor(x) @ w).relu() * -0.0 + (lib.tensor(x) @ w).tanh()).sum().backward()
            grads.append(w.grad.detach().numpy().copy())
            zero(w)
        return grads

    ours = run(gt, zeroed)
    theirs = run(torch, lambda w: setattr(w, "grad", None))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype is np.float32 else 1e-12)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


# Note [zero_grad() leaves zeros to be made on first read]
from gradstack_autograd.zeroed_grads import defer_grad_zeros, grad_zeros_deferred  # noqa: E402


def test_deferred_zeros_are_never_made_when_backward_comes_first():
    x = leaf(np.linspace(-1, 1, 1000))
    (x * 3).sum().backward()
    old = x.grad
    defer_grad_zeros(x)
    assert x._grad is None and grad_zeros_deferred(x)
    np.testing.assert_array_equal(old.numpy(), np.full(1000, 3, np.float32))  # untouched
    before = _take_over_count()
    (x * 2).sum().backward()
    assert _take_over_count() == before + 1  # given as to None: the gradient's own array
    assert not grad_zeros_deferred(x) and not grad_is_zeroed(x.grad)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(1000, 2, np.float32))


def test_deferred_zeros_are_made_on_read_and_marked():
    x = leaf([1.0, 2.0, 3.0])
    (x * 3).sum().backward()
    defer_grad_zeros(x)
    z = x.grad
    assert z is x._grad and z is x.grad and not grad_zeros_deferred(x)
    assert grad_is_zeroed(z) and z.dtype == x.dtype and z.tolist() == [0.0, 0.0, 0.0]
    (x * -0.0).sum().backward()  # marked zeros: the gradient as into None
    assert x.grad is not z and np.signbit(x.grad.numpy()).all()
    (x * 2).sum().backward()  # a real gradient now: accumulates
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_assigning_or_deleting_grad_ends_the_deferral():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    defer_grad_zeros(x)
    x.grad = gt.tensor(np.array([5.0, 6.0], np.float32))
    assert not grad_zeros_deferred(x) and x.grad.tolist() == [5.0, 6.0]
    x.grad = None
    assert x.grad is None  # None, not the zeros deferred before
    defer_grad_zeros(x)
    del x.grad
    assert x.grad is None and not grad_zeros_deferred(x)


def test_deferred_zeros_take_the_layout_of_a_new_grad():
    base = np.ones((3, 4), np.float32)
    x = gt.tensor(base, requires_grad=True)
    xt = x.detach().t().requires_grad_()  # a column-major leaf
    (xt * 2).sum().backward()
    defer_grad_zeros(xt)
    z = xt.grad
    assert z.shape == (4, 3) and z.stride() == xt.stride() and not z.numpy().any()


def test_deferred_zeros_under_create_graph_give_a_new_grad_with_history():
    x = leaf([1.0, 2.0], dtype=np.float64)
    (x * x).sum().backward(create_graph=True)
    defer_grad_zeros(x)
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None and x.grad.tolist() == [2.0, 4.0]
    assert not grad_zeros_deferred(x)


def test_defer_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError):
        defer_grad_zeros(np.zeros(2))
