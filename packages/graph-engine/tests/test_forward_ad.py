"""Forward-mode AD (``gradstack_autograd.forward_ad``) and the forward formulas.

* the API of torch.autograd.forward_ad: levels, make_dual / unpack_dual, their errors;
* every differentiable op has a forward formula (or a reason in ``NO_JVP``);
* on every sample of the op database (``autograd_op_db.py``), float64:
  - forward mode equals reverse mode: the tangent of the output is ``J v`` with ``J``
    built row by row with ``grad``; with a batch of tangents, each row likewise;
  - forward-over-reverse: the tangent of a gradient is ``H v`` (reverse-over-reverse as
    the oracle), with the inner gradient taken with and without ``create_graph``;
  - reverse-over-forward: tangents are differentiable (``d/dx w^T J(x) v``);
* tangents through in-place ops, views, saved outputs, no_grad, dtype casts.
"""

from __future__ import annotations

import importlib
import math
import zlib

import gradstack_autograd as ag
import gradstack_autograd.forward_ad as fwAD
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import derivatives
from gradstack_tensor import OPS

db = importlib.import_module("gradstack_autograd_tests_autograd_op_db")


def _rng(*key):
    return np.random.default_rng([20240612] + [zlib.crc32(str(k).encode()) for k in key])


def _samples(predicate=lambda op: True):
    params = []
    for name, op in sorted(db.GRAD_OPS.items()):
        if predicate(op):
            for i, s in enumerate(op.samples(_rng("samples", name))):
                params.append(pytest.param(op, s, id=f"{name}-{i}-{s.desc}"))
    return params


def _tol(op):
    """Tolerance of an exact comparison: looser for ops with float32 in the middle."""
    return 1e-5 if op.eps > 1e-6 else 1e-7


def _float_outputs(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in result if isinstance(o, gt.Tensor) and o.is_floating_point()]


def _reverse_jacobians(sample):
    """``J[i][j]`` (out_i.numel x in_j.numel), one ``grad`` per output element."""
    xs = [db.to_gs(a, gt) for a in sample.inputs]
    outs = _float_outputs(sample.fn(gt, *xs))
    jac = []
    for o in outs:
        blocks = [np.zeros((o.numel(), x.numel())) for x in xs]
        if o.requires_grad:
            flat = o.reshape(-1)
            for k in range(o.numel()):
                g = ag.grad(flat[k], xs, retain_graph=True, allow_unused=True)
                for j, gj in enumerate(g):
                    if gj is not None:
                        blocks[j][k] = gj.numpy().reshape(-1)
        jac.append(blocks)
    return jac, [tuple(o.shape) for o in outs]


def _forward(sample, tangents, batched):
    xs = [db.to_gs(a, gt, requires_grad=False) for a in sample.inputs]
    make = fwAD.make_batched_dual if batched else fwAD.make_dual
    with fwAD.dual_level():
        duals = [make(x, gt.from_numpy(t)) for x, t in zip(xs, tangents)]
        outs = _float_outputs(sample.fn(gt, *duals))
        return [fwAD.unpack_dual(o).tangent for o in outs]


# -------------------------------------------------------------------------------------
# the API


def test_make_dual_unpack_dual_roundtrip():
    x = gt.tensor([1.0, 2.0])
    v = gt.tensor([0.5, -1.0])
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, v)
        assert d is not x and d._base is x
        primal, tangent = fwAD.unpack_dual(d)
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert tangent is v
        assert primal.tolist() == [1.0, 2.0] and fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None
        y = d * d
    assert fwAD.unpack_dual(d).tangent is None  # exiting drops every tangent
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.unpack_dual(y).primal is y


def test_exp_tangent_and_torch_example():
    x = gt.tensor([0.0, 1.0], dtype=gt.float64)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, gt.ones(2, dtype=gt.float64)).exp() * 2
        _, t = fwAD.unpack_dual(y)
    np.testing.assert_allclose(t.numpy(), 2 * np.exp([0.0, 1.0]))


def test_dual_level_is_a_decorator_too():
    @fwAD.dual_level()
    def f(x):
        return fwAD.unpack_dual(fwAD.make_dual(x, gt.ones(2)).sin()).tangent

    np.testing.assert_allclose(f(gt.tensor([0.0, 1.0])).numpy(), np.cos([0.0, 1.0]), rtol=1e-6)
    assert fwAD._current is None


