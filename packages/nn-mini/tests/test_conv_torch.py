"""The convolutions (functional/conv.py, modules/conv.py) against torch: values and
gradients of ``F.conv2d`` over random configurations (groups, padding modes, dilation,
stride, unbatched inputs), the 1-d, 3-d and transposed convolutions and their modules
(initial weights after the same seed, first- and second-order gradients), unfold/fold, the
errors, the modules' defaults, repr, initialisation and state_dict, and
``Module.to('meta')``."""

from __future__ import annotations

import copy

import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_layer_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
)

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(7)


def _config(rng):
    groups = int(rng.integers(1, 3))
    c, o = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
    kernel = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = [int(rng.integers(0, 3)), (int(rng.integers(0, 3)), 1), "same", "valid"][
        int(rng.integers(0, 4))
    ]
    if padding == "same":
        stride = (1, 1)
    shape = (c, 6, 7) if rng.random() < 0.3 else (2, c, 6, 7)
    return shape, (o, c // groups) + kernel, stride, padding, dilation, groups


CONFIGS = [_config(RNG) for _ in range(40)]


def _run(lib, shape, wshape, stride, padding, dilation, groups, bias, seed):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
    w = lib.tensor(rng.standard_normal(wshape), requires_grad=True)
    b = lib.tensor(rng.standard_normal(wshape[0]), requires_grad=True) if bias else None
    y = lib.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups)
    weights = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    (y * weights).sum().backward()
    grads = [x.grad, w.grad] + ([b.grad] if bias else [])
    return [np.asarray(t.detach().tolist()) for t in [y] + grads]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
def test_conv2d_values_and_gradients_match_torch(config):
    import gradstack as gs

    ours = _run(gs, *config, bias=True, seed=3)
    theirs = _run(torch, *config, bias=True, seed=3)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_conv2d_without_bias_and_in_float32():
    import gradstack as gs

    cfg = ((2, 2, 5, 5), (3, 2, 3, 3), (1, 1), 1, (1, 1), 1)
    for a, b in zip(_run(gs, *cfg, bias=False, seed=1), _run(torch, *cfg, bias=False, seed=1)):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    x, w = (
        RNG.standard_normal((1, 2, 6, 6)).astype(np.float32),
        RNG.standard_normal((4, 2, 3, 3)).astype(np.float32),
    )
    ours = F.conv2d(gt.tensor(x), gt.tensor(w), stride=2)
    theirs = TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert ours.dtype == gt.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "xshape,wshape,kwargs",
    [
        ((2, 3, 5, 5), (4, 2, 3, 3), {}),  # channels do not match
        ((2, 4, 5, 5), (3, 2, 3, 3), {"groups": 2}),  # out channels not divisible
        ((2, 3, 2, 2), (4, 3, 3, 3), {}),  # kernel larger than the input
        ((3, 5, 5), (4, 3, 3), {}),  # 3-d weight
        ((5, 5), (4, 1, 3, 3), {}),  # 2-d input
        ((2, 3, 5, 5), (4, 3, 3, 3), {"padding": "same", "stride": 2}),
        ((2, 3, 5, 5), (4, 3, 3, 3), {"padding": "full"}),
        ((2, 3, 5, 5), (4, 3, 3, 3), {"bias_shape": (3,)}),
    ],
)
def test_conv2d_errors_are_torchs(xshape, wshape, kwargs):
    kwargs = dict(kwargs)
    bias_shape = kwargs.pop("bias_shape", None)

    def error(lib, functional):
        x, w = lib.zeros(xshape), lib.zeros(wshape)
        b = lib.zeros(bias_shape) if bias_shape else None
        try:
            functional.conv2d(x, w, b, **kwargs)
        except Exception as e:  # noqa: BLE001 - the error is the result
            return type(e)
        return None

    theirs = error(torch, TF)
    assert theirs is not None
    assert error(gt, F) is theirs


def test_conv2d_dtype_mismatch_raises():
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv2d(gt.zeros(1, 1, 3, 3), gt.zeros(1, 1, 2, 2, dtype=gt.float64))


