"""Every optimiser against torch.optim (SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop,
Adagrad, Adadelta, Rprop, ASGD; LBFGS, which takes a closure, in test_optim_lbfgs_torch.py):
100 steps on the same parameters and gradients (float64 to 1e-12, float32 to float32's
tolerance), every option, parameters whose gradient is None skipped, the per-parameter
state, state dicts in torch's layout (and loaded from torch's), parameter groups,
defaults, reprs and argument errors."""

from __future__ import annotations

import itertools

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter
from gradstack_nn import optim as gs_optim
from gradstack_nn_tests_oracle import assert_state_equal
from gradstack_nn_tests_torch_like import GS

torch = pytest.importorskip("torch")

SHAPES = [(5, 3), (3,), ()]


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*axes.values())]


# each optimiser's options: the grid of the ones that interact, then some single cases
# (the order of the axes and of the cases gives the test ids)
CASES = {
    "Adam": _grid(
        lr=[0.01], betas=[(0.9, 0.999), (0.3, 0.6)],  # the second takes lerp's other branch
        weight_decay=[0.0, 0.1], amsgrad=[False, True], maximize=[False, True],
    ) + [dict(lr=0.05, eps=1e-3), dict()],
    "AdamW": _grid(
        lr=[0.01], weight_decay=[1e-2, 0.3], amsgrad=[False, True], maximize=[False, True]
    ) + [dict()],
    "RMSprop": _grid(
        lr=[0.01], alpha=[0.99, 0.7], centered=[False, True], momentum=[0.0, 0.9],
        weight_decay=[0.0, 0.05], maximize=[False, True],
    ) + [dict(eps=1e-3), dict()],
    "Adagrad": _grid(
        lr=[0.1], lr_decay=[0.0, 0.01], initial_accumulator_value=[0.0, 0.5],
        weight_decay=[0.0, 0.1], maximize=[False, True],
    ) + [dict(eps=1e-3), dict()],
    "SGD": _grid(
        lr=[0.01], momentum=[0.0, 0.9], dampening=[0.0, 0.3], weight_decay=[0.0, 0.1],
        nesterov=[False, True], maximize=[False, True],
    ),
    "Adamax": _grid(
        lr=[0.01], betas=[(0.9, 0.999), (0.3, 0.6)], weight_decay=[0.0, 0.1],
        maximize=[False, True],
    ) + [dict(eps=1e-3), dict()],
    "NAdam": _grid(
        lr=[0.01], weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
        maximize=[False, True],
    ) + [dict(momentum_decay=0.05, betas=(0.3, 0.6)), dict()],
    "RAdam": _grid(
        lr=[0.01], weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
        maximize=[False, True],
    ) + [dict(betas=(0.5, 0.6)), dict()],  # (beta2 0.6: the rectified step from step 2 on)
    "Adadelta": _grid(
        lr=[1.0, 0.1], rho=[0.9, 0.3], weight_decay=[0.0, 0.1], maximize=[False, True]
    ) + [dict(eps=1e-3), dict()],
    "Rprop": _grid(
        lr=[0.01, 0.1], etas=[(0.5, 1.2), (0.3, 1.7)], step_sizes=[(1e-6, 50), (1e-3, 0.05)],
        maximize=[False, True],
    ) + [dict()],
    "ASGD": _grid(
        lr=[0.01, 0.05], lambd=[1e-4, 0.1], alpha=[0.75, 0.3], t0=[1e6, 5.0],
        weight_decay=[0.0, 0.1], maximize=[False, True],
    ) + [dict()],
    "Adafactor": _grid(
        lr=[0.01, 0.5], beta2_decay=[-0.8, -0.5], d=[1.0, 1.5], weight_decay=[0.0, 0.1],
        maximize=[False, True],
    ) + [dict(eps=(1e-6, 1e-2)), dict()],
}  # fmt: skip
PARAMS = [
    pytest.param(name, opts, id=f"{name}-{i}")
    for name, cases in CASES.items()
    for i, opts in enumerate(cases)
    if not (opts.get("nesterov") and (opts.get("momentum", 0) == 0 or opts.get("dampening", 0)))
]


# exact zeros in the gradients exercise Rprop's sign(0) branch
_ZEROS = {"Rprop", "ASGD"}


