"""The activations (functional/activation.py, modules/activation.py) against torch: values,
first- and second-order gradients in float64, module reprs and defaults, the random
``rrelu`` and ``gumbel_softmax`` after the same seed, in-place forms, warnings and
errors.  (The activations that are one op of the registry are also compared node by node
in test_functional_nn_torch.py.)"""

from __future__ import annotations

import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_first_order_matches_torch,
    assert_module_matches_torch,
    assert_same_error,
    assert_seeded_run_matches_torch,
    seeded_run,
    values_and_gradients,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X = np.random.default_rng(0).uniform(-5, 5, (2, 3, 5, 6))
X[0, 0, 0, :4] = [-3.0, 3.0, 0.0, 1.0]  # the boundaries of hardtanh/hardswish/relu/elu
WC = np.random.default_rng(1).uniform(0.1, 0.5, 3)  # (prelu's weights)
XR = np.random.default_rng(2).standard_normal((2, 6, 5, 4))  # (rrelu's and softmax2d's)
_RF = np.random.default_rng(0)
XF, YF = _RF.standard_normal((6, 4)), _RF.standard_normal((6, 4))  # (the layers' inputs)


def _softmax2d(L, x):
    return L.nn.Softmax2d()(x)


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
    # in evaluation, deterministic: the slope (lower + upper) / 2
    "rrelu_eval": (lambda L, F, x: F.rrelu(x), [XR]),
    "rrelu_eval_bounds": (lambda L, F, x: F.rrelu(x, 0.2, 0.6, training=False), [XR]),
    "softmax2d": (lambda L, F, x: _softmax2d(L, x), [XR]),
    "softmax2d_3d": (lambda L, F, x: _softmax2d(L, x[0]), [XR]),
}

# the ELU family's second derivative at exactly 0 (Note [Activations keep torch's
# derivative at every point]: torch's double backward tests x < 0, its backward x <= 0)
_SECOND_ORDER_AT_ZERO_DIFFERS = {"elu", "elu_large", "selu", "celu"}
# prelu's cross derivative (d/dweight of d/dx) at 0: torch's is 0, a composite's 1; it
# reaches the weight's second-order gradient through the sum over positions
_SECOND_ORDER_DIFFERS = {"prelu_at_zero"}
# torch's float64 hardsigmoid gradient multiplies by 1/6 rounded to float32 (its kernel's
# constant is ``1.0f / 6.0f``): 1.3e-8 relative; here 1/6 is a double
_FIRST_ORDER_RTOL = {"hardsigmoid": 1e-7}
# (torch: hardsigmoid's double backward is not implemented)
_FIRST_ORDER_ONLY = {"hardsigmoid"}


def run(lib, name):
    order = 1 if name in _FIRST_ORDER_ONLY else 2
    return values_and_gradients(lib, *PROGRAMS[name], order=order)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    (a, ga, sa), (b, gb, sb) = run(gs, name), run(torch, name)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for p, q in zip(ga, gb):
        assert p.shape == q.shape
        np.testing.assert_allclose(p, q, rtol=_FIRST_ORDER_RTOL.get(name, 1e-9), atol=1e-10)
    if name in _SECOND_ORDER_DIFFERS:
        return
    for p, q in zip(sa, sb):
        assert p.shape == q.shape
        if name in _SECOND_ORDER_AT_ZERO_DIFFERS:
            zero = np.broadcast_to(X == 0, p.shape) if p.shape == X.shape else False
            p, q = np.where(zero, 0.0, p), np.where(zero, 0.0, q)
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-10)


def test_programs_are_not_trivial():
    """The gradients above are not all zero."""
    out, first, second = run(gs, "rrelu_eval")
    assert np.abs(first[0]).max() > 1e-3


def test_activations_match_torch():
    for gfn, tfn in [
        (F.relu, TF.relu),
        (F.sigmoid, torch.sigmoid),
        (F.tanh, torch.tanh),
        (lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2)),
        (lambda a: F.softmax(a, dim=1), lambda a: TF.softmax(a, dim=1)),
        (lambda a: F.log_softmax(a, dim=0), lambda a: TF.log_softmax(a, dim=0)),
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.Sigmoid(), torch.nn.Sigmoid()),
        (nn.Tanh(), torch.nn.Tanh()),
        (nn.Softmax(1), torch.nn.Softmax(1)),
        (nn.LogSoftmax(1), torch.nn.LogSoftmax(1)),
        (nn.LeakyReLU(0.1), torch.nn.LeakyReLU(0.1)),
        (nn.Flatten(0), torch.nn.Flatten(0)),
    ]:
        assert_first_order_matches_torch(gfn, tfn, [XF])
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(gt.tensor(XF))
    assert_first_order_matches_torch(
        lambda a, w, b: F.linear(a, w, b),
        lambda a, w, b: TF.linear(a, w, b),
        [XF, YF[:3], YF[0, :3]],
    )


