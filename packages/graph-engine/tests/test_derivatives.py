"""The derivative table, tested over the op database (``autograd_op_db.py``).

* every op of ``gradstack_tensor.OPS`` has an entry or is marked not differentiable, and
  every differentiable op has samples here (a new op without either fails);
* gradcheck and gradgradcheck (float64, finite differences) on every sample;
* first- and second-order gradients equal torch 2.13's on the same inputs, and the nodes
  carry torch's class names;
* the fused Cython backward kernels (``fused=`` in the derivative table, taken when
  ``create_graph=False``) agree with the plain formulas (taken when ``create_graph=True``).
"""

from __future__ import annotations

import importlib
import zlib

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _backward_kernels as _kernels
from gradstack_autograd import _native, derivatives
from gradstack_tensor import OPS

db = importlib.import_module("gradstack_autograd_tests_autograd_op_db")
GRAD_OPS = db.GRAD_OPS


def _rng(name):
    return np.random.default_rng([20240611, zlib.crc32(name.encode())])


def _all_samples(predicate=lambda op: True):
    params = []
    for name, op in sorted(GRAD_OPS.items()):
        if not predicate(op):
            continue
        for i, s in enumerate(op.samples(_rng(name))):
            params.append(pytest.param(op, s, id=f"{name}-{i}-{s.desc}"))
    return params


def _gs_inputs(sample):
    return [db.to_gs(a, gt) for a in sample.inputs]


def _differentiable_outputs(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in result if o.requires_grad]


# ---------------------------------------------------------------------------------------
# coverage of the table


def missing_entries(ops=OPS):
    """Ops with neither a derivative entry nor a "not differentiable" mark."""
    return sorted(
        name
        for name, op in ops.items()
        if op.derivative is None and name not in derivatives.NOT_DIFFERENTIABLE
    )


def test_every_op_has_a_derivative_or_is_marked_not_differentiable():
    assert missing_entries() == [], (
        "these ops have no entry in gradstack_autograd.derivatives and are not listed in "
        "NOT_DIFFERENTIABLE"
    )


def test_the_coverage_check_fails_for_an_op_without_entry(monkeypatch):
    monkeypatch.setattr(OPS["sin"], "derivative", None)
    assert missing_entries() == ["sin"]


def test_every_differentiable_op_has_samples():
    differentiable = {
        name
        for name, op in OPS.items()
        if op.derivative is not None and op.derivative.differentiable
    }
    # backward raises by design (torch's NotImplemented nodes): test_gradient_masks.py
    differentiable -= set(derivatives.NOT_IMPLEMENTED)
    assert sorted(differentiable - set(GRAD_OPS)) == [], "add samples to autograd_op_db.py"
    assert sorted(set(GRAD_OPS) - differentiable) == []


def test_not_differentiable_ops_do_not_record():
    x = gt.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    outs = [
        x == 0.5,
        x.ne(1.0),
        x < 0,
        x.le(x),
        x > x,
        x.ge(0),
        x.argmax(),
        x.argmin(dim=1),
        x.detach(),
        gt.logical_and(x, x),
        gt.logical_not(x),
    ]
    for out in outs:
        assert not out.requires_grad and out.grad_fn is None
    for name in derivatives.NOT_DIFFERENTIABLE:
        assert OPS[name].derivative.differentiable is False


def test_an_op_without_entry_raises_a_clear_error():
    op = gt.register_op("_test_no_entry", lambda t: t * 1)
    try:
        x = gt.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="'_test_no_entry' has no entry in the derivative"):
            gt.dispatch(op, (x,))
        with ag.no_grad():
            assert gt.dispatch(op, (x,)).tolist() == [1.0, 1.0]  # fine without grad
    finally:
        del OPS["_test_no_entry"]


# torch's random fills are other overloads than the function of the same name
# (``normal_`` records NormalBackward0, ``normal(mean, std)`` NormalBackward1-3)
# (torch gives the in-place inverse hyperbolic functions a node of their own, AsinhBackward1
# ...: Note [torch has no derivative for in-place asinh, acosh, atanh])
NOT_TWINS = {"normal_", "bernoulli_", "asinh_", "acosh_", "atanh_"}


def test_inplace_variants_have_the_node_name_of_their_twin():
    checked = 0
    for name, op in OPS.items():
        base = OPS.get(name[:-1])
        if not (name.endswith("_") and op.inplace and base is not None and base.derivative):
            continue
        if name in NOT_TWINS:
            continue
        assert op.derivative is not None, name
        assert op.derivative.differentiable == base.derivative.differentiable, name
        assert op.derivative.node_name == base.derivative.node_name, name
        checked += 1
    assert checked >= 40


# ---------------------------------------------------------------------------------------
# numerical checks


@pytest.mark.parametrize("op, sample", _all_samples())
def test_gradcheck(op, sample):
    xs = _gs_inputs(sample)
    assert ag.gradcheck(lambda *t: sample.fn(gt, *t), xs, eps=op.eps, atol=op.atol, rtol=op.rtol)


