"""lr_scheduler against torch.optim.lr_scheduler, every schedule: the learning rates (and
cycled momenta / betas) epoch by epoch or step by step as exact floats, several
parameter groups, explicit and fractional epochs, chained and sequential schedules, state
dicts (keys and values) and resuming, ReduceLROnPlateau in every mode, argument errors
and torch's warnings."""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
import pytest
from gradstack_nn import Parameter
from gradstack_nn.optim import SGD, Adam
from gradstack_nn.optim import lr_scheduler as gs_sched
from gradstack_nn_tests_torch_like import GS

torch = pytest.importorskip("torch")
TS = torch.optim.lr_scheduler
GSS = gs_sched
STEPS = 60


def _optimizers(lrs=(0.1, 0.03), cls="SGD"):
    gp = [Parameter(gt.zeros(1)) for _ in lrs]
    tp = [torch.nn.Parameter(torch.zeros(1)) for _ in lrs]
    groups_g = [{"params": [p], "lr": lr} for p, lr in zip(gp, lrs)]
    groups_t = [{"params": [p], "lr": lr} for p, lr in zip(tp, lrs)]
    if cls == "SGD":
        return SGD(groups_g, lr=1.0, momentum=0.9), torch.optim.SGD(groups_t, lr=1.0, momentum=0.9)
    return Adam(groups_g), torch.optim.Adam(groups_t)


def _step_both(gopt, topt, gsch, tsch, steps, *, check=True):
    """``steps`` steps of both optimisers and both schedulers, their learning rates
    compared after each (``check``)."""
    for _ in range(steps):
        gopt.step()
        topt.step()
        gsch.step()
        tsch.step()
        if check:
            assert gsch.get_last_lr() == tsch.get_last_lr()


def _lambda(epoch):
    return 0.95**epoch + 0.01 * (epoch % 3)


SCHEDULES = {
    "StepLR": dict(step_size=3, gamma=0.5),
    "StepLR-default": dict(step_size=2),
    "MultiStepLR": dict(milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": dict(gamma=0.9),
    "CosineAnnealingLR": dict(T_max=7),
    "CosineAnnealingLR-eta": dict(T_max=5, eta_min=0.001),
    "LambdaLR": dict(lr_lambda=_lambda),
    "LambdaLR-list": dict(lr_lambda=[_lambda, lambda e: 1.0 / (e + 1)]),
}


def _cls(name):
    return name.split("-")[0]


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_learning_rates_epoch_by_epoch(name):
    gopt, topt = _optimizers()
    gs = getattr(gs_sched, _cls(name))(gopt, **SCHEDULES[name])
    ts = getattr(TS, _cls(name))(topt, **SCHEDULES[name])
    assert gs.get_last_lr() == ts.get_last_lr()
    for _ in range(25):  # cosine goes past T_max and back up
        gopt.step()
        topt.step()
        gs.step()
        ts.step()
        assert gs.get_last_lr() == ts.get_last_lr()  # exact: the same float arithmetic
        assert [g["lr"] for g in gopt.param_groups] == [g["lr"] for g in topt.param_groups]
    assert gs.last_epoch == ts.last_epoch == 25
    assert [g["initial_lr"] for g in gopt.param_groups] == [0.1, 0.03]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_explicit_epoch_uses_the_closed_form_and_warns(name):
    gopt, topt = _optimizers()
    kwargs = SCHEDULES[name]
    gs, ts = getattr(gs_sched, name)(gopt, **kwargs), getattr(TS, name)(topt, **kwargs)
    for epoch in (4, 2, 11):
        gopt.step()
        topt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            gs.step(epoch)
        with pytest.warns(UserWarning):
            ts.step(epoch)
        assert gs.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15)


def test_chained_schedules_compose_as_in_torch():
    gopt, topt = _optimizers(cls="Adam")
    g1, g2 = gs_sched.ExponentialLR(gopt, 0.9), gs_sched.MultiStepLR(gopt, [3, 6], 0.5)
    t1, t2 = TS.ExponentialLR(topt, 0.9), TS.MultiStepLR(topt, [3, 6], 0.5)
    for _ in range(10):
        gopt.step()
        topt.step()
        for s in (g1, g2, t1, t2):
            s.step()
        assert g2.get_last_lr() == t2.get_last_lr()