MODULES = [
    ("ELU", (0.5,)), ("SELU", ()), ("CELU", (1.5,)), ("Softplus", (2.0, 10.0)),
    ("Hardtanh", (-2.0, 2.0)), ("ReLU6", ()), ("Hardsigmoid", ()), ("Hardswish", ()),
    ("Mish", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Softmin", (1,)),
    ("Threshold", (0.5, -1.0)), ("GLU", (-1,)), ("Hardshrink", (1.0,)),
    ("Softshrink", (1.0,)), ("LogSigmoid", ()), ("PReLU", ()), ("PReLU", (3,)),
]  # fmt: skip
# (in evaluation mode: RReLU's slope is then (lower + upper) / 2)
EVAL_MODULES = [("RReLU", ()), ("RReLU", (0.1, 0.3, True)), ("Softmax2d", ())]


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    assert_module_matches_torch(name, args, lambda L: L.tensor(X, dtype=L.float32))


@pytest.mark.parametrize("name, args", EVAL_MODULES, ids=[f"{n}{a}" for n, a in EVAL_MODULES])
def test_modules_in_evaluation_match_torch(name, args):
    assert_module_matches_torch(name, args, lambda L: L.tensor(XR, dtype=L.float32), eval=True)


# ------------------------------------------------------------------ random activations

RANDOM = {
    "rrelu": lambda L, F, x: F.rrelu(x, training=True),
    "rrelu_bounds": lambda L, F, x: F.rrelu(x, 0.05, 0.9, True),
    "rrelu_module": lambda L, F, x: L.nn.RReLU(0.3, 0.31)(x),
    "rrelu_twice": lambda L, F, x: F.rrelu(x, training=True) + F.rrelu(x * 2, training=True),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(RANDOM))
def test_random_layers_draw_torch_s_numbers(name, dtype):
    """The same outputs and gradients as torch's after the same seed, float64 and float32."""
    assert_seeded_run_matches_torch(RANDOM[name], XR, dtype)


def test_rrelu_is_random_in_training():
    rrelu, _ = seeded_run(gs, RANDOM["rrelu"], XR, "float64")
    negative = XR < 0
    slopes = rrelu[negative] / XR[negative]
    assert slopes.min() >= 1 / 8 and slopes.max() <= 1 / 3 and len(set(slopes.round(12))) > 10
    np.testing.assert_array_equal(rrelu[~negative], XR[~negative])


def test_rrelu_in_evaluation_is_the_mean_slope():
    x = gs.tensor(XR)
    np.testing.assert_allclose(
        gs.nn.RReLU(0.1, 0.3).eval()(x).numpy(), np.where(XR > 0, XR, 0.2 * XR), rtol=1e-15
    )


def test_inplace_rrelu_modifies_its_input_as_torch():
    out = []
    for lib in (gs, torch):
        F = lib.nn.functional
        lib.manual_seed(3)
        b, c = (lib.tensor(XR.copy()) for _ in range(2))
        F.rrelu(b, training=True, inplace=True)
        lib.nn.functional.rrelu_(c, 0.1, 0.2)
        d = lib.tensor(XR.copy())
        lib.nn.RReLU(inplace=True).train()(d)
        out.append([t.numpy().copy() for t in (b, c, d)])
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-12)
        assert not np.array_equal(p, XR)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_draws_torchs_samples(hard, dim):
    rng = np.random.default_rng(12)
    logits = rng.standard_normal((4, 6))
    w = rng.standard_normal((4, 6))
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


# ------------------------------------------------------------------ errors

# the exception type and words, as torch's
ERRORS = {
    "glu_odd": lambda L: L.nn.functional.glu(L.ones(2, 3)),
    "prelu_channels": lambda L: L.nn.functional.prelu(L.ones(2, 3, 4), L.ones(2)),
    "hardtanh_bounds": lambda L: L.nn.functional.hardtanh(L.ones(2), 1.0, -1.0),
    "rrelu_bounds": lambda L: L.nn.functional.rrelu(L.ones(3), 0.5, 0.1, training=True),
    "rrelu_bounds_eval": lambda L: L.nn.RReLU(0.5, 0.1)(L.ones(3)),
    "rrelu_int": lambda L: L.nn.functional.rrelu(L.ones(3, dtype=L.int32), training=True),
    "softmax2d_dims": lambda L: L.nn.Softmax2d()(L.ones(2, 6)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])
