"""The examples in the docstrings of the ``func`` modules run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "gradstack_functional.func",
    "gradstack_functional.vmap",
    "gradstack_functional.eager_transforms",
    "gradstack_functional.functional_call",
    "gradstack_functional.pytree",
    "gradstack_functional.batched_tensor",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
