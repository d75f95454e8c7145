"""Pooling (functional/pooling.py, modules/pooling.py) against torch: max, average,
adaptive and power-average pooling in 1, 2 and 3 dims: values, first- and second-order
gradients in float64, the indices of the max pools (ties included), module reprs and
outputs, errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
    values_and_gradients,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.uniform(-5, 5, (2, 3, 5, 6))
X1 = R.standard_normal((2, 3, 7))
# positive inputs for the power averages (x ** p of a fractional p)
_LP = np.random.default_rng(2)
XL, XL3 = _LP.standard_normal((2, 6, 5, 4)), _LP.standard_normal((2, 6, 7))
POS, POS1 = _LP.uniform(0.2, 2.0, (2, 3, 6, 7)), _LP.uniform(0.2, 2.0, (2, 3, 9))
_FR = np.random.default_rng(35)
U2, U3 = _FR.uniform(0, 1, (2, 3, 2)), _FR.uniform(0, 1, (2, 2, 3))
VOL = np.random.default_rng(23).standard_normal((2, 2, 5, 6, 7))
POSV = _LP.uniform(0.2, 2.0, (2, 2, 5, 6, 7))

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
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
    "lp_pool2d": (lambda L, F, x: F.lp_pool2d(x, 2, 2), [XL]),
    "lp_pool2d_fractional": (lambda L, F, x: F.lp_pool2d(x, 1.5, (2, 3), stride=(1, 2)), [POS]),
    "lp_pool2d_ceil": (lambda L, F, x: F.lp_pool2d(x, 3, 2, ceil_mode=True), [POS]),
    "lp_pool2d_unbatched": (lambda L, F, x: F.lp_pool2d(x[0], 2.0, 3, 2), [XL]),
    "lp_pool2d_inf": (lambda L, F, x: F.lp_pool2d(x, float("inf"), 2), [XL]),
    "lp_pool1d": (lambda L, F, x: F.lp_pool1d(x, 2, 3), [XL3]),
    "lp_pool1d_stride_ceil": (lambda L, F, x: F.lp_pool1d(x, 1.7, 2, 3, True), [POS1]),
    "lp_pool1d_one": (lambda L, F, x: F.lp_pool1d(x, 1, 2), [POS1]),
    "lp_pool1d_inf": (lambda L, F, x: F.lp_pool1d(x, float("inf"), 3, 2), [XL3]),
    "lp_pool3d": (lambda L, F, x: F.lp_pool3d(x, 2, 2), [VOL]),
    "max_unpool2d": (
        lambda L, F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
        [X],
    ),
    "max_unpool2d_size": (
        lambda L, F, x: F.max_unpool2d(
            *F.max_pool2d(x, 3, 2, 1, return_indices=True), 3, 2, 1, x.shape
        ),
        [X],
    ),
    "max_unpool2d_overlap_unbatched": (
        lambda L, F, x: F.max_unpool2d(*F.max_pool2d(x[0], 3, 1, return_indices=True), 3, 1),
        [X],
    ),
    "max_unpool1d": (
        lambda L, F, x: F.max_unpool1d(
            *F.max_pool1d(x, 3, 2, return_indices=True), 3, 2, output_size=[7]
        ),
        [X1],
    ),
    "max_unpool3d": (
        lambda L, F, x: F.max_unpool3d(
            *F.max_pool3d(x, 2, return_indices=True), 2, output_size=x.shape
        ),
        [VOL],
    ),
    "max_unpool3d_pad_unbatched": (
        lambda L, F, x: F.max_unpool3d(
            *F.max_pool3d(x[0], 3, 2, 1, return_indices=True), 3, 2, 1, x.shape[2:]
        ),
        [VOL],
    ),
    "lp_pool3d_fractional": (lambda L, F, x: F.lp_pool3d(x, 1.5, (2, 3, 2), (1, 2, 2)), [POSV]),
    "lp_pool3d_ceil_unbatched": (lambda L, F, x: F.lp_pool3d(x[0], 3, 2, ceil_mode=True), [POSV]),
    "lp_pool3d_inf": (lambda L, F, x: F.lp_pool3d(x, float("inf"), (2, 2, 3), 2), [VOL]),
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
        lambda L, F, x: F.avg_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 1, 0), count_include_pad=False),
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
    "fractional_max_pool2d": (
        lambda L, F, x: F.fractional_max_pool2d(x, 2, (3, 4), _random_samples=L.tensor(U2)),
        [X],
    ),
    "fractional_max_pool2d_ratio_unbatched": (
        lambda L, F, x: F.fractional_max_pool2d(
            x[0], (2, 3), output_ratio=(0.5, 0.6), _random_samples=L.tensor(U2[1:])
        ),
        [X],
    ),
    "fractional_max_pool2d_one": (
        lambda L, F, x: F.fractional_max_pool2d(x, (3, 1), 1, _random_samples=L.tensor(U2)),
        [X],
    ),
    "fractional_max_pool2d_overlapping": (
        lambda L, F, x: F.fractional_max_pool2d(x, 3, (3, 4), _random_samples=L.tensor(U2)),
        [X],
    ),
    "fractional_max_pool3d": (
        lambda L, F, x: F.fractional_max_pool3d(
            x, (2, 2, 3), (3, 4, 4), _random_samples=L.tensor(U3)
        ),
        [VOL],
    ),
    "fractional_max_pool3d_ratio_unbatched": (
        lambda L, F, x: F.fractional_max_pool3d(
            x[1], 2, output_ratio=0.5, _random_samples=L.tensor(U3[:1])
        ),
        [VOL],
    ),
    "adaptive_max_pool3d_unbatched": (
        lambda L, F, x: F.adaptive_max_pool3d(x[1], (2, None, 3)),
        [VOL],
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


def test_programs_are_not_trivial():
    """The gradients above are not all zero."""
    out, first, second = values_and_gradients(gs, *PROGRAMS["lp_pool2d"])
    assert np.abs(first[0]).max() > 1e-3


def test_max_pool2d_values_indices_and_gradient_match_torch():
    x = np.random.default_rng(7).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) * 0.5
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


def test_adaptive_max_pool_indices_match_torch():
    for fn, x, size in (("adaptive_max_pool2d", X, (3, 4)), ("adaptive_max_pool1d", X1, 4)):
        ours = getattr(gs.nn.functional, fn)(gs.tensor(x), size, True)[1]
        theirs = getattr(torch.nn.functional, fn)(torch.tensor(x), size, True)[1]
        assert ours.tolist() == theirs.tolist()


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


MODULES = [
    ("MaxPool2d", (2,)), ("MaxPool2d", ((3, 2), 1, 1, 1, False, True)),
    ("AvgPool2d", (2,)), ("AvgPool2d", (3, 2, 1, True, False)), ("AvgPool1d", (3,)),
    ("MaxPool1d", (2,)), ("AdaptiveAvgPool2d", ((2, 3),)), ("AdaptiveAvgPool1d", (4,)),
    ("AdaptiveMaxPool2d", (2,)), ("AdaptiveMaxPool1d", (3,)),
    ("MaxPool3d", (2,)), ("MaxPool3d", ((3, 2, 2), (2, 1, 1), 1, 1, False, True)),
    ("AvgPool3d", (2,)), ("AvgPool3d", (3, 2, 1, True, False)), ("AvgPool3d", ((1, 2, 2),)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),)), ("AdaptiveAvgPool3d", (1,)),
    ("AdaptiveMaxPool3d", (2,)), ("AdaptiveMaxPool3d", ((None, 2, 3),)),
    ("LPPool1d", (2, 3)), ("LPPool1d", (1.5, 3, 2, True)), ("LPPool2d", (2, 3)),
    ("LPPool2d", (3, (2, 1), 1)), ("LPPool3d", (2, 2)), ("LPPool3d", (1.5, (2, 3, 2), 1, True)),
]  # fmt: skip


def _module_input(name):
    if name.startswith("LPPool"):
        return {"1d": POS1, "2d": POS, "3d": POSV}[name[-2:]]
    return {"1d": X1, "2d": X, "3d": VOL}[name[-2:]]


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    x = _module_input(name)
    assert_module_matches_torch(name, args, lambda L: L.tensor(x, dtype=L.float32))


# the exception type and words, as torch's
ERRORS = {
    "avg_pool2d_rank": lambda L: L.nn.functional.avg_pool2d(L.ones(3, 3), 2),
    "max_pool3d_padding": lambda L: L.nn.functional.max_pool3d(L.ones(1, 1, 4, 4, 4), 2, padding=2),
    "avg_pool3d_padding": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, padding=2),
    "max_unpool_int32": lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int32), 2
    ),
    "max_unpool_shapes": lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 1, dtype=L.int64), 2
    ),
    "max_unpool_bad_index": lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.tensor([[[[0, 17], [2, 16]]]]), 2
    ),
    "max_unpool_rank": lambda L: L.nn.functional.max_unpool2d(
        L.ones(2, 2), L.zeros(2, 2, dtype=L.int64), 2
    ),
    "max_unpool3d_rank": lambda L: L.nn.functional.max_unpool3d(
        L.ones(2, 2, 2), L.zeros(2, 2, 2, dtype=L.int64), 2
    ),
    "max_unpool_output_size_length": lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(1, 4, 4)
    ),
    "max_unpool_output_size_range": lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(6, 4)
    ),
    "fractional_pool_height": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_size=4
    ),
    "fractional_pool_width": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_size=(2, 4)
    ),
    "fractional_pool_rank": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(2, 5, 5, 1, 1), 3, output_size=2
    ),
    "fractional_pool_small_rank": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(5, 5), 3, output_size=2
    ),
    "fractional_pool_no_size": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3
    ),
    "fractional_pool_sample_channels": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_size=2, _random_samples=L.rand(1, 3, 2)
    ),
    "fractional_pool_sample_dims": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_size=2, _random_samples=L.rand(1, 2, 3)
    ),
    "fractional_pool_ratio_float": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_ratio=0.5
    ),
    "fractional_pool_ratio_long": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_ratio=(0.5, 0.5, 0.5)
    ),
    "fractional_pool_kernel": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), (3, 2, 1), output_size=2
    ),
    "fractional_pool_sample_dtype": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 5, 5), 3, output_size=2, _random_samples=L.rand(1, 2, 2, dtype=L.float64)
    ),
    "fractional_pool_sample_batch": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(3, 2, 5, 5), 2, 2, _random_samples=L.rand(1, 2, 2)
    ),
    "fractional_pool_sample_rank": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(3, 2, 5, 5), 2, 2, _random_samples=L.rand(3, 2)
    ),
    "fractional_pool3d_time": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 2, 5, 5, 5), 3, output_size=4
    ),
    "fractional_pool3d_rank": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(5, 5, 5), 3, output_size=2
    ),
    "fractional_pool3d_sample_dims": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 2, 5, 5, 5), 3, output_size=2, _random_samples=L.rand(1, 2, 2)
    ),
    "fractional_pool_module_no_size": lambda L: L.nn.FractionalMaxPool2d(3),
    "fractional_pool_module_both": lambda L: L.nn.FractionalMaxPool2d(3, 2, 0.5),
    "fractional_pool_module_ratio": lambda L: L.nn.FractionalMaxPool2d(3, output_ratio=1.5),
    "fractional_pool3d_module_kernel": lambda L: L.nn.FractionalMaxPool3d(0, output_ratio=0.5),
    "avg_pool3d_divisor": lambda L: L.nn.functional.avg_pool3d(
        L.ones(1, 1, 4, 4, 4), 2, divisor_override=0
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


# the exception type, as torch's (gradstack's words say more: which argument, what shape)
ERROR_TYPES = {
    "avg_pool2d_padding": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2, padding=2),
    "max_pool3d_rank": lambda L: L.nn.functional.max_pool3d(L.ones(1, 4, 4), 2),
    "lp_pool3d_rank": lambda L: L.nn.functional.lp_pool3d(L.ones(4, 4, 4), 2, 2),
    "avg_pool3d_too_small": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 1, 4, 4), 2),
}


@pytest.mark.parametrize("name", sorted(ERROR_TYPES))
def test_error_types_match_torch(name):
    assert_same_error(ERROR_TYPES[name], words=False)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_modules_match_torch(dims):
    """repr, and the layer's output with an explicit ``output_size``, as torch's."""
    shape = {1: (2, 3, 8), 2: (2, 3, 6, 8), 3: (1, 2, 4, 6, 4)}[dims]
    x = np.random.default_rng(dims).standard_normal(shape)
    outs = []
    for L in (torch, gs):
        pool = getattr(L.nn, f"MaxPool{dims}d")(2, return_indices=True)
        unpool = getattr(L.nn, f"MaxUnpool{dims}d")(2, stride=2)
        t = L.tensor(x)
        out = unpool(*pool(t), output_size=t.shape)
        outs.append((repr(unpool), out.detach().numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
def test_fractional_max_pool_draws_torch_samples(dims, dtype, batched):
    """Without ``_random_samples`` the windows are torch's after the same ``manual_seed``
    (Note [Fractional max pooling draws torch's samples]): values and indices of two calls,
    of the function and of the layer, and the layer's repr."""
    x = (X if dims == 2 else VOL) if batched else (X[0] if dims == 2 else VOL[1])
    results = []
    for L in (gs, torch):
        t = L.tensor(x, dtype=getattr(L, dtype))
        pool = getattr(L.nn.functional, f"fractional_max_pool{dims}d")
        layer = getattr(L.nn, f"FractionalMaxPool{dims}d")(2, output_ratio=0.6, return_indices=True)
        L.manual_seed(7)
        runs = [pool(t, 2, 3, return_indices=True), pool(t, (2,) * (dims - 1) + (3,), 2,
                return_indices=True), layer(t)]  # fmt: skip
        results.append(
            ([(v.numpy().tolist(), i.numpy().tolist()) for v, i in runs], repr(layer),
             float(L.rand(()).item()))
        )  # fmt: skip
    assert results[0] == results[1]


def test_fractional_max_pool_ties_nan_and_empty_as_torch():
    """The first of equal maxima, the last NaN of a window, an empty batch and a zero size."""
    x = np.zeros((1, 2, 6, 6))
    x[0, 1, 2, 3] = x[0, 1, 4, 4] = np.nan
    x[0, 0, :3, :3] = 1.0
    u = np.random.default_rng(3).uniform(0, 1, (1, 2, 2))
    out = []
    for L in (gs, torch):
        F = L.nn.functional
        v, i = F.fractional_max_pool2d(L.tensor(x), 3, 2, return_indices=True,
                                       _random_samples=L.tensor(u))  # fmt: skip
        e = F.fractional_max_pool2d(L.ones(0, 2, 5, 5), 3, 2)
        z = F.fractional_max_pool2d(L.tensor(x), 3, 0, _random_samples=L.tensor(u))
        out.append((np.nan_to_num(v.numpy(), nan=-7).tolist(), i.tolist(), tuple(e.shape),
                    tuple(z.shape)))  # fmt: skip
    assert out[0] == out[1]


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_module_state_as_torch(dims):
    u = U2[:1] if dims == 2 else U3[:1]
    names = []
    for L in (gs, torch):
        layer = getattr(L.nn, f"FractionalMaxPool{dims}d")(
            2, output_size=2, _random_samples=L.tensor(u)
        )
        names.append((repr(layer), list(layer.state_dict()), layer.kernel_size, layer.output_size))
    assert names[0] == names[1]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fractional_max_pool_non_contiguous_and_dtypes_as_torch(dtype):
    u = U2[:2]
    outs = []
    for L in (gs, torch):
        x = L.tensor(X, dtype=getattr(L, dtype)).transpose(2, 3)
        v, i = L.nn.functional.fractional_max_pool2d(
            x, 2, (3, 2), return_indices=True, _random_samples=L.tensor(u, dtype=x.dtype)
        )
        outs.append((v.float().numpy().tolist(), i.tolist(), str(v.dtype).split(".")[-1]))
    assert outs[0] == outs[1]
