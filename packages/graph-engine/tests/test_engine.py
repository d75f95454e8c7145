"""The backward engine: ``backward``/``grad`` arguments, pruning, scale, freeing, order.

Messages are compared with torch's wording (users search for them); the numbers with
analytic values.
"""

from __future__ import annotations

import functools
import gc
import inspect
import itertools
import sys
import types
import weakref

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _engine

# ---------------------------------------------------------------------------------------
# argument checking


def test_implicit_gradient_only_for_scalar_outputs():
    x = gt.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        y.backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        ag.grad(y, x)
    assert x.grad is None
    # single-element tensors of any rank are fine, as in torch
    (x.sum().reshape(1, 1) * 3).backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_roots_must_require_grad():
    x = gt.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="^element 0 of tensors does not require grad and does not have a grad_fn$",
    ):
        gt.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        ag.backward([x.sum(), gt.ones(1).sum()])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        ag.grad(gt.ones(2).sum(), x)


def test_shape_mismatch_message():
    x = gt.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError) as info:
        y.backward(gt.ones(2))
    assert str(info.value) == (
        "Mismatch in shape: grad_output[0] has a shape of "
        "gradstack.Size([2]) and output[0] has a shape of "
        "gradstack.Size([3])."
    )
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[1\]"):
        ag.grad([y.sum(), y], x, [None, gt.ones(4)])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        ag.grad([y.sum(), y.sum()], x, [gt.tensor(1.0)])


def test_root_gradients_are_cast_to_the_output_dtype():
    x = gt.ones(3, requires_grad=True)
    (x * 2).backward(gt.tensor([1, 2, 3]))  # int64, as torch allows
    assert x.grad.dtype == gt.float32 and x.grad.tolist() == [2.0, 4.0, 6.0]
    (g,) = ag.grad(x * 2, x, gt.ones(3, dtype=gt.float64))
    assert g.dtype == gt.float32


def test_grad_inputs_checks():
    x = gt.ones(3, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors .*does not require grad"
    ):
        ag.grad(y, [x, gt.ones(2)])
    with pytest.raises(RuntimeError, match="grad requires non-empty inputs"):
        ag.grad(y, [])
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        y.backward(inputs=[])
    with pytest.raises(TypeError, match="inputs must be a Tensor or a sequence of Tensors"):
        ag.grad(y, 3)


def test_allow_unused_and_materialize_grads():
    x = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    unused = gt.ones(2, 2, dtype=gt.float64, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="appears to not have been used in the graph. Set "
        "allow_unused=True if this is the desired behavior",
    ):
        ag.grad((x * x).sum(), [x, unused])
    gx, gu = ag.grad((x * x).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0, 4.0, 6.0] and gu is None
    gx, gu = ag.grad((x * x).sum(), [x, unused], materialize_grads=True)
    assert gx.tolist() == [2.0, 4.0, 6.0]
    assert gu.shape == (2, 2) and gu.dtype == gt.float64 and gu.tolist() == [[0, 0], [0, 0]]
    with pytest.raises(
        ValueError,
        match="Expected allow_unused to be True or not passed when materialize_grads=True",
    ):
        ag.grad((x * x).sum(), [x, unused], materialize_grads=True, allow_unused=False)
    # a leaf that is in the graph but receives no gradient (its branch was multiplied away)
    (g,) = ag.grad((x * 0).sum(), x)
    assert g.tolist() == [0.0, 0.0, 0.0]


def test_backward_inputs_accumulates_only_into_those():
    a = gt.tensor([1.0, 2.0], requires_grad=True)
    b = gt.tensor([3.0, 4.0], requires_grad=True)
    h = a * b
    out = (h * h).sum()
    out.backward(inputs=[a], retain_graph=True)
    assert a.grad.tolist() == [2 * 3 * 3 * 1, 2 * 4 * 4 * 2] and b.grad is None
    out.backward(inputs=b, retain_graph=True)  # a single tensor
    assert b.grad.tolist() == [2 * 1 * 1 * 3, 2 * 2 * 2 * 4]
    out.backward(inputs=[h])  # a non-leaf gets .grad
    assert h.grad.tolist() == [6.0, 16.0]
    assert a.grad.tolist() == [18.0, 64.0]  # unchanged


def test_grad_of_non_leaf_and_leaf_grads_untouched():
    x = gt.tensor([0.5, -1.0], requires_grad=True)
    h = x.exp()
    (gh, gx) = ag.grad((h * h).sum(), [h, x])
    np.testing.assert_allclose(gh.numpy(), 2 * np.exp([0.5, -1.0]), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp([1.0, -2.0]), rtol=1e-6)
    assert x.grad is None


# ---------------------------------------------------------------------------------------
# pruning: grad(inputs=...) runs only what leads to the inputs


