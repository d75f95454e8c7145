"""ParameterDict (modules/container.py) and the layers of _extra_layers.py and
modules/extra_layers.py (Bilinear, AlphaDropout, FeatureAlphaDropout, RReLU, LPPool1d/2d,
Softmax2d, ChannelShuffle, LocalResponseNorm) against torch: values, first- and
second-order gradients in float64, initial draws and random masks after the same seed,
reprs, state dicts and errors."""

from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(2)
X = R.standard_normal((2, 6, 5, 4))
X3 = R.standard_normal((2, 6, 7))
X5 = R.standard_normal((2, 4, 3, 2, 3))
POS = R.uniform(0.2, 2.0, (2, 3, 6, 7))
POS1 = R.uniform(0.2, 2.0, (2, 3, 9))
A1 = R.standard_normal((4, 3))
A2 = R.standard_normal((4, 5))
A1B = R.standard_normal((2, 4, 3))
A2B = R.standard_normal((2, 4, 5))
W = R.standard_normal((2, 3, 5))
B = R.standard_normal(2)


def _array(t):
    return t.detach().clone().numpy()


# ------------------------------------------------------------------ functional programs

# name -> (fn(F, *tensors), arrays); every program is deterministic (evaluation mode)
PROGRAMS = {
    "bilinear": (lambda F, a, b, w, c: F.bilinear(a, b, w, c), [A1, A2, W, B]),
    "bilinear_no_bias": (lambda F, a, b, w: F.bilinear(a, b, w), [A1, A2, W]),
    "bilinear_batched": (lambda F, a, b, w, c: F.bilinear(a, b, w, c), [A1B, A2B, W, B]),
    "bilinear_1d": (lambda F, a, b, w, c: F.bilinear(a[0], b[0], w, c), [A1, A2, W, B]),
    "rrelu_eval": (lambda F, x: F.rrelu(x), [X]),
    "rrelu_eval_bounds": (lambda F, x: F.rrelu(x, 0.2, 0.6, training=False), [X]),
    "alpha_dropout_eval": (lambda F, x: F.alpha_dropout(x, 0.4), [X]),
    "feature_alpha_dropout_eval": (lambda F, x: F.feature_alpha_dropout(x, 0.4), [X]),
    "lp_pool2d": (lambda F, x: F.lp_pool2d(x, 2, 2), [X]),
    "lp_pool2d_fractional": (lambda F, x: F.lp_pool2d(x, 1.5, (2, 3), stride=(1, 2)), [POS]),
    "lp_pool2d_ceil": (lambda F, x: F.lp_pool2d(x, 3, 2, ceil_mode=True), [POS]),
    "lp_pool2d_unbatched": (lambda F, x: F.lp_pool2d(x[0], 2.0, 3, 2), [X]),
    "lp_pool2d_inf": (lambda F, x: F.lp_pool2d(x, float("inf"), 2), [X]),
    "lp_pool1d": (lambda F, x: F.lp_pool1d(x, 2, 3), [X3]),
    "lp_pool1d_stride_ceil": (lambda F, x: F.lp_pool1d(x, 1.7, 2, 3, True), [POS1]),
    "lp_pool1d_one": (lambda F, x: F.lp_pool1d(x, 1, 2), [POS1]),
    "lp_pool1d_inf": (lambda F, x: F.lp_pool1d(x, float("inf"), 3, 2), [X3]),
    "channel_shuffle": (lambda F, x: F.channel_shuffle(x, 3), [X]),
    "channel_shuffle_3d": (lambda F, x: F.channel_shuffle(x, 2), [X3]),
    "channel_shuffle_5d": (lambda F, x: F.channel_shuffle(x, 4), [X5]),
    "local_response_norm": (lambda F, x: F.local_response_norm(x, 3), [X]),
    "local_response_norm_even": (
        lambda F, x: F.local_response_norm(x, 4, alpha=0.5, beta=0.6, k=2.0),
        [X],
    ),
    "local_response_norm_3d": (lambda F, x: F.local_response_norm(x, 2, 0.3), [X3]),
    "local_response_norm_5d": (lambda F, x: F.local_response_norm(x, 5, 1.0, 0.9), [X5]),
    "softmax2d": (lambda F, x: _softmax2d(F, x), [X]),
    "softmax2d_3d": (lambda F, x: _softmax2d(F, x[0]), [X]),
}


