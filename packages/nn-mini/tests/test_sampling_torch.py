"""Resampling and rearranging (functional/sampling.py, modules/upsampling.py,
pixelshuffle.py, channelshuffle.py) against torch: ``interpolate`` in every mode and the
upsampling layers, ``affine_grid`` and ``grid_sample`` (every mode, padding mode and
``align_corners``, edges, non-finite positions), ``pixel_shuffle``/``pixel_unshuffle`` and
``channel_shuffle``: values, first- and second-order gradients in float64, module reprs,
warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_layer_matches_torch,
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
    values_and_gradients,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).uniform(-5, 5, (2, 3, 5, 6))
_RI = np.random.default_rng(5)
X3, X5 = _RI.standard_normal((2, 3, 7)), _RI.standard_normal((1, 2, 3, 4, 5))
_R = np.random.default_rng(11)
IMG = _R.standard_normal((2, 3, 5, 6))
VOL = _R.standard_normal((2, 2, 5, 6, 7))
# grid positions inside and up to 0.4 outside [-1, 1] (no coordinate on a pixel boundary)
GRID = _R.uniform(-1.4, 1.4, (2, 4, 3, 2))
GRID5 = _R.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
# exact positions: the corners, the centre, the borders and beyond (with align_corners=True
# these land on pixel centres, where the border clip and the floor decide the gradient)
EDGE = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, -2.0])
GRID_EDGE = np.stack(np.meshgrid(EDGE, EDGE[::-1]), -1)[None].repeat(2, 0)
THETA = np.array([[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.2, 0.4, 0.3], [-0.5, 0.8, 0.1]]])
THETA3 = _R.uniform(-1, 1, (2, 3, 4)) + np.eye(3, 4)
_RC = np.random.default_rng(2)
XC, XC3, XC5 = (_RC.standard_normal(s) for s in [(2, 6, 5, 4), (2, 6, 7), (2, 4, 3, 2, 3)])

INTERPOLATIONS = [
    (X3, dict(scale_factor=2)),
    (X3, dict(size=11)),
    (X3, dict(size=4)),
    (X3, dict(scale_factor=1.7)),
    (X3, dict(scale_factor=0.6)),
    (X3, dict(size=9, mode="nearest-exact")),
    (X3, dict(size=10, mode="linear")),
    (X3, dict(size=10, mode="linear", align_corners=True)),
    (X3, dict(scale_factor=2.5, mode="linear")),
    (X3, dict(size=5, mode="area")),
    (X, dict(size=(7, 9))),
    (X, dict(size=(7, 9), mode="bilinear")),
    (X, dict(size=(3, 4), mode="bilinear", align_corners=True)),
    (X, dict(scale_factor=(1.5, 2), mode="bilinear")),
    (X, dict(scale_factor=2, mode="bilinear", recompute_scale_factor=True)),
    (X5, dict(size=(4, 5, 6), mode="trilinear")),
    (X5, dict(scale_factor=2)),
]


@pytest.mark.parametrize("x, options", INTERPOLATIONS, ids=[str(o) for _, o in INTERPOLATIONS])
def test_interpolate_matches_torch(x, options):
    results = []
    for lib in (gs, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, **options)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    (a, ga), (b, gb) = results
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-12, atol=1e-12)


def test_upsample_modules_match_torch():
    for build in (
        lambda L: L.nn.Upsample(scale_factor=2),
        lambda L: L.nn.Upsample(size=(3, 9), mode="bilinear"),
        lambda L: L.nn.UpsamplingNearest2d(scale_factor=3),
        lambda L: L.nn.UpsamplingBilinear2d(size=(4, 4)),
    ):
        a, b = build(gs), build(torch)
        assert repr(a) == repr(b)
        np.testing.assert_allclose(a(gs.tensor(X)).numpy(), b(torch.tensor(X)).numpy(), rtol=1e-12)


# ------------------------------------------------------------------ affine_grid, grid_sample


def _gs(L, F, x, g, **kw):
    return F.grid_sample(x, g, **kw)


# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "affine_grid": (lambda L, F, t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), [THETA]),
    "affine_grid_align": (lambda L, F, t: F.affine_grid(t, (2, 1, 3, 4), True), [THETA]),
    "affine_grid_3d": (lambda L, F, t: F.affine_grid(t, (2, 1, 3, 4, 2), False), [THETA3]),
    "affine_grid_3d_align": (lambda L, F, t: F.affine_grid(t, [2, 1, 2, 3, 4], True), [THETA3]),
    "warp": (
        lambda L, F, x, t: F.grid_sample(
            x, F.affine_grid(t, (2, 3, 4, 4), align_corners=False), align_corners=False
        ),
        [IMG, THETA],
    ),
    "warp_3d": (
        lambda L, F, x, t: F.grid_sample(
            x, F.affine_grid(t, (2, 2, 3, 3, 2), align_corners=True), align_corners=True
        ),
        [VOL, THETA3],
    ),
}
for _mode in ("bilinear", "nearest", "bicubic"):
    for _pad in ("zeros", "border", "reflection"):
        for _align in (False, True):
            PROGRAMS[f"grid_sample_{_mode}_{_pad}_{int(_align)}"] = (
                lambda L, F, x, g, m=_mode, p=_pad, a=_align: _gs(
                    L, F, x, g, mode=m, padding_mode=p, align_corners=a
                ),
                [IMG, GRID],
            )
        if _mode != "nearest":  # (nearest: the edge positions are rounding ties)
            PROGRAMS[f"grid_sample_{_mode}_{_pad}_edges"] = (
                lambda L, F, x, g, m=_mode, p=_pad: _gs(
                    L, F, x, g, mode=m, padding_mode=p, align_corners=True
                ),
                [IMG, GRID_EDGE],
            )
    if _mode != "bicubic":
        for _pad in ("zeros", "border", "reflection"):
            PROGRAMS[f"grid_sample_5d_{_mode}_{_pad}"] = (
                lambda L, F, x, g, m=_mode, p=_pad: _gs(
                    L, F, x, g, mode=m, padding_mode=p, align_corners=False
                ),
                [VOL, GRID5],
            )
PROGRAMS["grid_sample_5d_bilinear_border_align"] = (
    lambda L, F, x, g: _gs(L, F, x, g, padding_mode="border", align_corners=True),
    [VOL, GRID5],
)
PROGRAMS["grid_sample_one_pixel_reflection_align"] = (
    lambda L, F, x, g: _gs(L, F, x[:, :, :1], g, padding_mode="reflection", align_corners=True),
    [IMG, GRID],
)
PROGRAMS.update(
    {
        "channel_shuffle": (lambda L, F, x: F.channel_shuffle(x, 3), [XC]),
        "channel_shuffle_3d": (lambda L, F, x: F.channel_shuffle(x, 2), [XC3]),
        "channel_shuffle_5d": (lambda L, F, x: F.channel_shuffle(x, 4), [XC5]),
    }
)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    shuffle = name.startswith("channel_shuffle")
    assert_program_matches_torch(*PROGRAMS[name], second=(1e-9, 1e-10) if shuffle else (1e-8, 1e-9))


def test_gradients_are_not_trivially_zero():
    # the comparisons above would pass for two zero gradients: these are not
    _, (gx, gg), _ = values_and_gradients(gs, *PROGRAMS["grid_sample_bilinear_zeros_0"])
    assert np.abs(gx).sum() > 1 and np.abs(gg).sum() > 1
    _, (gx, gg), _ = values_and_gradients(gs, *PROGRAMS["grid_sample_nearest_zeros_0"])
    assert np.abs(gx).sum() > 1 and not gg.any()  # nearest: a zero grid gradient
    assert not np.allclose(values_and_gradients(gs, *PROGRAMS["channel_shuffle"])[0], XC)


def test_grid_sample_nearest_rounds_half_to_even():
    x = np.arange(5.0).reshape(1, 1, 1, 5)
    # with align_corners=True, x = -0.5 and 0.5 are the pixel positions 1.0 and 3.0; these
    # are 0.5 and 2.5 (ties), which torch's nearbyint rounds to 0 and 2
    grid = np.array([[[[-0.75, 0.0], [0.25, 0.0], [-0.5, 0.0]]]])
    outs = [
        lib.nn.functional.grid_sample(
            lib.tensor(x), lib.tensor(grid), mode="nearest", align_corners=True
        ).flatten().tolist()
        for lib in (gs, torch)
    ]  # fmt: skip
    assert outs[0] == outs[1] == [0.0, 2.0, 1.0]


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_non_finite_positions(mode, padding_mode):
    # Note [Non-finite grid positions] (torch crashes on infinite positions with
    # 'reflection': those are left out)
    bad = [np.nan, np.inf, -np.inf] if padding_mode != "reflection" else [np.nan]
    grid = np.array([[[[b, 0.3], [0.2, b], [b, b], [0.1, -0.4]] for b in bad]])
    outs = [
        lib.nn.functional.grid_sample(
            lib.tensor(IMG[:1]), lib.tensor(grid), mode=mode, padding_mode=padding_mode,
            align_corners=False,
        ).numpy()
        for lib in (gs, torch)
    ]  # fmt: skip
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)  # (NaN == NaN)


def test_align_corners_warnings():
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    for lib in (gs, torch):
        F = lib.nn.functional
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            grid = F.affine_grid(lib.tensor(theta), (1, 1, 3, 3))
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            F.grid_sample(lib.tensor(IMG[:1]), grid)
        with pytest.warns(UserWarning, match="unit-size grids"):
            F.affine_grid(lib.tensor(theta), (1, 1, 1, 3), align_corners=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            F.grid_sample(lib.tensor(IMG[:1]), grid, align_corners=False)


# ------------------------------------------------------------------ pixel and channel shuffles

SHUFFLES = {
    "pixel_shuffle": (
        lambda L: L.nn.PixelShuffle(2),
        np.random.default_rng(6).standard_normal((2, 8, 3, 4)),
    ),
    "pixel_unshuffle": (lambda L: L.nn.PixelUnshuffle(2), X[:, :, :4]),
}


@pytest.mark.parametrize("name", sorted(SHUFFLES))
def test_shuffle_layers_match_torch(name):
    assert_layer_matches_torch(*SHUFFLES[name])


def test_channel_shuffle_module_matches_torch():
    assert_module_matches_torch(
        "ChannelShuffle", (2,), lambda L: L.tensor(XC, dtype=L.float32), eval=True
    )


# the exception type and words, as torch's
ERRORS = {
    "affine_grid_int_theta": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 2, 3, dtype=L.int64), (1, 1, 2, 2), False
    ),
    "grid_sample_mode": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), mode="area", align_corners=False
    ),
    "grid_sample_padding_mode": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), padding_mode="circular", align_corners=False
    ),
    "grid_sample_batch": lambda L: L.nn.functional.grid_sample(
        L.ones(2, 1, 2, 2), L.zeros(1, 1, 1, 2), align_corners=False
    ),
    "grid_sample_last_dim": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 3), align_corners=False
    ),
    "channel_shuffle_dims": lambda L: L.nn.functional.channel_shuffle(L.ones(2, 6), 2),
    "channel_shuffle_divisible": lambda L: L.nn.ChannelShuffle(4)(L.ones(2, 6, 3)),
    "channel_shuffle_groups": lambda L: L.nn.functional.channel_shuffle(L.ones(2, 6, 3), 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


# the exception type, as torch's (gradstack's words say more: which argument, what shape)
ERROR_TYPES = {
    "affine_grid_theta_shape": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 3, 4), (1, 1, 2, 2), False
    ),
    "affine_grid_3d_theta_shape": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 2, 3), (1, 1, 2, 2, 2), False
    ),
    "affine_grid_size_rank": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 2, 3), (1, 1, 2), False
    ),
    "affine_grid_size_zero": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 2, 3), (1, 1, 0, 2), False
    ),
    "grid_sample_rank": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 1, 3), align_corners=False
    ),
    "grid_sample_bicubic_5d": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False
    ),
    "grid_sample_dtype": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2, dtype=L.float64), align_corners=False
    ),
}


@pytest.mark.parametrize("name", sorted(ERROR_TYPES))
def test_error_types_match_torch(name):
    assert_same_error(ERROR_TYPES[name], words=False)