@pytest.mark.parametrize("op, sample", _all_samples(lambda op: op.second_order))
def test_gradgradcheck(op, sample):
    xs = _gs_inputs(sample)
    assert ag.gradgradcheck(
        lambda *t: sample.fn(gt, *t), xs, eps=op.eps, atol=op.atol, rtol=op.rtol
    )


def test_gradgradcheck_is_not_vacuous():
    """A wrong second derivative must fail (it once compared empty Jacobians)."""

    class WrongSecondOrder(ag.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() * x.detach()  # right value, no second derivative

    x = gt.tensor([0.5, -1.5], dtype=gt.float64, requires_grad=True)
    assert ag.gradcheck(WrongSecondOrder.apply, (x,))
    with pytest.raises(ag.GradcheckError, match="Jacobian mismatch"):
        ag.gradgradcheck(WrongSecondOrder.apply, (x,))


# ---------------------------------------------------------------------------------------
# against torch


def _assert_grads_match(ours, theirs, inputs, what, torch):
    """gradstack's gradients (None for an unused input) against torch's, in float64."""
    for g, tg, a in zip(ours, theirs, inputs):
        np.testing.assert_allclose(
            _to_numpy(g, a.shape),
            _to_numpy(tg, a.shape, torch),
            rtol=1e-10,
            atol=1e-12,
            err_msg=what,
        )


def _to_numpy(t, shape, torch=None):
    if t is None or (torch is not None and t._is_zerotensor()):
        return np.zeros(shape)
    return np.array(t.detach().numpy())


@pytest.mark.parametrize("op, sample", _all_samples(lambda op: op.torch))
def test_matches_torch(op, sample):
    torch = pytest.importorskip("torch")
    xs = _gs_inputs(sample)
    ts = [db.to_torch(a, torch) for a in sample.inputs]
    outs = _differentiable_outputs(sample.fn(gt, *xs))
    touts = _differentiable_outputs((sample.torch_fn or sample.fn)(torch, *ts))
    assert len(outs) == len(touts)
    for o, to in zip(outs, touts):
        assert tuple(o.shape) == tuple(to.shape)
        np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), rtol=1e-12, atol=1e-14)
        # the node torch records for the same call
        assert type(o.grad_fn).__name__ == type(to.grad_fn).__name__

    rng = np.random.default_rng(7)
    vs = [rng.standard_normal(tuple(o.shape)) for o in outs]
    g1 = ag.grad(
        outs,
        xs,
        [gt.from_numpy(v.copy()) for v in vs],
        allow_unused=True,
        create_graph=op.second_order,
    )
    t1 = torch.autograd.grad(
        touts,
        ts,
        [torch.from_numpy(v.copy()) for v in vs],
        allow_unused=True,
        create_graph=op.second_order,
    )
    _assert_grads_match(g1, t1, sample.inputs, "first order", torch)
    for g, a in zip(g1, sample.inputs):
        if g is not None:
            assert tuple(g.shape) == a.shape and g.dtype == gt.float64
    if not op.second_order:
        return
    ws = [rng.standard_normal(a.shape) for a in sample.inputs]
    terms = [
        (g * gt.from_numpy(w.copy())).sum()
        for g, w in zip(g1, ws)
        if g is not None and g.requires_grad
    ]
    tterms = [
        (g * torch.from_numpy(w.copy())).sum()
        for g, w in zip(t1, ws)
        if g is not None and g.requires_grad
    ]
    g2 = ag.grad(terms, xs, allow_unused=True) if terms else [None] * len(xs)
    t2 = torch.autograd.grad(tterms, ts, allow_unused=True) if tterms else [None] * len(xs)
    _assert_grads_match(g2, t2, sample.inputs, "second order", torch)


# ---------------------------------------------------------------------------------------
# fused kernels vs plain formulas


FUSED = {
    # kernel name: (function of the inputs, number of inputs, input domain)
    "mul_backward": (lambda a, b: a * b, 2, (-2.0, 2.0)),
    "div_backward": (lambda a, b: a / b, 2, (0.5, 2.0)),
    "relu_backward": (lambda a: a.relu(), 1, (-2.0, 2.0)),
    "sin_backward": (lambda a: a.sin(), 1, (-3.0, 3.0)),
    "cos_backward": (lambda a: a.cos(), 1, (-3.0, 3.0)),
    "tanh_backward": (lambda a: a.tanh(), 1, (-2.0, 2.0)),
    "square_backward": (lambda a: a.pow(2), 1, (-2.0, 2.0)),
    "sigmoid_backward": (lambda a: a.sigmoid(), 1, (-4.0, 4.0)),
}


