"""Every op of tensor-core has a batching rule in its entry, or a listed reason to run once
per sample; the rules' docstring examples run."""

from __future__ import annotations

import doctest

import gradstack_tensor as gt
import pytest
from gradstack_autograd import batching_rules, derivatives


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


@pytest.mark.parametrize("module", [batching_rules])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
