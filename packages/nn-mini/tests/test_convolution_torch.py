"""Convolution, pooling, unfold/fold and meta modules against torch.nn: values and
gradients of ``F.conv2d`` over random configurations (groups, padding modes, dilation,
stride, unbatched inputs), the errors, the modules' defaults, repr, initialisation and
state_dict, and ``Module.to('meta')``."""

from __future__ import annotations

import copy

import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest

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


def test_max_pool2d_values_indices_and_gradient_match_torch():
    import gradstack as gs

    x = RNG.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) * 0.5
    for kwargs in (
        {"kernel_size": 2},
        {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1, "ceil_mode": True},
        {"kernel_size": 3, "stride": 2, "dilation": 2, "padding": 1},
    ):
        out = []
        for lib in (gs, torch):
            t = lib.tensor(x, requires_grad=True)
            v, i = lib.nn.functional.max_pool2d(t, return_indices=True, **kwargs)
            (v * v).sum().backward()
            out.append([v.detach().numpy(), i.numpy(), t.grad.numpy()])
        for a, b in zip(*out):
            np.testing.assert_array_equal(a, b)


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
    ("MaxPool2d(2)", lambda M: M.MaxPool2d(2)),
    ("MaxPool2d options", lambda M: M.MaxPool2d((3, 2), stride=1, padding=1, ceil_mode=True)),
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
    # the other modes pad with F.pad first, as torch (test_nn_additions_torch.py compares)
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
    with pytest.raises(NotImplementedError, match="meta tensor"):
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