def _softmax2d(F, x):
    nn = gs.nn if F is gs.nn.functional else torch.nn
    return nn.Softmax2d()(x)


def run(lib, name):
    fn, arrays = PROGRAMS[name]
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib.nn.functional, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grad = gs.autograd.grad if lib is gs else torch.autograd.grad
    first = grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    first = [g if g is not None else lib.zeros_like(x) for g, x in zip(first, xs)]
    total = sum((g * g).sum() for g in first)
    second = grad(total, xs, allow_unused=True) if total.requires_grad else [None] * len(xs)
    second = [np.zeros(a.shape) if g is None else _array(g) for g, a in zip(second, arrays)]
    return _array(out), [_array(g) for g in first], second


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    (a, ga, sa), (b, gb, sb) = run(gs, name), run(torch, name)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for p, q in zip(ga + sa, gb + sb):
        assert p.shape == q.shape
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-10)


def test_programs_are_not_trivial():
    """The gradients above are not all zero, and the layers change their inputs."""
    for name in ("bilinear", "lp_pool2d", "local_response_norm", "rrelu_eval"):
        out, first, second = run(gs, name)
        assert np.abs(first[0]).max() > 1e-3
    assert not np.allclose(run(gs, "channel_shuffle")[0], X)


# ------------------------------------------------------------------ random layers


def _random_program(lib, name, dtype):
    F = lib.nn.functional
    lib.manual_seed(11)
    x = lib.tensor(X.copy(), dtype=getattr(lib, dtype), requires_grad=True)
    out = {
        "alpha_dropout": lambda: F.alpha_dropout(x, 0.3, training=True),
        "alpha_dropout_module": lambda: lib.nn.AlphaDropout(0.6).train()(x),
        "feature_alpha_dropout": lambda: F.feature_alpha_dropout(x, 0.5, True),
        "feature_alpha_dropout_3d": lambda: lib.nn.FeatureAlphaDropout(0.4)(x[0]),
        "alpha_dropout_p1": lambda: F.alpha_dropout(x, 1.0, True),
        "rrelu": lambda: F.rrelu(x, training=True),
        "rrelu_bounds": lambda: F.rrelu(x, 0.05, 0.9, True),
        "rrelu_module": lambda: lib.nn.RReLU(0.3, 0.31)(x),
        "rrelu_twice": lambda: F.rrelu(x, training=True) + F.rrelu(x * 2, training=True),
    }[name]()
    (out * out).sum().backward()
    return out.detach().numpy().astype(np.float64), x.grad.numpy().astype(np.float64)