def _all_nodes(root):
    seen, stack = [], [root]
    while stack:
        n = stack.pop()
        if n is None or any(n is s for s in seen):
            continue
        seen.append(n)
        stack.extend(fn for fn, _ in n.next_functions)
    return seen


def _count_calls(nodes):
    calls = {}
    for n in nodes:
        key = id(n)
        calls[key] = 0

        def pre(grads, _key=key):
            calls[_key] += 1

        n.register_prehook(pre)
    return calls


def _two_branch_graph():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    w = gt.tensor([0.5, 0.25], requires_grad=True)
    a = x * 2  # x's branch
    c = w.exp() * 3  # w's branch
    out = a.sum() + c.sum()
    return x, w, a, c, out


def test_grad_runs_only_nodes_on_a_path_to_the_inputs():
    x, w, a, c, out = _two_branch_graph()
    nodes = _all_nodes(out.grad_fn)
    calls = _count_calls(nodes)
    x_branch = _all_nodes(a.grad_fn)
    w_branch = _all_nodes(c.grad_fn)
    (gx,) = ag.grad(out, x)
    assert gx.tolist() == [2.0, 2.0]
    for n in w_branch:
        assert calls[id(n)] == 0, f"{n.name()} ran although it does not lead to x"
    ran = sorted(n.name() for n in nodes if calls[id(n)])
    assert ran == ["AddBackward0", "MulBackward0", "SumBackward0"]
    assert x_branch[-1].name() == "AccumulateGrad" and calls[id(x_branch[-1])] == 0
    assert x.grad is None and w.grad is None


def test_backward_inputs_runs_only_nodes_on_a_path_to_the_inputs():
    x, w, a, c, out = _two_branch_graph()
    calls = _count_calls(_all_nodes(out.grad_fn))
    out.backward(inputs=[x])
    for n in _all_nodes(c.grad_fn):
        assert calls[id(n)] == 0
    assert x.grad.tolist() == [2.0, 2.0] and w.grad is None


def test_grad_of_an_intermediate_stops_there():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    h = x.sin()
    out = (h * 3).sum()
    calls = _count_calls([h.grad_fn])
    (gh,) = ag.grad(out, h)
    assert gh.tolist() == [3.0, 3.0]
    assert calls[id(h.grad_fn)] == 0  # SinBackward0 is below the target


# ---------------------------------------------------------------------------------------
# scale: no recursion, linear work


def _executed_nodes_of_chain(n):
    """Backpropagate a chain of n negations; returns (nodes executed, x.grad)."""
    x = gt.ones(1, requires_grad=True)
    y = x
    for _ in range(n):
        y = -y
    counter = itertools.count()
    # C callables only (next with a default, id): counting costs no Python frame per node
    observer = types.SimpleNamespace(begin=functools.partial(next, counter), end=id)
    depth = len(inspect.stack(0))
    limit = sys.getrecursionlimit()
    _engine.set_node_observer(observer)
    sys.setrecursionlimit(depth + 60)  # any recursion per node would blow this
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
        _engine.set_node_observer(None)
    del y
    return next(counter), x.grad.item()


def test_a_million_node_chain_backpropagates_in_linear_work():
    small, g_small = _executed_nodes_of_chain(100_001)
    big, g_big = _executed_nodes_of_chain(1_000_000)
    assert (g_small, g_big) == (-1.0, 1.0)
    # every node (and the leaf's AccumulateGrad) runs exactly once
    assert small == 100_001 + 1 and big == 1_000_000 + 1
    gc.collect()


# ---------------------------------------------------------------------------------------
# freeing and retain_graph


def test_saved_tensors_are_freed_after_backward():
    x = gt.tensor([0.5, 1.5], requires_grad=True)
    h = x * 2
    y = h.sin()  # SinBackward0 saves h
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is not None  # kept alive by the graph
    y.sum().backward()
    assert ref() is None, "the saved input outlived the backward pass"
    assert y.grad_fn is not None  # the graph itself is still there, only its buffers went


def test_retain_graph_keeps_saved_tensors():
    x = gt.tensor([0.5, 1.5], requires_grad=True)
    h = x * 2
    y = h.sin().sum()
    ref = weakref.ref(h)
    del h
    y.backward(retain_graph=True)
    gc.collect()
    assert ref() is not None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * np.cos(2 * np.array([0.5, 1.5])), rtol=1e-6)
    assert ref() is None
    del y
    gc.collect()


def test_second_backward_names_backward_grad_and_the_node():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    msg = str(info.value)
    assert msg.startswith("Trying to backward through the graph a second time")
    assert ".backward()" in msg and "autograd.grad()" in msg
    assert "MulBackward0" in msg and "retain_graph=True" in msg
    with pytest.raises(RuntimeError, match="MulBackward0"):
        ag.grad(y, x)