def _data(dtype, steps, seed=0, zeros=False):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    if zeros:
        for step in grads[::4]:
            step[0][0, 0] = 0.0
    return init, grads


def _has_grad(step, i):
    """Parameter 1 has no gradient on every third step (the optimisers must skip it)."""
    return not (i == 1 and step % 3 == 1)


def run_both(name, options, dtype, steps=100, seed=0):
    return _step_both(name, options, *_data(dtype, steps, seed, zeros=name in _ZEROS))


def _step_both(name, options, init, grads):
    """Both optimisers over parameters made from ``init``, stepped with ``grads`` (a
    parameter without a gradient where :func:`_has_grad` says); with the largest
    difference of the parameters after any step."""
    gp = [Parameter(gt.tensor(a)) for a in init]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    gopt = getattr(gs_optim, name)(gp, **options)
    topt = getattr(torch.optim, name)(tp, **options)
    worst = 0.0
    for k, step in enumerate(grads):
        for i, (p, q, g) in enumerate(zip(gp, tp, step)):
            if _has_grad(k, i):
                p.grad, q.grad = gt.tensor(g), torch.tensor(g)
            else:
                p.grad = q.grad = None
        gopt.step()
        topt.step()
        for p, q in zip(gp, tp):
            worst = max(worst, float(np.max(np.abs(p.detach().numpy() - q.detach().numpy()))))
    return gp, tp, gopt, topt, worst


def _tol(dtype):
    return (1e-12, 1e-12) if dtype == np.float64 else (2e-5, 2e-5)


@pytest.mark.parametrize(("name", "options"), PARAMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_100_steps_equal_torch(name, options, dtype):
    gp, tp, gopt, topt, worst = run_both(name, options, dtype)
    rtol, atol = _tol(dtype)
    for p, q in zip(gp, tp):
        assert p.dtype.name == str(q.dtype).removeprefix("torch.")
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol)
    assert worst < (1e-11 if dtype == np.float64 else 1e-4)
    # the per-parameter state too, key by key
    for p, q in zip(gp, tp):
        gs, ts = gopt.state[p], topt.state[q]
        assert list(gs) == list(ts)
        for key in ts:
            a, b = gs[key], ts[key]
            if isinstance(b, torch.Tensor):
                assert a.dtype.name == str(b.dtype).removeprefix("torch.") and a.shape == b.shape
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
            else:
                assert a == b


def test_asgd_averages_after_t0_like_torch():
    """With t0=5 the averaged parameters ``ax`` differ from the parameters after step 6,
    and ``eta``/``mu`` are float32 0-d tensors, as torch."""
    gp, tp, gopt, topt, _ = run_both("ASGD", dict(lr=0.05, t0=5.0, lambd=0.01), np.float64, 30)
    gs_state, t_state = gopt.state[gp[0]], topt.state[tp[0]]
    assert not np.allclose(gs_state["ax"].numpy(), gp[0].detach().numpy())
    np.testing.assert_allclose(gs_state["ax"].numpy(), t_state["ax"].numpy(), rtol=1e-12)
    assert gs_state["eta"].dtype == GS.float32 and gs_state["mu"].dtype == GS.float32
    assert gs_state["eta"].item() == t_state["eta"].item()
    assert gs_state["mu"].item() == t_state["mu"].item() == float(np.float32(1 / 25))


def test_a_parameter_without_gradient_never_moves_nor_gets_state():
    for name in ("Adam", "AdamW", "RMSprop", "SGD"):
        a, b = Parameter(gt.ones(2)), Parameter(gt.ones(2))
        opt = getattr(gs_optim, name)([a, b], lr=0.1, weight_decay=0.1)
        for _ in range(3):
            a.grad = gt.ones(2)
            opt.step()
        assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0, name
        assert a.tolist() != [1.0, 1.0]
    # Adagrad creates the state of every parameter up front, as torch does
    a, b = Parameter(gt.ones(2)), Parameter(gt.ones(2))
    opt = gs_optim.Adagrad([a, b])
    assert sorted(opt.state_dict()["state"]) == [0, 1]
    a.grad = gt.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and opt.state[b]["step"].item() == 0.0


# ---------------------------------------------------------------------------------------
# state dicts


