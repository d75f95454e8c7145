"""div(a, b, rounding_mode=...): one op whose node is torch's DivBackward2, with zero
gradients (backward through it raised "derivative for aten::floor_divide is not
implemented", where torch gives zeros)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = [[3.0, -5.0], [7.5, 0.0]]


def _divisor(lib, kind):
    if kind == "tensor":
        return lib.tensor([[2.0, -2.0], [0.5, 3.0]], dtype=lib.float64)
    if kind == "row":
        return lib.tensor([2.0, -3.0], dtype=lib.float64)
    if kind == "number":
        return -2.0
    return lib.tensor(-3.0, dtype=lib.float64)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("divisor", ["tensor", "row", "number", "scalar_tensor"])
@pytest.mark.parametrize("form", ["function", "method"])
def test_values_node_and_zero_gradients_match_torch(mode, divisor, form):
    results = []
    for lib in (gt, torch):
        a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        b = _divisor(lib, divisor)
        if isinstance(b, lib.Tensor):
            b.requires_grad_()
        r = (
            lib.div(a, b, rounding_mode=mode)
            if form == "function"
            else a.div(b, rounding_mode=mode)
        )
        r.sum().backward()
        results.append(
            (
                r.detach().numpy().tolist(),
                type(r.grad_fn).__name__,
                a.grad.numpy().tolist(),
                b.grad.numpy().tolist() if isinstance(b, lib.Tensor) else None,
            )
        )
    assert results[0] == results[1]


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_integer_division_keeps_integers(mode):
    for b in (2, -2, gt.tensor([2, -2])):
        tb = torch.tensor(b.tolist()) if isinstance(b, gt.Tensor) else b
        got = gt.div(gt.tensor([7, -7]), b, rounding_mode=mode)
        want = torch.div(torch.tensor([7, -7]), tb, rounding_mode=mode)
        assert got.dtype is gt.int64 and got.tolist() == want.tolist()


def test_double_backward_and_forward_ad_are_zeros():
    x = gt.tensor([3.5, -1.5], dtype=gt.float64, requires_grad=True)
    (g,) = ag.grad(gt.div(x * x, 2.0, rounding_mode="floor").sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0]
    import gradstack_autograd.forward_ad as fwAD

    with fwAD.dual_level():
        d = fwAD.make_dual(gt.tensor([3.5, -1.5], dtype=gt.float64), gt.ones(2, dtype=gt.float64))
        out = gt.div(d, 2.0, rounding_mode="trunc")
        assert np.array_equal(fwAD.unpack_dual(out).tangent.numpy(), [0.0, 0.0])


def test_a_bad_mode_is_torch_s_error():
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        gt.div(gt.ones(2), 2, rounding_mode="round")


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_tensor_keeps_its_graph_under_create_graph(name):
    # (placed with the other zero-gradient formulas: the gradient is 0 but, as torch's
    # formula, it stays attached to the output, so it requires grad under create_graph)
    results = []
    for lib in (gt, torch):
        x = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        grad = ag.grad if lib is gt else torch.autograd.grad
        (g,) = grad(getattr(lib, name)(x * 2, 0), x, create_graph=True)
        results.append((g.item(), g.requires_grad, type(g.grad_fn).__name__))
    assert results[0] == results[1]
