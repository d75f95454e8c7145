"""``torch.amp.GradScaler`` and ``torch.cuda.amp.GradScaler`` as torch 2.13's on a machine
without CUDA (Note [GradScaler on a machine without CUDA] in tensor-core's
``grad_scaler.py``): scales, skipped steps, the scale's growth and backoff, state, errors."""

from __future__ import annotations

import warnings

import gradstack
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _run(lib, losses_scale, **kw):
    """A few SGD steps under a CPU scaler; the 3rd loss is inf."""
    x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = lib.optim.SGD([x], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **kw)
    log = []
    for i in range(6):
        opt.zero_grad()
        loss = (x * x).sum() * (float("inf") if i == 2 else 1.0)
        scaled = scaler.scale(loss)
        log.append(float(scaled.item()))
        scaled.backward()
        if i == 4:
            scaler.unscale_(opt)
            log.append(x.grad.tolist())
        ret = scaler.step(opt)
        assert ret is None
        scaler.update()
        log.append((scaler.get_scale(), x.detach().tolist()))
    log.append(scaler.state_dict())
    return log


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"init_scale": 4.0, "growth_interval": 2},
        {"init_scale": 3.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 1},
    ],
)
def test_cpu_scaler_as_torch(kw):
    want = _run(torch, None, **kw)
    got = _run(gradstack, None, **kw)
    assert got[-1] == want[-1]  # the state dicts
    assert len(got) == len(want)
    for g, w in zip(got[:-1], want[:-1]):
        if isinstance(g, tuple):  # (scale, parameters after the step): exact
            assert g == w
        else:  # the scaled loss (a float32 sum of squares: to rounding) or unscaled grads
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_cuda_scaler_disables_itself():
    for lib in (torch, gradstack):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = lib.cuda.amp.GradScaler(enabled=True)
        kinds = sorted(type(m.message).__name__ for m in w)
        assert kinds == ["FutureWarning", "UserWarning"]
        assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        x = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([x], lr=0.1)
        loss = (x * 2).sum()
        assert s.scale(loss) is loss
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        np.testing.assert_allclose(x.detach().numpy(), [0.8, 0.8])
    from gradstack.cuda.amp import GradScaler  # noqa: F401 - the import path programs use


def test_errors_as_torch():
    for lib in (torch, gradstack):
        x = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([x], lr=0.1)
        s = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="_scale is None"):
            s.step(opt)
        s.scale((x * 2).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.update()
            s.scale((x * 2).sum()).backward()
            s.step(opt, closure=lambda: None)


def test_scale_of_lists_and_state_round_trip():
    for lib in (torch, gradstack):
        s = lib.amp.GradScaler("cpu", init_scale=2.0)
        a, b = lib.tensor(1.5), lib.tensor([1.0, 2.0])
        out = s.scale([a, (b,)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].item() == 3.0 and out[1][0].tolist() == [2.0, 4.0]
        t = lib.amp.GradScaler("cpu")
        t.load_state_dict(s.state_dict())
        assert t.get_scale() == 2.0