def _check_state_dict_and_resume(schedules, name, before, after, momenta=False):
    """Step both schedulers ``before`` times and compare their state dicts (keys in order,
    values); then a new scheduler over a new optimiser, resumed from the state dicts,
    continues the same for ``after`` steps (learning rates, and ``momenta`` when asked)."""
    gopt, topt = _optimizers()
    gs = getattr(gs_sched, _cls(name))(gopt, **schedules[name])
    ts = getattr(TS, _cls(name))(topt, **schedules[name])
    _step_both(gopt, topt, gs, ts, before, check=False)
    gsd, tsd = gs.state_dict(), ts.state_dict()
    assert list(gsd) == list(tsd)
    assert gsd == tsd
    gopt2, _ = _optimizers()
    gopt2.load_state_dict(gopt.state_dict())
    gs2 = getattr(gs_sched, _cls(name))(gopt2, **schedules[name])
    gs2.load_state_dict(gsd)
    if momenta:
        gopt2.load_state_dict(gopt.state_dict())  # the new scheduler's first step set the lrs
    for _ in range(after):
        gopt2.step()
        topt.step()
        gs2.step()
        ts.step()
        assert gs2.get_last_lr() == ts.get_last_lr()
        if momenta:
            assert _momenta(gopt2) == _momenta(topt)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict_keys_values_and_resume(name):
    _check_state_dict_and_resume(SCHEDULES, name, 4, 6)


def test_resuming_with_last_epoch_needs_initial_lr():
    p = Parameter(gt.zeros(1))
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        gs_sched.StepLR(SGD([p], lr=0.1), 2, last_epoch=3)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        gs_sched.StepLR(object(), 2)


def test_warnings_as_torch():
    p = Parameter(gt.zeros(1))
    opt = SGD([p], lr=0.1)
    sched = gs_sched.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt2 = SGD([Parameter(gt.zeros(1))], lr=0.1)
    sched2 = gs_sched.StepLR(opt2, 2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()  # the right order: no warning


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(mode="max"),
        dict(patience=2, factor=0.5),
        dict(patience=1, cooldown=2, threshold_mode="abs", threshold=0.05),
        dict(mode="max", threshold_mode="abs", patience=0),
        dict(patience=1, min_lr=[0.02, 0.001], eps=1e-3),
    ],
    ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "defaults",
)
def test_reduce_lr_on_plateau(kwargs):
    gopt, topt = _optimizers()
    gs, ts = gs_sched.ReduceLROnPlateau(gopt, **kwargs), TS.ReduceLROnPlateau(topt, **kwargs)
    metrics = [1.0, 0.9, 0.9, 0.95, 0.89, 0.9, 0.9, 0.9, 0.91, 0.2, 0.3, 0.3, 0.3] * 3
    for i, m in enumerate(metrics):
        gopt.step()
        topt.step()
        # a number, or a float32 1-element tensor on both sides
        gs.step(gt.tensor(m) if i % 2 else m)
        ts.step(torch.tensor(m) if i % 2 else m)
        assert gs.get_last_lr() == ts.get_last_lr()
        assert (gs.best, gs.num_bad_epochs, gs.cooldown_counter) == (
            ts.best,
            ts.num_bad_epochs,
            ts.cooldown_counter,
        )
    gsd, tsd = gs.state_dict(), ts.state_dict()
    assert list(gsd) == list(tsd) and gsd == tsd


def test_reduce_lr_on_plateau_errors():
    opt = SGD([Parameter(gt.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        gs_sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        gs_sched.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        gs_sched.ReduceLROnPlateau(opt, min_lr=[0.0, 0.1])
    sched = gs_sched.ReduceLROnPlateau(opt)
    assert sched.best == math.inf


def test_lambda_state_dict_saves_callable_objects_state():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.n)

    opt = SGD([Parameter(gt.zeros(1))], lr=0.1)
    sched = gs_sched.LambdaLR(opt, [Warmup(4)])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"n": 4}]
    other = Warmup(10)
    sched2 = gs_sched.LambdaLR(SGD([Parameter(gt.zeros(1))], lr=0.1), [other])
    sched2.load_state_dict(sd)
    assert other.n == 4
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        gs_sched.LambdaLR(opt, [Warmup(1), Warmup(2)])


