"""The examples in the docstrings of every module of gradstack_tensor run and print what they say
(the API reference shows them: docs/_ext/gradstack_api.py).

Note [Examples run as a reader runs them]
A reader runs an example in a session of their own: the names the module defines or
imports are there (the examples use them unqualified), but ``float``, ``round`` or ``sum``
are Python's, not the ops of the same name that the module's namespace holds.
"""

from __future__ import annotations

import builtins
import doctest
import importlib
import pkgutil

import gradstack_tensor
import pytest

MODULES = sorted(
    {"gradstack_tensor"}
    | {m.name for m in pkgutil.walk_packages(gradstack_tensor.__path__, "gradstack_tensor.")}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    # Note [Examples run as a reader runs them]: the module's names, but Python's builtins
    # where the module shadows one (``float``, ``round``, ``sum`` are ops here), and ``gt``
    globs = {k: v for k, v in vars(module).items() if not hasattr(builtins, k)}
    globs["gt"] = gradstack_tensor  # the examples of Tensor's methods say ``gt.``
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    seen = set()
    for test in doctest.DocTestFinder().find(module, name, globs=globs):
        # a Cython module's ``__test__`` repeats its functions' docstrings (autotestdict)
        if test.examples and test.docstring not in seen:
            seen.add(test.docstring)
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