@pytest.mark.skipif(_kernels is None, reason="tensor-core built without _kernels")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", sorted(FUSED))
def test_fused_backward_matches_the_plain_formula(kernel, dtype, monkeypatch):
    fn, n, (lo, hi) = FUSED[kernel]
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(lo, hi, size=(3, 5)).astype(dtype) for _ in range(n)]
    v = gt.from_numpy(rng.standard_normal((3, 5)).astype(dtype))

    calls = []
    real = getattr(_kernels, kernel)

    def counting(*args):
        calls.append(kernel)
        return real(*args)

    monkeypatch.setattr(_kernels, kernel, counting)

    def grads(create_graph):
        xs = [gt.from_numpy(a.copy()).requires_grad_() for a in arrays]
        # the table's formula, which calls the kernel through ctx.fused (mul's and div's
        # native formulas call it from C: test_native_formulas.py)
        old = _native.set_native_formulas_enabled(False)
        try:
            gs = ag.grad(fn(*xs), xs, v, create_graph=create_graph)
        finally:
            _native.set_native_formulas_enabled(old)
        return [g.detach().numpy() for g in gs]

    fused = grads(False)
    assert calls == [kernel], "the fused kernel did not run without create_graph"
    plain = grads(True)
    assert calls == [kernel], "the fused kernel ran with create_graph=True"
    for f, p in zip(fused, plain):
        assert f.dtype == p.dtype == np.dtype(dtype)
        np.testing.assert_allclose(
            f,
            p,
            rtol=1e-6 if dtype == "float32" else 1e-14,
            atol=1e-7 if dtype == "float32" else 1e-15,
        )


def test_fused_paths_are_skipped_for_layouts_they_do_not_take():
    """Broadcast or non-contiguous operands take the plain formula (values still right)."""
    a = gt.from_numpy(np.arange(6.0).reshape(2, 3).T.copy().T).requires_grad_()  # F-order
    b = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    ga, gb = ag.grad((a * b).sum(), (a, b))
    np.testing.assert_array_equal(ga.numpy(), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))
    np.testing.assert_array_equal(gb.numpy(), np.arange(6.0).reshape(2, 3).sum(0))


def test_leaf_accumulation_kernel_matches_numpy():
    rng = np.random.default_rng(4)
    w = gt.from_numpy(rng.standard_normal((4, 3))).requires_grad_()
    total = np.zeros((4, 3))
    for _ in range(3):
        c = rng.standard_normal((4, 3))
        (w * gt.from_numpy(c)).sum().backward()
        total += c
    np.testing.assert_allclose(w.grad.numpy(), total, rtol=0, atol=1e-15)


def test_rows_name_their_arguments():
    d = derivatives.entry("sum")
    assert d.signature == ("self", "dim", "keepdim", "dtype")
    assert d.slots == {"dim": 0, "keepdim": 1}
    assert derivatives.entry("pow").slots == {"self": 0, "exponent": 1, "result": 2}
    assert derivatives.entry("where").inputs == (1, 2)  # "self, other" of where(condition, ...)


def test_a_row_naming_an_unknown_argument_fails_at_once():
    with pytest.raises(ValueError, match="'others' is not an argument"):
        derivatives.register("mul(self, other)", "X", inputs="self, others")
    with pytest.raises(ValueError, match="'result' must be the last"):
        derivatives.register("mul(self, other)", "X", save="result, self")
    with pytest.raises(ValueError, match="save_for names unsaved values"):
        derivatives.register("mul(self, other)", "X", save="self", save_for={"other": "self"})


def test_a_formula_reads_saved_values_by_name():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    node = (x * gt.tensor([3.0, 4.0])).grad_fn
    assert node.saved_value("other").tolist() == [3.0, 4.0]
    assert node.saved_value("self") is None  # only other's gradient would read it
    with pytest.raises(KeyError, match="saves no value named 'dim'"):
        node.saved_value("dim")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("reduce", ["sum", "weighted"])
def test_a_squares_gradient_in_one_pass_has_the_formulas_bits(dtype, exponent, reduce):
    """pow(x, 2)'s first-order gradient through square_backward equals the formula
    ``grad * (2 * x.pow(1))`` bit for bit, specials included, with the broadcast gradient
    of ``sum`` and with a full one (float16 takes the formula)."""
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3e38, -7.5, 6e4, 1e-8]
    with np.errstate(all="ignore"):
        values = np.concatenate([np.random.default_rng(4).uniform(-50, 50, 30), specials])
        x_np = values.astype(dtype)
    w = gt.from_numpy(np.linspace(-2, 2, x_np.size).astype(dtype))

    def grad_of(create_graph):
        x = gt.from_numpy(x_np.copy()).requires_grad_()
        y = x.pow(exponent)
        loss = y.sum() if reduce == "sum" else (y * w).sum()
        (g,) = ag.grad(loss, (x,), create_graph=create_graph)
        return g.detach().numpy()

    fused, formula = grad_of(False), grad_of(True)
    assert fused.dtype == formula.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(fused, formula)
