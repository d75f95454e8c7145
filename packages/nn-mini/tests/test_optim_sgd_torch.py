"""optim.SGD against torch.optim.SGD: every option, several steps, both code paths."""

from __future__ import annotations

import itertools

import gradstack_autograd as ag
import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter
from gradstack_nn.optim import SGD, Optimizer
from gradstack_nn.optim import sgd as sgd_module
from gradstack_nn_tests_oracle import step_both_optimizers

torch = pytest.importorskip("torch")

OPTIONS = [
    dict(momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
    for m, d, wd, n, mx in itertools.product(
        [0.0, 0.9], [0.0, 0.3], [0.0, 0.01], [False, True], [False, True]
    )
    if not (n and (m == 0 or d != 0))
]


def run_both(options, dtype, steps=4, layout="contiguous", lr=0.05):
    """Run ``steps`` SGD steps on the same parameters and gradients in gradstack and torch;
    return the parameters and momentum buffers of both."""
    rng = np.random.default_rng(0)
    shapes = [(5, 3), (3,), ()]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    gp, tp, gopt, topt = step_both_optimizers(
        init,
        grads,
        layout,
        lambda params: SGD(params, lr=lr, **options),
        lambda params: torch.optim.SGD(params, lr=lr, **options),
    )
    gbufs = [gopt.state[p].get("momentum_buffer") for p in gp]
    tbufs = [topt.state[p].get("momentum_buffer") for p in tp]
    return gp, tp, gbufs, tbufs


def assert_close(a, b, dtype):
    if dtype == np.float64:
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
    else:  # torch's vectorised kernels may fuse multiply-adds: an ulp or two
        np.testing.assert_allclose(a, b, rtol=4e-7, atol=1e-7)


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items() if v)
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_sgd_matches_torch(options, dtype, layout):
    gp, tp, gbufs, tbufs = run_both(options, dtype, layout=layout)
    for g, t in zip(gp, tp):
        assert_close(g.detach().numpy(), t.detach().numpy(), dtype)
        assert g.dtype == gt.float32 if dtype == np.float32 else gt.float64
    if options["momentum"]:
        for g, t in zip(gbufs, tbufs):
            assert_close(g.numpy(), t.numpy(), dtype)
    else:
        assert all(b is None for b in gbufs)


def test_kernel_and_tensor_paths_agree_exactly():
    """The fused kernel and the tensor-op fallback compute the same float64 numbers."""
    for options in OPTIONS:
        a, _, abufs, _ = run_both(options, np.float64, layout="contiguous")
        b, _, bbufs, _ = run_both(options, np.float64, layout="transposed")
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())


def test_kernel_path_is_taken(monkeypatch):
    calls = []
    real = sgd_module._sgd_update_
    monkeypatch.setattr(
        sgd_module, "_sgd_update_", lambda *a, **k: (calls.append(a[0].shape), real(*a, **k))
    )
    run_both(dict(momentum=0.9), np.float32)
    assert len(calls) == 3 * 4


def test_step_is_an_in_place_write():
    p = Parameter(gt.tensor([1.0, 2.0]))
    y = p * p  # saves p for backward
    y.sum().backward(retain_graph=True)
    opt = SGD([p], lr=0.1)
    v = p._version
    opt.step()
    assert p._version == v + 1
    assert p.requires_grad and p.is_leaf
    with pytest.raises(RuntimeError, match="modified by an inplace operation|in-place"):
        y.sum().backward()


