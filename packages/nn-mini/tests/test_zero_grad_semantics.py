"""zero_grad(): the tutorial's zeros, with torch 2.x's numbers (Note [Zeroed gradients count
as None] in gradstack_nn/zeroed_grads.py).

A parameter that a step's graph does not reach keeps the zeros of the last zero_grad(); it
must not move under momentum or weight decay, exactly as torch's None gradient does not.
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_nn as gnn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import optim
from gradstack_nn.utils import clip_grad_norm_, clip_grad_value_

torch = pytest.importorskip("torch")

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.01}),
    ("AdamW", {"lr": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.01}),
]


def _train(lib, nn_lib, optim_lib, name, kwargs, set_to_none, clip):
    no_grad = ag.no_grad if lib is gt else torch.no_grad
    """Two Linear layers, one used on even steps, the other on odd steps after step 2."""
    a, b = nn_lib.Linear(3, 2), nn_lib.Linear(3, 2)
    params = list(a.parameters()) + list(b.parameters())
    with no_grad():
        for i, p in enumerate(params):
            values = np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)) + i
            p.copy_(lib.tensor(values, dtype=lib.float32))
    opt = getattr(optim_lib, name)(params, **kwargs)
    x = lib.tensor(np.arange(12.0).reshape(4, 3) / 10, dtype=lib.float32)
    for step in range(7):
        if set_to_none == "default":
            opt.zero_grad()
        else:
            opt.zero_grad(set_to_none=set_to_none)
        m = a if step % 2 == 0 or step < 2 else b
        (m(x) ** 2).sum().backward()
        if clip == "norm":
            (clip_grad_norm_ if lib is gt else torch.nn.utils.clip_grad_norm_)(params, 1.0)
        elif clip == "value":
            (clip_grad_value_ if lib is gt else torch.nn.utils.clip_grad_value_)(params, 0.5)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


@pytest.mark.parametrize("name, kwargs", OPTIMIZERS)
@pytest.mark.parametrize("set_to_none", ["default", False, True])
@pytest.mark.parametrize("clip", [None, "norm", "value"])
def test_unused_parameters_move_exactly_as_in_torch(name, kwargs, set_to_none, clip):
    got, _ = _train(gt, gnn, optim, name, kwargs, set_to_none, clip)
    want, _ = _train(torch, torch.nn, torch.optim, name, kwargs, set_to_none, clip)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-6)


def test_default_zero_grad_reads_as_zeros_and_counts_as_no_gradient():
    w = gnn.Parameter(gt.ones(3))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    opt.step()
    opt.zero_grad()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]  # the tutorial prints these zeros
    before = w.detach().numpy().copy()
    opt.step()  # torch: grad None, the parameter is skipped (no momentum step)
    np.testing.assert_array_equal(w.detach().numpy(), before)
    assert not gnn.zeroed_grads.has_grad(w)


@pytest.mark.parametrize(
    "write",
    [
        lambda w: (w * 2).sum().backward(),
        lambda w: w.grad.add_(1.0),
        lambda w: ag.graph.increment_version(w.grad),
        lambda w: setattr(w, "grad", gt.zeros(3)),
    ],
)
def test_any_write_after_zero_grad_makes_it_a_gradient_again(write):
    w = gnn.Parameter(gt.ones(3))
    (w * 2).sum().backward()
    w.grad = w.grad.clone()
    opt = optim.SGD([w], lr=0.1)
    opt.zero_grad()
    assert not gnn.zeroed_grads.has_grad(w)
    write(w)
    assert gnn.zeroed_grads.has_grad(w)


def test_module_zero_grad_has_the_three_modes():
    m = gnn.Linear(2, 1)
    m(gt.ones(1, 2)).sum().backward()
    m.zero_grad()
    assert m.weight.grad.tolist() == [[0.0, 0.0]] and not gnn.zeroed_grads.has_grad(m.weight)
    m(gt.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0]] and gnn.zeroed_grads.has_grad(m.weight)
    m.zero_grad(set_to_none=True)
    assert m.weight.grad is None


def test_the_in_place_error_after_a_step_names_the_user_s_line():
    # issue 11: it named gradstack_nn/optim/sgd.py (caller_location skipped only
    # tensor-core's frames in a development install)
    import inspect

    m = gnn.Linear(2, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)
    y = (m.weight * m.weight).sum()
    y.backward(retain_graph=True)
    opt.step()
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert f"{__file__}:{line}" in str(info.value)
    assert "gradstack_nn" not in str(info.value)


def test_a_grad_kept_across_zero_grad_keeps_its_values_as_in_torch():
    # zero_grad() writes nothing (graph-engine's Note [zero_grad() leaves zeros to be made
    # on first read]): the tensor held keeps the gradient, as torch 2.x's does
    kept = []
    for lib, nn_lib in ((gt, gnn), (torch, torch.nn)):
        m = nn_lib.Linear(3, 2)
        with (ag.no_grad if lib is gt else torch.no_grad)():
            m.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32))
        x = lib.tensor(np.ones((2, 3)), dtype=lib.float32)
        m(x).sum().backward()
        g = m.weight.grad
        m.zero_grad()
        (m(x) * 3).sum().backward()
        kept.append((g.detach().numpy().copy(), m.weight.grad.detach().numpy().copy()))
    np.testing.assert_array_equal(kept[0][0], kept[1][0])
    np.testing.assert_array_equal(kept[0][1], kept[1][1])
    np.testing.assert_array_equal(kept[0][0], np.full((2, 3), 2.0, np.float32))