# ---------------------------------------------------------------------------------------
# the schedules stepped per batch: warmups, polynomial, warm restarts, cyclic, sequential


class _Halving:
    """A callable object (its ``__dict__`` goes into state dicts)."""

    def __init__(self):
        self.factor = 0.97

    def __call__(self, epoch):
        return self.factor if epoch % 4 else 1.01


# stepped 60 times (per batch or per epoch) with SGD and with Adam, momenta compared
STEP_SCHEDULES = {
    "LinearLR": dict(),
    "LinearLR-custom": dict(start_factor=0.1, end_factor=0.7, total_iters=13),
    "LinearLR-down": dict(start_factor=1.0, end_factor=0.05, total_iters=30),
    "ConstantLR": dict(),
    "ConstantLR-custom": dict(factor=0.3, total_iters=11),
    "MultiplicativeLR": dict(lr_lambda=lambda e: 0.95),
    "MultiplicativeLR-list": dict(lr_lambda=[lambda e: 0.9 + 0.01 * (e % 5), _Halving()]),
    "PolynomialLR": dict(),
    "PolynomialLR-custom": dict(total_iters=40, power=2.5),
    "CosineAnnealingWarmRestarts": dict(T_0=7),
    "CosineAnnealingWarmRestarts-mult": dict(T_0=3, T_mult=2, eta_min=0.001),
    "CyclicLR": dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-t2": dict(
        base_lr=[0.01, 0.002], max_lr=[0.1, 0.05], step_size_up=3, step_size_down=5,
        mode="triangular2",
    ),
    "CyclicLR-exp": dict(
        base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97,
        base_momentum=0.7, max_momentum=[0.95, 0.85],
    ),
    "CyclicLR-scale_fn": dict(
        base_lr=0.01, max_lr=0.1, step_size_up=6, scale_fn=lambda x: 1 / (1 + x),
        scale_mode="iterations", cycle_momentum=False,
    ),
    "OneCycleLR": dict(max_lr=0.5, total_steps=STEPS),
    "OneCycleLR-linear": dict(
        max_lr=[0.5, 0.2], total_steps=STEPS + 3, anneal_strategy="linear", pct_start=0.25
    ),
    "OneCycleLR-three": dict(
        max_lr=0.5, epochs=6, steps_per_epoch=10, three_phase=True, div_factor=10.0,
        final_div_factor=100.0,
    ),
    "OneCycleLR-nomomentum": dict(max_lr=0.5, total_steps=STEPS, cycle_momentum=False),
}  # fmt: skip


