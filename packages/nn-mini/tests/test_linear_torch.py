"""Linear and Bilinear against torch: values and gradients (Linear with copied weights,
Bilinear after the same seed, to the second order), the graph's nodes, training,
attributes, reprs, state dicts and errors.  (Their initialisation's distributions are in
test_init_torch.py.)"""

from __future__ import annotations

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    array,
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
    values_and_gradients,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")


def copied_linears(n_in, n_out, bias, dtype):
    g = nn.Linear(n_in, n_out, bias=bias, dtype=dtype)
    t = torch.nn.Linear(n_in, n_out, bias=bias, dtype=getattr(torch, dtype.name))
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(g.weight.detach().numpy().copy()))
        if bias:
            t.bias.copy_(torch.from_numpy(g.bias.detach().numpy().copy()))
    return g, t


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
@pytest.mark.parametrize("shape", [(7, 5), (5,), (2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(dtype, shape, bias):
    g, t = copied_linears(5, 4, bias, dtype)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(shape).astype(dtype.numpy)
    xg = gt.tensor(x_np, requires_grad=True)
    xt = torch.tensor(x_np, requires_grad=True)
    yg, yt = g(xg), t(xt)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == gt.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), **tol)
    upstream = rng.standard_normal(yt.shape).astype(dtype.numpy)
    yg.backward(gt.tensor(upstream))
    yt.backward(torch.tensor(upstream))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), **tol)
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), **tol)
    if bias:
        np.testing.assert_allclose(g.bias.grad.numpy(), t.bias.grad.numpy(), **tol)
    assert g.weight.grad.shape == g.weight.shape and g.weight.grad.dtype == dtype


def node_names(fn, depth=2):
    """grad_fn names down the graph, as torch prints them."""
    out = [type(fn).__name__]
    if depth:
        out.append([None if f is None else node_names(f, depth - 1) for f, _ in fn.next_functions])
    return out


def test_grad_fn_names_match_torch():
    g, t = copied_linears(5, 4, True, gt.float32)
    for shape in [(3, 5), (5,), (2, 3, 5)]:
        yg = g(gt.randn(*shape, requires_grad=True))
        yt = t(torch.randn(*shape, requires_grad=True))
        assert node_names(yg.grad_fn) == node_names(yt.grad_fn), shape
    # 2-D input: one addmm whose inputs are the bias, the input and weight.t()
    yg = g(gt.randn(3, 5))
    assert type(yg.grad_fn).__name__ == "AddmmBackward0"
    names = [None if f is None else type(f).__name__ for f, _ in yg.grad_fn.next_functions]
    assert names == ["AccumulateGrad", None, "TBackward0"]


def test_linear_trains_like_torch():
    """Five SGD steps of a small MLP from the same weights end at the same weights."""
    gm = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for pg, pt in zip(gm.parameters(), tm.parameters()):
            pt.copy_(torch.from_numpy(pg.detach().numpy().copy()))
    gopt = nn.optim.SGD(gm.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((10, 6), np.float32), rng.integers(0, 3, 10)
    for _ in range(5):
        lg = nn.functional.cross_entropy(gm(gt.tensor(x)), gt.tensor(y))
        lt = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        assert lg.item() == pytest.approx(lt.item(), rel=1e-5)
        gopt.zero_grad()
        topt.zero_grad()
        lg.backward()
        lt.backward()
        gopt.step()
        topt.step()
    for pg, pt in zip(gm.parameters(), tm.parameters()):
        np.testing.assert_allclose(pg.detach().numpy(), pt.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_linear_attributes_and_errors():
    lin = nn.Linear(3, 2, bias=False)
    assert lin.bias is None and lin.in_features == 3 and lin.out_features == 2
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(Exception):  # noqa: B017 - shape mismatch from matmul
        lin(gt.ones(4, 5))
    assert nn.Identity(1, x=2)(gt.ones(2)).tolist() == [1.0, 1.0]


def test_weight_grad_keeps_the_weights_layout():
    """Note [Matmul gradients in their input's layout]: the gradient for ``weight.t()``
    comes back row-major, like the weight, so accumulating it is a contiguous add."""
    lin = nn.Linear(7, 5)
    x = gt.randn(3, 7)
    for _ in range(2):  # created, then accumulated
        lin(x).sum().backward()
        assert lin.weight.grad.is_contiguous()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), 2 * np.ones((3, 5), np.float32).T @ x.numpy(), rtol=1e-6
    )


# -------------------------------------------------------------------------------------
# Bilinear

_R = np.random.default_rng(15)
A1, A2, A1B, A2B = (_R.standard_normal(s) for s in [(4, 3), (4, 5), (2, 4, 3), (2, 4, 5)])
W, B = _R.standard_normal((2, 3, 5)), _R.standard_normal(2)

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "bilinear": (lambda L, F, a, b, w, c: F.bilinear(a, b, w, c), [A1, A2, W, B]),
    "bilinear_no_bias": (lambda L, F, a, b, w: F.bilinear(a, b, w), [A1, A2, W]),
    "bilinear_batched": (lambda L, F, a, b, w, c: F.bilinear(a, b, w, c), [A1B, A2B, W, B]),
    "bilinear_1d": (lambda L, F, a, b, w, c: F.bilinear(a[0], b[0], w, c), [A1, A2, W, B]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_bilinear_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


def test_bilinear_gradients_are_not_trivial():
    out, first, second = values_and_gradients(gs, *PROGRAMS["bilinear"])
    assert np.abs(first[0]).max() > 1e-3


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
        "values": [array(out), x1.grad.numpy(), x2.grad.numpy()]
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


@pytest.mark.parametrize("args", [(2, 3, 4), (2, 3, 4, False)], ids=str)
def test_bilinear_module_repr_and_state_match_torch(args):
    assert_module_matches_torch("Bilinear", args, eval=True)


def _bilinear(L, a, b, w=(2, 3, 5), bias=None):
    ones = L.ones
    return L.nn.functional.bilinear(ones(*a), ones(*b), ones(*w), ones(bias) if bias else None)


# the exception type and words, as torch's
ERRORS = {
    "bilinear_dims": lambda L: _bilinear(L, (3, 3), (3, 5, 1)),
    "bilinear_batch": lambda L: _bilinear(L, (3, 3), (2, 5)),
    "bilinear_in1": lambda L: _bilinear(L, (3, 4), (3, 5)),
    "bilinear_in2": lambda L: _bilinear(L, (3, 3), (3, 4)),
    "bilinear_bias": lambda L: _bilinear(L, (3, 3), (3, 5), bias=3),
    "bilinear_in1_zero": lambda L: L.nn.Bilinear(0, 3, 4),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bilinear_errors_match_torch(name):
    assert_same_error(ERRORS[name])
