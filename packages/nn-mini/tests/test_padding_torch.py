"""``pad`` and the padding layers (functional/padding.py, modules/padding.py) against
torch: values, first- and second-order gradients in float64 in every mode, module reprs,
errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
)

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.uniform(-5, 5, (2, 3, 5, 6))
X1 = R.standard_normal((2, 3, 7))

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "pad_constant": (lambda L, F, x: F.pad(x, (1, 2, 0, 3), value=1.5), [X]),
    "pad_negative": (lambda L, F, x: F.pad(x, (-1, 2, 1, -2)), [X]),
    "pad_reflect": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="reflect"), [X]),
    "pad_reflect_1d": (lambda L, F, x: F.pad(x, (2, 3), mode="reflect"), [X1]),
    "pad_replicate": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="replicate"), [X]),
    "pad_circular": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="circular"), [X]),
    "pad_circular_3d": (lambda L, F, x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"), [X]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


MODULES = [
    ("ZeroPad2d", ((1, 2, 3, 0),)), ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", (1, -1.0)),
    ("ReflectionPad2d", (2,)), ("ReplicationPad2d", ((1, 0, 2, 1),)), ("CircularPad2d", (1,)),
    ("ReflectionPad1d", ((1, 2),)), ("ZeroPad1d", (2,)),
]  # fmt: skip


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    x = X1 if name.endswith("1d") else X
    assert_module_matches_torch(name, args, lambda L: L.tensor(x, dtype=L.float32))


# the exception type and words, as torch's
ERRORS = {
    "pad_odd": lambda L: L.nn.functional.pad(L.ones(2, 3), (1,)),
    "pad_reflect_too_much": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (3, 0), mode="reflect"),
    "pad_circular_wrap": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (4, 0), mode="circular"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])
