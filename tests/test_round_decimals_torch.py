"""``round(x, decimals=d)`` (function, method, in place, ``out=``) against torch 2.13:
values in each dtype (Note [round with decimals] in gradstack_tensor._impl_elementwise),
zero gradients under torch's node name, and torch's errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DECIMALS = [-3, -2, -1, 0, 1, 2, 3, 4, 6, 9, 40, 400, -400]


def _values():
    rng = np.random.default_rng(35)
    v = np.concatenate(
        [
            rng.standard_normal(4000) * 10.0 ** rng.integers(-4, 6, 4000),
            np.arange(-3000, 3000) / 1000.0,  # many halves at the 2nd and 3rd decimal
            [0.005, 0.015, 0.025, 1.005, 2.675, -0.5, 0.5, 1.5, 125.0, 135.0, -145.0, 0.0],
            [np.inf, -np.inf, np.nan, 1e30, -1e30, 3.4e38],
        ]
    )
    return v


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("decimals", DECIMALS)
def test_round_decimals_values_are_torchs(dtype, decimals):
    v = _values()
    if dtype == "float16":
        v = v[np.abs(v) < 60000].astype(np.float16)
    elif dtype == "float32":
        v = v[np.abs(v) < 1e38].astype(np.float32)
    t = torch.tensor(v).to(getattr(torch, dtype))
    g = gs.tensor(v).to(getattr(gs, dtype))
    expected = torch.round(t, decimals=decimals).double().numpy()
    for got in (
        gs.round(g, decimals=decimals),
        g.round(decimals=decimals),
        g.clone().round_(decimals=decimals),
    ):
        assert got.dtype == g.dtype
        np.testing.assert_array_equal(got.double().numpy(), expected)


def test_round_decimals_out_and_default():
    x = [1.2345, -2.5551, 0.125, 2.5]
    o, to = gs.empty(4), torch.empty(4)
    r = gs.round(gs.tensor(x), decimals=2, out=o)
    torch.round(torch.tensor(x), decimals=2, out=to)
    assert r is o and o.tolist() == to.tolist()
    assert gs.round(gs.tensor(x)).tolist() == torch.round(torch.tensor(x)).tolist()
    assert (
        gs.special.round(gs.tensor(x), decimals=1).tolist()
        == torch.special.round(torch.tensor(x), decimals=1).tolist()
    )
    with pytest.raises(RuntimeError):  # out= of another dtype, as torch
        torch.round(torch.tensor(x), decimals=2, out=torch.empty(4, dtype=torch.float64))
    with pytest.raises(RuntimeError):
        gs.round(gs.tensor(x), decimals=2, out=gs.empty(4, dtype=gs.float64))


@pytest.mark.parametrize("decimals", [None, 0, 2, -1])
def test_round_gradient_is_zero_under_torchs_node(decimals):
    kw = {} if decimals is None else {"decimals": decimals}
    names = []
    for L in (gs, torch):
        x = L.tensor([1.2345, -2.5, 7.75], dtype=L.float64, requires_grad=True)
        y = L.round(x, **kw)
        names.append(y.grad_fn.name())
        (y * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert names[0] == names[1]
    x = gs.tensor([1.5], dtype=gs.float64, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: (t * 3.7).round(**kw), (x,))


@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round_decimals_errors_are_torchs(decimals):
    for L in (gs, torch):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            L.round(L.tensor([15, 25]), decimals=decimals)
    assert gs.round(gs.tensor([15, 25])).tolist() == [15, 25]
    for L in (gs, torch):
        with pytest.raises(TypeError):
            L.round(L.tensor([1.5]), 2)  # decimals is keyword-only
        with pytest.raises(TypeError):
            L.round(L.tensor([1.5]), decimals=1.5)


@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_special_round_is_round_decimals(decimals):
    out = []
    for L in (gs, torch):
        x = L.tensor([1.2345, 0.005, 125.0, -2.675], requires_grad=True)
        y = L.special.round(x, decimals=decimals)
        h = L.special.round(x.detach().half(), decimals=decimals)
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            L.special.round(L.tensor([15, 25]), decimals=decimals)
        out.append((y.grad_fn.name(), y.tolist(), h.tolist(), L.special.round(x).grad_fn.name()))
    assert out[0] == out[1]


def test_round_decimals_under_vmap_forward_ad_and_meta():
    import gradstack.autograd.forward_ad as gs_fwad
    import torch.autograd.forward_ad as torch_fwad

    out = []
    for L, fwad in ((gs, gs_fwad), (torch, torch_fwad)):
        x = L.tensor([[1.234, 5.678], [2.5, -3.14159]])
        batched = L.vmap(lambda t: t.round(decimals=1))(x).tolist()
        with fwad.dual_level():
            y = L.round(fwad.make_dual(x, L.ones(2, 2)), decimals=1)
            tangent = fwad.unpack_dual(y).tangent.tolist()
        m = L.empty(3, 4, device="meta").t().round(decimals=2)
        out.append((batched, tangent, m.is_meta, tuple(m.shape), m.stride()))
    assert out[0] == out[1]