def test_unfold_fold_round_trip_counts_windows():
    x = gt.ones(1, 2, 4, 5)
    counts = F.fold(F.unfold(x, (2, 3), padding=1, stride=(1, 2)), (4, 5), (2, 3), padding=1,
                    stride=(1, 2))  # fmt: skip
    theirs = TF.fold(
        TF.unfold(torch.ones(1, 2, 4, 5), (2, 3), padding=1, stride=(1, 2)),
        (4, 5),
        (2, 3),
        padding=1,
        stride=(1, 2),
    )
    np.testing.assert_array_equal(counts.numpy(), theirs.numpy())


MODULES = [
    ("Conv2d(1, 32, 3, 1)", lambda M: M.Conv2d(1, 32, 3, 1)),
    (
        "Conv2d options",
        lambda M: M.Conv2d(
            4, 6, (3, 2), stride=2, padding=1, dilation=(2, 1), groups=2, bias=False
        ),
    ),
    ("Conv2d same", lambda M: M.Conv2d(2, 3, 4, padding="same")),
    ("Unfold", lambda M: M.Unfold(2, padding=1)),
    ("Fold", lambda M: M.Fold((4, 4), 2)),
]


@pytest.mark.parametrize("make", [m for _, m in MODULES], ids=[n for n, _ in MODULES])
def test_modules_repr_and_state_dict_match_torch(make):
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]


def test_conv2d_init_is_torchs_interval():
    conv = nn.Conv2d(4, 8, (3, 2), groups=2)
    bound = 1 / np.sqrt(2 * 3 * 2)  # fan_in = in_channels / groups * kH * kW
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    assert conv.weight.detach().numpy().std() > bound / 4  # spread over the interval


def test_conv2d_module_padding_modes():
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    # the other modes pad with F.pad first, as torch (test_conv_modules_match_torch compares)
    assert "padding_mode=reflect" in repr(nn.Conv2d(1, 1, 3, padding_mode="reflect"))
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")


def test_module_to_meta_keeps_shapes_and_drops_data():
    import gradstack as gs

    net = gs.nn.Sequential(gs.nn.Conv2d(1, 2, 3), gs.nn.ReLU(), gs.nn.Flatten(), gs.nn.Linear(8, 3))
    base = copy.deepcopy(net).to("meta")
    for (name, p), (_, q) in zip(base.named_parameters(), net.named_parameters()):
        assert p.is_meta and p.device.type == "meta" and not q.is_meta, name
        assert p.shape == q.shape and p.dtype == q.dtype and p.requires_grad
    x = gs.randn(2, 1, 4, 4)
    params = dict(net.named_parameters())
    out = gs.func.functional_call(base, params, (x,))
    np.testing.assert_allclose(out.detach().numpy(), net(x).detach().numpy())
    # torch's refusal of a real input beside meta weights (Note [Meta and real operands do
    # not mix]; torch's own conv2d lets this one pass, its linear refuses it)
    with pytest.raises(RuntimeError, match="Tensor on device meta is not on the expected"):
        base(x)
    assert repr(base[0].weight) == repr(torch.nn.Conv2d(1, 2, 3).to("meta").weight)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(dilation=3, output_padding=2),
        dict(stride=1, dilation=2, output_padding=1, padding=1),
        dict(stride=2, dilation=2, output_padding=1),
    ],
)
def test_conv_transpose2d_output_padding_below_the_dilation_matches_torch(kwargs):
    # torch allows output_padding >= stride when it is below the dilation; the fold of the
    # windows must not be asked for rows they do not cover
    r = np.random.default_rng(0)
    x, w = r.standard_normal((1, 2, 4, 4)), r.standard_normal((2, 3, 3, 3))
    outs = []
    for lib, functional in ((gt, F), (torch, torch.nn.functional)):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = functional.conv_transpose2d(xt, wt, **kwargs)
        (out * out).sum().backward()
        outs.append([out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()])
    for o, t in zip(*outs, strict=True):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------
# the modules: 1-d, 2-d (every padding mode) and 3-d convolutions, transposed ones

R = np.random.default_rng(0)
X = R.uniform(-5, 5, (2, 3, 5, 6))
X1 = R.standard_normal((2, 3, 7))