def _momenta(opt):
    return [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def _run(name, cls="SGD"):
    gopt, topt = _optimizers(cls=cls)
    gsch = getattr(GSS, _cls(name))(gopt, **STEP_SCHEDULES[name])
    tsch = getattr(TS, _cls(name))(topt, **STEP_SCHEDULES[name])
    return gopt, topt, gsch, tsch


@pytest.mark.parametrize("cls", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(STEP_SCHEDULES))
def test_learning_rates_step_by_step(name, cls):
    gopt, topt, gsch, tsch = _run(name, cls)
    assert gsch.get_last_lr() == tsch.get_last_lr()
    assert _momenta(gopt) == _momenta(topt)
    seen = set()
    for _ in range(STEPS):
        gopt.step()
        topt.step()
        gsch.step()
        tsch.step()
        assert gsch.get_last_lr() == tsch.get_last_lr()  # exact: the same float arithmetic
        assert [g["lr"] for g in gopt.param_groups] == [g["lr"] for g in topt.param_groups]
        assert _momenta(gopt) == _momenta(topt)  # cycled momentum, or Adam's beta1
        seen.add(tuple(tsch.get_last_lr()))
    assert len(seen) >= 2  # the schedule moved
    assert gsch.last_epoch == tsch.last_epoch
    for g, t in zip(gopt.param_groups, topt.param_groups):
        assert {k: v for k, v in g.items() if k != "params"} == {
            k: v for k, v in t.items() if k != "params"
        }


def test_one_cycle_past_total_steps_raises_as_torch():
    gopt, topt, gsch, tsch = _run("OneCycleLR")
    _step_both(gopt, topt, gsch, tsch, STEPS, check=False)
    with pytest.raises(ValueError, match=f"Tried to step {STEPS + 1} times"):
        tsch.step()
    with pytest.raises(ValueError, match=f"Tried to step {STEPS + 1} times"):
        gsch.step()


@pytest.mark.parametrize("name", ["LinearLR-custom", "ConstantLR-custom", "PolynomialLR-custom"])
def test_explicit_epoch_of_a_warmup_uses_the_closed_form_and_warns(name):
    gopt, topt, gsch, tsch = _run(name)
    for epoch in (4, 2, 17, 50, 11):
        gopt.step()
        topt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            gsch.step(epoch)
        with pytest.warns(UserWarning, match="The epoch parameter"):
            tsch.step(epoch)
        assert gsch.get_last_lr() == tsch.get_last_lr()


def test_warm_restarts_with_fractional_epochs():
    for kwargs in (dict(T_0=5), dict(T_0=3, T_mult=2, eta_min=0.01)):
        gopt, topt = _optimizers()
        gsch = GSS.CosineAnnealingWarmRestarts(gopt, **kwargs)
        tsch = TS.CosineAnnealingWarmRestarts(topt, **kwargs)
        for epoch in range(12):
            for i in range(4):
                gopt.step()
                topt.step()
                gsch.step(epoch + i / 4)
                tsch.step(epoch + i / 4)
                assert gsch.get_last_lr() == tsch.get_last_lr()
                assert (gsch.T_i, gsch.T_cur, gsch.last_epoch) == (
                    tsch.T_i,
                    tsch.T_cur,
                    tsch.last_epoch,
                )
        with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
            gsch.step(-1)


SEQ = {
    "warmup-then-cosine": lambda lib, opt: [
        lib.LinearLR(opt, start_factor=0.1, total_iters=5),
        lib.CosineAnnealingLR(opt, T_max=20),
    ],
    "three": lambda lib, opt: [
        lib.ConstantLR(opt, factor=0.5, total_iters=3),
        lib.ExponentialLR(opt, gamma=0.9),
        lib.StepLR(opt, step_size=4, gamma=0.5),
    ],
}

SEQ_MILESTONES = {"warmup-then-cosine": [5], "three": [6, 20]}


@pytest.mark.parametrize("which", sorted(SEQ))
def test_sequential_lr(which):
    gopt, topt = _optimizers()
    gsch = GSS.SequentialLR(gopt, SEQ[which](GSS, gopt), milestones=SEQ_MILESTONES[which])
    tsch = TS.SequentialLR(topt, SEQ[which](TS, topt), milestones=SEQ_MILESTONES[which])
    assert gsch.get_last_lr() == tsch.get_last_lr()
    _step_both(gopt, topt, gsch, tsch, STEPS)
    gsd, tsd = gsch.state_dict(), tsch.state_dict()
    assert list(gsd) == list(tsd)
    assert [list(s) for s in gsd["_schedulers"]] == [list(s) for s in tsd["_schedulers"]]
    assert gsd == tsd


def test_chained_scheduler():
    for cls in ("SGD", "Adam"):
        gopt, topt = _optimizers(cls=cls)
        gsch = GSS.ChainedScheduler(
            [GSS.ConstantLR(gopt, factor=0.2, total_iters=4), GSS.ExponentialLR(gopt, 0.93)]
        )
        tsch = TS.ChainedScheduler(
            [TS.ConstantLR(topt, factor=0.2, total_iters=4), TS.ExponentialLR(topt, 0.93)]
        )
        assert gsch.get_last_lr() == tsch.get_last_lr()
        _step_both(gopt, topt, gsch, tsch, STEPS)
        assert gsch.state_dict() == tsch.state_dict()
        assert list(gsch.state_dict()) == list(tsch.state_dict())


@pytest.mark.parametrize("name", sorted(STEP_SCHEDULES))
def test_state_dict_keys_values_and_resume_step_by_step(name):
    _check_state_dict_and_resume(STEP_SCHEDULES, name, 9, 20, momenta=True)


def test_callable_object_state_is_saved_as_torch():
    gopt, topt, gsch, tsch = _run("MultiplicativeLR-list")
    gsd, tsd = gsch.state_dict(), tsch.state_dict()
    assert gsd["lr_lambdas"] == tsd["lr_lambdas"] == [None, {"factor": 0.97}]
    gsd["lr_lambdas"][1] = {"factor": 0.5}
    gsch.load_state_dict(gsd)
    assert gsch.lr_lambdas[1].factor == 0.5
    assert "lr_lambdas" in gsd  # load_state_dict does not consume the caller's dict


def _raises_like_torch(build, error=ValueError):
    with pytest.raises(error) as theirs:
        build(TS, torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1))
    with pytest.raises(error) as ours:
        build(GSS, GS.optim.SGD([GS.nn.Parameter(GS.zeros(1))], lr=0.1))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda lib, opt: lib.LinearLR(opt, start_factor=0.0),
        lambda lib, opt: lib.LinearLR(opt, start_factor=1.5),
        lambda lib, opt: lib.LinearLR(opt, end_factor=-0.1),
        lambda lib, opt: lib.ConstantLR(opt, factor=1.5),
        lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=0),
        lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=2.5),
        lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=0),
        lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=3, eta_min="0"),
        lambda lib, opt: lib.CyclicLR(opt, 0.01, 0.1, mode="sawtooth"),
        lambda lib, opt: lib.CyclicLR(opt, [0.01, 0.02], 0.1),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1, total_steps=0),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1, epochs=0, steps_per_epoch=3),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1, epochs=2, steps_per_epoch=-3),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1, total_steps=10, pct_start=1),
        lambda lib, opt: lib.OneCycleLR(opt, 0.1, total_steps=10, anneal_strategy="exp"),
        lambda lib, opt: lib.SequentialLR(opt, [], milestones=[]),
        lambda lib, opt: lib.SequentialLR(opt, [lib.ConstantLR(opt)], milestones=[3]),
        lambda lib, opt: lib.SequentialLR(opt, [lib.ReduceLROnPlateau(opt)], milestones=[]),
        lambda lib, opt: lib.ChainedScheduler([]),
        lambda lib, opt: lib.ChainedScheduler([lib.ReduceLROnPlateau(opt)]),
        lambda lib, opt: lib.MultiplicativeLR(opt, [lambda e: 1.0, lambda e: 1.0]),
    ],
)
def test_argument_errors_as_torch(build):
    _raises_like_torch(build)


