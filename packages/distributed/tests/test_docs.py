"""The examples in the docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import gradstack_distributed
import pytest

MODULES = sorted(
    {"gradstack_distributed"}
    | {
        m.name
        for m in pkgutil.walk_packages(gradstack_distributed.__path__, "gradstack_distributed.")
    }
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
