"""The examples in the docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import gradstack_nn
import pytest

MODULES = sorted(
    {"gradstack_nn"}
    | {m.name for m in pkgutil.walk_packages(gradstack_nn.__path__, "gradstack_nn.")}
)


@pytest.fixture
def registries_kept(monkeypatch):
    """An example may register things process-wide (``register_kl``'s registers a KL
    pair): it gets copies, so the tests after it in this process see the registries as
    they were."""
    from gradstack_nn.distributions import kl

    monkeypatch.setattr(kl, "_KL_REGISTRY", dict(kl._KL_REGISTRY))
    monkeypatch.setattr(kl, "_KL_MEMOIZE", {})


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, registries_kept):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