def _compare_state_dicts(gsd, tsd):
    assert list(gsd) == ["state", "param_groups"] == list(tsd)
    assert sorted(gsd["state"]) == sorted(tsd["state"])
    for k in tsd["state"]:
        assert list(gsd["state"][k]) == list(tsd["state"][k])
        for key, b in tsd["state"][k].items():
            a = gsd["state"][k][key]
            assert a.dtype.name == str(b.dtype).removeprefix("torch."), key
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    assert len(gsd["param_groups"]) == len(tsd["param_groups"])
    for g, t in zip(gsd["param_groups"], tsd["param_groups"]):
        assert list(g) == list(t)
        assert g == t


def _to_torch_state_dict(sd):
    out = {"state": {}, "param_groups": [dict(g) for g in sd["param_groups"]]}
    for k, st in sd["state"].items():
        out["state"][k] = {n: torch.from_numpy(v.numpy().copy()) for n, v in st.items()}
    return out


def _from_torch_state_dict(sd):
    out = {"state": {}, "param_groups": [dict(g) for g in sd["param_groups"]]}
    for k, st in sd["state"].items():
        out["state"][k] = {n: gt.from_numpy(v.numpy().copy()) for n, v in st.items()}
    return out


CONFIGS = [
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
]


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_state_dict_layout_and_round_trips(name, options):
    gp, tp, gopt, topt, _ = run_both(name, options, np.float64, steps=7)
    _compare_state_dicts(gopt.state_dict(), topt.state_dict())
    # a fresh optimiser over copies of the parameters, loaded from gradstack's state dict
    # and from torch's, continues exactly as torch does
    init, grads = _data(np.float64, 10, seed=5)
    copies = [[Parameter(gt.tensor(p.detach().numpy().copy())) for p in gp] for _ in range(2)]
    loaded = [getattr(gs_optim, name)(c, **options) for c in copies]
    loaded[0].load_state_dict(gopt.state_dict())
    loaded[1].load_state_dict(_from_torch_state_dict(topt.state_dict()))
    for step in grads:
        for c in copies:
            for p, g in zip(c, step):
                p.grad = gt.tensor(g)
        for q, g in zip(tp, step):
            q.grad = torch.tensor(g)
        for opt in loaded:
            opt.step()
        topt.step()
    for c in copies:
        for p, q in zip(c, tp):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
    # and torch loads gradstack's state dict
    tcopy = [torch.nn.Parameter(q.detach().clone()) for q in tp]
    topt2 = getattr(torch.optim, name)(tcopy, **options)
    topt2.load_state_dict(_to_torch_state_dict(loaded[0].state_dict()))
    _compare_state_dicts(loaded[0].state_dict(), topt2.state_dict())


@pytest.mark.parametrize(
    ("name", "options"),
    [("Rprop", dict(lr=0.05, etas=(0.4, 1.3))), ("ASGD", dict(lr=0.02, t0=3.0))],
)
def test_rprop_and_asgd_state_dicts_resume_as_torch(name, options):
    gp, tp, gopt, topt, _ = run_both(name, options, np.float64, steps=9)
    gsd, tsd = gopt.state_dict(), topt.state_dict()
    assert list(gsd) == list(tsd) == ["state", "param_groups"]
    assert sorted(gsd["state"]) == sorted(tsd["state"]) == [0, 1, 2]
    for k in tsd["state"]:
        assert_state_equal(gsd["state"][k], tsd["state"][k], 1e-12, 1e-12)
    assert gsd["param_groups"] == tsd["param_groups"]
    # a fresh optimiser loaded from torch's state dict continues as torch does
    copies = [GS.nn.Parameter(GS.tensor(p.detach().numpy().copy())) for p in gp]
    loaded = getattr(GS.optim, name)(copies, **options)
    sd = {
        "state": {
            k: {n: GS.from_numpy(v.numpy().copy()) for n, v in st.items()}
            for k, st in tsd["state"].items()
        },
        "param_groups": [dict(g) for g in tsd["param_groups"]],
    }
    loaded.load_state_dict(sd)
    # (loading casts float state to the parameter's dtype, ASGD's float32 eta and mu
    # included, in both libraries: compare with torch's optimiser loaded the same way)
    tcopies = [torch.nn.Parameter(q.detach().clone()) for q in tp]
    tloaded = getattr(torch.optim, name)(tcopies, **options)
    tloaded.load_state_dict(tsd)
    for k in tsd["state"]:
        assert_state_equal(
            loaded.state_dict()["state"][k], tloaded.state_dict()["state"][k], 1e-12, 1e-12
        )
    _, grads = _data(np.float64, 12, seed=4, zeros=True)
    for step in grads:
        for p, q, g in zip(copies, tcopies, step):
            p.grad, q.grad = GS.tensor(g), torch.tensor(g)
        loaded.step()
        tloaded.step()
    for p, q in zip(copies, tcopies):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)


