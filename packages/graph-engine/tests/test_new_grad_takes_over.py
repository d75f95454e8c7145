"""A new .grad takes over the gradient's array when nothing else can see it (Note [A new
.grad takes over the gradient] in _node.pyx): it happens in the common cases, and never
where a hook, a retained grad, the caller or a Function still holds the gradient."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd._node import _take_over_count


def leaf(n=1000, seed=0, dtype=np.float32):
    return gt.tensor(
        np.random.default_rng(seed).uniform(-2, 2, n).astype(dtype), requires_grad=True
    )


def took_over(fn):
    """Whether running ``fn`` made a new .grad take over its gradient (once or more)."""
    before = _take_over_count()
    fn()
    return _take_over_count() > before


def test_a_single_use_leaf_takes_over_its_gradient():
    x = leaf()
    assert took_over(lambda: (x * 3).sum().backward())
    np.testing.assert_array_equal(x.grad.numpy(), np.full(1000, 3, np.float32))
    # the next backward adds into it in place, as before
    g = x.grad
    (x * 2).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), np.full(1000, 5, np.float32))


def test_the_engines_own_sum_is_taken_over():
    x = leaf(seed=1)
    assert took_over(lambda: (x.sin() * x.cos() + x * x).sum().backward())
    a = x.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(2 * a) + 2 * a, rtol=1e-5, atol=1e-5)


def test_not_when_a_hook_keeps_the_gradient():
    x = leaf(seed=2)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    assert not took_over(lambda: (x * 3).sum().backward())
    assert not np.shares_memory(kept[0].numpy(), x.grad.numpy())
    (x * 1).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), np.full(1000, 3, np.float32))


def test_not_the_callers_gradient():
    x = leaf(seed=3)
    g = gt.ones(1000)
    assert not took_over(lambda: x.backward(g))
    assert not np.shares_memory(g.numpy(), x.grad.numpy())
    x.grad = None
    y = x + 0  # AddBackward hands the caller's gradient through
    assert not took_over(lambda: y.backward(g))
    assert not np.shares_memory(g.numpy(), x.grad.numpy())
    x.grad.add_(1)
    assert g.numpy().tolist() == [1.0] * 1000


def test_not_a_retained_gradient():
    x = leaf(seed=4)
    y = x.view(10, 100)  # a view: its gradient reaches x viewed back
    y.retain_grad()
    z = x * 1
    z.retain_grad()
    (y.sum() + z.sum()).backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    assert not np.shares_memory(x.grad.numpy(), z.grad.numpy())


def test_not_a_tensor_a_function_keeps():
    kept = gt.full((1000,), 7.0)

    class Keeps(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return kept

    x = leaf(seed=5)
    assert not took_over(lambda: Keeps.apply(x).sum().backward())
    assert not np.shares_memory(kept.numpy(), x.grad.numpy())
    x.grad.zero_()
    assert kept.numpy()[0] == 7.0


def test_not_under_create_graph_nor_for_another_layout_or_dtype():
    x = leaf(seed=6)
    assert not took_over(lambda: (x * x).sum().backward(create_graph=True))
    assert x.grad.requires_grad
    # a leaf laid out column-major: its .grad follows its strides (rule 1), by a copy
    w = gt.tensor(np.random.default_rng(7).uniform(-1, 1, (30, 20)).astype(np.float32))
    w = w.t().detach().requires_grad_()
    assert not took_over(lambda: (w * 2).sum().backward()) or w.grad.stride() == w.stride()
    assert w.grad.stride() == w.stride()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((20, 30), 2, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_match_the_copy(dtype):
    x = leaf(seed=8, dtype=dtype)
    y = leaf(seed=8, dtype=dtype)
    keep = []
    y.register_hook(lambda g: keep.append(g))  # forces the copy
    for t in (x, y):
        ((t.tanh() * 3).sum() + (t * t).mean()).backward()
    assert x.grad.numpy().tobytes() == y.grad.numpy().tobytes()


def linear_leaves(seed):
    r = np.random.default_rng(seed)
    x = gt.tensor(r.uniform(-1, 1, (16, 50)).astype(np.float32))
    w = gt.tensor(r.uniform(-1, 1, (20, 50)).astype(np.float32), requires_grad=True)
    b = gt.tensor(r.uniform(-1, 1, 20).astype(np.float32), requires_grad=True)
    return x, w, b


def test_a_linear_layers_weight_and_bias_take_over_their_views():
    # the weight's gradient is t() of a product, the bias's a reshape of a sum: views of
    # arrays nothing else holds
    x, w, b = linear_leaves(9)
    before = _take_over_count()
    gt.addmm(b, x, w.t()).relu().sum().backward()
    assert _take_over_count() == before + 2
    mask = (x.numpy() @ w.detach().numpy().T + b.detach().numpy() > 0).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy(), mask.T @ x.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), mask.sum(0), rtol=1e-6)
    assert w.grad.numpy().flags.c_contiguous and w.grad.stride() == w.stride()
    g = w.grad
    gt.addmm(b, x, w.t()).sum().backward()  # the next backward adds in place, as before
    assert w.grad is g


def test_not_a_view_whose_base_a_hook_keeps():
    x, w, b = linear_leaves(10)
    wt = w.t()
    kept = []
    wt.register_hook(kept.append)  # keeps the product that the weight's gradient views
    gt.addmm(b, x, wt).sum().backward()
    assert not np.shares_memory(kept[0].numpy(), w.grad.numpy())
    expected = kept[0].numpy().copy()
    w.grad.add_(1.0)
    np.testing.assert_array_equal(kept[0].numpy(), expected)
