"""lr_scheduler against torch.optim.lr_scheduler: the learning rates epoch by epoch (exact
floats), several parameter groups, chained schedules, state dicts (keys and values),
resuming, ReduceLROnPlateau in every mode, and torch's warnings."""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
import pytest
from gradstack_nn import Parameter
from gradstack_nn.optim import SGD, Adam
from gradstack_nn.optim import lr_scheduler as gs_sched

torch = pytest.importorskip("torch")
TS = torch.optim.lr_scheduler


def _optimizers(lrs=(0.1, 0.03), cls="SGD"):
    gp = [Parameter(gt.zeros(1)) for _ in lrs]
    tp = [torch.nn.Parameter(torch.zeros(1)) for _ in lrs]
    groups_g = [{"params": [p], "lr": lr} for p, lr in zip(gp, lrs)]
    groups_t = [{"params": [p], "lr": lr} for p, lr in zip(tp, lrs)]
    if cls == "SGD":
        return SGD(groups_g, lr=1.0, momentum=0.9), torch.optim.SGD(groups_t, lr=1.0, momentum=0.9)
    return Adam(groups_g), torch.optim.Adam(groups_t)


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


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict_keys_values_and_resume(name):
    gopt, topt = _optimizers()
    gs = getattr(gs_sched, _cls(name))(gopt, **SCHEDULES[name])
    ts = getattr(TS, _cls(name))(topt, **SCHEDULES[name])
    for _ in range(4):
        gopt.step()
        topt.step()
        gs.step()
        ts.step()
    gsd, tsd = gs.state_dict(), ts.state_dict()
    assert list(gsd) == list(tsd)
    assert gsd == tsd
    # a new scheduler over a new optimiser, resumed from the state dicts, continues the same
    gopt2, _ = _optimizers()
    gopt2.load_state_dict(gopt.state_dict())
    gs2 = getattr(gs_sched, _cls(name))(gopt2, **SCHEDULES[name])
    gs2.load_state_dict(gsd)
    for _ in range(6):
        gopt2.step()
        topt.step()
        gs2.step()
        ts.step()
        assert gs2.get_last_lr() == ts.get_last_lr()


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
