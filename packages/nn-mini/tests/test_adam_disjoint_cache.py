"""Note [Adam's disjoint arrays are checked once]: the fused step's check that a
parameter's array and its state arrays share no memory is kept per parameter, redone when
any of the arrays changes, and dropped with the parameter."""

from __future__ import annotations

import gc

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter
from gradstack_nn.optim import Adam, adam


def _stepped(values=(1.0, -2.0, 3.0)):
    p = Parameter(gt.tensor(list(values)))
    opt = Adam([p], lr=0.1)
    p.grad = gt.tensor([0.5, 0.25, -1.0])
    opt.step()
    return p, opt


def test_the_verdict_is_kept_and_rechecked_when_an_array_changes():
    p, opt = _stepped()
    state = opt.state[p]
    assert adam._fast_path(p, state["exp_avg"], state["exp_avg_sq"], None)
    assert id(p) in adam._DISJOINT
    # a state array that aliases the parameter: the fused kernel must not run
    state["exp_avg"] = p.detach()
    assert not adam._fast_path(p, state["exp_avg"], state["exp_avg_sq"], None)
    state["exp_avg"] = gt.zeros(3)
    assert adam._fast_path(p, state["exp_avg"], state["exp_avg_sq"], None)


def test_an_aliased_state_takes_the_tensor_ops_with_torchs_values():
    torch = pytest.importorskip("torch")
    p, opt = _stepped()
    tp = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    topt = torch.optim.Adam([tp], lr=0.1)
    tp.grad = torch.tensor([0.5, 0.25, -1.0])
    topt.step()
    for o, param in ((opt, p), (topt, tp)):
        o.state[param]["exp_avg_sq"] = param.detach()  # aliases the parameter
    p.grad = gt.tensor([0.1, 0.2, 0.3])
    tp.grad = torch.tensor([0.1, 0.2, 0.3])
    opt.step()
    topt.step()
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)


def test_the_entry_goes_with_the_parameter():
    p, opt = _stepped()
    key = id(p)
    assert key in adam._DISJOINT
    del p, opt
    gc.collect()
    assert key not in adam._DISJOINT
