"""Pointwise rows: an op's local derivative is written once, and its backward formula, its
forward formula and its batching rule follow (Note [A pointwise derivative is written
once] in derivatives/_elementwise.py; torch's ``auto_element_wise``)."""

from __future__ import annotations

import gradstack_autograd.forward_ad as fwAD
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import derivatives
from gradstack_autograd import grad as ag_grad
from gradstack_autograd.derivatives import _elementwise, batching, entry

# the differentiable ops of one tensor argument whose forward formula is not torch's
# auto_element_wise of their backward formula, with the reason
NOT_AUTO = {
    "relu": "threshold_backward's tangent: where(result <= 0, 0, t), without the graph "
    "dependency on the result that the backward formula adds (Note [Gradients that depend "
    "on a saved value])",
    "sgn": "the backward gives torch's efficient zero, the tangent plain zeros",
}


def _unary_pointwise_ops():
    kinds = (gt.OPS["neg"].kind, gt.OPS["exp"].kind)  # the two unary kinds
    return sorted(
        name
        for name, op in gt.OPS.items()
        if op.kind in kinds and not op.inplace and op.derivative.differentiable
    )


def test_unary_pointwise_ops_are_elementwise_rows():
    """Their forward formulas are made from the backward's, never written again (the 24
    JVPs that restated a local derivative are gone: issue 32)."""
    ops = _unary_pointwise_ops()
    assert len(ops) >= 30
    hand_written = sorted(set(ops) - set(_elementwise.ROWS) - set(NOT_AUTO))
    assert hand_written == [], f"write these rows with elementwise(): {hand_written}"
    for name, forward in _elementwise.ROWS.items():
        assert entry(name).jvp is forward, f"{name}'s forward formula was replaced by hand"
        inplace = gt.OPS.get(name + "_")
        if inplace is not None and entry(name + "_").node_name == entry(name).node_name:
            assert entry(name + "_").jvp is forward


def test_a_row_saves_what_its_formula_reads():
    exp, log, polygamma = entry("exp"), entry("log"), entry("polygamma")
    assert (exp.save, exp.save_output) == ((), True)  # grad * result
    assert (log.save, log.save_output) == ((0,), False)  # grad / self
    assert (polygamma.save, polygamma.save_output) == ((0, 1), False)  # self, n
    assert exp.save_for is None and entry("neg").save == ()


def test_a_row_takes_its_batching_rule_from_its_arity():
    x = gt.arange(6.0).reshape(2, 3)
    out, bdim = entry("cosh").batch_rule((x,), (0,))
    assert bdim == 0 and np.allclose(out.numpy(), np.cosh(x.numpy()))
    assert "polygamma" in batching.FALLBACK  # a per_sample rule given by its row


@pytest.mark.parametrize("name", sorted(_elementwise.ROWS))
def test_the_forward_formula_is_the_backward_formula_of_the_tangent(name):
    """For a one-input row: the tangent is bit for bit the gradient the backward formula
    gives for an incoming gradient equal to the tangent (auto_element_wise)."""
    if len(entry(name).inputs) != 1 or name == "polygamma":
        pytest.skip("a row of several inputs (checked against torch in test_forward_ad)")
    rng = np.random.default_rng(len(name))
    lo = 1.2 if name == "acosh" else 0.2  # inside the op's domain
    x = gt.from_numpy(rng.uniform(lo, lo + 0.7, (2, 3)))
    t = gt.from_numpy(rng.standard_normal((2, 3)))
    # (the special_* ops have no method, as torch's: the op is called, with the arguments
    # that are not tensors)
    extra = {"round_decimals": (2,)}.get(name, ())
    if hasattr(gt.Tensor, name):
        op = lambda v: getattr(v, name)()  # noqa: E731
    else:
        op = lambda v: gt.OPS[name](v, *extra)  # noqa: E731
    (g,) = ag_grad(op(x.requires_grad_()), x, t)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(op(fwAD.make_dual(x.detach(), t))).tangent
    assert np.array_equal(tangent.numpy(), g.numpy()) and np.isfinite(g.numpy()).all()


def test_a_row_naming_an_unknown_argument_fails_at_once():
    with pytest.raises(ValueError, match="not arguments"):
        derivatives.elementwise("exp(self)", "ExpBackward0", other=lambda grad: grad)
    with pytest.raises(ValueError, match="reads unknown"):
        derivatives.elementwise("exp(self)", "ExpBackward0", self=lambda grad, x: grad * x)
    with pytest.raises(ValueError, match="takes the gradient first"):
        derivatives.elementwise("exp(self)", "ExpBackward0", self=lambda: 0)
