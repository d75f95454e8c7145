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
    "gradstack_functional.batching_rules",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_hessian_through_relu_has_no_nan():
    # issue 11: relu's gradient masks with where, so the Hessian has no 0 * inf = NaN
    import gradstack_tensor as gt
    from gradstack_functional import hessian

    h = hessian(lambda t: t.relu().pow(3).sum(), gt.tensor([-1.0, 2.0], dtype=gt.float64))
    assert h.tolist() == [[0.0, 0.0], [0.0, 12.0]]
