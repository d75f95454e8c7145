"""Every op of tensor-core has a batching rule in its entry, or a listed reason to run once
per sample; rows give their rules by kind or by function (Note [A batching rule per
entry]); the rules' docstring examples run."""

from __future__ import annotations

import doctest

import gradstack_tensor as gt
import pytest
from gradstack_autograd import derivatives
from gradstack_autograd.derivatives import _table, views
from gradstack_autograd.derivatives import batching as batching_rules


def _without_rule():
    return sorted(name for name, op in gt.OPS.items() if op.derivative.batch_rule is None)


def test_every_op_has_a_rule_or_a_fallback_reason():
    missing = sorted(set(_without_rule()) - set(batching_rules.FALLBACK))
    assert missing == [], f"ops without a batching rule or a FALLBACK reason: {missing}"
    assert sorted(set(batching_rules.FALLBACK) - set(gt.OPS)) == []
    with_rule = set(gt.OPS) - set(_without_rule())
    assert not with_rule & set(batching_rules.FALLBACK)
    assert all(isinstance(r, str) and r for r in batching_rules.FALLBACK.values())


def test_the_coverage_check_fails_for_an_op_without_rule(monkeypatch):
    entry = derivatives.entry("sum")
    monkeypatch.setattr(entry, "batch_rule", None)
    assert "sum" in set(_without_rule()) - set(batching_rules.FALLBACK)


def test_a_rule_is_read_from_the_entry():
    x = gt.arange(6.0).reshape(2, 3)
    rule = derivatives.entry("sum").batch_rule
    assert batching_rules.rule_of("sum") is rule
    out, bdim = rule((x, (0,), False, None), (0, None, None, None))
    assert out.tolist() == [3.0, 12.0] and bdim == 0


def test_in_place_variants_have_their_own_rules():
    # add_'s rule writes into self; add's makes a new tensor: not the same function
    assert derivatives.entry("add_").batch_rule is not derivatives.entry("add").batch_rule
    x = gt.zeros(2, 3)
    out, bdim = derivatives.entry("add_").batch_rule((x, gt.ones(2, 3), 1), (0, 0, None))
    assert out is x and bdim == 0 and x.tolist() == [[1.0] * 3] * 2


def test_a_kind_is_bound_to_the_name_of_its_row():
    # sum's row says batch=reduction: its rule reduces with sum, count_nonzero's with
    # count_nonzero (the kind with keepdim_pos=None)
    x = gt.tensor([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    out, _ = derivatives.entry("sum").batch_rule((x, None, False, None), (0, None, None, None))
    assert out.tolist() == [5.0, 5.0]
    out, _ = derivatives.entry("count_nonzero").batch_rule((x, None), (0, None))
    assert out.tolist() == [2, 1]


def test_a_kind_with_options_keeps_them_and_builds_rules_by_name():
    kind = batching_rules.reduction(keepdim_pos=None)
    assert isinstance(kind, batching_rules.RuleKind)
    assert kind.options == {"keepdim_pos": None}
    assert batching_rules.reduction.options == {}  # the shared kind is unchanged
    rule = kind.bind("sum")
    x = gt.arange(6.0).reshape(2, 3)
    assert rule((x, 0), (0, None))[0].tolist() == [3.0, 12.0]
    # called with a name, a kind builds that op's rule at once
    direct = batching_rules.pointwise("mul")
    out, bdim = direct((x, gt.full((3,), 2.0)), (0, None))
    assert out.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]] and bdim == 0
    assert "reduction" in repr(kind) and "keepdim_pos=None" in repr(kind)


def test_a_rule_written_for_an_op_is_stored_as_it_is():
    assert derivatives.entry("permute").batch_rule is views._permute_rule
    for name in ("matmul", "mm", "bmm", "mv", "dot"):
        assert derivatives.entry(name).batch_rule.__name__ == "_matmul_rule"


def test_rows_register_the_in_place_variant_with_the_inplace_kind():
    # every in-place variant made by a row of an op with a rule writes through self
    for name in ("sin_", "mul_", "pow_", "relu_", "floor_divide_", "leaky_relu_"):
        assert derivatives.entry(name).batch_rule.__name__ == f"inplace_{name}", name
    x = gt.ones(2, 3)
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        derivatives.entry("mul_").batch_rule((x, gt.ones(2, 3)), (None, 0))


def test_per_sample_needs_a_reason_and_lists_it():
    with pytest.raises(ValueError, match="reason"):
        batching_rules.per_sample("")
    assert "diag" in batching_rules.FALLBACK
    assert derivatives.entry("diag").batch_rule is None
    assert "diagonal" in batching_rules.FALLBACK["diag"]


def test_set_batch_rule_reads_each_form(monkeypatch):
    monkeypatch.setattr(derivatives.entry("neg"), "batch_rule", None)
    monkeypatch.setattr(batching_rules, "FALLBACK", dict(batching_rules.FALLBACK))

    def rule(args, bdims):
        return args[0], bdims[0]

    _table._set_batch_rule("neg", rule)
    assert derivatives.entry("neg").batch_rule is rule
    _table._set_batch_rule("neg", batching_rules.unary)
    assert derivatives.entry("neg").batch_rule.__name__ == "unary_neg"
    _table._set_batch_rule("neg", batching_rules.per_sample("a test's reason"))
    assert batching_rules.FALLBACK["neg"] == "a test's reason"


def test_not_differentiable_ops_are_listed_by_every_family():
    for name in ("eq", "argmax", "detach", "multinomial", "embedding_renorm_"):
        assert name in derivatives.NOT_DIFFERENTIABLE
        assert not derivatives.entry(name).differentiable


@pytest.mark.parametrize("module", [batching_rules])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
