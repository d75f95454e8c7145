"""The C copies of the hottest formulas, and the engine's in-place input buffers.

* Note [Native first-order formulas] (_native.pyx): add, mul and div run in C when nothing
  can differ; their gradients must equal the Python formulas' bit for bit, and every case
  they do not take (broadcasting, promotion, one input without grad, create_graph, saved
  tensors modified or hooked) must still reach the Python formula;
* Note [Input buffers sum in place] (_engine.pyx): a gradient handed to the engine (by the
  user, by a formula, to a hook) is never modified afterwards;
* Note [No cyclic GC during backward]: the collector is paused during a pass and restored.
"""

from __future__ import annotations

import gc

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _backward_kernels as _kernels
from gradstack_autograd import _derivative, _native, _op_node, derivatives
from gradstack_tensor import _dispatch as gt_dispatch


@pytest.fixture
def python_formulas():
    """Run the body with the native formulas off (the Python table only)."""
    old = _native.set_native_formulas_enabled(False)
    try:
        yield
    finally:
        _native.set_native_formulas_enabled(old)


def _grads(fn, arrays, v, native):
    old = _native.set_native_formulas_enabled(native)
    try:
        xs = [gt.from_numpy(a.copy()).requires_grad_() for a in arrays]
        gs = ag.grad(fn(*xs), xs, gt.from_numpy(v.copy()))
        return [g.numpy() for g in gs]
    finally:
        _native.set_native_formulas_enabled(old)


BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


def test_the_hot_ops_have_native_formulas():
    assert {
        name for name in ("add", "sub", "mul", "div") if _derivative.native_formula_of(name)
    } == {
        "add",
        "sub",
        "mul",
        "div",
    }
    assert _derivative.native_formula_of("pow") == 0
    assert derivatives.entry("mul").native == _derivative.native_formula_of("mul") != 0


def test_the_native_path_is_chosen_by_the_entrys_fused_field():
    # no list of op names: an entry naming a native kernel gets its native code
    for name, op in gt.OPS.items():
        d = op.derivative
        if d.fused is not None:  # every named kernel exists (_backward_kernels, or natively)
            assert hasattr(_kernels, d.fused) or d.native != 0, name
        assert (d.native != 0) == (
            d.fused in ("add_backward", "sub_backward", "mul_backward", "div_backward")
        ), name
    assert derivatives.entry("mul").fused == "mul_backward"
    assert derivatives.entry("mul_").native == derivatives.entry("mul").native
    assert (
        derivatives.entry("relu").fused == "relu_backward"
        and _derivative.native_formula_of("relu") == 0
    )


