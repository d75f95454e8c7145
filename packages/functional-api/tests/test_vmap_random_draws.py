"""vmap's randomness flag on the random fills added with torch's generator (bernoulli_,
exponential_, random_) and on the random ops with tensor parameters, compared with
torch.func.vmap: the same values after the same seed, or a RuntimeError where gradstack
refuses (torch's errors)."""

from __future__ import annotations

import warnings

import gradstack_functional
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


class _Gradstack:
    """tensor-core's functions and functional-api's ``func``, torch-shaped (this package's
    tests may not import the facade, a higher layer)."""

    func = gradstack_functional.func

    def __getattr__(self, name):
        return getattr(gt, name)


GRADSTACK = _Gradstack()

# f(L, x) with the mapped input x, its in_dims, and the shape of x
TENSOR_PARAMS = {
    "bernoulli": (lambda L, x: L.bernoulli(x), 0, (3, 2)),
    "bernoulli_dim1": (lambda L, x: L.bernoulli(x), 1, (2, 3)),
    "bernoulli_3d": (lambda L, x: L.bernoulli(x), 1, (2, 3, 4)),
    "normal_mean": (lambda L, x: L.normal(x, 1.0), 0, (3, 2)),
    "normal_mean_tensor_std": (lambda L, x: L.normal(x, L.ones(2)), 0, (3, 2)),
    "normal_std_broadcast": (lambda L, x: L.normal(L.zeros(4, 2), x + 1), 0, (3, 2)),
    "normal_std_dim1": (lambda L, x: L.normal(L.zeros(4, 2), x + 1), 1, (2, 3)),
    "multinomial": (lambda L, x: L.multinomial(x + 1, 2), 0, (3, 4)),
    "multinomial_replacement": (lambda L, x: L.multinomial(x + 1, 5, replacement=True), 0, (3, 4)),
    "multinomial_rows": (lambda L, x: L.multinomial(x + 1, 2), 0, (3, 2, 4)),
    "multinomial_rows_dim1": (lambda L, x: L.multinomial(x + 1, 2), 1, (2, 3, 4)),
    "bernoulli_p_": (lambda L, x: L.zeros_like(x).bernoulli_(x), 0, (3, 2)),
    "bernoulli_p_dim1": (lambda L, x: L.zeros_like(x).bernoulli_(x), 1, (2, 3)),
    "bernoulli_unbatched_p_": (lambda L, x: (x * 0).bernoulli_(L.full((2,), 0.5)), 0, (3, 2)),
}


def _run_params(L, name, mode):
    f, in_dims, shape = TENSOR_PARAMS[name]
    L.manual_seed(0)
    x = (L.arange(float(np.prod(shape))).reshape(shape) % 5) / 5
    return L.func.vmap(lambda x: f(L, x), in_dims=in_dims, randomness=mode)(x)


@pytest.mark.parametrize("name", sorted(TENSOR_PARAMS))
def test_tensor_parameters_draw_torchs_values_under_different(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the per-sample fallback
        got = _run_params(GRADSTACK, name, "different")
    expected = _run_params(torch, name, "different")
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(expected.tolist()))


@pytest.mark.parametrize("name", sorted(TENSOR_PARAMS))
def test_tensor_parameters_under_same_as_torch(name):
    # a batched parameter is refused with torch's words (one draw cannot follow per-sample
    # parameters); a batched self with unbatched parameters gets one sample's draw
    try:
        expected = _run_params(torch, name, "same")
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            _run_params(GRADSTACK, name, "same")
        assert str(got.value) == str(e)
        return
    got = _run_params(GRADSTACK, name, "same")
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(expected.tolist()))