def test_errors():
    x = gt.zeros(3)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, gt.ones(3))
    with pytest.raises(RuntimeError, match="not the last one"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"different size.*\[3\].*\[4\]"):
            fwAD.make_dual(x, gt.ones(4))
        with pytest.raises(ValueError, match="primal to be floating point"):
            fwAD.make_dual(gt.zeros(3, dtype=gt.int64), gt.ones(3))
        with pytest.raises(ValueError, match="tangent to be floating point"):
            fwAD.make_dual(x, gt.ones(3, dtype=gt.int64))
        with pytest.raises(TypeError, match="Tensor as tangent"):
            fwAD.make_dual(x, [1.0, 1.0, 1.0])
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            fwAD.make_dual(fwAD.make_dual(x, gt.ones(3)), gt.ones(3))
        with pytest.raises(RuntimeError, match=r"\[batch\] \+ \[3\]"):
            fwAD.make_batched_dual(x, gt.ones(3))
    assert fwAD._current is None


def test_nested_levels_api():
    x = gt.tensor([2.0, -1.0], dtype=gt.float64)
    with fwAD.nested_dual_level() as outer:
        xo = fwAD.make_dual(x, gt.tensor([1.0, 0.0], dtype=gt.float64), level=outer)
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()  # torch's public API: one level at a time
        with fwAD.nested_dual_level() as inner:
            assert (outer, inner) == (0, 1) and fwAD._current.index == 1
            y = fwAD.make_dual(xo, gt.tensor([1.0, 1.0], dtype=gt.float64)) ** 3  # inner
            p, t = fwAD.unpack_dual(y)  # the innermost level by default
            assert t.tolist() == [12.0, 3.0]  # 3 x^2 v
            assert fwAD.unpack_dual(p, level=inner).tangent is None
            assert fwAD.unpack_dual(p, level=outer).tangent.tolist() == [12.0, 0.0]  # keeps it
            assert fwAD.unpack_dual(t, level=outer).tangent.tolist() == [12.0, 0.0]  # 6 x u v
            with pytest.raises(RuntimeError, match="not the last one"):
                fwAD.exit_dual_level(level=outer)
            with pytest.raises(RuntimeError, match=r"at level 2, but the open levels are \[0, 1\]"):
                fwAD.unpack_dual(y, level=2)
            with pytest.raises(
                RuntimeError, match="already has a forward gradient at the same level 1"
            ):
                fwAD.make_dual(y, gt.ones(2, dtype=gt.float64), level=inner)
        # the inner level closed: its tangents are gone, the outer ones stay
        assert fwAD.unpack_dual(y, level=outer).tangent.tolist() == [12.0, 0.0]
        assert fwAD._current.index == 0 and y._fw_grad is not None and len(y._fw_grad) == 1
    assert fwAD._current is None and fwAD.unpack_dual(y).tangent is None


def test_nested_levels_through_inplace_ops_and_views():
    """An in-place op on a view with tangents at two levels equals its out-of-place form."""

    def run(inplace):
        x = gt.tensor([0.5, 1.5, -1.0], dtype=gt.float64)
        with fwAD.nested_dual_level() as outer:
            xo = fwAD.make_dual(x, gt.tensor([1.0, -2.0, 0.5], dtype=gt.float64), level=outer)
            with fwAD.nested_dual_level() as inner:
                xi = fwAD.make_dual(xo, gt.tensor([0.3, 1.0, 2.0], dtype=gt.float64), level=inner)
                if inplace:
                    y = xi * 1.0
                    y[1:].mul_(xi[:2].exp())
                else:
                    y = gt.cat([xi[:1], xi[1:] * xi[:2].exp()])
                y = (y * y).sum()
                t = fwAD.unpack_dual(y, level=inner).tangent
            return fwAD.unpack_dual(t, level=outer).tangent.item(), t.item()

    np.testing.assert_allclose(run(True), run(False), rtol=1e-12)


def test_tangent_is_cast_to_the_primal_dtype():
    with fwAD.dual_level():
        d = fwAD.make_dual(gt.zeros(2, dtype=gt.float32), gt.ones(2, dtype=gt.float64))
        assert fwAD.unpack_dual(d).tangent.dtype == gt.float32
        t = fwAD.unpack_dual(d.to(gt.float64) * 3).tangent
        assert t.dtype == gt.float64 and t.tolist() == [3.0, 3.0]


def test_non_float_outputs_and_detach_carry_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(gt.tensor([1.0, -2.0]), gt.ones(2))
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
        values, indices = d.max(0)
        assert fwAD.unpack_dual(values).tangent.tolist() == 1.0
        assert fwAD.unpack_dual(indices).tangent is None


