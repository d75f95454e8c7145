"""vmap's randomness flag on the random fills added with torch's generator (bernoulli_,
exponential_, random_) and on the random ops with tensor parameters, compared with
torch.func.vmap: the same values after the same seed, or a RuntimeError where gradstack
does not batch (bernoulli/multinomial/normal with tensor parameters)."""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional.func import vmap

torch = pytest.importorskip("torch")
import torch.func as tf  # noqa: E402

FILLS = {
    "bernoulli_": lambda t: t.clone().bernoulli_(0.5),
    "exponential_": lambda t: t.clone().exponential_(),
    "random_": lambda t: t.clone().random_(0, 7),
}


def _run(L, vmap_fn, mode, f):
    L.manual_seed(0)
    return vmap_fn(f, randomness=mode)(L.zeros(3, 4)).numpy()


@pytest.mark.parametrize("mode", ["same", "different"])
@pytest.mark.parametrize("name", sorted(FILLS))
def test_in_place_fills_draw_torchs_values(name, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the per-sample fallback
        got = _run(gt, vmap, mode, FILLS[name])
    np.testing.assert_array_equal(got, _run(torch, tf.vmap, mode, FILLS[name]))


@pytest.mark.parametrize("name", sorted(FILLS))
def test_error_mode_refuses_with_torchs_words(name):
    with pytest.raises(RuntimeError) as expected:
        _run(torch, tf.vmap, "error", FILLS[name])
    with pytest.raises(RuntimeError) as got:
        _run(gt, vmap, "error", FILLS[name])
    assert str(got.value) == str(expected.value)


TENSOR_PARAMS = {
    "bernoulli": lambda t: (t + 0.5).bernoulli(),
    "bernoulli_": lambda t: t.clone().bernoulli_(t + 0.5),
    "multinomial": lambda t: (t + 1).multinomial(2),
    "normal": lambda t: gt.normal(t, 1.0),
}


@pytest.mark.parametrize("mode", ["same", "different"])
@pytest.mark.parametrize("name", sorted(TENSOR_PARAMS))
def test_tensor_parameters_are_refused_not_drawn_per_sample(name, mode):
    # a per-sample loop would give every sample its own draws under randomness="same"
    with pytest.raises(RuntimeError, match=f"does not batch {name} with tensor parameters"):
        _run(gt, vmap, mode, TENSOR_PARAMS[name])
