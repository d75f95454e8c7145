"""``amp.GradScaler`` and ``cuda.amp.GradScaler`` against torch 2.13 on a CPU-only machine
(Note [GradScaler on a CPU-only stack] in gradstack_tensor.grad_scaler): nanoGPT's loop
with a disabled scaler is plain training, and a CPU scaler scales, unscales, skips steps on
inf and grows/backs off its scale as torch's."""

from __future__ import annotations

import warnings

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def _train(L, scaler_of, steps, poison=()):
    L.manual_seed(0)
    model = L.nn.Linear(3, 2)
    with L.no_grad():
        model.weight.copy_(L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        model.bias.copy_(L.tensor([0.1, -0.2]))
    opt = L.optim.AdamW(model.parameters(), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = scaler_of(L)
    log = []
    x = L.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    for step in range(steps):
        loss = model(x).pow(2).mean()
        if step in poison:
            loss = loss * float("inf")
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(opt)
        norm = L.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        log.append((scaled.item(), norm.item(), scaler.get_scale(), scaler._get_growth_tracker()))
    params = [v for p in model.parameters() for v in p.detach().flatten().tolist()]
    warned = [(w.category.__name__, str(w.message)) for w in caught]
    return log, params, scaler.is_enabled(), scaler.state_dict(), warned


SCALERS = {
    "nanoGPT cuda disabled": lambda L: L.cuda.amp.GradScaler(enabled=False),
    "cuda enabled, no CUDA": lambda L: L.cuda.amp.GradScaler(enabled=True),
    "amp cuda": lambda L: L.amp.GradScaler("cuda"),
    "cpu disabled": lambda L: L.amp.GradScaler("cpu", enabled=False),
    "cpu": lambda L: L.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3),
    "cpu growth to inf": lambda L: L.amp.GradScaler(
        "cpu", init_scale=2.0**127, growth_factor=4.0, growth_interval=1
    ),
}


@pytest.mark.parametrize("name", sorted(SCALERS))
@pytest.mark.parametrize("poison", [(), (1, 2)])
def test_scaled_training_is_torchs(name, poison):
    ours = _train(gs, SCALERS[name], 6, poison)
    theirs = _train(torch, SCALERS[name], 6, poison)
    assert ours[2:] == theirs[2:]  # enabled, state_dict, warnings
    for a, b in zip(ours[0], theirs[0], strict=True):
        assert a == pytest.approx(b, rel=1e-6, nan_ok=True)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-6, nan_ok=True)


@pytest.mark.parametrize("L", [gs, torch], ids=["gradstack", "torch"])
def test_scaler_errors_are_torchs(L):
    scaler = L.amp.GradScaler("cpu")
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.SGD([p], lr=0.1)
    with pytest.raises(AssertionError, match="_scale is None"):
        scaler.unscale_(opt)
    scaler.scale(p.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update(8.0)
    assert scaler.get_scale() == 8.0
    q = L.nn.Parameter(L.ones(2, dtype=L.float16))
    q.grad = L.ones(2, dtype=L.float16)
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(L.optim.SGD([q], lr=0.1))
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: 0)
