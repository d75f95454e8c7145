"""The examples in the docstrings run (numpy-style docstrings with runnable examples)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "gradstack_profiler",
    "gradstack_profiler._profile",
    "gradstack_profiler._names",
    "gradstack_profiler.events",
    "gradstack_profiler._table",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