def test_type_errors_as_torch():
    _raises_like_torch(lambda lib, opt: lib.MultiplicativeLR(opt, 0.5), TypeError)
    _raises_like_torch(lambda lib, opt: lib.SequentialLR(opt, [object()], []), TypeError)


def test_cycle_momentum_needs_momentum_or_betas():
    class _Plain(GS.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    opt = _Plain([GS.nn.Parameter(GS.zeros(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        GSS.CyclicLR(opt, 0.01, 0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        GSS.OneCycleLR(opt, 0.1, total_steps=10)
    sched = GSS.OneCycleLR(opt, 0.1, total_steps=10, cycle_momentum=False)
    assert sched.get_last_lr() == [pytest.approx(0.1 / 25)]


def test_get_lr_outside_step_warns_as_torch():
    gopt, topt, gsch, tsch = _run("PolynomialLR")
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        tsch.get_lr()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        gsch.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gopt.step()
        gsch.step()


def test_one_cycle_cos_values_by_hand():
    gopt, _ = _optimizers(lrs=(0.1,))
    sched = GSS.OneCycleLR(gopt, max_lr=1.0, total_steps=10, pct_start=0.5)
    lrs = [sched.get_last_lr()[0]]
    momenta = [gopt.param_groups[0]["momentum"]]
    for _ in range(9):
        gopt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        momenta.append(gopt.param_groups[0]["momentum"])
    # phase 1 ends at step 0.5 * 10 - 1 = 4, phase 2 at step 9
    assert lrs[0] == pytest.approx(0.04) and lrs[4] == pytest.approx(1.0)
    assert lrs[-1] == pytest.approx(0.04 / 1e4)
    pct = (7 - 4) / (9 - 4)
    assert lrs[7] == pytest.approx(
        0.04 / 1e4 + (1 - 0.04 / 1e4) / 2 * (1 + math.cos(math.pi * pct))
    )
    assert momenta[7] == pytest.approx(0.95 + (0.85 - 0.95) / 2 * (1 + math.cos(math.pi * pct)))
    assert momenta[0] == momenta[-1] == 0.95 and momenta[4] == pytest.approx(0.85)
