"""Autograd edge cases found by the random-program comparison with torch 2.13 (issue 11,
``/work/team/fuzz_findings.md``) in the derivative table: each behaves as torch's."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "select",
    [
        lambda t: t.topk(2).values,
        lambda t: t.sort(descending=True).values,
        lambda t: t.reshape(3, 1).max(1).values,
        lambda t: t.reshape(3, 1).min(0, keepdim=True).values,
    ],
    ids=["topk", "sort", "max_dim", "min_dim"],
)
def test_in_place_on_selected_values_is_allowed(select):
    """GE5: torch's selecting nodes keep their indices, not the values: writing the
    values in place afterwards is legal (Note [Selections keep their indices, not their
    values])."""
    grads = []
    for L, autograd in ((gt, ag), (torch, torch.autograd)):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        v = select(x * 1)
        v.exp_()
        (g,) = autograd.grad(v.sum(), x)
        grads.append(g.tolist())
    assert np.allclose(grads[0], grads[1])


def test_max_over_everything_still_sees_ties_and_nans():
    for values, expected in (
        ([2.0, 2.0, 1.0], [0.5, 0.5, 0.0]),
        ([1.0, float("nan"), 3.0], [0.0, 1.0, 0.0]),
    ):
        x = gt.tensor(values, requires_grad=True)
        x.max().backward()
        assert x.grad.tolist() == expected


def test_relu_gradient_requires_grad_under_create_graph():
    """GE15: torch's threshold_backward depends on the saved result (Note [Gradients that
    depend on a saved value])."""
    results = []
    for L, autograd in ((gt, ag), (torch, torch.autograd)):
        v = L.tensor([0.1, -0.2, 0.3], requires_grad=True)
        (g,) = autograd.grad(L.relu(v).sum(), [v], create_graph=True)
        (g2,) = autograd.grad(g.sum(), [v])
        results.append((g.requires_grad, g.tolist(), g2.tolist()))
    assert results[0] == results[1]
    v = gt.tensor([0.1, -0.2], requires_grad=True)
    (g,) = ag.grad(gt.relu(v).sum(), [v])
    assert not g.requires_grad and g.tolist() == [1.0, 0.0]  # without create_graph: as before


def test_remainder_of_a_number_by_a_tensor_has_no_derivative():
    """GE13: torch records NotImplemented for remainder(Scalar, Tensor)."""
    for L, autograd in ((gt, ag), (torch, torch.autograd)):
        x = L.tensor([1.5, 2.0], requires_grad=True)
        y = -1 % x
        assert type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
            autograd.grad(y.sum(), x)
        z = x % 0.7  # the tensor-by-number form differentiates
        (g,) = autograd.grad(z.sum(), x)
        assert g.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda L, x: x.sum(dtype=L.int64),
        lambda L, x: x.prod(dtype=L.int32),
        lambda L, x: x.cumsum(0, dtype=L.int64),
    ],
    ids=["sum", "prod", "cumsum"],
)
def test_integer_dtype_reductions_of_tensors_that_require_grad(call):
    """TC25: torch refuses them ("Autograd not support dtype"); without grad they work."""
    for L, nograd in ((gt, ag.no_grad), (torch, torch.no_grad)):
        x = L.tensor([1.5, 2.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="Autograd not support dtype: (Long|Int)"):
            call(L, x)
        with nograd():
            assert call(L, x).dtype in (L.int64, L.int32)


def test_setitem_from_an_empty_tensor_that_requires_grad():
    """GE9: ``v[:, ...] = x`` with an empty ``x``, then backward."""
    for L, autograd in ((gt, ag), (torch, torch.autograd)):
        x = L.zeros(0, 1, requires_grad=True)
        v = L.ones(0, 1)
        v[:, ...] = x
        (g,) = autograd.grad(v.sum(), x)
        assert list(g.shape) == [0, 1]