def test_a_formula_runs_its_entrys_fused_kernel():
    x = gt.tensor([[0.5, -1.0], [2.0, 3.0]], requires_grad=True)
    node = x.sin().grad_fn
    g = gt.ones(2, 2)
    with ag.no_grad():  # as the engine runs first-order formulas
        fused = node.fused(g, x.detach())
    np.testing.assert_allclose(fused.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)
    assert node.fused(g, x.detach()) is None  # grad mode on (create_graph): no raw kernel
    with pytest.raises(RuntimeError, match="names no fused kernel"):
        x.exp().grad_fn.fused(g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3), (4, 5, 6), (1000,)])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_native_equals_python_bit_for_bit(op, shape, dtype):
    rng = np.random.default_rng(abs(hash((op, shape, dtype))) % 2**32)
    a = rng.uniform(0.5, 2.0, size=shape).astype(dtype)
    b = rng.uniform(0.5, 2.0, size=shape).astype(dtype)
    v = rng.standard_normal(shape).astype(dtype)
    native = _grads(BINARY[op], [a, b], v, True)
    python = _grads(BINARY[op], [a, b], v, False)
    for n, p in zip(native, python):
        assert n.dtype == p.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(n, p)
    # and the numbers themselves, against the derivative written out in float64
    a64, b64, v64 = (x.astype(np.float64) for x in (a, b, v))
    expected = {
        "add": (v64, v64),
        "mul": (v64 * b64, v64 * a64),
        "div": (v64 / b64, -v64 * a64 / (b64 * b64)),
    }[op]
    for n, e in zip(native, expected):
        np.testing.assert_allclose(n, e, rtol=1e-5 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("native", [True, False])
def test_the_native_path_runs_the_kernel_from_c(monkeypatch, native):
    # The table's formula calls the Python kernel (through ctx.fused); the native formula
    # calls the same kernel's C entry point, so the Python one is not called at all.
    calls = []
    real = _kernels.div_backward
    monkeypatch.setattr(_kernels, "div_backward", lambda *args: calls.append(1) or real(*args))
    x = gt.ones(2, 3, requires_grad=True)
    y = gt.full((2, 3), 2.0, requires_grad=True)
    old = _native.set_native_formulas_enabled(native)
    try:
        gx, gy = ag.grad(x / y, (x, y), gt.ones(2, 3))
    finally:
        _native.set_native_formulas_enabled(old)
    assert calls == ([] if native else [1])
    np.testing.assert_array_equal(gx.numpy(), np.full((2, 3), 0.5, np.float32))
    np.testing.assert_array_equal(gy.numpy(), np.full((2, 3), -0.25, np.float32))


class _CountingLayer(gt_dispatch.DispatchLayer):
    """A dispatch layer that counts the ops it sees (a profiler would record them)."""

    def __init__(self):
        super().__init__(100)
        self.ops = []

    def handle(self, op, args, next_index):
        self.ops.append(op.name)
        return self.call_next(op, args, next_index)


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
@pytest.mark.parametrize("number", [2.5, 3, -(2**53), 2**60, 1e300])
def test_a_gradient_times_a_number_takes_the_dispatch_only_for_another_layer(dtype, number):
    """Note [A gradient times a number skips the dispatch]: the same bits either way, and
    the op is dispatched (so a profiler records it) whenever another layer is there."""
    rng = np.random.default_rng(5)
    a = gt.from_numpy(rng.uniform(-2, 2, (4, 3))).to(dtype).requires_grad_()
    v = gt.from_numpy(rng.standard_normal((4, 3))).to(dtype)

    def run():
        with np.errstate(over="ignore"):
            return ag.grad((a * number) / number, (a,), v)[0].numpy()

    direct = run()
    layer = _CountingLayer()
    gt_dispatch.register_layer(layer)
    try:
        dispatched = run()
    finally:
        gt_dispatch.unregister_layer(layer)
    np.testing.assert_array_equal(direct, dispatched)
    assert layer.ops[:2] == ["mul", "div"]  # the forward
    assert layer.ops[2:] == ["div", "mul"]  # the backward's two formulas
    old = _native.set_native_formulas_enabled(False)
    try:
        np.testing.assert_array_equal(direct, run())
    finally:
        _native.set_native_formulas_enabled(old)
    assert direct.dtype == np.dtype(str(dtype).split(".")[-1])


def test_a_large_gradient_times_a_number_takes_numpy():
    a = gt.from_numpy(np.linspace(-1, 1, 5000)).requires_grad_()
    (g,) = ag.grad((a * 3.0).sum(), (a,))
    np.testing.assert_array_equal(g.numpy(), np.full(5000, 3.0))


@pytest.mark.parametrize(
    "case",
    [
        "broadcast",
        "promotion",
        "scalar",
        "no_grad_input",
        "non_contiguous",
        "int_alpha_2",
        "sub",
        "sub_scalar",
        "int_scalar",
        "scalar_first",
    ],
)
def test_cases_the_native_path_leaves_to_python(case):
    """Each of these must give the Python formula's numbers (and torch's)."""
    rng = np.random.default_rng(7)
    a = gt.from_numpy(rng.uniform(0.5, 2, (3, 4))).requires_grad_()
    b = gt.from_numpy(rng.uniform(0.5, 2, (3, 4))).requires_grad_()
    fn = {
        "broadcast": lambda: a * b[0] / b[1:2],
        "promotion": lambda: a.float() * b,
        "scalar": lambda: (a * 3.0) / 2.0 + 1,
        "no_grad_input": lambda: a * b.detach() / b.detach(),
        "non_contiguous": lambda: a.t() * b.t() / a.t(),
        "int_alpha_2": lambda: gt.add(a, b, alpha=2),
        "sub": lambda: a - b,
        "sub_scalar": lambda: (a - 1.5) * 2.0 - 3,
        "int_scalar": lambda: (a * 3) / 7 * b.float().double(),
        "scalar_first": lambda: 2.0 * a - 1.0 / b,
    }[case]
    out = fn()
    v = gt.from_numpy(rng.standard_normal(out.shape)).to(out.dtype)
    native = [g if g is None else g.numpy() for g in ag.grad(out, (a, b), v, allow_unused=True)]
    old = _native.set_native_formulas_enabled(False)
    try:
        python = [
            g if g is None else g.numpy() for g in ag.grad(fn(), (a, b), v, allow_unused=True)
        ]
    finally:
        _native.set_native_formulas_enabled(old)
    assert [n is None for n in native] == [p is None for p in python]
    for n, p in zip(native, python):
        if n is not None:
            np.testing.assert_array_equal(n, p)


def test_a_modified_saved_tensor_still_raises_the_version_error():
    x = gt.ones(3, requires_grad=True)
    a = x * 2
    b = x * 3
    y = a * b
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_double_backward_takes_the_python_formulas():
    x = gt.tensor([1.5, -2.0], dtype=gt.float64, requires_grad=True)
    y = gt.tensor([0.5, 3.0], dtype=gt.float64, requires_grad=True)
    (gx,) = ag.grad((x * x / y).sum(), (x,), create_graph=True)
    (ggx,) = ag.grad(gx.sum(), (x,))
    np.testing.assert_allclose(gx.detach().numpy(), 2 * x.detach().numpy() / y.detach().numpy())
    np.testing.assert_allclose(ggx.numpy(), 2 / y.detach().numpy())


# ---------------------------------------------------------------------------------------
# in-place input buffers


def test_a_leaf_used_many_times_sums_every_gradient():
    x = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    y = x
    for k in range(1, 51):
        y = y + x * float(k)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 1.0 + sum(range(1, 51))))


