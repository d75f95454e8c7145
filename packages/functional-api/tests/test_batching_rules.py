"""Every op of tensor-core has a batching rule or a listed reason to run once per sample."""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_functional.batching_rules import FALLBACK, RULES


def test_every_op_has_a_rule_or_a_fallback_reason():
    ops = set(gt.OPS)
    missing = sorted(ops - set(RULES) - set(FALLBACK))
    assert missing == [], f"ops without a batching rule or a FALLBACK reason: {missing}"
    assert sorted(set(RULES) - ops) == []
    assert sorted(set(FALLBACK) - ops) == []
    assert not set(RULES) & set(FALLBACK)
    assert all(isinstance(reason, str) and reason for reason in FALLBACK.values())
