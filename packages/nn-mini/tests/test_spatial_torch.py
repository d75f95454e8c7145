"""The spatial functions and 3-d layers nn-mini composes (_spatial.py, modules/spatial.py)
against torch: ``affine_grid``, ``grid_sample``, ``conv3d``/``Conv3d``,
``conv_transpose3d``/``ConvTranspose3d``, the 3-d pools, ``gumbel_softmax`` and
``embedding_bag``/``EmbeddingBag``: values, first- and second-order gradients in float64
w.r.t. every input, module reprs, state dicts and initial weights after the same seed,
indices, random draws, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(11)
IMG = R.standard_normal((2, 3, 5, 6))
VOL = R.standard_normal((2, 2, 5, 6, 7))
# grid positions inside and up to 0.4 outside [-1, 1] (no coordinate on a pixel boundary)
GRID = R.uniform(-1.4, 1.4, (2, 4, 3, 2))
GRID5 = R.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
# exact positions: the corners, the centre, the borders and beyond (with align_corners=True
# these land on pixel centres, where the border clip and the floor decide the gradient)
EDGE = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, -2.0])
GRID_EDGE = np.stack(np.meshgrid(EDGE, EDGE[::-1]), -1)[None].repeat(2, 0)
THETA = np.array([[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.2, 0.4, 0.3], [-0.5, 0.8, 0.1]]])
THETA3 = R.uniform(-1, 1, (2, 3, 4)) + np.eye(3, 4)
W3 = R.standard_normal((4, 2, 3, 2, 3))
B3 = R.standard_normal(4)
WT3 = R.standard_normal((2, 3, 2, 3, 2))
TABLE = R.standard_normal((10, 4))
PSW = R.uniform(0.5, 1.5, 7)


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
        "max_pool3d": (lambda L, F, x: F.max_pool3d(x, 2), [VOL]),
        "max_pool3d_options": (
            lambda L, F, x: F.max_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 1, 0), (1, 2, 1)),
            [VOL],
        ),
        "max_pool3d_ceil": (lambda L, F, x: F.max_pool3d(x, 2, ceil_mode=True), [VOL]),
        "max_pool3d_ceil_pad": (lambda L, F, x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True), [VOL]),
        "max_pool3d_unbatched": (lambda L, F, x: F.max_pool3d(x[0], 2, 1), [VOL]),
        "avg_pool3d": (lambda L, F, x: F.avg_pool3d(x, 2), [VOL]),
        "avg_pool3d_pad": (lambda L, F, x: F.avg_pool3d(x, 3, 2, 1), [VOL]),
        "avg_pool3d_exclude_pad": (
            lambda L, F, x: F.avg_pool3d(
                x, (3, 2, 3), (2, 1, 2), (1, 1, 0), count_include_pad=False
            ),
            [VOL],
        ),  # fmt: skip
        "avg_pool3d_ceil": (lambda L, F, x: F.avg_pool3d(x, 2, ceil_mode=True), [VOL]),
        "avg_pool3d_ceil_pad": (
            lambda L, F, x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            [VOL],
        ),
        "avg_pool3d_divisor": (lambda L, F, x: F.avg_pool3d(x, 2, 1, divisor_override=3), [VOL]),
        "avg_pool3d_unbatched": (lambda L, F, x: F.avg_pool3d(x[0], 2), [VOL]),
        "adaptive_avg_pool3d_1": (lambda L, F, x: F.adaptive_avg_pool3d(x, 1), [VOL]),
        "adaptive_avg_pool3d_uneven": (
            lambda L, F, x: F.adaptive_avg_pool3d(x, (3, 4, 5)),
            [VOL],
        ),
        "adaptive_avg_pool3d_none": (
            lambda L, F, x: F.adaptive_avg_pool3d(x[0], (None, 2, 3)),
            [VOL],
        ),
        "adaptive_max_pool3d": (lambda L, F, x: F.adaptive_max_pool3d(x, (3, 4, 5)), [VOL]),
        "adaptive_max_pool3d_unbatched": (
            lambda L, F, x: F.adaptive_max_pool3d(x[1], (2, None, 3)),
            [VOL],
        ),
        "embedding_bag_mean": (
            lambda L, F, w: F.embedding_bag(
                L.tensor([1, 2, 4, 5, 4, 3, 2]), w, L.tensor([0, 2, 2, 5])
            ),
            [TABLE],
        ),  # fmt: skip
        "embedding_bag_sum_weights": (
            lambda L, F, w, p: F.embedding_bag(
                L.tensor([1, 2, 4, 5, 4, 3, 2]),
                w,
                L.tensor([0, 3]),
                mode="sum",
                per_sample_weights=p,
            ),
            [TABLE, PSW],
        ),  # fmt: skip
        "embedding_bag_max_padding": (
            lambda L, F, w: F.embedding_bag(
                L.tensor([1, 2, 4, 5, 4, 3, 2]),
                w,
                L.tensor([0, 1, 3, 5]),
                mode="max",
                padding_idx=1,
            ),
            [TABLE],
        ),  # fmt: skip
        "embedding_bag_2d_padding_mean": (
            lambda L, F, w: F.embedding_bag(
                L.tensor([[1, 2, 2], [4, 4, 9], [2, 2, 2]]), w, padding_idx=2
            ),
            [TABLE],
        ),
        "embedding_bag_last_offset": (
            lambda L, F, w: F.embedding_bag(
                L.tensor([1, 2, 4, 5, 4, 3, 2]),
                w,
                L.tensor([0, 3, 3, 6]),
                mode="sum",
                include_last_offset=True,
            ),
            [TABLE],
        ),  # fmt: skip
        # (repeats of the largest index only: Note [torch's embedding_bag frequencies])
        "embedding_bag_scale_grad_by_freq": (
            lambda L, F, w: F.embedding_bag(
                L.tensor([1, 2, 4, 5, 5, 3, 5]),
                w,
                L.tensor([0, 2, 5]),
                mode="mean",
                scale_grad_by_freq=True,
            ),
            [TABLE],
        ),  # fmt: skip
    }
)


def run(lib, name, order=2):
    fn, arrays = PROGRAMS[name]
    F = lib.nn.functional
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (affine_grid's unit-size warning)
        out = fn(lib, F, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grad = gs.autograd.grad if lib is gs else torch.autograd.grad
    first = grad((out * w).sum(), xs, create_graph=order > 1, allow_unused=True)
    first = [g if g is not None else lib.zeros_like(x) for g, x in zip(first, xs)]
    second = [None] * len(xs)
    if order > 1:
        total = sum((g * g).sum() for g in first)
        if total.requires_grad:
            second = grad(total, xs, allow_unused=True)
    second = [np.zeros(a.shape) if g is None else _array(g) for g, a in zip(second, arrays)]
    return _array(out), [_array(g) for g in first], second


def _array(t):
    # (torch may return its ZeroTensor, which only clone() materializes)
    return t.detach().clone().numpy()


# torch has no double backward for per_sample_weights ("derivative for
# aten::_embedding_bag_per_sample_weights_backward is not implemented"); gradstack's is
# checked numerically in test_embedding_bag_second_order_numerically
_FIRST_ORDER_ONLY = {"embedding_bag_sum_weights"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    order = 1 if name in _FIRST_ORDER_ONLY else 2
    (a, ga, sa), (b, gb, sb) = run(gs, name, order), run(torch, name, order)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for p, q in zip(ga, gb):
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-10)
    for p, q in zip(sa, sb):
        np.testing.assert_allclose(p, q, rtol=1e-8, atol=1e-9)


def test_gradients_are_not_trivially_zero():
    # the comparisons above would pass for two zero gradients: these are not
    _, (gx, gg), _ = run(gs, "grid_sample_bilinear_zeros_0")
    assert np.abs(gx).sum() > 1 and np.abs(gg).sum() > 1
    _, (gx, gg), _ = run(gs, "grid_sample_nearest_zeros_0")
    assert np.abs(gx).sum() > 1 and not gg.any()  # nearest: a zero grid gradient


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


@pytest.mark.parametrize("fn", ["max_pool3d", "adaptive_max_pool3d"])
def test_pool3d_indices_match_torch(fn):
    x = np.round(VOL * 2) / 2  # many ties: torch keeps the first maximum
    x[0, 0, :2, :2, :2] = 1e3
    args = ((3, 2, 3), (2, 1, 2), (1, 1, 0), (1, 2, 1), True) if fn == "max_pool3d" else (3,)
    results = []
    for lib in (gs, torch):
        xt = lib.tensor(x, requires_grad=True)
        out, idx = getattr(lib.nn.functional, fn)(xt, *args, return_indices=True)
        out.sum().backward()
        results.append((out.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    (a, ia, ga), (b, ib, gb) = results
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_array_equal(ga, gb)
    unbatched = [getattr(lib.nn.functional, fn)(lib.tensor(x[1]), *args, return_indices=True)[1]
                 for lib in (gs, torch)]  # fmt: skip
    assert unbatched[0].tolist() == unbatched[1].tolist()


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


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_draws_torchs_samples(hard, dim):
    logits = R.standard_normal((4, 6))
    w = R.standard_normal((4, 6))
    results = []
    for lib in (gs, torch):
        lib.manual_seed(5)
        x = lib.tensor(logits, requires_grad=True)
        y = lib.nn.functional.gumbel_softmax(x, tau=0.7, hard=hard, dim=dim)
        (y * lib.tensor(w)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    (a, ga), (b, gb) = results
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)
    assert np.abs(ga).sum() > 0.1
    if hard:
        assert set(np.unique(a)) == {0.0, 1.0}
    # float32 draws, as torch's
    outs = []
    for lib in (gs, torch):
        lib.manual_seed(9)
        outs.append(
            lib.nn.functional.gumbel_softmax(lib.tensor(logits, dtype=lib.float32), hard=hard)
            .numpy()
        )  # fmt: skip
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-7)


def test_gumbel_softmax_eps_warning():
    for lib in (gs, torch):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-5)


CONVS = {
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


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv3d_modules_match_torch(name):
    build, shape = CONVS[name]
    x = np.random.default_rng(3).standard_normal(shape)
    results = []
    for lib in (gs, torch):
        lib.manual_seed(0)  # the same initial weights (gradstack draws as torch)
        conv = build(lib)
        init = {k: v.detach().numpy().copy() for k, v in conv.state_dict().items()}
        conv = conv.double()
        xt = lib.tensor(x, requires_grad=True)
        y = conv(xt)
        grad = gs.autograd.grad if lib is gs else torch.autograd.grad
        params = [xt] + list(conv.parameters())
        first = grad(y.pow(2).sum(), params, create_graph=True)
        second = grad(sum((g * g).sum() for g in first), params)
        results.append(
            (repr(conv), init, y.detach().numpy(), [g.detach().numpy() for g in first],
             [g.numpy() for g in second])
        )  # fmt: skip
    (r1, i1, *a), (r2, i2, *b) = results
    assert r1 == r2
    assert sorted(i1) == sorted(i2)
    for k in i2:
        assert i1[k].shape == i2[k].shape and i1[k].dtype == i2[k].dtype
        np.testing.assert_array_equal(i1[k], i2[k])
    np.testing.assert_allclose(a[0], b[0], rtol=1e-10, atol=1e-10)
    for p, q in zip(a[1] + a[2], b[1] + b[2]):
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-9)


def test_conv_transpose3d_output_size():
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4, 3))
    outs = []
    for lib in (gs, torch):
        lib.manual_seed(1)
        up = lib.nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1).double()
        outs.append(up(lib.tensor(x), output_size=(6, 8, 6)).detach().numpy())
    assert outs[0].shape == outs[1].shape == (1, 3, 6, 8, 6)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


MODULES = [
    ("MaxPool3d", (2,)), ("MaxPool3d", ((3, 2, 2), (2, 1, 1), 1, 1, False, True)),
    ("AvgPool3d", (2,)), ("AvgPool3d", (3, 2, 1, True, False)), ("AvgPool3d", ((1, 2, 2),)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),)), ("AdaptiveAvgPool3d", (1,)),
    ("AdaptiveMaxPool3d", (2,)), ("AdaptiveMaxPool3d", ((None, 2, 3),)),
]  # fmt: skip


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_pool_modules_match_torch(name, args):
    ours = getattr(gs.nn, name)(*args)
    theirs = getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    a = ours(gs.tensor(VOL, dtype=gs.float32))
    b = theirs(torch.tensor(VOL, dtype=torch.float32))
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


BAGS = [
    ((10, 3), {}),
    ((10, 3), dict(mode="sum", padding_idx=2)),
    ((10, 3), dict(mode="max", max_norm=1.0, padding_idx=-1)),
    ((10, 3), dict(norm_type=1.0, scale_grad_by_freq=True, include_last_offset=True)),
]


@pytest.mark.parametrize("args, kwargs", BAGS, ids=[str(k) for _, k in BAGS])
def test_embedding_bag_module_matches_torch(args, kwargs):
    inp, offsets = [1, 2, 4, 5, 9, 3, 9, 9], [0, 2, 2, 5]
    results = []
    for lib in (gs, torch):
        lib.manual_seed(3)
        bag = lib.nn.EmbeddingBag(*args, **kwargs)
        init = bag.weight.detach().numpy().copy()
        bag = bag.double()
        y = bag(lib.tensor(inp), lib.tensor(offsets))
        (y * lib.tensor(np.arange(y.numel(), dtype=float).reshape(tuple(y.shape)))).sum().backward()
        results.append(
            (repr(bag), list(bag.state_dict()), init, bag.weight.detach().numpy(),
             y.detach().numpy(), bag.weight.grad.numpy())
        )  # fmt: skip
    (r1, k1, i1, *a), (r2, k2, i2, *b) = results
    assert r1 == r2 and k1 == k2 == ["weight"]
    np.testing.assert_array_equal(i1, i2)  # N(0, 1) after the same seed, padding row zero
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-12)


def test_embedding_bag_from_pretrained():
    for freeze in (True, False):
        reprs, outs = [], []
        for lib in (gs, torch):
            bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(TABLE), freeze, mode="max")
            reprs.append((repr(bag), bag.weight.requires_grad))
            outs.append(bag(lib.tensor([[1, 2], [3, 3]])).detach().numpy())
        assert reprs[0] == reprs[1]
        np.testing.assert_array_equal(outs[0], outs[1])


ERRORS = {
    "affine_grid_int_theta": lambda L: L.nn.functional.affine_grid(
        L.ones(1, 2, 3, dtype=L.int64), (1, 1, 2, 2), False
    ),
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
    "grid_sample_mode": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), mode="area", align_corners=False
    ),
    "grid_sample_padding_mode": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), padding_mode="circular", align_corners=False
    ),
    "grid_sample_rank": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 1, 3), align_corners=False
    ),
    "grid_sample_batch": lambda L: L.nn.functional.grid_sample(
        L.ones(2, 1, 2, 2), L.zeros(1, 1, 1, 2), align_corners=False
    ),
    "grid_sample_last_dim": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 3), align_corners=False
    ),
    "grid_sample_bicubic_5d": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False
    ),
    "grid_sample_dtype": lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2, dtype=L.float64), align_corners=False
    ),
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
    "conv3d_module_padding_mode": lambda L: L.nn.Conv3d(3, 4, 2, padding_mode="wrap"),
    "conv_transpose3d_channels": lambda L: L.nn.functional.conv_transpose3d(
        L.ones(1, 2, 3, 3, 3), L.ones(3, 1, 1, 1, 1)
    ),
    "conv_transpose3d_output_padding": lambda L: L.nn.functional.conv_transpose3d(
        L.ones(1, 1, 3, 3, 3), L.ones(1, 1, 2, 2, 2), stride=2, output_padding=2
    ),
    "conv_transpose3d_padding_mode": lambda L: L.nn.ConvTranspose3d(
        1, 1, 2, padding_mode="reflect"
    ),
    "max_pool3d_padding": lambda L: L.nn.functional.max_pool3d(L.ones(1, 1, 4, 4, 4), 2, padding=2),
    "max_pool3d_rank": lambda L: L.nn.functional.max_pool3d(L.ones(1, 4, 4), 2),
    "avg_pool3d_padding": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, padding=2),
    "avg_pool3d_too_small": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 1, 4, 4), 2),
    "avg_pool3d_divisor": lambda L: L.nn.functional.avg_pool3d(
        L.ones(1, 1, 4, 4, 4), 2, divisor_override=0
    ),
    "embedding_bag_mode": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="median"
    ),
    "embedding_bag_2d_offsets": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), L.tensor([0])
    ),
    "embedding_bag_1d_no_offsets": lambda L: L.nn.functional.embedding_bag(
        L.tensor([1, 2]), L.ones(4, 2)
    ),
    "embedding_bag_weights_max": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="max", per_sample_weights=L.ones(1, 2)
    ),
    "embedding_bag_weights_shape": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4, 2), mode="sum", per_sample_weights=L.ones(2)
    ),
    "embedding_bag_padding_idx": lambda L: L.nn.EmbeddingBag(4, 2, padding_idx=4),
    "embedding_bag_weight_rank": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[1, 2]]), L.ones(4)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gs, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(
                (RuntimeError, TypeError, IndexError, ValueError, NotImplementedError,
                 AssertionError)
            ) as info:  # fmt: skip
                ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]


def test_names_are_exported():
    for name in ("Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
                 "AdaptiveMaxPool3d", "EmbeddingBag"):  # fmt: skip
        assert name in gs.nn.__all__ and name in gs.nn.modules.__all__
    for name in ("affine_grid", "grid_sample", "conv3d", "conv_transpose3d", "max_pool3d",
                 "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d",
                 "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "gumbel_softmax",
                 "embedding_bag"):  # fmt: skip
        assert name in gs.nn.functional.__all__
        assert hasattr(torch.nn.functional, name)


# Note [torch's embedding_bag frequencies]
# With scale_grad_by_freq, torch's CPU backward of embedding_bag divides the gradient of
# the i-th distinct index (in sorted order) by the count of the i-th *sorted* index, not
# its own: input [1, 2, 4, 5, 4, 3, 4] divides index 5's gradient by 3 (index 4's count).
# gradstack divides each index's gradient by its own count, as torch's F.embedding does.


def test_embedding_bag_frequencies_are_embeddings():
    inp, offsets = [1, 2, 4, 5, 4, 3, 4], [0, 2, 5]
    w = np.random.default_rng(2).standard_normal((3, 4))
    ours = gs.tensor(TABLE, requires_grad=True)
    y = gs.nn.functional.embedding_bag(
        gs.tensor(inp), ours, gs.tensor(offsets), mode="sum", scale_grad_by_freq=True
    )
    (y * gs.tensor(w)).sum().backward()
    ref = torch.tensor(TABLE, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(inp), ref, scale_grad_by_freq=True)
    bags = torch.stack([rows[0:2].sum(0), rows[2:5].sum(0), rows[5:].sum(0)])
    (bags * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), bags.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-12)
    assert ours.grad[5].abs().sum().item() > 0.1


def test_embedding_bag_second_order_numerically():
    # per_sample_weights' double backward, which torch lacks, by central differences
    table = gs.tensor(TABLE, requires_grad=True)
    psw = gs.tensor(PSW, requires_grad=True)
    inp, offsets = gs.tensor([1, 2, 4, 5, 4, 3, 2]), gs.tensor([0, 3])

    def first(t, p):
        y = gs.nn.functional.embedding_bag(inp, t, offsets, mode="sum", per_sample_weights=p)
        g = gs.autograd.grad((y * y).sum(), (t, p), create_graph=True)
        return (g[0] * g[0]).sum() + (g[1] * g[1]).sum()

    analytic = gs.autograd.grad(first(table, psw), psw)[0].numpy()
    numeric = np.zeros_like(PSW)
    for i in range(PSW.size):
        e = np.zeros_like(PSW)
        e[i] = 1e-6
        hi = first(gs.tensor(TABLE, requires_grad=True), gs.tensor(PSW + e, requires_grad=True))
        lo = first(gs.tensor(TABLE, requires_grad=True), gs.tensor(PSW - e, requires_grad=True))
        hi, lo = hi.item(), lo.item()
        numeric[i] = (hi - lo) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)
    assert np.abs(analytic).sum() > 1