def test_gradients_handed_in_are_never_written():
    x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
    v = gt.tensor([3.0, 4.0], dtype=gt.float64)
    out = x + x + x  # add hands `v` on to x three times (the same object twice)
    (g,) = ag.grad(out, (x,), v)
    np.testing.assert_array_equal(g.numpy(), [9.0, 12.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_a_hook_keeps_the_gradient_it_saw():
    seen = []
    x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
    h = x * 1.0
    h.register_hook(lambda g: seen.append(g))
    out = h * 2.0 + h * 3.0 + h + x * 7.0
    out.sum().backward()
    np.testing.assert_array_equal(seen[0].numpy(), [6.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [13.0, 13.0])
    np.testing.assert_array_equal(seen[0].numpy(), [6.0, 6.0])  # unchanged after


def test_buffers_stay_out_of_place_under_create_graph():
    x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
    y = x * x + x * x + x * x
    (g,) = ag.grad(y.sum(), (x,), create_graph=True)
    assert g.requires_grad
    np.testing.assert_array_equal(g.detach().numpy(), [6.0, 12.0])
    (gg,) = ag.grad(g.sum(), (x,))
    np.testing.assert_array_equal(gg.numpy(), [6.0, 6.0])


def test_grads_match_torch_on_the_tutorial_loop():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 1.5, (2, 3)) for _ in range(3)]
    ours = [gt.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    for x, y, z0 in (ours, theirs):
        z = z0
        for _ in range(50):
            z = (z / x) * y
        z.sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# the collector during backward


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64, gt.float16])
def test_scalar_formulas_give_the_python_bits(dtype):
    rng = np.random.default_rng(11)
    a = gt.from_numpy(rng.uniform(0.5, 2, (5, 3))).to(dtype).requires_grad_()
    v = gt.from_numpy(rng.standard_normal((5, 3))).to(dtype)

    def run():
        return ag.grad(((a * 1.0001 + 0.0001) / 3 - 0.25) * 7, (a,), v)[0].numpy()

    native = run()
    old = _native.set_native_formulas_enabled(False)
    try:
        python = run()
    finally:
        _native.set_native_formulas_enabled(old)
    assert native.dtype == python.dtype == np.dtype(str(dtype).split(".")[-1])
    np.testing.assert_array_equal(native, python)
    expected = v.numpy().astype(np.float64) * 1.0001 / 3 * 7
    np.testing.assert_allclose(native, expected, rtol=2e-3 if dtype == gt.float16 else 1e-5)