def test_nodes_without_saved_tensors_run_again():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()  # AddBackward0 and SumBackward0 save no tensor
    y.backward()
    y.backward()  # torch allows this too
    assert x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------------------
# higher order


def test_third_order_gradients():
    x = gt.tensor([0.5, -1.5, 2.0], dtype=gt.float64, requires_grad=True)
    xv = x.detach().numpy().copy()
    y = (x**4).sum()
    (g1,) = ag.grad(y, x, create_graph=True)
    (g2,) = ag.grad(g1.sum(), x, create_graph=True)
    (g3,) = ag.grad(g2.sum(), x, create_graph=True)
    np.testing.assert_allclose(g1.detach().numpy(), 4 * xv**3, rtol=1e-12)
    np.testing.assert_allclose(g2.detach().numpy(), 12 * xv**2, rtol=1e-12)
    np.testing.assert_allclose(g3.detach().numpy(), 24 * xv, rtol=1e-12)
    assert g3.requires_grad
    (g4,) = ag.grad(g3.sum(), x)
    np.testing.assert_allclose(g4.numpy(), [24.0] * 3)


def test_third_order_mixed_partials():
    x = gt.tensor(0.7, dtype=gt.float64, requires_grad=True)
    y = gt.tensor(-1.3, dtype=gt.float64, requires_grad=True)
    f = x.sin() * y**3
    (fx,) = ag.grad(f, x, create_graph=True)
    (fxx,) = ag.grad(fx, x, create_graph=True)
    (fxxy,) = ag.grad(fxx, y)
    assert fxxy.item() == pytest.approx(-np.sin(0.7) * 3 * 1.3**2, rel=1e-12)
    # through backward(create_graph=True) into .grad
    x2 = gt.tensor([1.5], dtype=gt.float64, requires_grad=True)
    (x2.exp() * x2).sum().backward(create_graph=True)
    assert x2.grad.requires_grad and x2.grad.grad_fn is not None
    (gg,) = ag.grad(x2.grad.sum(), x2)  # d/dx (e^x (1 + x)) = e^x (2 + x)
    assert gg.item() == pytest.approx(np.exp(1.5) * 3.5, rel=1e-12)


# ---------------------------------------------------------------------------------------
# broadcasting and validation at the engine's edge


@pytest.mark.parametrize(
    "sa, sb",
    [((3, 1), (1, 4)), ((), (2, 3)), ((4,), (2, 3, 4)), ((2, 1, 4), (3, 1)), ((1, 1), (5,))],
)
def test_broadcast_gradients_are_reduced_to_input_shapes(sa, sb):
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal(sa), rng.standard_normal(sb)
    a = gt.from_numpy(an.copy()).requires_grad_()
    b = gt.from_numpy(bn.copy()).requires_grad_()
    (a * b).sum().backward()
    full = np.broadcast_shapes(sa, sb)
    expect_a = np.broadcast_to(bn, full)
    expect_b = np.broadcast_to(an, full)

    def reduce_to(g, shape):
        g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
        return g.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True).reshape(
            shape
        )

    assert a.grad.shape == sa and b.grad.shape == sb
    np.testing.assert_allclose(a.grad.numpy(), reduce_to(expect_a, sa), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), reduce_to(expect_b, sb), rtol=1e-12)


def _function(backward_result):
    class Bad(ag.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return backward_result(g)

    return Bad


def test_invalid_gradient_shape_names_node_and_index():
    x = gt.ones(3, requires_grad=True)
    y = gt.ones(3, requires_grad=True)
    Bad = _function(lambda g: (g, gt.ones(5)))
    with pytest.raises(RuntimeError) as info:
        Bad.apply(x, y).sum().backward()
    assert str(info.value) == (
        "Function BadBackward returned an invalid gradient at index 1 - "
        "got [5] but expected shape compatible with [3]"
    )


def test_invalid_gradient_type_and_count():
    x = gt.ones(3, requires_grad=True)
    y = gt.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match="BadBackward returned a str as gradient 0"):
        _function(lambda g: ("oops", g)).apply(x, y).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"BadBackward returned an incorrect number of "
        r"gradients \(expected 2, got 1\)",
    ):
        _function(lambda g: (g,)).apply(x, y).sum().backward()


def test_gradient_dtype_is_cast_to_the_input_dtype():
    x = gt.ones(3, requires_grad=True)  # float32
    y = gt.ones(3, dtype=gt.float64, requires_grad=True)
    Cast = _function(lambda g: (g.double() * 2, g.float() * 3))
    Cast.apply(x, y).sum().backward()
    assert x.grad.dtype == gt.float32 and x.grad.tolist() == [2.0] * 3
    assert y.grad.dtype == gt.float64 and y.grad.tolist() == [3.0] * 3


