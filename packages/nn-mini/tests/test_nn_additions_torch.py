"""The activations, padding, pooling, distances and normalisations nn-mini composes
(_activations.py, _padding.py, _pooling.py, _distances.py, _normalizations.py and their
modules) against torch: values, first- and second-order gradients in float64, module
reprs and defaults, errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.uniform(-5, 5, (2, 3, 5, 6))
X[0, 0, 0, :4] = [-3.0, 3.0, 0.0, 1.0]  # the boundaries of hardtanh/hardswish/relu/elu
X1 = R.standard_normal((2, 3, 7))
Y = R.standard_normal((2, 3, 5, 6))
V = R.standard_normal((4, 6))
V2 = R.standard_normal((4, 6))
WC = R.uniform(0.1, 0.5, 3)


# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "elu": (lambda L, F, x: F.elu(x, 0.7), [X]),
    "elu_large": (lambda L, F, x: F.elu(x * 200.0), [X]),
    "selu": (lambda L, F, x: F.selu(x), [X]),
    "celu": (lambda L, F, x: F.celu(x, 1.5), [X]),
    "softplus": (lambda L, F, x: F.softplus(x), [X]),
    "softplus_beta": (lambda L, F, x: F.softplus(x, beta=2.0, threshold=3.0), [X]),
    "hardtanh": (lambda L, F, x: F.hardtanh(x), [X]),
    "hardtanh_bounds": (lambda L, F, x: F.hardtanh(x, -3.0, 3.0), [X]),
    "relu6": (lambda L, F, x: F.relu6(x), [X]),
    "hardsigmoid": (lambda L, F, x: F.hardsigmoid(x), [X]),
    "hardswish": (lambda L, F, x: F.hardswish(x), [X]),
    "mish": (lambda L, F, x: F.mish(x), [X]),
    "softsign": (lambda L, F, x: F.softsign(x), [X]),
    "tanhshrink": (lambda L, F, x: F.tanhshrink(x), [X]),
    "softmin": (lambda L, F, x: F.softmin(x, dim=1), [X]),
    "threshold": (lambda L, F, x: F.threshold(x, 1.0, -2.0), [X]),
    "glu": (lambda L, F, x: F.glu(x, -1), [X]),
    # (x + 0.25: no input at exactly 0, where prelu's cross derivative differs, below)
    "prelu": (lambda L, F, x, w: F.prelu(x + 0.25, w), [X, WC]),
    "prelu_one": (lambda L, F, x, w: F.prelu(x + 0.25, w[:1]), [X, WC]),
    "prelu_at_zero": (lambda L, F, x, w: F.prelu(x, w), [X, WC]),
    "hardshrink": (lambda L, F, x: F.hardshrink(x, 1.0), [X]),
    "softshrink": (lambda L, F, x: F.softshrink(x, 1.0), [X]),
    "logsigmoid": (lambda L, F, x: F.logsigmoid(x), [X]),
    "pad_constant": (lambda L, F, x: F.pad(x, (1, 2, 0, 3), value=1.5), [X]),
    "pad_negative": (lambda L, F, x: F.pad(x, (-1, 2, 1, -2)), [X]),
    "pad_reflect": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="reflect"), [X]),
    "pad_reflect_1d": (lambda L, F, x: F.pad(x, (2, 3), mode="reflect"), [X1]),
    "pad_replicate": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="replicate"), [X]),
    "pad_circular": (lambda L, F, x: F.pad(x, (2, 3, 1, 4), mode="circular"), [X]),
    "pad_circular_3d": (lambda L, F, x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"), [X]),
    "avg_pool2d": (lambda L, F, x: F.avg_pool2d(x, 2), [X]),
    "avg_pool2d_pad": (lambda L, F, x: F.avg_pool2d(x, 3, 2, 1), [X]),
    "avg_pool2d_exclude_pad": (
        lambda L, F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        [X],
    ),
    "avg_pool2d_ceil": (lambda L, F, x: F.avg_pool2d(x, 2, ceil_mode=True), [X]),
    "avg_pool2d_ceil_pad": (lambda L, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [X]),
    "avg_pool2d_divisor": (lambda L, F, x: F.avg_pool2d(x, (2, 3), divisor_override=4), [X]),
    "avg_pool2d_unbatched": (lambda L, F, x: F.avg_pool2d(x[0], 2, 1), [X]),
    "avg_pool1d": (lambda L, F, x: F.avg_pool1d(x, 3, 2, 1), [X1]),
    "max_pool1d": (lambda L, F, x: F.max_pool1d(x, 3, 2), [X1]),
    "max_pool1d_indices": (lambda L, F, x: F.max_pool1d(x, 2, return_indices=True)[0], [X1]),
    "adaptive_avg_pool2d_1": (lambda L, F, x: F.adaptive_avg_pool2d(x, 1), [X]),
    "adaptive_avg_pool2d_divisible": (lambda L, F, x: F.adaptive_avg_pool2d(x, (5, 3)), [X]),
    "adaptive_avg_pool2d_uneven": (lambda L, F, x: F.adaptive_avg_pool2d(x, (3, 4)), [X]),
    "adaptive_avg_pool2d_none": (lambda L, F, x: F.adaptive_avg_pool2d(x, (None, 4)), [X]),
    "adaptive_avg_pool1d": (lambda L, F, x: F.adaptive_avg_pool1d(x, 3), [X1]),
    "adaptive_max_pool2d": (lambda L, F, x: F.adaptive_max_pool2d(x, (3, 4)), [X]),
    "adaptive_max_pool1d": (lambda L, F, x: F.adaptive_max_pool1d(x, 4), [X1]),
    "normalize": (lambda L, F, v: F.normalize(v), [V]),
    "normalize_p1": (lambda L, F, v: F.normalize(v, p=1, dim=0), [V]),
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
    "group_norm": (lambda L, F, x, w: F.group_norm(x, 3, w, w * 2), [X, WC]),
    "group_norm_one": (lambda L, F, x: F.group_norm(x, 1), [X]),
    "rms_norm": (lambda L, F, x: F.rms_norm(x, (5, 6)), [X]),
    "rms_norm_weight": (lambda L, F, v, w: F.rms_norm(v, (6,), w.repeat(2)), [V, WC]),
}


def run(lib, name):
    fn, arrays = PROGRAMS[name]
    F = lib.nn.functional
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, F, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grad = gs.autograd.grad if lib is gs else torch.autograd.grad
    first = grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    first = [g if g is not None else lib.zeros_like(x) for g, x in zip(first, xs)]
    total = sum((g * g).sum() for g in first)
    if total.requires_grad and name != "hardsigmoid":  # (torch: not implemented)
        second = grad(total, xs, allow_unused=True)
    else:
        second = [None] * len(xs)
    second = [np.zeros(a.shape) if g is None else _array(g) for g, a in zip(second, arrays)]
    return _array(out), [_array(g) for g in first], second


def _array(t):
    # (torch may return its ZeroTensor, which only clone() materializes)
    return t.detach().clone().numpy()


# the ELU family's second derivative at exactly 0 (Note [Activations keep torch's
# derivative at every point]: torch's double backward tests x < 0, its backward x <= 0)
_SECOND_ORDER_AT_ZERO_DIFFERS = {"elu", "elu_large", "selu", "celu"}
# prelu's cross derivative (d/dweight of d/dx) at 0: torch's is 0, a composite's 1; it
# reaches the weight's second-order gradient through the sum over positions
_SECOND_ORDER_DIFFERS = {"prelu_at_zero"}
# torch's float64 hardsigmoid gradient multiplies by 1/6 rounded to float32 (its kernel's
# constant is ``1.0f / 6.0f``): 1.3e-8 relative; here 1/6 is a double
_FIRST_ORDER_RTOL = {"hardsigmoid": 1e-7}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    (a, ga, sa), (b, gb, sb) = run(gs, name), run(torch, name)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for p, q in zip(ga, gb):
        np.testing.assert_allclose(p, q, rtol=_FIRST_ORDER_RTOL.get(name, 1e-9), atol=1e-10)
    if name in _SECOND_ORDER_DIFFERS:
        return
    for p, q in zip(sa, sb):
        if name in _SECOND_ORDER_AT_ZERO_DIFFERS:
            zero = np.broadcast_to(X == 0, p.shape) if p.shape == X.shape else False
            p, q = np.where(zero, 0.0, p), np.where(zero, 0.0, q)
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-10)


def test_adaptive_max_pool_indices_match_torch():
    for fn, x, size in (("adaptive_max_pool2d", X, (3, 4)), ("adaptive_max_pool1d", X1, 4)):
        ours = getattr(gs.nn.functional, fn)(gs.tensor(X if x is X else X1), size, True)[1]
        theirs = getattr(torch.nn.functional, fn)(torch.tensor(x), size, True)[1]
        assert ours.tolist() == theirs.tolist()


MODULES = [
    ("ELU", (0.5,)), ("SELU", ()), ("CELU", (1.5,)), ("Softplus", (2.0, 10.0)),
    ("Hardtanh", (-2.0, 2.0)), ("ReLU6", ()), ("Hardsigmoid", ()), ("Hardswish", ()),
    ("Mish", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Softmin", (1,)),
    ("Threshold", (0.5, -1.0)), ("GLU", (-1,)), ("Hardshrink", (1.0,)),
    ("Softshrink", (1.0,)), ("LogSigmoid", ()), ("PReLU", ()), ("PReLU", (3,)),
    ("ZeroPad2d", ((1, 2, 3, 0),)), ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", (1, -1.0)),
    ("ReflectionPad2d", (2,)), ("ReplicationPad2d", ((1, 0, 2, 1),)), ("CircularPad2d", (1,)),
    ("ReflectionPad1d", ((1, 2),)), ("ZeroPad1d", (2,)),
    ("AvgPool2d", (2,)), ("AvgPool2d", (3, 2, 1, True, False)), ("AvgPool1d", (3,)),
    ("MaxPool1d", (2,)), ("AdaptiveAvgPool2d", ((2, 3),)), ("AdaptiveAvgPool1d", (4,)),
    ("AdaptiveMaxPool2d", (2,)), ("AdaptiveMaxPool1d", (3,)),
    ("GroupNorm", (3, 3)), ("GroupNorm", (1, 3, 1e-3, False)), ("RMSNorm", ((5, 6),)),
    ("GroupNorm", (3, 3, 1e-5, True, None, None)),
    ("RMSNorm", (6, 1e-4, False)), ("BatchNorm2d", (3,)), ("BatchNorm3d", (3,)),
    ("CosineSimilarity", ()), ("PairwiseDistance", ()), ("Unflatten", (1, (3, 1))),
]  # fmt: skip


def _module_input(lib, name):
    f32 = lib.float32
    if name.endswith("1d"):
        return lib.tensor(X1, dtype=f32)
    if name in ("CosineSimilarity", "PairwiseDistance"):
        return lib.tensor(V, dtype=f32), lib.tensor(V2, dtype=f32)
    if name == "BatchNorm3d":
        return lib.tensor(X, dtype=f32).unsqueeze(2)
    return lib.tensor(X, dtype=f32)


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    ours = getattr(gs.nn, name)(*args)
    theirs = getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    x, y = _module_input(gs, name), _module_input(torch, name)
    a = ours(*x) if isinstance(x, tuple) else ours(x)
    b = theirs(*y) if isinstance(y, tuple) else theirs(y)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


ERRORS = {
    "pad_odd": lambda L: L.nn.functional.pad(L.ones(2, 3), (1,)),
    "pad_reflect_too_much": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (3, 0), mode="reflect"),
    "pad_circular_wrap": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (4, 0), mode="circular"),
    "glu_odd": lambda L: L.nn.functional.glu(L.ones(2, 3)),
    "group_norm_groups": lambda L: L.nn.functional.group_norm(L.ones(2, 3, 4), 2),
    "prelu_channels": lambda L: L.nn.functional.prelu(L.ones(2, 3, 4), L.ones(2)),
    "avg_pool2d_rank": lambda L: L.nn.functional.avg_pool2d(L.ones(3, 3), 2),
    "avg_pool2d_padding": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2, padding=2),
    "hardtanh_bounds": lambda L: L.nn.functional.hardtanh(L.ones(2), 1.0, -1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gs, torch):
        with pytest.raises(
            (RuntimeError, TypeError, IndexError, ValueError, NotImplementedError)
        ) as info:
            ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]


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
def test_convolutions_match_torch(name):
    build, shape = CONVS[name]
    x = np.random.default_rng(3).standard_normal(shape)
    results = []
    for lib in (gs, torch):
        lib.manual_seed(0)  # the same initial weights (gradstack draws as torch)
        conv = build(lib).double()
        xt = lib.tensor(x, requires_grad=True)
        y = conv(xt)
        y.pow(2).sum().backward()
        results.append((repr(conv), y.detach().numpy(), xt.grad.numpy(), conv.weight.grad.numpy()))
    (r1, *a), (r2, *b) = results
    assert r1 == r2
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-10)


Q = R.standard_normal((2, 3, 5, 4))
KK = R.standard_normal((2, 3, 6, 4))
VV = R.standard_normal((2, 3, 6, 7))
P = R.dirichlet(np.ones(5), size=4)
LOGQ = np.log(R.dirichlet(np.ones(5), size=4))
P[0, 1] = 0.0  # a zero target: its term is 0
MASK = R.random((5, 6)) < 0.7
MASK[:, 0] = True

MORE = {
    "sdpa": (lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [Q, KK, VV]),
    "sdpa_causal": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k[:, :, :5], v[:, :, :5], is_causal=True
        ),
        [Q, KK, VV],
    ),
    "sdpa_bool_mask": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=L.tensor(MASK)),
        [Q, KK, VV],
    ),
    "sdpa_float_mask_scale": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=L.tensor(MASK * 0.5), scale=0.3
        ),
        [Q, KK, VV],
    ),
    "kl_div_batchmean": (lambda L, F, x: F.kl_div(x, L.tensor(P), reduction="batchmean"), [LOGQ]),
    "kl_div_sum": (lambda L, F, x: F.kl_div(x, L.tensor(P), reduction="sum"), [LOGQ]),
    "kl_div_none_log_target": (
        lambda L, F, x, t: F.kl_div(x, t, reduction="none", log_target=True),
        [LOGQ, np.log(P + 0.1)],
    ),
}
PROGRAMS.update(MORE)


@pytest.mark.parametrize("name", sorted(MORE))
def test_attention_and_divergence_match_torch(name):
    (a, ga, sa), (b, gb, sb) = run(gs, name), run(torch, name)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for p, q in zip(ga + sa, gb + sb):
        np.testing.assert_allclose(p, q, rtol=1e-8, atol=1e-10)


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


def test_kl_div_module_and_mean_warning():
    for lib in (gs, torch):
        with pytest.warns(UserWarning, match="batchmean"):
            lib.nn.KLDivLoss()(lib.tensor(LOGQ), lib.tensor(P))
    a = gs.nn.KLDivLoss(reduction="batchmean", log_target=True)
    b = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)
    assert repr(a) == repr(b)
    np.testing.assert_allclose(
        a(gs.tensor(LOGQ), gs.tensor(LOGQ[::-1].copy())).item(),
        b(torch.tensor(LOGQ), torch.tensor(LOGQ[::-1].copy())).item(),
        rtol=1e-12,
    )


X3 = R.standard_normal((2, 3, 7))
X5 = R.standard_normal((1, 2, 3, 4, 5))
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


LAYERS = {
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
    "pixel_shuffle": (lambda L: L.nn.PixelShuffle(2), R.standard_normal((2, 8, 3, 4)), {}),
    "pixel_unshuffle": (lambda L: L.nn.PixelUnshuffle(2), X[:, :, :4], {}),
    "instance_norm2d": (lambda L: L.nn.InstanceNorm2d(3), X, {}),
    "instance_norm2d_affine": (lambda L: L.nn.InstanceNorm2d(3, affine=True), X, {}),
    "instance_norm1d_tracked": (lambda L: L.nn.InstanceNorm1d(3, track_running_stats=True), X1, {}),
    "instance_norm2d_unbatched": (lambda L: L.nn.InstanceNorm2d(3), X[0], {}),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_match_torch(name):
    build, x, keywords = LAYERS[name]
    results = []
    for lib in (gs, torch):
        lib.manual_seed(0)  # the same initial weights
        layer = build(lib).double()
        xt = lib.tensor(x, requires_grad=True)
        y = layer(xt, **keywords)
        (y * y).sum().backward()
        buffers = [b.numpy().copy() for b in layer.buffers()]
        grads = [p.grad.numpy() for p in layer.parameters()]
        results.append((repr(layer), y.detach().numpy(), xt.grad.numpy(), grads, buffers))
    (r1, *a), (r2, *b) = results
    assert r1 == r2
    for p, q in zip(a[:2] + a[2] + a[3], b[:2] + b[2] + b[3]):
        np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-10)