def test_zero_grad_and_skipped_params():
    a, b = Parameter(gt.ones(2)), Parameter(gt.ones(2))
    opt = SGD([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()  # b has no grad: skipped
    assert a.tolist() == [-0.5, -0.5] and b.tolist() == [1.0, 1.0]
    g = a.grad
    opt.zero_grad()
    assert a.grad.tolist() == [0.0, 0.0] and g.tolist() == [3.0, 3.0]  # torch 2.x: g kept
    opt.step()  # zeros count as None: skipped
    assert a.tolist() == [-0.5, -0.5]
    opt.zero_grad(set_to_none=True)
    assert a.grad is None


def test_param_groups_and_add_param_group():
    lin1, lin2 = nn.Linear(2, 2), nn.Linear(2, 2)
    opt = SGD(
        [{"params": lin1.parameters()}, {"params": lin2.parameters(), "lr": 1.0}],
        lr=0.1,
        momentum=0.5,
    )
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert all(g["momentum"] == 0.5 for g in opt.param_groups)
    extra = Parameter(gt.zeros(3))
    opt.add_param_group({"params": extra, "nesterov": True, "dampening": 0.0})
    assert opt.param_groups[2]["params"] == [extra] and opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [extra]})
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        SGD(extra, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([extra * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        SGD([{"params": {extra}}], lr=0.1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(lr=-1), "Invalid learning rate"),
        (dict(lr=0.1, momentum=-0.1), "Invalid momentum"),
        (dict(lr=0.1, weight_decay=-1), "Invalid weight_decay"),
        (dict(lr=0.1, nesterov=True), "Nesterov momentum requires"),
        (dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
    ],
)
def test_sgd_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SGD([Parameter(gt.zeros(1))], **kwargs)


def test_closure_and_named_params():
    lin = nn.Linear(3, 1)
    opt = SGD(lin.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    x = gt.ones(4, 3)

    def closure():
        opt.zero_grad()
        loss = lin(x).pow(2).mean()
        loss.backward()
        return loss

    first = opt.step(closure).item()
    second = opt.step(closure).item()
    assert second < first


def test_state_dict_round_trip():
    gt.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    x = gt.randn(5, 4)
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1]
    assert sd["param_groups"][0]["nesterov"] is True
    assert set(sd["state"]) == {0, 1} and "momentum_buffer" in sd["state"][0]
    # a fresh model and optimiser continue exactly where the first left off
    model2 = nn.Linear(4, 3)
    model2.load_state_dict(model.state_dict())
    opt2 = SGD(model2.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["momentum"] == 0.9
    assert opt2.state[model2.weight]["momentum_buffer"] is not sd["state"][0]["momentum_buffer"]
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(ValueError, match="doesn't match the size"):
        SGD([Parameter(gt.zeros(1))], lr=0.1).load_state_dict(sd)


def test_state_dict_matches_torch_layout():
    tm = torch.nn.Linear(4, 3)
    gm = nn.Linear(4, 3)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    gopt = SGD(gm.parameters(), lr=0.1, momentum=0.9)
    tm(torch.ones(2, 4)).sum().backward()
    gm(gt.ones(2, 4)).sum().backward()
    topt.step()
    gopt.step()
    tsd, gsd = topt.state_dict(), gopt.state_dict()
    assert tsd["param_groups"][0].keys() == gsd["param_groups"][0].keys()
    assert tsd["state"].keys() == gsd["state"].keys()
    assert tsd["state"][0].keys() == gsd["state"][0].keys()
    assert repr(gopt).splitlines()[:3] == repr(topt).splitlines()[:3]


def test_optimizer_base_class():
    class Plain(Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        @ag.no_grad()
        def step(self, closure=None):
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        p.sub_(p.grad * g["lr"])

    p = Parameter(gt.ones(2))
    opt = Plain([p])
    (p * 2).sum().backward()
    opt.step()
    assert p.tolist() == [0.8, 0.8] or np.allclose(p.detach().numpy(), 0.8)
    with pytest.raises(NotImplementedError):
        Optimizer([p], {}).step()


def test_functional_sgd():
    p = Parameter(gt.tensor([1.0, 2.0]))
    bufs = [None]
    sgd_module.sgd(
        [p],
        [gt.tensor([1.0, 1.0])],
        bufs,
        weight_decay=0.0,
        momentum=0.9,
        lr=0.1,
        dampening=0.0,
        nesterov=False,
        maximize=False,
    )
    assert bufs[0].tolist() == [1.0, 1.0]
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 1.9], rtol=1e-6)
