"""The batched backward: ``grad(..., is_grads_batched=True)`` in one pass.

* on every sample of the op database, a batched ``grad`` equals the loop of one ``grad``
  per row, also with ``create_graph=True`` and through a second backward of the result;
* graphs that cannot take a batch (custom Function, hooks, in-place on a view) run row by
  row, with the same results, and ``unbatchable_reason`` names the node;
* argument errors and ``materialize_grads``.
"""

from __future__ import annotations

import importlib
import zlib

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _engine

db = importlib.import_module("gradstack_autograd_tests_autograd_op_db")
B = 3


def _rng(*key):
    return np.random.default_rng([20240613] + [zlib.crc32(str(k).encode()) for k in key])


def _samples():
    params = []
    for name, op in sorted(db.GRAD_OPS.items()):
        for i, s in enumerate(op.samples(_rng("samples", name))):
            params.append(pytest.param(op, s, id=f"{name}-{i}-{s.desc}"))
    return params


def _roots(result):
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [
        o for o in result if isinstance(o, gt.Tensor) and o.is_floating_point() and o.requires_grad
    ]


def _as_np(g, shape):
    return np.zeros(shape) if g is None else g.detach().numpy()


@pytest.mark.parametrize("op,sample", _samples())
@pytest.mark.parametrize("create_graph", [False, True], ids=["no_graph", "create_graph"])
def test_batched_grad_equals_the_row_loop(op, sample, create_graph):
    rng = _rng("bw", op.name, sample.desc)
    tol = 1e-5 if op.eps > 1e-6 else 1e-9  # float32 in the middle (to_dtype)
    xs = [db.to_gs(a, gt) for a in sample.inputs]
    roots = _roots(sample.fn(gt, *xs))
    if not roots:
        pytest.skip("no differentiable output")
    gos = [gt.from_numpy(rng.standard_normal((B,) + tuple(o.shape))) for o in roots]
    assert _engine.unbatchable_reason(tuple(roots), tuple(xs)) is None
    got = ag.grad(
        roots,
        xs,
        gos,
        retain_graph=True,
        allow_unused=True,
        is_grads_batched=True,
        create_graph=create_graph,
    )
    rows = [
        ag.grad(
            roots,
            xs,
            [g[b] for g in gos],
            retain_graph=True,
            allow_unused=True,
            create_graph=create_graph,
        )
        for b in range(B)
    ]
    for j, x in enumerate(xs):
        want = np.stack([_as_np(r[j], tuple(x.shape)) for r in rows])
        np.testing.assert_allclose(
            _as_np(got[j], (B,) + tuple(x.shape)),
            want,
            rtol=tol,
            atol=tol / 100,
            err_msg=f"input {j}",
        )
    if not create_graph:
        return
    # a second backward through the batched results equals the one through the rows
    ws = [np.linspace(0.5, 1.5, B * x.numel()).reshape((B,) + tuple(x.shape)) for x in xs]
    terms = [
        (g * gt.from_numpy(w)).sum() for g, w in zip(got, ws) if g is not None and g.requires_grad
    ]
    if not terms:
        return
    second = ag.grad(sum(terms[1:], terms[0]), xs, retain_graph=True, allow_unused=True)
    terms = [
        (r[j] * gt.from_numpy(np.array(ws[j][b]))).sum()
        for b, r in enumerate(rows)
        for j in range(len(xs))
        if r[j] is not None and r[j].requires_grad
    ]
    want = ag.grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
    for j, x in enumerate(xs):
        np.testing.assert_allclose(
            _as_np(second[j], tuple(x.shape)),
            _as_np(want[j], tuple(x.shape)),
            rtol=tol,
            atol=tol / 100,
        )


def test_jacobian_of_exp_adder_in_one_pass():
    x = gt.tensor([0.1, 0.2, 0.3], dtype=gt.float64, requires_grad=True)
    y = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    out = 2 * x.exp() + 3 * y
    gx, gy = ag.grad(out, (x, y), gt.eye(3, dtype=gt.float64), is_grads_batched=True)
    np.testing.assert_allclose(gx.numpy(), np.diag(2 * np.exp([0.1, 0.2, 0.3])))
    np.testing.assert_allclose(gy.numpy(), 3 * np.eye(3))


class _Double(ag.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def _check_fallback(build, reason_part):
    x = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    out = build(x)
    reason = _engine.unbatchable_reason((out,), (x,))
    assert reason is not None and reason_part in reason, reason
    (g,) = ag.grad(out, x, gt.eye(3, dtype=gt.float64), is_grads_batched=True, retain_graph=True)
    rows = [ag.grad(out, x, gt.eye(3, dtype=gt.float64)[b], retain_graph=True)[0] for b in range(3)]
    np.testing.assert_allclose(g.numpy(), np.stack([r.numpy() for r in rows]))


def test_custom_function_falls_back_to_rows():
    _check_fallback(lambda x: _Double.apply(x.sin()) * x, "not a derivative-table node")


def test_hooks_fall_back_to_rows():
    def build(x):
        y = x.sin()
        y.register_hook(lambda g: g * 2)
        return y * x

    _check_fallback(build, "hooks")


def test_inplace_on_a_view_falls_back_to_rows():
    def build(x):
        y = x * 1.0
        y[1:].mul_(x[:2])
        return y * 3

    _check_fallback(build, "not a derivative-table node")


def test_a_derivative_marked_not_batchable_falls_back():
    d = gt.OPS["sin"].derivative
    d.batchable = False
    try:
        _check_fallback(lambda x: x.sin() * x, "SinBackward0 (sin) is not batchable")
    finally:
        d.batchable = True


def test_materialize_grads_are_batched():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    z = gt.tensor([1.0], requires_grad=True)
    gx, gz = ag.grad(x * 2, (x, z), gt.eye(2), is_grads_batched=True, materialize_grads=True)
    assert gx.tolist() == [[2.0, 0.0], [0.0, 2.0]]
    assert tuple(gz.shape) == (2, 1) and gz.tolist() == [[0.0], [0.0]]


def test_batched_argument_errors():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="needs grad_outputs"):
        ag.grad(y, x, is_grads_batched=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape.*first dim is the batch"):
        ag.grad(y, x, gt.ones(2), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="different batch sizes"):
        ag.grad((y, x * 3), x, (gt.ones(2, 2), gt.ones(3, 2)), is_grads_batched=True)


def test_broadcast_inputs_are_reduced_keeping_the_batch():
    a = gt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=gt.float64, requires_grad=True)
    b = gt.tensor([1.0, 10.0, 100.0], dtype=gt.float64, requires_grad=True)
    out = a * b  # b broadcast over rows
    gos = gt.from_numpy(np.arange(12.0).reshape(2, 2, 3))
    ga, gb = ag.grad(out, (a, b), gos, is_grads_batched=True)
    assert tuple(gb.shape) == (2, 3)
    np.testing.assert_allclose(gb.numpy(), (gos.numpy() * a.detach().numpy()).sum(1))
    np.testing.assert_allclose(ga.numpy(), gos.numpy() * b.detach().numpy())