def test_tangents_propagate_under_no_grad():
    with fwAD.dual_level():
        d = fwAD.make_dual(gt.tensor([2.0]), gt.tensor([1.0]))
        with ag.no_grad():
            t = fwAD.unpack_dual(d * d).tangent
    assert t.tolist() == [4.0]


def test_missing_formula_raises_not_implemented():
    d = OPS["sin"].derivative
    saved = d.jvp
    d.jvp = None
    try:
        with fwAD.dual_level():
            x = fwAD.make_dual(gt.zeros(2), gt.ones(2))
            with pytest.raises(NotImplementedError, match="forward AD with sin"):
                x.sin()
    finally:
        d.jvp = saved


def test_every_differentiable_op_has_a_forward_formula_or_a_reason():
    missing = sorted(
        name
        for name, op in OPS.items()
        if op.derivative is not None
        and op.derivative.differentiable
        and op.derivative.jvp is None
        and name not in derivatives.NO_JVP
    )
    assert not missing, f"ops without a forward (jvp) formula nor a reason in NO_JVP: {missing}"


def test_inplace_op_on_a_view_updates_the_base_tangent():
    base = gt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float64)
    with fwAD.dual_level():
        b = fwAD.make_dual(base.clone(), gt.ones(2, 2, dtype=gt.float64))
        y = b * 1.0  # a non-view with a tangent
        row = y[1]
        row.mul_(
            fwAD.make_dual(
                gt.tensor([2.0, 2.0], dtype=gt.float64), gt.tensor([1.0, 0.0], dtype=gt.float64)
            )
        )
        t_row = fwAD.unpack_dual(row).tangent
        t_base = fwAD.unpack_dual(y).tangent
    # d(y1 * c) = t_y1 * c + y1 * t_c = [2, 2] + [3, 0]
    assert t_row.tolist() == [5.0, 2.0]
    assert t_base.tolist() == [[1.0, 1.0], [5.0, 2.0]]


def test_setitem_with_a_dual_value():
    with fwAD.dual_level():
        v = fwAD.make_dual(gt.tensor([5.0, 6.0]), gt.tensor([1.0, 2.0]))
        y = gt.zeros(3, 2)
        y[1] = v
        t = fwAD.unpack_dual(y).tangent
    assert t.tolist() == [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]


def test_saved_output_keeps_its_tangent_for_forward_over_reverse():
    # exp saves its output by storage: the gradient e^x needs the tangent e^x v
    x = gt.tensor([0.5, -1.0], dtype=gt.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, gt.tensor([1.0, 2.0], dtype=gt.float64))
        (g,) = ag.grad(d.exp().sum(), d, create_graph=True)
        t = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(t.detach().numpy(), np.exp([0.5, -1.0]) * [1.0, 2.0])


def test_tangent_of_a_leaf_that_requires_grad_is_differentiable():
    x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
    v = gt.tensor([1.0, 1.0], dtype=gt.float64, requires_grad=True)
    with fwAD.dual_level():
        t = fwAD.unpack_dual((fwAD.make_dual(x, v) ** 3).sum()).tangent  # 3 x^2 . v
        gx, gv = ag.grad(t, (x, v))
    assert gx.tolist() == [6.0, 12.0] and gv.tolist() == [3.0, 12.0]


# -------------------------------------------------------------------------------------
# every op of the database


@pytest.mark.parametrize("op,sample", _samples())
def test_forward_equals_reverse(op, sample):
    jac, shapes = _reverse_jacobians(sample)
    rng = _rng("fwd", op.name, sample.desc)
    vs = [rng.standard_normal(np.shape(a)) for a in sample.inputs]
    got = _forward(sample, vs, batched=False)
    for i, shape in enumerate(shapes):
        want = sum(jac[i][j] @ v.reshape(-1) for j, v in enumerate(vs)).reshape(shape)
        t = got[i].numpy() if got[i] is not None else np.zeros(shape)
        np.testing.assert_allclose(
            t, want, rtol=_tol(op), atol=_tol(op) / 100, err_msg=f"output {i}"
        )
    # a batch of 3 tangents at once, each row as if alone
    vb = [rng.standard_normal((3,) + np.shape(a)) for a in sample.inputs]
    got = _forward(sample, vb, batched=True)
    for i, shape in enumerate(shapes):
        want = np.stack(
            [
                sum(jac[i][j] @ v[b].reshape(-1) for j, v in enumerate(vb)).reshape(shape)
                for b in range(3)
            ]
        )
        t = got[i].numpy() if got[i] is not None else np.zeros((3,) + shape)
        assert t.shape == want.shape
        np.testing.assert_allclose(
            t, want, rtol=_tol(op), atol=_tol(op) / 100, err_msg=f"batched output {i}"
        )