CONVS = {
    "conv1d": (lambda L: L.nn.Conv1d(3, 4, 3), (2, 3, 11)),
    "conv1d_options": (
        lambda L: L.nn.Conv1d(3, 4, 3, stride=2, padding=2, dilation=2, bias=False),
        (2, 3, 11),
    ),
    "conv1d_same_groups": (lambda L: L.nn.Conv1d(3, 6, 4, padding="same", groups=3), (2, 3, 11)),
    "conv1d_unbatched": (lambda L: L.nn.Conv1d(3, 4, 3), (3, 11)),
    "conv1d_reflect": (
        lambda L: L.nn.Conv1d(3, 4, 3, padding=2, padding_mode="reflect"),
        (2, 3, 11),
    ),
    "conv2d_circular": (
        lambda L: L.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode="circular"),
        (2, 3, 9, 8),
    ),
    "conv2d_replicate_same": (
        lambda L: L.nn.Conv2d(3, 4, (3, 2), padding="same", padding_mode="replicate"),
        (2, 3, 9, 8),
    ),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv_modules_match_torch(name):
    build, shape = CONVS[name]
    assert_layer_matches_torch(build, np.random.default_rng(3).standard_normal(shape))


TRANSPOSED = {
    "conv_transpose2d": (lambda L: L.nn.ConvTranspose2d(3, 4, 3), X, {}),
    "conv_transpose2d_options": (
        lambda L: L.nn.ConvTranspose2d(
            3, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=3, bias=False
        ),
        X,
        {},
    ),
    "conv_transpose2d_output_size": (
        lambda L: L.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1),
        X,
        {"output_size": (10, 12)},
    ),
    "conv_transpose1d": (lambda L: L.nn.ConvTranspose1d(3, 2, 3, stride=2, dilation=2), X1, {}),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSED))
def test_conv_transpose_modules_match_torch(name):
    assert_layer_matches_torch(*TRANSPOSED[name])


_R3 = np.random.default_rng(13)
VOL = _R3.standard_normal((2, 2, 5, 6, 7))
W3, B3, WT3 = (_R3.standard_normal(s) for s in [(4, 2, 3, 2, 3), (4,), (2, 3, 2, 3, 2)])

# name -> (fn(L, F, *tensors), arrays): 3-d convolutions, to the second order
PROGRAMS = {
    "conv3d": (lambda L, F, x, w, b: F.conv3d(x, w, b), [VOL, W3, B3]),
    "conv3d_options": (
        lambda L, F, x, w, b: F.conv3d(
            x, w, b, stride=(2, 1, 2), padding=(1, 2, 0), dilation=(2, 1, 1)
        ),
        [VOL, W3, B3],
    ),  # fmt: skip
    "conv3d_groups_same": (
        lambda L, F, x, w: F.conv3d(x, w[:, :1], padding="same", groups=2),
        [VOL, W3],
    ),
    "conv3d_unbatched_valid": (
        lambda L, F, x, w: F.conv3d(x[0], w, padding="valid"),
        [VOL, W3],
    ),
    "conv_transpose3d": (
        lambda L, F, x, w: F.conv_transpose3d(x, w),
        [VOL[:, :, :3, :4, :3], WT3],
    ),
    "conv_transpose3d_options": (
        lambda L, F, x, w, b: F.conv_transpose3d(
            x,
            w,
            b[:3],
            stride=(2, 1, 3),
            padding=(1, 0, 2),
            output_padding=(1, 0, 2),
            dilation=(1, 2, 1),
        ),
        [VOL[:, :, :3, :4, :3], WT3, B3],
    ),  # fmt: skip
    "conv_transpose3d_groups": (
        lambda L, F, x, w: F.conv_transpose3d(x, w[:, :2], stride=2, groups=2, padding=1),
        [VOL[:, :, :3, :4, :3], WT3],
    ),
    "conv_transpose3d_dilation_output_padding": (
        lambda L, F, x, w: F.conv_transpose3d(x[0], w, dilation=3, output_padding=2),
        [VOL[:, :, :3, :4, :3], WT3],
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


CONVS_3D = {
    "conv3d": (lambda L: L.nn.Conv3d(2, 4, 3), (2, 2, 5, 6, 7)),
    "conv3d_options": (
        lambda L: L.nn.Conv3d(
            2, 4, (3, 2, 1), stride=(1, 2, 2), padding=(2, 1, 0), dilation=(2, 1, 3), bias=False
        ),
        (2, 2, 5, 6, 7),
    ),  # fmt: skip
    "conv3d_same_groups": (
        lambda L: L.nn.Conv3d(2, 4, (2, 3, 4), padding="same", groups=2),
        (2, 2, 5, 6, 7),
    ),  # fmt: skip
    "conv3d_unbatched": (lambda L: L.nn.Conv3d(2, 3, 2), (2, 4, 5, 3)),
    "conv3d_reflect": (
        lambda L: L.nn.Conv3d(2, 3, 3, padding=1, padding_mode="reflect"),
        (2, 2, 5, 6, 7),
    ),  # fmt: skip
    "conv3d_circular": (
        lambda L: L.nn.Conv3d(2, 3, 3, padding=(1, 2, 1), padding_mode="circular"),
        (1, 2, 5, 6, 7),
    ),
    "conv3d_replicate_same": (
        lambda L: L.nn.Conv3d(2, 3, (2, 3, 2), padding="same", padding_mode="replicate"),
        (1, 2, 5, 6, 7),
    ),
    "conv_transpose3d": (lambda L: L.nn.ConvTranspose3d(2, 4, 3), (2, 2, 3, 4, 3)),
    "conv_transpose3d_options": (
        lambda L: L.nn.ConvTranspose3d(
            2,
            6,
            (3, 2, 2),
            stride=(2, 1, 2),
            padding=(1, 0, 1),
            output_padding=(1, 0, 1),
            groups=2,
            bias=False,
            dilation=(1, 2, 1),
        ),
        (2, 2, 3, 4, 3),
    ),  # fmt: skip
    "conv_transpose3d_unbatched": (lambda L: L.nn.ConvTranspose3d(2, 3, 2, 2), (2, 3, 4, 3)),
}


@pytest.mark.parametrize("name", sorted(CONVS_3D))
def test_conv3d_modules_match_torch(name):
    build, shape = CONVS_3D[name]
    x = np.random.default_rng(3).standard_normal(shape)
    assert_layer_matches_torch(build, x, order=2, grads=(1e-9, 1e-9))


def test_conv_transpose3d_output_size():
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4, 3))
    outs = []
    for lib in (gt, torch):
        lib.manual_seed(1)
        up = (nn if lib is gt else torch.nn).ConvTranspose3d(2, 3, 3, stride=2, padding=1)
        outs.append(up.double()(lib.tensor(x), output_size=(6, 8, 6)).detach().numpy())
    assert outs[0].shape == outs[1].shape == (1, 3, 6, 8, 6)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


