"""Hooks: the written order, replacing gradients, handles, multi-grad hooks, in-place ops.

The order (README, "Hook order"; Note [How the engine runs a backward pass]):

- a non-leaf's node: tensor hooks of each output (in registration order; each may replace
  the gradient) -> retain_grad stores -> node pre-hooks -> the node -> node post-hooks;
- a leaf: tensor hooks -> accumulation into ``.grad`` -> post-accumulate-grad hooks (the
  AccumulateGrad node's own pre/post hooks wrap the accumulation).
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import pytest


def _record(lib):
    """One backward with every kind of hook; returns the events, in order."""
    ev = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum()
    y.register_hook(lambda g: ev.append(("y hook 1", g.tolist())) or g * 10)
    y.retain_grad()
    y.register_hook(lambda g: ev.append(("y hook 2", g.tolist())))
    y.grad_fn.register_prehook(lambda go: ev.append(("y node pre", [t.tolist() for t in go])))
    y.grad_fn.register_hook(
        lambda gi, go: ev.append(("y node post", [None if t is None else t.tolist() for t in gi]))
    )
    x.register_hook(lambda g: ev.append(("x hook", g.tolist())))
    x.register_post_accumulate_grad_hook(
        lambda t: ev.append(("x post-accumulate", t.grad.tolist()))
    )
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: ev.append(("acc pre", [t.tolist() for t in go])))
    acc.register_hook(lambda gi, go: ev.append(("acc post", [t.tolist() for t in go])))
    z.backward()
    ev.append(("y.grad", y.grad.tolist()))
    ev.append(("x.grad", x.grad.tolist()))
    return ev


EXPECTED_ORDER = [
    ("y hook 1", [6.0, 12.0]),  # dz/dy = 2y
    ("y hook 2", [60.0, 120.0]),  # hook 1 replaced it with g * 10
    ("y node pre", [[60.0, 120.0]]),  # pre-hooks see the replaced gradient
    ("y node post", [[180.0, 360.0], None]),  # MulBackward0's outputs (x, the scalar 3)
    ("x hook", [180.0, 360.0]),
    ("acc pre", [[180.0, 360.0]]),
    ("x post-accumulate", [180.0, 360.0]),  # .grad is already set
    ("acc post", [[180.0, 360.0]]),
    ("y.grad", [60.0, 120.0]),  # retain_grad stores after the tensor hooks
    ("x.grad", [180.0, 360.0]),
]


def test_hook_order_is_the_written_one():
    assert _record(gt) == EXPECTED_ORDER


def test_hook_order_matches_torch():
    torch = pytest.importorskip("torch")
    assert _record(torch) == EXPECTED_ORDER


def test_the_order_is_written_in_the_readme():
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "Hook order" in readme
    for step in (
        "tensor hooks",
        "retain_grad",
        "pre-hooks",
        "post-hooks",
        "post-accumulate-grad hooks",
    ):
        assert step in readme, step


# ---------------------------------------------------------------------------------------
# replacing gradients


def test_tensor_hook_replaces_the_gradient_of_a_non_leaf():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 0 + 1)  # pretend dL/dy = 1
    (y * 5).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_tensor_hook_replaces_a_leaf_gradient_before_accumulation():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.clamp(max=3.0))
    (x * 5).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hooks_chain_in_registration_order():
    x = gt.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    x.sum().backward()
    assert x.grad.tolist() == [20.0]  # (1 + 1) * 10, not 1 * 10 + 1


def test_node_pre_and_post_hooks_replace_gradients():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: (go[0] * 0 + 2,))
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([2 * 2.718281828, 2 * 7.389056099], rel=1e-6)
    w = gt.tensor([1.0, 2.0], requires_grad=True)
    z = w * 4
    z.grad_fn.register_hook(lambda gi, go: (gi[0] + 100, gi[1]))
    z.sum().backward()
    assert w.grad.tolist() == [104.0, 104.0]


def test_hook_must_return_a_tensor_of_the_same_shape():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="hook returned a gradient of shape"):
        y.sum().backward()
    x2 = gt.tensor([1.0], requires_grad=True)
    x2.register_hook(lambda g: "no")
    with pytest.raises(TypeError, match="a tensor hook must return a Tensor or None"):
        x2.sum().backward()


def test_hooks_need_requires_grad():
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        gt.ones(2).register_hook(lambda g: g)
    y = gt.ones(2, requires_grad=True) * 2
    with pytest.raises(
        RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"
    ):
        y.register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(TypeError, match="hook must be callable"):
        y.register_hook(3)


# ---------------------------------------------------------------------------------------
# handles


def test_every_handle_removes_its_hook():
    calls = []
    x = gt.tensor([1.0, 2.0], requires_grad=True)

    def run():
        calls.clear()
        y = x * 2
        handles = [
            y.register_hook(lambda g: calls.append("tensor")),
            y.grad_fn.register_prehook(lambda go: calls.append("pre")),
            y.grad_fn.register_hook(lambda gi, go: calls.append("post")),
        ]
        return y, handles

    y, handles = run()
    for h in handles:
        h.remove()
    y.sum().backward()
    assert calls == []
    leaf_handles = [
        x.register_hook(lambda g: calls.append("leaf")),
        x.register_post_accumulate_grad_hook(lambda t: calls.append("acc")),
    ]
    (x * 2).sum().backward()
    assert calls == ["leaf", "acc"]
    for h in leaf_handles:
        h.remove()
        h.remove()  # removing twice is harmless
    (x * 2).sum().backward()
    assert calls == ["leaf", "acc"]


def test_removing_one_hook_keeps_the_others():
    calls = []
    x = gt.tensor([1.0], requires_grad=True)
    h1 = x.register_hook(lambda g: calls.append(1))
    x.register_hook(lambda g: calls.append(2))
    h1.remove()
    x.sum().backward()
    assert calls == [2]


def test_handle_as_context_manager():
    calls = []
    x = gt.tensor([1.0], requires_grad=True)
    with x.register_hook(lambda g: calls.append("in")):
        x.sum().backward()
    x.sum().backward()
    assert calls == ["in"]


# ---------------------------------------------------------------------------------------
# multi-grad hooks


def test_multi_grad_hook_all():
    seen = []
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = gt.tensor([3.0], requires_grad=True)
    a, b = x * 2, y * 3
    h = ag.graph.register_multi_grad_hook(
        (a, b), lambda grads: seen.append([None if g is None else g.tolist() for g in grads])
    )
    (a.sum() * 5 + b.sum()).backward(retain_graph=True)
    assert seen == [[[5.0, 5.0], [1.0]]]  # once, with both gradients
    a.sum().backward(retain_graph=True)  # a pass that reaches only a
    assert seen[1] == [[1.0, 1.0], None]
    h.remove()
    (a.sum() + b.sum()).backward()
    assert len(seen) == 2


def test_multi_grad_hook_any_fires_once_per_pass():
    seen = []
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * 3
    ag.graph.register_multi_grad_hook((a, b), lambda g: seen.append(g.tolist()), mode="any")
    (a.sum() + b.sum() * 2).backward(retain_graph=True)
    (a.sum() + b.sum() * 2).backward()
    assert seen == [[2.0, 2.0], [2.0, 2.0]]  # b's gradient arrives first (newer node)
    with pytest.raises(ValueError, match="mode must be 'all' or 'any'"):
        ag.graph.register_multi_grad_hook((a,), print, mode="some")


def test_multi_grad_hook_matches_torch():
    torch = pytest.importorskip("torch")

    def run(lib, graph):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0], requires_grad=True)
        a, b, c = x * 2, y * 3, x * y
        graph.register_multi_grad_hook(
            (a, b, c), lambda gs: seen.append([None if g is None else g.tolist() for g in gs])
        )
        (a.sum() + c.sum()).backward(retain_graph=True)
        (b.sum() * 2 + c.sum()).backward()
        return seen

    assert run(gt, ag.graph) == run(torch, torch.autograd.graph)


# ---------------------------------------------------------------------------------------
# hooks and in-place ops


def _inplace_hooks(lib):
    ev = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: ev.append(("registered before mul_", g.tolist())))
    y.retain_grad()
    y.mul_(2)
    y.register_hook(lambda g: ev.append(("registered after mul_", g.tolist())))
    (y * y).sum().backward()
    ev.append(("y.grad", y.grad.tolist()))
    ev.append(("x.grad", x.grad.tolist()))
    return ev


def test_hooks_and_in_place_ops():
    # a hook registered before the in-place op sees the gradient of the old value, one
    # registered after it that of the new value; retain_grad follows the tensor
    assert _inplace_hooks(gt) == [
        ("registered after mul_", [12.0, 24.0]),  # d/dy' (y'^2) = 2 y' = 2 * 6x
        ("registered before mul_", [24.0, 48.0]),  # times d y'/dy = 2
        ("y.grad", [12.0, 24.0]),
        ("x.grad", [72.0, 144.0]),
    ]


def test_hooks_and_in_place_ops_match_torch():
    torch = pytest.importorskip("torch")
    assert _inplace_hooks(gt) == _inplace_hooks(torch)


def test_retain_grad_through_an_in_place_op_on_a_view():
    x = gt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = x * 1
    b.retain_grad()
    b[0].mul_(10)
    (b * b).sum().backward()
    assert b.grad.tolist() == [[20.0, 40.0], [6.0, 8.0]]  # 2 * (new b)
    assert x.grad.tolist() == [[200.0, 400.0], [6.0, 8.0]]


def test_leaf_hooks_and_in_place_updates_under_no_grad():
    calls = []
    w = gt.tensor([1.0, 2.0], requires_grad=True)
    w.register_hook(lambda g: calls.append(g.tolist()))
    w.register_post_accumulate_grad_hook(lambda t: calls.append("step"))
    for _ in range(2):
        (w * w).sum().backward()
        with ag.no_grad():
            w.sub_(w.grad * 0.25)  # an optimizer step on the leaf
        w.grad = None
    assert calls == [[2.0, 4.0], "step", [1.0, 2.0], "step"]
    assert w.tolist() == [0.25, 0.5]