def _scalar(sample, xs, ws):
    """A scalar, nonlinear in each output: sum(w * o * o) (second derivatives nonzero)."""
    total = None
    for o, w in zip(_float_outputs(sample.fn(gt, *xs)), ws):
        term = (o * gt.from_numpy(w) * o).sum()
        total = term if total is None else total + term
    return total


def _hvp_reverse(sample, ws, vs):
    xs = [db.to_gs(a, gt) for a in sample.inputs]
    f = _scalar(sample, xs, ws)
    if f is None or not f.requires_grad:
        return None
    g = ag.grad(f, xs, create_graph=True, allow_unused=True)
    dot = None
    for gi, v in zip(g, vs):
        if gi is not None and gi.requires_grad:
            term = (gi * gt.from_numpy(v)).sum()
            dot = term if dot is None else dot + term
    if dot is None:
        return [np.zeros(np.shape(a)) for a in sample.inputs]
    h = ag.grad(dot, xs, allow_unused=True)
    return [np.zeros(np.shape(a)) if r is None else r.numpy() for r, a in zip(h, sample.inputs)]


@pytest.mark.parametrize("op,sample", _samples(lambda op: op.second_order))
@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
def test_forward_over_reverse_is_hvp(op, sample, create_graph):
    rng = _rng("for", op.name, sample.desc)
    xs0 = [db.to_gs(a, gt) for a in sample.inputs]
    ws = [rng.standard_normal(tuple(o.shape)) for o in _float_outputs(sample.fn(gt, *xs0))]
    vs = [rng.standard_normal(np.shape(a)) for a in sample.inputs]
    want = _hvp_reverse(sample, ws, vs)
    if want is None:
        pytest.skip("the sample's outputs do not depend on its inputs")
    for batched in (False, True):
        xs = [db.to_gs(a, gt) for a in sample.inputs]
        with fwAD.dual_level():
            if batched:
                duals = [
                    fwAD.make_batched_dual(x, gt.from_numpy(np.stack([v, -2 * v])))
                    for x, v in zip(xs, vs)
                ]
            else:
                duals = [fwAD.make_dual(x, gt.from_numpy(v)) for x, v in zip(xs, vs)]
            g = ag.grad(
                _scalar(sample, duals, ws), duals, create_graph=create_graph, allow_unused=True
            )
            got = [fwAD.unpack_dual(gi).tangent if gi is not None else None for gi in g]
        for j, (t, w) in enumerate(zip(got, want)):
            expect = np.stack([w, -2 * w]) if batched else w
            t = np.zeros(expect.shape) if t is None else t.detach().numpy()
            np.testing.assert_allclose(
                t,
                expect,
                rtol=_tol(op),
                atol=_tol(op) / 10,
                err_msg=f"input {j}, batched={batched}",
            )


@pytest.mark.parametrize("op,sample", _samples(lambda op: op.second_order))
def test_forward_over_forward_is_uHv(op, sample):
    """Nested levels (Note [Nested levels]): the outer tangent of the inner tangent of a
    scalar is the second directional derivative u^T H v (reverse-over-reverse oracle)."""
    rng = _rng("fof", op.name, sample.desc)
    xs0 = [db.to_gs(a, gt) for a in sample.inputs]
    ws = [rng.standard_normal(tuple(o.shape)) for o in _float_outputs(sample.fn(gt, *xs0))]
    vs = [rng.standard_normal(np.shape(a)) for a in sample.inputs]
    us = [rng.standard_normal(np.shape(a)) for a in sample.inputs]
    hv = _hvp_reverse(sample, ws, vs)
    if hv is None:
        pytest.skip("the sample's outputs do not depend on its inputs")
    want = sum(float(np.sum(u * h)) for u, h in zip(us, hv))
    xs = [db.to_gs(a, gt) for a in sample.inputs]
    with fwAD.nested_dual_level() as outer:
        d1 = [fwAD.make_dual(x, gt.from_numpy(u), level=outer) for x, u in zip(xs, us)]
        with fwAD.nested_dual_level() as inner:
            assert (outer, inner) == (0, 1)
            d2 = [fwAD.make_dual(d, gt.from_numpy(v), level=inner) for d, v in zip(d1, vs)]
            f = _scalar(sample, d2, ws)
            first = fwAD.unpack_dual(f, level=inner).tangent  # v . grad f, a dual at outer
        second = None if first is None else fwAD.unpack_dual(first, level=outer).tangent
    got = 0.0 if second is None else float(second.item())
    assert math.isclose(got, want, rel_tol=_tol(op) * 10, abs_tol=_tol(op)), (got, want)