RANDOM = [
    "alpha_dropout",
    "alpha_dropout_module",
    "feature_alpha_dropout",
    "feature_alpha_dropout_3d",
    "alpha_dropout_p1",
    "rrelu",
    "rrelu_bounds",
    "rrelu_module",
    "rrelu_twice",
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", RANDOM)
def test_random_layers_draw_torch_s_numbers(name, dtype):
    """Note [Random layers draw torch's numbers]: the same outputs (so the same masks and
    slopes) and gradients after the same seed, in float64 and float32."""
    (a, ga), (b, gb) = _random_program(gs, name, dtype), _random_program(torch, name, dtype)
    np.testing.assert_array_equal(a, b)  # (bit for bit: the same draws and roundings)
    np.testing.assert_array_equal(ga, gb)


def test_random_layers_are_random_in_training():
    rrelu, _ = _random_program(gs, "rrelu", "float64")
    negative = X < 0
    slopes = rrelu[negative] / X[negative]
    assert slopes.min() >= 1 / 8 and slopes.max() <= 1 / 3 and len(set(slopes.round(12))) > 10
    np.testing.assert_array_equal(rrelu[~negative], X[~negative])
    alpha, _ = _random_program(gs, "alpha_dropout", "float64")
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(alpha, -1.7580993408473766 * a + 1.7580993408473766 * a * 0.3)
    assert 0.15 < dropped.mean() < 0.45
    np.testing.assert_allclose(alpha[~dropped], a * X[~dropped] + 1.7580993408473766 * a * 0.3)
    feature, _ = _random_program(gs, "feature_alpha_dropout", "float64")
    per_channel = np.isclose(feature, feature[:, :, :1, :1]).all(axis=(2, 3))
    assert per_channel.any()  # (whole channels dropped: constant over H, W)


def test_evaluation_mode_is_the_identity_and_the_mean_slope():
    x = gs.tensor(X)
    for layer in (gs.nn.AlphaDropout(0.5), gs.nn.FeatureAlphaDropout(0.5)):
        np.testing.assert_array_equal(layer.eval()(x).numpy(), X)
    np.testing.assert_allclose(
        gs.nn.RReLU(0.1, 0.3).eval()(x).numpy(), np.where(X > 0, X, 0.2 * X), rtol=1e-15
    )


def test_inplace_forms_modify_their_input_as_torch():
    out = []
    for lib in (gs, torch):
        F = lib.nn.functional
        lib.manual_seed(3)
        a, b, c = (lib.tensor(X.copy()) for _ in range(3))
        F.alpha_dropout(a, 0.3, True, inplace=True)
        F.rrelu(b, training=True, inplace=True)
        lib.nn.functional.rrelu_(c, 0.1, 0.2)
        d = lib.tensor(X.copy())
        lib.nn.RReLU(inplace=True).train()(d)
        out.append([t.numpy().copy() for t in (a, b, c, d)])
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-12)
        assert not np.array_equal(p, X)


# ------------------------------------------------------------------ modules


