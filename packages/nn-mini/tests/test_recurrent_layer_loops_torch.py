"""An LSTM and a GRU whose float32 layers run their steps in C (Note [A layer's steps in one C loop]
in tensor-core's _rnn_kernels.pyx; float64 takes the Python steps) against torch 2.13:
outputs, final states and every gradient (the LSTM's cell states' gradients too)."""

from __future__ import annotations

import gradstack_nn as gnn
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_an_lstm_through_the_loops_matches_torch(dtype, bidirectional):
    torch.manual_seed(0)
    ref = torch.nn.LSTM(6, 16, num_layers=2, bidirectional=bidirectional).to(getattr(torch, dtype))
    mine = gnn.LSTM(6, 16, num_layers=2, bidirectional=bidirectional).to(getattr(gt, dtype))
    mine.load_state_dict(
        {k: gt.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    )
    x = RNG.standard_normal((12, 5, 6)).astype(dtype)
    directions = 2 if bidirectional else 1
    h0 = RNG.standard_normal((2 * directions, 5, 16)).astype(dtype)
    c0 = RNG.standard_normal((2 * directions, 5, 16)).astype(dtype)
    tx = torch.from_numpy(x).requires_grad_()
    th, tc = torch.from_numpy(h0).requires_grad_(), torch.from_numpy(c0).requires_grad_()
    gx = gt.from_numpy(x.copy()).requires_grad_()
    gh, gc = gt.from_numpy(h0.copy()).requires_grad_(), gt.from_numpy(c0.copy()).requires_grad_()
    t_out, (t_hn, t_cn) = ref(tx, (th, tc))
    g_out, (g_hn, g_cn) = mine(gx, (gh, gc))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for a, b in ((g_out, t_out), (g_hn, t_hn), (g_cn, t_cn)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    # every output reaches the loss: the cell states' gradients enter the backward loop
    (t_out.square().sum() + t_hn.sum() + 2 * t_cn.sum()).backward()
    (g_out.square().sum() + g_hn.sum() + 2 * g_cn.sum()).backward()
    for a, b in ((gx, tx), (gh, th), (gc, tc)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)
    for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=name, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_a_gru_through_the_loops_matches_torch(dtype, bidirectional, batch_first):
    torch.manual_seed(1)
    ref = torch.nn.GRU(6, 16, num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    ref = ref.to(getattr(torch, dtype))
    mine = gnn.GRU(6, 16, num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    mine = mine.to(getattr(gt, dtype))
    state = {k: gt.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    mine.load_state_dict(state)
    x = RNG.standard_normal((5, 12, 6) if batch_first else (12, 5, 6)).astype(dtype)
    h0 = RNG.standard_normal((2 * (2 if bidirectional else 1), 5, 16)).astype(dtype)
    tx, th = torch.from_numpy(x).requires_grad_(), torch.from_numpy(h0).requires_grad_()
    gx, gh = gt.from_numpy(x.copy()).requires_grad_(), gt.from_numpy(h0.copy()).requires_grad_()
    t_out, t_hn = ref(tx, th)
    g_out, g_hn = mine(gx, gh)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for a, b in ((g_out, t_out), (g_hn, t_hn)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    (t_out.square().sum() + 3 * t_hn.sum()).backward()
    (g_out.square().sum() + 3 * g_hn.sum()).backward()
    for a, b in ((gx, tx), (gh, th)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)
    for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=name, **tol)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("x_grad", [False, True])
def test_inputs_that_want_no_gradient(mode, dtype, bidirectional, with_state, x_grad):
    # Note [The initial state's product only when wanted] (tensor-core's
    # _recurrent_layers.pyx) and an input without requires_grad: the products that only
    # they would take are skipped; every gradient that is wanted is torch's
    torch.manual_seed(2)
    kwargs = dict(num_layers=2, bidirectional=bidirectional, dropout=0.0)
    ref = getattr(torch.nn, mode)(6, 16, **kwargs).to(getattr(torch, dtype))
    mine = getattr(gnn, mode)(6, 16, **kwargs).to(getattr(gt, dtype))
    mine.load_state_dict(
        {k: gt.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    )
    x = RNG.standard_normal((9, 4, 6)).astype(dtype)
    layers = 2 * (2 if bidirectional else 1)
    states = [RNG.standard_normal((layers, 4, 16)).astype(dtype) for _ in range(2)]
    tx, gx = torch.from_numpy(x).requires_grad_(x_grad), gt.from_numpy(x.copy())
    gx.requires_grad_(x_grad)
    t_args, g_args = (tx,), (gx,)
    if with_state:  # given, without requires_grad
        t_s = [torch.from_numpy(s) for s in states]
        g_s = [gt.from_numpy(s.copy()) for s in states]
        t_args += (tuple(t_s) if mode == "LSTM" else t_s[0],)
        g_args += (tuple(g_s) if mode == "LSTM" else g_s[0],)
    t_out, t_last = ref(*t_args)
    g_out, g_last = mine(*g_args)
    t_hn = t_last[0] if mode == "LSTM" else t_last
    g_hn = g_last[0] if mode == "LSTM" else g_last
    (t_out.square().sum() + t_hn.sum()).backward()
    (g_out.square().sum() + g_hn.sum()).backward()
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), **tol)
    assert (gx.grad is None) == (not x_grad)
    if x_grad:
        np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), **tol)
    for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=name, **tol)
