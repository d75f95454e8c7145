"""Dropout under vmap, compared with torch.func.vmap after the same seed: its mask is a
``*_like`` factory's draw, batched by functional-api's factory batcher (tensor-core's Note
[Factories under vmap]), so ``randomness="different"`` gives every sample its own mask
and "same" one mask for all, torch's values in both."""

from __future__ import annotations

import gradstack
import numpy as np
import pytest

torch = pytest.importorskip("torch")

CASES = {
    "functional": lambda L, x: L.nn.functional.dropout(x + 1, 0.5),
    "module": lambda L, x: L.nn.Dropout(0.3)(x + 1),
    "eval": lambda L, x: L.nn.functional.dropout(x + 1, 0.5, training=False),
}


def _run(L, name, mode):
    L.manual_seed(0)
    x = L.arange(6.0).reshape(3, 2)
    return L.func.vmap(lambda x: CASES[name](L, x), randomness=mode)(x)


@pytest.mark.parametrize("mode", ["different", "same"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_dropout_under_vmap_draws_torchs_masks(name, mode):
    got, expected = _run(gradstack, name, mode), _run(torch, name, mode)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(expected.tolist()))


def test_dropout_under_vmap_refuses_draws_in_error_mode_with_torchs_words():
    with pytest.raises(RuntimeError) as expected:
        _run(torch, "functional", "error")
    with pytest.raises(RuntimeError) as got:
        _run(gradstack, "functional", "error")
    assert str(got.value) == str(expected.value)