def _bilinear_program(lib, bias):
    lib.manual_seed(5)
    layer = lib.nn.Bilinear(3, 5, 2, bias=bias)
    initial = [p.detach().numpy().copy() for p in layer.parameters()]
    layer = layer.double()
    x1, x2 = (lib.tensor(a, requires_grad=True) for a in (A1B, A2B))
    out = layer(x1, x2)
    (out * out).sum().backward()
    return {
        "repr": repr(layer),
        "state_dict": [(k, tuple(v.shape)) for k, v in layer.state_dict().items()],
        "initial": initial,
        "values": [_array(out), x1.grad.numpy(), x2.grad.numpy()]
        + [p.grad.numpy() for p in layer.parameters()],
    }


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module_matches_torch(bias):
    ours, theirs = _bilinear_program(gs, bias), _bilinear_program(torch, bias)
    assert ours["repr"] == theirs["repr"]
    assert ours["state_dict"] == theirs["state_dict"]
    for a, b in zip(ours["initial"], theirs["initial"]):
        np.testing.assert_array_equal(a, b)  # the same float32 draws
    assert len(ours["values"]) == len(theirs["values"]) == 3 + 1 + bias
    for a, b in zip(ours["values"], theirs["values"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


MODULES = [
    ("AlphaDropout", ()), ("AlphaDropout", (0.2, True)), ("FeatureAlphaDropout", (0.7,)),
    ("RReLU", ()), ("RReLU", (0.1, 0.3, True)), ("LPPool1d", (2, 3)),
    ("LPPool1d", (1.5, 3, 2, True)), ("LPPool2d", (2, 3)), ("LPPool2d", (3, (2, 1), 1)),
    ("Softmax2d", ()), ("ChannelShuffle", (2,)), ("LocalResponseNorm", (3,)),
    ("LocalResponseNorm", (2, 0.1, 0.5, 2.0)), ("Bilinear", (2, 3, 4)),
    ("Bilinear", (2, 3, 4, False)),
]  # fmt: skip


def _module_input(lib, name):
    if name == "LPPool1d":
        return lib.tensor(POS1, dtype=lib.float32)
    if name == "LPPool2d":
        return lib.tensor(POS, dtype=lib.float32)
    return lib.tensor(X, dtype=lib.float32)


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    gs.manual_seed(0)
    ours = getattr(gs.nn, name)(*args).eval()
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args).eval()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    assert isinstance(ours, gs.nn.Dropout) == isinstance(theirs, torch.nn.Dropout)
    if name == "Bilinear":
        return
    a, b = ours(_module_input(gs, name)), theirs(_module_input(torch, name))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ ParameterDict


def _parameter_dict_program(lib):
    """Every operation of ParameterDict, recorded as plain values."""
    nn = lib.nn
    log = []
    lib.manual_seed(0)
    pd = nn.ParameterDict({"w": lib.ones(2, 3), "b": nn.Parameter(lib.zeros(2)), "s": "text"})
    log.append(("init order", list(pd), list(pd.keys())))
    log.append(("types", [type(v).__name__ for v in pd.values()]))
    log.append(("state_dict", [(k, tuple(v.shape)) for k, v in pd.state_dict().items()]))
    log.append(("named", [n for n, _ in pd.named_parameters()]))
    log.append(("repr", _repr(pd)))
    pd.update(OrderedDict([("z", lib.full((1,), 2.0)), ("a", lib.ones(3))]))
    pd.update([("m", lib.zeros(4)), ["b", nn.Parameter(lib.full((5,), 3.0))]])
    log.append(("after update", list(pd), [n for n, _ in pd.named_parameters()]))
    log.append(("b replaced", pd["b"].tolist(), len(pd), "z" in pd, "q" in pd, 3 in pd))
    log.append(("setdefault", pd.setdefault("a").tolist(), pd.setdefault("n", None)))
    log.append(("setdefault tensor", type(pd.setdefault("t", lib.ones(1))).__name__))
    log.append(("get", pd.get("missing", 7), pd.get("z").tolist()))
    popped = pd.pop("z")
    log.append(("pop", type(popped).__name__, popped.tolist(), list(pd)))
    log.append(("popitem", pd.popitem()[0], list(pd)))
    log.append(("items", [(k, type(v).__name__) for k, v in pd.items()]))
    log.append(("reversed", list(reversed(pd))))
    copy = pd.copy()
    log.append(("copy", list(copy), copy["w"] is pd["w"]))
    log.append(("fromkeys", list(pd.fromkeys(["x", "y"], lib.ones(1)))))
    other = nn.ParameterDict(OrderedDict([("k2", lib.ones(1)), ("k1", lib.ones(2))]))
    log.append(("or", list(pd | other), list(other | pd)))
    other |= {"k0": lib.ones(3)}
    log.append(("ior", list(other)))
    del pd["w"]
    log.append(("del", list(pd), [n for n, _ in pd.named_parameters()]))
    model = nn.Module()
    model.params = nn.ParameterDict({"w": lib.ones(2, 2)})
    log.append(("nested", list(model.state_dict()), len(list(model.parameters()))))
    loss = (model.params["w"] * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()
    loss.backward()
    log.append(("grad", model.params["w"].grad.tolist()))
    pd.clear()
    log.append(("clear", list(pd), len(pd), list(pd.state_dict())))
    log.append(("empty repr", repr(nn.ParameterDict())))
    log.append(("errors", [_error(f) for f in _parameter_dict_errors(lib)]))
    return log


def _parameter_dict_errors(lib):
    pd = lib.nn.ParameterDict({"a": lib.ones(1)})
    return [
        lambda: pd[3],
        lambda: pd.__setitem__(3, lib.ones(1)),
        lambda: pd["missing"],
        lambda: pd.update(5),
        lambda: pd.update([("a", lib.ones(1), 3)]),
        lambda: pd.update([3]),
        lambda: pd(lib.ones(1)),
        lambda: pd.__setitem__("x.y", lib.ones(1)),
        lambda: pd.pop("missing"),
        lambda: pd.__setitem__("training", lib.ones(1)),
    ]


def _repr(module):
    return repr(module).replace("torch.", "LIB.").replace("gradstack.", "LIB.")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and words are compared
        message = str(e).split("\n")[0]
        return type(e).__name__, re.sub(r"torch|gradstack", "LIB", message)
    return None


def test_parameter_dict_matches_torch():
    ours, theirs = _parameter_dict_program(gs), _parameter_dict_program(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b


def test_parameter_dict_parameters_reach_the_optimiser():
    pd = gs.nn.ParameterDict({"a": gs.ones(2), "b": gs.ones(3)})
    opt = gs.optim.SGD(pd.parameters(), lr=0.5)
    (pd["a"].sum() + 2 * pd["b"].sum()).backward()
    opt.step()
    assert pd["a"].tolist() == [0.5, 0.5] and pd["b"].tolist() == [0.0, 0.0, 0.0]


# ------------------------------------------------------------------ errors


def _bilinear(L, a, b, w=(2, 3, 5), bias=None):
    ones = L.ones
    return L.nn.functional.bilinear(ones(*a), ones(*b), ones(*w), ones(bias) if bias else None)


ERRORS = {
    "bilinear_dims": lambda L: _bilinear(L, (3, 3), (3, 5, 1)),
    "bilinear_batch": lambda L: _bilinear(L, (3, 3), (2, 5)),
    "bilinear_in1": lambda L: _bilinear(L, (3, 4), (3, 5)),
    "bilinear_in2": lambda L: _bilinear(L, (3, 3), (3, 4)),
    "bilinear_bias": lambda L: _bilinear(L, (3, 3), (3, 5), bias=3),
    "bilinear_in1_zero": lambda L: L.nn.Bilinear(0, 3, 4),
    "alpha_dropout_p": lambda L: L.nn.functional.alpha_dropout(L.ones(3), 1.5),
    "feature_alpha_dropout_p": lambda L: L.nn.functional.feature_alpha_dropout(L.ones(3), -0.1),
    "alpha_dropout_module_p": lambda L: L.nn.AlphaDropout(2.0),
    "feature_alpha_dropout_1d": lambda L: L.nn.FeatureAlphaDropout(0.5)(L.ones(6)),
    "rrelu_bounds": lambda L: L.nn.functional.rrelu(L.ones(3), 0.5, 0.1, training=True),
    "rrelu_bounds_eval": lambda L: L.nn.RReLU(0.5, 0.1)(L.ones(3)),
    "rrelu_int": lambda L: L.nn.functional.rrelu(L.ones(3, dtype=L.int32), training=True),
    "channel_shuffle_dims": lambda L: L.nn.functional.channel_shuffle(L.ones(2, 6), 2),
    "channel_shuffle_divisible": lambda L: L.nn.ChannelShuffle(4)(L.ones(2, 6, 3)),
    "channel_shuffle_groups": lambda L: L.nn.functional.channel_shuffle(L.ones(2, 6, 3), 0),
    "local_response_norm_dims": lambda L: L.nn.LocalResponseNorm(2)(L.ones(2, 6)),
    "softmax2d_dims": lambda L: L.nn.Softmax2d()(L.ones(2, 6)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert theirs is not None
    assert ours == theirs


def test_feature_alpha_dropout_checks_dims_only_when_it_draws():
    for lib in (gs, torch):
        x = lib.ones(6)
        assert lib.nn.functional.feature_alpha_dropout(x, 0.5, False).tolist() == [1.0] * 6
        assert lib.nn.functional.feature_alpha_dropout(x, 1.0, True).tolist() == [0.0] * 6