@pytest.mark.parametrize("op,sample", _samples(lambda op: op.second_order))
def test_reverse_over_forward(op, sample):
    """d/dx of w . (J(x) v), through the tangent's graph, equals the double backward's."""
    rng = _rng("rof", op.name, sample.desc)
    xs = [db.to_gs(a, gt) for a in sample.inputs]
    outs = _float_outputs(sample.fn(gt, *xs))
    ws = [rng.standard_normal(tuple(o.shape)) for o in outs]
    vs = [rng.standard_normal(np.shape(a)) for a in sample.inputs]
    # oracle: grad_x [ (grad_x sum(w * f(x))) . v ]
    total = None
    for o, w in zip(outs, ws):
        if o.requires_grad:
            term = (o * gt.from_numpy(w)).sum()
            total = term if total is None else total + term
    if total is None:
        pytest.skip("the sample's outputs do not depend on its inputs")
    g = ag.grad(total, xs, create_graph=True, allow_unused=True)
    dot = None
    for gi, v in zip(g, vs):
        if gi is not None and gi.requires_grad:
            term = (gi * gt.from_numpy(v)).sum()
            dot = term if dot is None else dot + term
    want = (
        [np.zeros(np.shape(a)) for a in sample.inputs]
        if dot is None
        else [
            np.zeros(np.shape(a)) if r is None else r.numpy()
            for r, a in zip(ag.grad(dot, xs, allow_unused=True), sample.inputs)
        ]
    )
    # forward mode with grad mode on: the tangent is recorded, differentiate it
    xs2 = [db.to_gs(a, gt) for a in sample.inputs]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, gt.from_numpy(v)) for x, v in zip(xs2, vs)]
        tangents = [fwAD.unpack_dual(o).tangent for o in _float_outputs(sample.fn(gt, *duals))]
    dot2 = None
    for t, w in zip(tangents, ws):
        if t is not None and t.requires_grad:
            term = (t * gt.from_numpy(w)).sum()
            dot2 = term if dot2 is None else dot2 + term
    got = (
        [np.zeros(np.shape(a)) for a in sample.inputs]
        if dot2 is None
        else [
            np.zeros(np.shape(a)) if r is None else r.numpy()
            for r, a in zip(ag.grad(dot2, xs2, allow_unused=True), sample.inputs)
        ]
    )
    for j, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=_tol(op), atol=_tol(op) / 10, err_msg=f"input {j}")


def test_hessian_diagonal_by_forward_over_reverse_matches_analytic():
    x = gt.from_numpy(np.linspace(-1.0, 1.0, 5)).requires_grad_()
    with fwAD.dual_level():
        d = fwAD.make_batched_dual(x, gt.eye(5, dtype=gt.float64))
        f = (d.sin() * d.cos()).sum() + (d**3).sum()
        (g,) = ag.grad(f, d)
        h = fwAD.unpack_dual(g).tangent
    xn = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(h.numpy(), np.diag(-2 * np.sin(2 * xn) + 6 * xn), atol=1e-12)
    assert math.isclose(float(h.sum()), float(np.sum(-2 * np.sin(2 * xn) + 6 * xn)))


def test_forward_over_reverse_through_an_inplace_op_on_a_view():
    # CopySlices runs its ops path while a level is open, so tangents flow through it
    def f(x):
        y = x * 1.0
        y[1:].mul_(x[:2])
        return (y**3).sum()

    xn = np.array([0.5, 1.0, 2.0])
    v = np.array([1.0, -1.0, 0.5])
    x = gt.from_numpy(xn.copy()).requires_grad_()
    g = ag.grad(f(x), x, create_graph=True)[0]
    want = ag.grad((g * gt.from_numpy(v.copy())).sum(), x)[0].numpy()
    x2 = gt.from_numpy(xn.copy()).requires_grad_()
    with fwAD.dual_level():
        d = fwAD.make_dual(x2, gt.from_numpy(v.copy()))
        (g2,) = ag.grad(f(d), d)
        got = fwAD.unpack_dual(g2).tangent
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
