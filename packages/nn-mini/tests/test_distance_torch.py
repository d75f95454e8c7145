"""The distances (functional/distance.py, modules/distance.py) against torch:
``cosine_similarity`` and ``pairwise_distance`` to the second order in float64, and their
modules.  (``cdist`` and ``pdist`` are compared in the root tests'
test_torch_toplevel_nn_functions.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import assert_module_matches_torch, assert_program_matches_torch

torch = pytest.importorskip("torch")

_R = np.random.default_rng(22)
V, V2 = _R.standard_normal((4, 6)), _R.standard_normal((4, 6))

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "cosine_similarity": (lambda L, F, a, b: F.cosine_similarity(a, b), [V, V2]),
    "cosine_similarity_broadcast": (
        lambda L, F, a, b: F.cosine_similarity(a, b[:1], dim=1),
        [V, V2],
    ),
    "pairwise_distance": (lambda L, F, a, b: F.pairwise_distance(a, b), [V, V2]),
    "pairwise_distance_p1": (
        lambda L, F, a, b: F.pairwise_distance(a, b, p=1, keepdim=True),
        [V, V2],
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


@pytest.mark.parametrize("name", ["CosineSimilarity", "PairwiseDistance"])
def test_modules_match_torch(name):
    assert_module_matches_torch(
        name, (), lambda L: (L.tensor(V, dtype=L.float32), L.tensor(V2, dtype=L.float32))
    )