def test_a_scalar_formula_saves_only_the_scalar_as_torch():
    """``h * 3.0`` reads only 3.0 (Note [Save what a gradient needs]): writing into ``h``
    afterwards is fine, as in torch; a saved tensor operand is still checked."""
    x = gt.ones(3, requires_grad=True)
    h = x * 2
    y = h * 3.0
    assert y.grad_fn.saved[0] is None
    h.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
    w = gt.ones(3, requires_grad=True)
    h = w * 2
    y = h * gt.full((3,), 3.0, requires_grad=True)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_the_collector_is_paused_during_backward_and_restored():
    states = []
    x = gt.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: states.append(gc.isenabled()))
    assert gc.isenabled()
    y.sum().backward()
    assert states == [False] and gc.isenabled()


def test_the_collector_is_restored_when_backward_raises():
    x = gt.ones(2, requires_grad=True)
    y = x * 2

    def boom(g):
        raise ValueError("boom")

    y.register_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        y.sum().backward()
    assert gc.isenabled()


def test_a_collector_disabled_by_the_user_stays_disabled():
    gc.disable()
    try:
        x = gt.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        assert not gc.isenabled()
    finally:
        gc.enable()


# ---------------------------------------------------------------------------------------
# Note [Saved intermediates are invisible to the cyclic GC]


def test_saved_intermediates_are_not_tracked_by_the_collector():
    x = gt.ones(2, 3, requires_grad=True)
    h = x * 2.0
    assert gc.is_tracked(h)
    out = h * h  # h is saved (twice) by MulBackward0
    assert not gc.is_tracked(h)
    assert gc.is_tracked(x)  # leaves stay tracked
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 8.0, np.float32))


def test_intermediates_that_could_join_a_cycle_stay_tracked():
    x = gt.ones(2, requires_grad=True)
    with_attr = x * 2.0
    with_attr.note = "mine"  # an instance attribute could point back at it
    retained = x * 3.0
    retained.retain_grad()  # autograd state
    out = with_attr * retained
    assert gc.is_tracked(with_attr) and gc.is_tracked(retained)
    out.sum().backward()
    np.testing.assert_array_equal(retained.grad.numpy(), [2.0, 2.0])


def test_a_long_forward_triggers_no_full_collection_of_its_own():
    """2,000 saved intermediates no longer count as long-lived tracked objects."""
    x = gt.randn(2, 3, requires_grad=True)
    y = gt.rand(2, 3, requires_grad=True)
    z = gt.ones(2, 3, requires_grad=True)
    gc.collect()
    tracked_before = len(gc.get_objects())
    for _ in range(1000):
        z = (z / x) * y
    assert len(gc.get_objects()) - tracked_before < 100
    z.sum().backward()


@pytest.mark.parametrize("dtype", [gt.float16, gt.float32, gt.float64])
def test_buffers_sum_in_every_float_dtype(dtype):
    """float16 sums take numpy's add (the kernels are float32/float64 only)."""
    x = gt.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    y = x * 2.0 + x * 3.0 + x * 4.0
    y.sum().backward()
    assert x.grad.dtype == dtype
    np.testing.assert_array_equal(x.grad.numpy().astype(np.float64), [9.0, 9.0])


def test_table_node_classes_define_no_apply_of_their_own():
    """Note [A table node's apply is called directly]: the engine calls OpNode's apply for
    every node whose class derives from OpNode directly, which holds only if those classes
    (made by _node_class) add no apply."""
    x = gt.ones(2, 3, requires_grad=True)
    y = ((x * 2 + 1).sin() / 3).sum()
    classes, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if isinstance(node, _op_node.OpNode):
            classes.add(type(node))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    assert {c.__name__ for c in classes} == {
        "SumBackward0",
        "DivBackward0",
        "SinBackward0",
        "AddBackward0",
        "MulBackward0",
    }
    for cls in classes:
        assert cls.__base__ is _op_node.OpNode and "apply" not in cls.__dict__, cls
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(3.0) * 2 / 3, rtol=1e-6)