def test_a_broadcastable_gradient_from_a_function_is_reduced():
    x = gt.ones(2, 3, requires_grad=True)
    y = gt.ones(3, requires_grad=True)
    Wide = _function(lambda g: (g, g))  # g has x*y's shape (2, 3)
    Wide.apply(x, y).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------------------------------
# order


def _diamond(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x.exp()
    c = a.sin()
    d = (c + b) * a
    return x, d.sum()


def _execution_order(lib, out):
    order = []
    for n in _all_nodes(out.grad_fn):
        # torch names its accumulator "torch::autograd::AccumulateGrad"
        n.register_prehook(lambda g, _n=n: order.append(_n.name().split("::")[-1]))
    out.backward()
    return order


def test_execution_order_is_deterministic_and_matches_torch():
    orders = [_execution_order(gt, _diamond(gt)[1]) for _ in range(3)]
    assert orders[0] == orders[1] == orders[2]
    assert orders[0][0] == "SumBackward0" and orders[0][-1] == "AccumulateGrad"
    assert len(orders[0]) == 7
    torch = pytest.importorskip("torch")
    assert orders[0] == _execution_order(torch, _diamond(torch)[1])


def test_leaf_gradient_arrives_once_summed_over_all_paths():
    x, out = _diamond(gt)
    calls = []
    x.register_hook(lambda g: calls.append(g.tolist()))
    out.backward()
    xv = np.array([1.0, 2.0])
    a = 2 * xv
    expect = 2 * (np.sin(a) + np.exp(xv)) + a * (2 * np.cos(a) + np.exp(xv))
    np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-6)
    assert len(calls) == 1  # the leaf's hook sees the sum, once


# ---------------------------------------------------------------------------------------
# the graph's public face


def test_node_api():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    node = y.grad_fn
    assert node.name() == "MulBackward0" and type(node).__name__ == "MulBackward0"
    (acc, nr), (none, _) = node.next_functions
    assert isinstance(acc, ag.AccumulateGrad) and acc.variable is x and nr == 0
    assert none is None  # the Python scalar needs no gradient
    assert node.metadata == {}
    node.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}
    assert x.grad_fn is None and x.is_leaf and not y.is_leaf
    assert isinstance(node, ag.graph.Node)
    # calling a node directly applies its formula
    (g, _) = node(gt.tensor([1.0, 1.0]))
    assert g.tolist() == [3.0, 3.0]


def test_backward_accumulates_and_grad_does_not():
    x = gt.tensor([2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [8.0]
    (g,) = ag.grad((x * x).sum(), x)
    assert g.tolist() == [4.0] and x.grad.tolist() == [8.0]


def test_a_backward_inside_a_hook_of_a_backward_over_the_same_graph_counts_its_own():
    # Note [Dependencies are counted on the nodes]: the outer pass counts on the nodes, a
    # backward started inside one of its hooks counts in a dict of its own, so neither
    # overwrites the other's counts on the nodes both reach
    x = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    shared = x * 2  # reached by both passes, with two incoming edges in each
    a = (shared * shared).sum()
    b = (shared.sin() + shared).sum()
    inner = []

    def hook(grad):
        if not inner:
            inner.append(ag.grad(b, x, retain_graph=True)[0])
        return grad

    mid = shared.exp()
    mid.register_hook(hook)
    (a + mid.sum() + b).backward(retain_graph=True)
    s = x.detach().numpy() * 2
    want_outer = 2 * (2 * s) + 2 * np.exp(s) + 2 * (np.cos(s) + 1)
    np.testing.assert_allclose(x.grad.numpy(), want_outer, rtol=1e-6)
    np.testing.assert_allclose(inner[0].numpy(), 2 * (np.cos(s) + 1), rtol=1e-6)

    # a nested backward() (no targets) inside a hook, on an overlapping graph
    x.grad = None
    y = gt.tensor([0.5, 1.5], requires_grad=True)
    base = y * 3
    c = (base * base).sum()

    def nested(grad):
        if y.grad is None:
            with ag.enable_grad():  # (hooks run with grad mode off, as in torch)
                (base * 2).sum().backward(retain_graph=True)  # y.grad = 6 so far
        return grad

    d = base.tanh()
    d.register_hook(nested)
    (c + d.sum()).backward()
    t = y.detach().numpy() * 3
    np.testing.assert_allclose(y.grad.numpy(), 6 + 3 * 2 * t + 3 * (1 - np.tanh(t) ** 2), rtol=1e-6)


def test_a_pass_that_raises_leaves_the_next_pass_correct():
    # the counts a failed pass leaves on the nodes are ignored by the next one
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    z = (y + y.exp()).sum()

    def boom(grad):
        raise ValueError("stop")

    handle = y.register_hook(boom)
    with pytest.raises(ValueError, match="stop"):
        z.backward(retain_graph=True)
    handle.remove()
    x.grad = None
    z.backward()
    v = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * v * (1 + np.exp(v * v)), rtol=1e-6)
