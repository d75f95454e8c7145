"""Selective activation checkpointing (``utils.checkpoint.create_selective_checkpoint_contexts``,
``CheckpointPolicy``, ``SelectiveCheckpointContext``, ``SAC_IGNORED_OPS``,
``GraphExecGroup``) against torch 2.13: gradients equal torch's under each kind of policy,
the ops a policy saves do not run again in backward and the others do (counted by a
layer under the selective layers), the kept outputs are handed out once, their mutation
is refused unless allowed, and the errors."""

from __future__ import annotations

import collections
import functools

import gradstack as gs
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import DispatchLayer, register_layer, unregister_layer

torch = pytest.importorskip("torch")

SC, TC = gs.utils.checkpoint, torch.utils.checkpoint
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 4))
Y = RNG.standard_normal((4, 4))


class _Kernels(DispatchLayer):
    """Counts the ops that reach their kernels (below the selective layers' 50)."""

    def __init__(self) -> None:
        super().__init__(10)
        self.counts: collections.Counter = collections.Counter()

    def handle(self, op, args, next_index):
        self.counts[op.name] += 1
        return self.call_next(op, args, next_index)


def _program(L):
    def fn(x, y):
        a = L.matmul(x, y)
        b = L.sigmoid(L.matmul(a, y))
        return (b * y).exp().sum() + a.tanh().sum()

    return fn


# each policy for gradstack and for torch: (ours, theirs, ops whose kernels are kept)
def _by_name(names, on_true=True):
    def ours(ctx, op, *args):
        return on_true if op.name in names else not on_true

    return ours


POLICIES = {
    "list of ops": (lambda: [gt.get_op("matmul")], lambda: [torch.ops.aten.mm.default],
                    {"matmul"}),
    "enum policy": (
        lambda: lambda ctx, op, *a: (SC.CheckpointPolicy.MUST_SAVE if op.name == "sigmoid"
                                     else SC.CheckpointPolicy.PREFER_RECOMPUTE),
        lambda: lambda ctx, op, *a, **k: (TC.CheckpointPolicy.MUST_SAVE
                                          if op == torch.ops.aten.sigmoid.default
                                          else TC.CheckpointPolicy.PREFER_RECOMPUTE),
        {"sigmoid"}),
    "bool policy": (
        lambda: lambda ctx, op, *a: op.name in ("tanh", "exp"),
        lambda: lambda ctx, op, *a, **k: op in (torch.ops.aten.tanh.default,
                                                torch.ops.aten.exp.default),
        {"tanh", "exp"}),
    "prefer save everything": (
        lambda: lambda ctx, op, *a: SC.CheckpointPolicy.PREFER_SAVE,
        lambda: lambda ctx, op, *a, **k: TC.CheckpointPolicy.PREFER_SAVE,
        {"matmul", "sigmoid", "mul", "exp", "sum", "tanh", "add"}),
    "recompute everything": (
        lambda: lambda ctx, op, *a: SC.CheckpointPolicy.MUST_RECOMPUTE,
        lambda: lambda ctx, op, *a, **k: TC.CheckpointPolicy.MUST_RECOMPUTE,
        set()),
}  # fmt: skip