def test_state_dict_casts_float_state_to_the_parameter_dtype_but_not_step():
    p = Parameter(gt.zeros(2, dtype=gt.float64))
    opt = gs_optim.Adam([p])
    p.grad = gt.ones(2, dtype=gt.float64)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].float()
    q = Parameter(gt.zeros(2, dtype=gt.float64))
    opt2 = gs_optim.Adam([q])
    opt2.load_state_dict(sd)
    assert opt2.state[q]["exp_avg"].dtype == gt.float64
    assert opt2.state[q]["step"].dtype == gt.float32


def test_param_groups_and_add_param_group_match_torch():
    rng = np.random.default_rng(3)
    init = [rng.standard_normal((3,)) for _ in range(3)]
    gp = [Parameter(gt.tensor(a)) for a in init]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    gopt = gs_optim.Adam([{"params": [gp[0]]}, {"params": [gp[1]], "lr": 0.1}], lr=0.01)
    topt = torch.optim.Adam([{"params": [tp[0]]}, {"params": [tp[1]], "lr": 0.1}], lr=0.01)
    for k in range(20):
        if k == 5:
            gopt.add_param_group({"params": [gp[2]], "betas": (0.5, 0.9)})
            topt.add_param_group({"params": [tp[2]], "betas": (0.5, 0.9)})
        g = [rng.standard_normal((3,)) for _ in range(3)]
        for p, q, a in zip(gp, tp, g):
            p.grad, q.grad = gt.tensor(a), torch.tensor(a)
        gopt.step()
        topt.step()
    for p, q in zip(gp, tp):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
    _compare_state_dicts(gopt.state_dict(), topt.state_dict())
    assert repr(gopt) == repr(topt)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        gopt.add_param_group({"params": [gp[0]]})


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("Adam", dict(lr=-1.0), "Invalid learning rate: -1.0"),
        ("Adam", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        ("Adam", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
        ("AdamW", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
        ("RMSprop", dict(alpha=-0.5), "Invalid alpha value: -0.5"),
        ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
        ("Adagrad", dict(lr_decay=-0.5), "Invalid lr_decay value: -0.5"),
        ("Adagrad", dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value"),
        ("Rprop", dict(lr=-1.0), "Invalid learning rate: -1.0"),
        ("Rprop", dict(etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
        ("Rprop", dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
        ("ASGD", dict(lr=-0.1), "Invalid learning rate: -0.1"),
        ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
        ("LBFGS", dict(lr=-1.0), "Invalid learning rate: -1.0"),
        ("Adafactor", dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
        ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
        ("Adafactor", dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
        ("Adafactor", dict(eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
        ("Adafactor", dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
        ("Adafactor", dict(weight_decay=-1.0), "weight_decay should be >= 0 but is: -1.0"),
    ],
)
def test_argument_errors_as_torch(name, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(1))], **kwargs)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        getattr(gs_optim, name)([Parameter(gt.zeros(1))], **kwargs)


def test_defaults_and_repr_match_torch():
    for name in (
        "Adam",
        "AdamW",
        "RMSprop",
        "Adagrad",
        "SGD",
        "Adamax",
        "NAdam",
        "RAdam",
        "Adadelta",
        "Rprop",
        "ASGD",
        "LBFGS",
        "Adafactor",
    ):
        g = getattr(gs_optim, name)([Parameter(gt.zeros(1))])
        t = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(1))])
        assert g.defaults == t.defaults, name
        assert repr(g) == repr(t), name


def test_unsupported_flags_raise():
    p = [Parameter(gt.zeros(1))]
    with pytest.raises(ValueError, match="capturable=True"):
        gs_optim.Adam(p, capturable=True)
    with pytest.raises(ValueError, match="differentiable=True"):
        gs_optim.RMSprop(p, differentiable=True)


def test_closure_and_a_real_model_train_like_torch():
    """Adam on a small regression model, the gradients from backward, 100 steps: the same
    weights as torch's (copied into gradstack) and the same losses."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((32, 4)), rng.standard_normal((32, 1))
    w1, b1 = rng.standard_normal((8, 4)) * 0.5, rng.standard_normal(8) * 0.1
    w2, b2 = rng.standard_normal((1, 8)) * 0.5, rng.standard_normal(1) * 0.1
    import gradstack_nn as nn

    gm = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    gm.load_state_dict({k: gt.tensor(v) for k, v in zip(gm.state_dict(), (w1, b1, w2, b2))})
    tm.load_state_dict({k: torch.tensor(v) for k, v in zip(tm.state_dict(), (w1, b1, w2, b2))})
    gopt = gs_optim.Adam(gm.parameters(), lr=0.01, amsgrad=True)
    topt = torch.optim.Adam(tm.parameters(), lr=0.01, amsgrad=True)
    gx, gy, tx, ty = gt.tensor(x), gt.tensor(y), torch.tensor(x), torch.tensor(y)

    def gclosure():
        gopt.zero_grad()
        loss = nn.functional.mse_loss(gm(gx), gy)
        loss.backward()
        return loss

    def tclosure():
        topt.zero_grad()
        loss = torch.nn.functional.mse_loss(tm(tx), ty)
        loss.backward()
        return loss

    for _ in range(100):
        gl, tl = gopt.step(gclosure), topt.step(tclosure)
        assert abs(gl.item() - tl.item()) < 1e-12
    for p, q in zip(gm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.1}, {"maximize": True}])
def test_sgd_without_momentum_on_layouts_the_kernel_does_not_take(kwargs):
    # _step_without_momentum: C-contiguous parameters take the fused kernel, others (a
    # transposed leaf, float16) the tensor formula; both give torch's numbers
    values = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    results = []
    for lib, opt_lib in ((gt, gs_optim), (torch, torch.optim)):
        plain = lib.tensor(values, requires_grad=True)
        transposed = lib.tensor(values.T.copy()).t().detach().requires_grad_()
        half = lib.tensor(values, dtype=lib.float16, requires_grad=True)
        opt = opt_lib.SGD([plain, transposed, half], lr=0.5, **kwargs)
        for _ in range(3):
            opt.zero_grad()
            ((plain * transposed).sum() + (half.float() ** 2).sum()).backward()
            opt.step()
        results.append([t.detach().float().numpy() for t in (plain, transposed, half)])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def _complex_data(dtype, steps, zeros):
    real = np.float64 if dtype == np.complex128 else np.float32
    (ia, ga), (ib, gb) = _data(real, steps, 0, zeros), _data(real, steps, 1, zeros)
    init = [(a + 1j * b).astype(dtype) for a, b in zip(ia, ib)]
    grads = [[(a + 1j * b).astype(dtype) for a, b in zip(s, t)] for s, t in zip(ga, gb)]
    return init, grads


@pytest.mark.parametrize(
    ("name", "options"), [p for p in PARAMS if p.values[0] != "Adafactor"]
)  # (Adafactor refuses complex parameters, as torch's)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["complex128", "complex64"])
def test_complex_parameters_step_as_torchs_real_pairs(name, options, dtype):
    # Note [Complex parameters are stepped as real pairs] (optimizer.py): Adam's g * g is
    # each part squared, Adagrad's and Rprop's initial values are set on both parts
    data = _complex_data(dtype, 30, zeros=name in _ZEROS)
    gp, tp, gopt, topt, _ = _step_both(name, options, *data)
    rtol, atol = _tol(np.float64 if dtype == np.complex128 else np.float32)
    for p, q in zip(gp, tp):
        assert p.dtype.name == str(q.dtype).removeprefix("torch.")
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol)
        for key, b in topt.state[q].items():
            if isinstance(b, torch.Tensor):  # the state stays complex, as torch's
                a = gopt.state[p][key]
                assert a.dtype.name == str(b.dtype).removeprefix("torch.")
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
