"""The dropouts (functional/dropouts.py, modules/dropout.py) against torch: the masks of
``dropout``, ``dropout1d``/``2d``/``3d``, ``alpha_dropout`` and ``feature_alpha_dropout``
after the same seed (bit for bit, float64 and float32), evaluation mode, in-place forms,
module reprs and errors."""

from __future__ import annotations

import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
    assert_seeded_run_matches_torch,
    seeded_run,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

X = np.random.default_rng(2).standard_normal((2, 6, 5, 4))


def test_dropout():
    gt.manual_seed(0)
    x = gt.ones(1000, 10)
    out = F.dropout(x, 0.3)
    kept = out.numpy() != 0
    assert 0.65 < kept.mean() < 0.75
    np.testing.assert_allclose(out.numpy()[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


CHANNEL_DROPOUTS = [
    ("dropout1d", (2, 4, 5)),
    ("dropout1d", (4, 5)),
    ("dropout2d", (2, 4, 3, 3)),
    ("dropout3d", (2, 4, 2, 2, 2)),
    ("dropout3d", (4, 2, 2, 2)),
]


@pytest.mark.parametrize("name, shape", CHANNEL_DROPOUTS)
def test_channel_dropout_draws_torchs_masks(name, shape):
    x = np.random.default_rng(4).standard_normal(shape)
    outs = []
    for lib in (gs, torch):
        lib.manual_seed(7)
        xt = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt, 0.4)
        y.sum().backward()
        outs.append((y.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)
    module = {"dropout1d": "Dropout1d", "dropout2d": "Dropout2d", "dropout3d": "Dropout3d"}[name]
    assert repr(getattr(gs.nn, module)(0.3)) == repr(getattr(torch.nn, module)(0.3))


# ------------------------------------------------------------------ alpha dropout

# in evaluation mode (the functions' default), deterministic: the identity
PROGRAMS = {
    "alpha_dropout_eval": (lambda L, F, x: F.alpha_dropout(x, 0.4), [X]),
    "feature_alpha_dropout_eval": (lambda L, F, x: F.feature_alpha_dropout(x, 0.4), [X]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


RANDOM = {
    "alpha_dropout": lambda L, F, x: F.alpha_dropout(x, 0.3, training=True),
    "alpha_dropout_module": lambda L, F, x: L.nn.AlphaDropout(0.6).train()(x),
    "feature_alpha_dropout": lambda L, F, x: F.feature_alpha_dropout(x, 0.5, True),
    "feature_alpha_dropout_3d": lambda L, F, x: L.nn.FeatureAlphaDropout(0.4)(x[0]),
    "alpha_dropout_p1": lambda L, F, x: F.alpha_dropout(x, 1.0, True),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(RANDOM))
def test_random_layers_draw_torch_s_numbers(name, dtype):
    """The same outputs and gradients as torch's after the same seed, float64 and float32."""
    assert_seeded_run_matches_torch(RANDOM[name], X, dtype)


def test_alpha_dropout_is_random_in_training():
    alpha, _ = seeded_run(gs, RANDOM["alpha_dropout"], X, "float64")
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(alpha, -1.7580993408473766 * a + 1.7580993408473766 * a * 0.3)
    assert 0.15 < dropped.mean() < 0.45
    np.testing.assert_allclose(alpha[~dropped], a * X[~dropped] + 1.7580993408473766 * a * 0.3)
    feature, _ = seeded_run(gs, RANDOM["feature_alpha_dropout"], X, "float64")
    per_channel = np.isclose(feature, feature[:, :, :1, :1]).all(axis=(2, 3))
    assert per_channel.any()  # (whole channels dropped: constant over H, W)


def test_evaluation_mode_is_the_identity():
    x = gs.tensor(X)
    for layer in (gs.nn.AlphaDropout(0.5), gs.nn.FeatureAlphaDropout(0.5)):
        np.testing.assert_array_equal(layer.eval()(x).numpy(), X)


def test_inplace_alpha_dropout_modifies_its_input_as_torch():
    out = []
    for lib in (gs, torch):
        lib.manual_seed(3)
        a = lib.tensor(X.copy())
        lib.nn.functional.alpha_dropout(a, 0.3, True, inplace=True)
        out.append(a.numpy().copy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)
    assert not np.array_equal(out[0], X)


MODULES = [
    ("AlphaDropout", ()), ("AlphaDropout", (0.2, True)), ("FeatureAlphaDropout", (0.7,)),
]  # fmt: skip


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    assert_module_matches_torch(name, args, lambda L: L.tensor(X, dtype=L.float32), eval=True)


# the exception type and words, as torch's
ERRORS = {
    "alpha_dropout_p": lambda L: L.nn.functional.alpha_dropout(L.ones(3), 1.5),
    "feature_alpha_dropout_p": lambda L: L.nn.functional.feature_alpha_dropout(L.ones(3), -0.1),
    "alpha_dropout_module_p": lambda L: L.nn.AlphaDropout(2.0),
    "feature_alpha_dropout_1d": lambda L: L.nn.FeatureAlphaDropout(0.5)(L.ones(6)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


def test_feature_alpha_dropout_checks_dims_only_when_it_draws():
    for lib in (gs, torch):
        x = lib.ones(6)
        assert lib.nn.functional.feature_alpha_dropout(x, 0.5, False).tolist() == [1.0] * 6
        assert lib.nn.functional.feature_alpha_dropout(x, 1.0, True).tolist() == [0.0] * 6


PLAIN_DROPOUT = {
    # Note [Dropout's noise is gradstack's block]: a contiguous float input's noise comes
    # from kernels.result_empty; a transposed input's from empty_like (its layout)
    "dropout": lambda L, F, x: F.dropout(x, 0.3, training=True),
    "dropout_transposed": lambda L, F, x: F.dropout(x.transpose(1, 3), 0.4, training=True),
    "dropout_inplace": lambda L, F, x: F.dropout(x * 1, 0.2, True, inplace=True),
    "dropout_module_0_size": lambda L, F, x: L.nn.Dropout(0.5)(x[:, :0]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(PLAIN_DROPOUT))
def test_dropout_draws_torch_s_mask(name, dtype):
    assert_seeded_run_matches_torch(PLAIN_DROPOUT[name], X, dtype)


def test_dropout_noise_block_is_reused():
    from gradstack_tensor import _allocator

    x = gt.ones(256, 256)  # 256 KiB of float32: a cached size
    F.dropout(x, 0.5)
    hits = _allocator.cache_info()["hits"]
    F.dropout(x, 0.5)  # the first call's noise (and product) were freed: reused
    assert _allocator.cache_info()["hits"] >= hits + 1