def _backward_kernels(x, y, context_fn=None, checkpointed=True):
    fn = _program(gs)
    if checkpointed:
        out = SC.checkpoint(fn, x, y, use_reentrant=False, context_fn=context_fn)
    else:
        out = fn(x, y)
    counter = _Kernels()
    register_layer(counter)
    try:
        out.backward()
    finally:
        unregister_layer(counter)
    return counter.counts


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradients_as_torch_and_what_is_recomputed(name, dtype):
    ours, theirs, kept = POLICIES[name]
    x = gs.tensor(X, dtype=getattr(gs, dtype), requires_grad=True)
    y = gs.tensor(Y, dtype=getattr(gs, dtype), requires_grad=True)
    context_fn = functools.partial(SC.create_selective_checkpoint_contexts, ours())
    with_sac = _backward_kernels(x, y, context_fn)
    grads = [x.grad.numpy(), y.grad.numpy()]
    x.grad = y.grad = None
    plain = _backward_kernels(x, y, checkpointed=False)
    forward_ops = {"matmul": 2, "sigmoid": 1, "mul": 1, "exp": 1, "sum": 2, "tanh": 1, "add": 1}
    for op, n in forward_ops.items():
        recomputed = with_sac[op] - plain[op]
        assert recomputed == (0 if op in kept else n), (op, with_sac, plain)

    tx = torch.tensor(X, dtype=getattr(torch, dtype), requires_grad=True)
    ty = torch.tensor(Y, dtype=getattr(torch, dtype), requires_grad=True)
    tctx = functools.partial(TC.create_selective_checkpoint_contexts, theirs())
    TC.checkpoint(_program(torch), tx, ty, use_reentrant=False, context_fn=tctx).backward()
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(grads[0], tx.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(grads[1], ty.grad.numpy(), rtol=tol, atol=tol)


def test_the_policy_sees_each_forward_op_once_with_its_output():
    seen = []

    def policy(ctx, op, *args):
        assert isinstance(ctx, SC.SelectiveCheckpointContext) and ctx.is_recompute is False
        seen.append((op.name, tuple(ctx.op_output.shape)))
        return SC.CheckpointPolicy.PREFER_RECOMPUTE

    x = gs.tensor(X, requires_grad=True)
    out = SC.checkpoint(lambda t: t.mm(t).relu().sum(), x, use_reentrant=False,
                        context_fn=functools.partial(SC.create_selective_checkpoint_contexts,
                                                     policy))  # fmt: skip
    out.backward()
    assert seen == [("mm", (4, 4)), ("relu", (4, 4)), ("sum", ())]


def _twice(L, sc):
    x = L.tensor(X, requires_grad=True)
    ops = [gt.get_op("mm")] if L is gs else [torch.ops.aten.mm.default]
    out = sc.checkpoint(lambda t: t.mm(t).sin().sum(), x, use_reentrant=False,
                        context_fn=functools.partial(sc.create_selective_checkpoint_contexts,
                                                     ops))  # fmt: skip
    out.backward(retain_graph=True)
    with pytest.raises(RuntimeError) as info:
        out.backward()
    return str(info.value)


def test_a_second_backward_raises_as_torch():
    assert _twice(gs, SC) == _twice(torch, TC)


def _mutated(L, sc, allow):
    x = L.tensor(X, requires_grad=True)
    ops = [gt.get_op("mm")] if L is gs else [torch.ops.aten.mm.default]

    def fn(t):
        a = t.mm(t)
        b = a.sin()
        a.mul_(2)
        return (a + b).sum()

    out = sc.checkpoint(fn, x, use_reentrant=False,
                        context_fn=functools.partial(sc.create_selective_checkpoint_contexts, ops,
                                                     allow_cache_entry_mutation=allow))  # fmt: skip
    try:
        out.backward()
    except RuntimeError as e:
        return str(e)
    return x.grad.numpy()


def test_a_mutated_cache_entry_as_torch():
    assert _mutated(gs, SC, False) == _mutated(torch, TC, False)
    # allowed, the write reaches the kept value; gradstack's recomputation runs the whole
    # function (the write included), as torch's does without early stop
    ours = _mutated(gs, SC, True)
    with TC.set_checkpoint_early_stop(False):
        theirs = _mutated(torch, TC, True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_dropout_inside_a_selective_checkpoint_keeps_the_forwards_mask():
    x = gs.tensor(X, requires_grad=True)
    gs.manual_seed(3)
    ops = [gt.get_op("matmul")]
    out = SC.checkpoint(lambda t: gs.nn.functional.dropout(t @ t, 0.5).sum(), x,
                        use_reentrant=False,
                        context_fn=functools.partial(SC.create_selective_checkpoint_contexts,
                                                     ops))  # fmt: skip
    out.backward()
    ref = gs.tensor(X, requires_grad=True)
    gs.manual_seed(3)
    gs.nn.functional.dropout(ref @ ref, 0.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-12)


def test_names_and_errors_as_torch():
    assert [(p.name, p.value) for p in SC.CheckpointPolicy] == [
        (p.name, p.value) for p in TC.CheckpointPolicy
    ]
    assert gt.get_op("detach") in SC.SAC_IGNORED_OPS
    errors = []
    for sc in (SC, TC):
        with pytest.raises(ValueError) as bad_list:
            sc.create_selective_checkpoint_contexts(["mm"])
        with pytest.raises(TypeError) as bad_type:
            sc.create_selective_checkpoint_contexts(3)
        errors.append((str(bad_list.value), str(bad_type.value)))
    assert errors[0] == errors[1]


def test_graph_exec_group_as_torch():
    messages = []
    for sc in (SC, TC):
        with sc.GraphExecGroup() as group:
            assert sc.GraphExecGroup._get_current_group() is group
            with pytest.raises(RuntimeError) as info:
                with sc.GraphExecGroup():
                    pass
        assert sc.GraphExecGroup._get_current_group() is None
        messages.append(str(info.value).split(" Already")[0])
    assert messages[0] == messages[1]


def test_graph_exec_group_recomputes_once_over_disjoint_backward_calls():
    x = gs.tensor(X, requires_grad=True)
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin() * 2, t.exp() * 3

    with SC.GraphExecGroup():
        a, b = SC.checkpoint(fn, x, use_reentrant=False)
        a.sum().backward(retain_graph=True)
        b.sum().backward()
    assert len(calls) == 2  # the forward and one recomputation
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(X) + 3 * np.exp(X), rtol=1e-12)


@pytest.mark.parametrize("save", ["everything", "named tuples"])
def test_a_model_with_multi_output_ops_and_dropout(save):
    def policy(ctx, op, *args):
        if save == "everything":
            return SC.CheckpointPolicy.PREFER_SAVE
        return op.name in ("max", "sort")

    gs.manual_seed(0)
    net = gs.nn.Sequential(gs.nn.Linear(5, 8), gs.nn.LayerNorm(8), gs.nn.GELU(),
                           gs.nn.Dropout(0.3), gs.nn.Linear(8, 3))  # fmt: skip
    x = gs.randn(4, 5, requires_grad=True)

    def f(t):
        values, _ = net(t).max(dim=1)
        return values.sum() + net(t).sort(dim=1).values.sum() + net(t).softmax(-1).sum()

    grads = []
    for checkpointed in (True, False):
        gs.manual_seed(1)
        if checkpointed:
            context_fn = functools.partial(SC.create_selective_checkpoint_contexts, policy)
            out = SC.checkpoint(f, x, use_reentrant=False, context_fn=context_fn)
        else:
            out = f(x)
        out.backward()
        grads.append([x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()])
        x.grad = None
        net.zero_grad()
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