# the exception type and words, as torch's
ERRORS = {
    "conv3d_rank": lambda L: L.nn.functional.conv3d(L.ones(1, 2, 3), L.ones(1, 2, 1, 1, 1)),
    "conv3d_channels": lambda L: L.nn.functional.conv3d(
        L.ones(1, 2, 3, 3, 3), L.ones(1, 3, 1, 1, 1)
    ),
    "conv3d_kernel_too_big": lambda L: L.nn.functional.conv3d(
        L.ones(1, 1, 2, 3, 3), L.ones(1, 1, 3, 1, 1)
    ),
    "conv3d_same_strided": lambda L: L.nn.functional.conv3d(
        L.ones(1, 1, 3, 3, 3), L.ones(1, 1, 1, 1, 1), stride=2, padding="same"
    ),
    "conv3d_module_groups": lambda L: L.nn.Conv3d(3, 4, 2, groups=2),
    "conv_transpose3d_channels": lambda L: L.nn.functional.conv_transpose3d(
        L.ones(1, 2, 3, 3, 3), L.ones(3, 1, 1, 1, 1)
    ),
    "conv_transpose3d_output_padding": lambda L: L.nn.functional.conv_transpose3d(
        L.ones(1, 1, 3, 3, 3), L.ones(1, 1, 2, 2, 2), stride=2, output_padding=2
    ),
    "conv_transpose3d_padding_mode": lambda L: L.nn.ConvTranspose3d(
        1, 1, 2, padding_mode="reflect"
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


# the exception type, as torch's (gradstack's words say more: which argument, what shape)
ERROR_TYPES = {
    "conv3d_module_padding_mode": lambda L: L.nn.Conv3d(3, 4, 2, padding_mode="wrap"),
}


@pytest.mark.parametrize("name", sorted(ERROR_TYPES))
def test_error_types_match_torch(name):
    assert_same_error(ERROR_TYPES[name], words=False)
