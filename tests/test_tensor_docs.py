"""Every public Tensor method has a docstring, and the examples in them run.

The examples assume ``import gradstack_tensor as gt`` (the modules of the class chain say
so), so they run here with ``gt`` in their globals.
"""

from __future__ import annotations

import doctest
import inspect

import gradstack_tensor as gt
import pytest


def _public_members():
    out = []
    for name in sorted(dir(gt.Tensor)):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(gt.Tensor, name)
        out.append((name, member))
    return out


def test_every_public_tensor_method_has_a_docstring():
    missing = [
        name
        for name, member in _public_members()
        if not (getattr(member, "__doc__", None) or "").strip()
    ]
    assert not missing, f"Tensor methods without a docstring: {missing}"


EXAMPLES = [
    (name, member.__doc__)
    for name, member in _public_members()
    if ">>>" in (getattr(member, "__doc__", None) or "")
]


def test_there_are_examples():
    assert len(EXAMPLES) >= 40


@pytest.mark.parametrize("name,doc", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_docstring_examples_run(name, doc):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {"gt": gt}, f"Tensor.{name}", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"Tensor.{name}: {result.failed} example(s) failed"
