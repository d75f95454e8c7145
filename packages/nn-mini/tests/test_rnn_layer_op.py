"""A recurrent layer's direction as one op (tensor-core's ``_lstm_layer``/``_gru_layer``,
Note [A recurrent layer is one op]; graph-engine's derivatives/rnn.py, Note [A layer's two
backward paths]) against torch 2.13: which layers take it, the values and gradients of
losses that reach only some outputs (the final states only, the cell state only, one
step), the array path and the gradstack-ops path (create_graph, double backward, forward
mode), float32 and float64, batch_first and unbatched input, 0-size batches."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

import gradstack_autograd as ag  # noqa: E402
import gradstack_tensor as gt  # noqa: E402

TOL = {"float32": dict(rtol=5e-5, atol=5e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
R = np.random.default_rng(11)


def _module(lib, mode, dtype, **options):
    lib.manual_seed(0)
    return getattr(lib.nn, mode)(5, 7, **options).to(getattr(lib, dtype))


def _losses(mode):
    """Losses that reach different outputs of the layer."""
    if mode == "LSTM":
        return {
            "all": lambda o, s: (o * o).sum() + s[0].sum() + 3 * (s[1] * s[1]).sum(),
            "h_n": lambda o, s: (s[0] * s[0]).sum(),
            "c_n": lambda o, s: s[1].sum(),
            "first_step": lambda o, s: o[0].sum(),
        }
    return {
        "all": lambda o, s: (o * o).sum() + s.sum(),
        "h_n": lambda o, s: (s * s).sum(),
        "first_step": lambda o, s: o[0].sum(),
    }


CASES = [
    (mode, loss, options)
    for mode in ("LSTM", "GRU")
    for loss in _losses(mode)
    for options in (
        {},
        {"num_layers": 2, "bidirectional": True},
        {"bias": False},
    )
]


def _grads(lib, mode, dtype, loss, options, x, state):
    module = _module(lib, mode, dtype, **options)
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    leaves = [xt]
    args = [xt]
    if state is not None:
        st = tuple(lib.tensor(s, dtype=getattr(lib, dtype), requires_grad=True) for s in state)
        leaves += list(st)
        args.append(st if mode == "LSTM" else st[0])
    out, s = module(*args)
    _losses(mode)[loss](out, s).backward()
    grads = [t.grad for t in leaves] + [p.grad for p in module.parameters()]
    return [out.detach().numpy()] + [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("mode", "loss", "options"), CASES)
def test_gradients_of_partial_losses_match_torch(mode, loss, options, dtype):
    d = 2 if options.get("bidirectional") else 1
    layers = options.get("num_layers", 1)
    x = R.standard_normal((6, 3, 5))
    for state in (None, tuple(R.standard_normal((layers * d, 3, 7)) * 0.5 for _ in range(2))):
        ours = _grads(gs, mode, dtype, loss, options, x, state)
        theirs = _grads(torch, mode, dtype, loss, options, x, state)
        for a, b in zip(ours, theirs):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_the_layers_without_projection_take_the_op(mode):
    out, _ = _module(gs, mode, "float32")(gs.randn(4, 2, 5, requires_grad=True))
    assert type(out.grad_fn).__name__ == f"{mode.capitalize()}LayerBackward0"
    lstm = gs.nn.LSTM(5, 7, proj_size=3)
    out, _ = lstm(gs.randn(4, 2, 5, requires_grad=True))
    assert type(out.grad_fn).__name__ == "StackBackward0"  # proj_size: a cell a step


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_gradcheck_and_gradgradcheck_through_the_layer(mode):
    module = _module(gs, mode, "float64", num_layers=2, bidirectional=True)
    x = gs.randn(4, 2, 5, dtype=gs.float64, requires_grad=True)

    def f(x, *params):
        out, s = module(x)
        return (out * out).sum() + (s[1].sum() if mode == "LSTM" else s.sum())

    assert ag.gradcheck(f, (x,))
    assert ag.gradgradcheck(f, (x,))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_double_backward_matches_torch(mode):
    """create_graph: the gradient's norm differentiated again (the gradstack-ops path)."""
    x = R.standard_normal((5, 2, 5))
    results = []
    for lib in (gs, torch):
        module = _module(lib, mode, "float64", batch_first=True)
        xt = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        out, _ = module(xt)
        (g,) = lib.autograd.grad((out * out).sum(), xt, create_graph=True)
        (g * g).sum().backward()
        results.append([xt.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_forward_mode_matches_torch(mode):
    x, v = R.standard_normal((4, 3, 5)), R.standard_normal((4, 3, 5))
    tangents = []
    for lib in (gs, torch):
        module = _module(lib, mode, "float64")
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(
                lib.tensor(x, dtype=lib.float64), lib.tensor(v, dtype=lib.float64)
            )
            out, _ = module(dual)
            tangents.append(lib.autograd.forward_ad.unpack_dual(out).tangent.detach().numpy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_zero_batch_and_unbatched_input(mode, dtype):
    for shape in ((3, 0, 5), (3, 5)):
        results = []
        for lib in (gs, torch):
            module = _module(lib, mode, dtype)
            x = lib.ones(shape, dtype=getattr(lib, dtype), requires_grad=True)
            out, _ = module(x)
            (out.sum() + 0).backward()
            results.append((out.detach().numpy(), x.grad.numpy()))
        for a, b in zip(*results):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_op_takes_non_contiguous_gates(dtype):
    """A transposed view of the gates gives the contiguous copy's results and gradients."""
    rng = np.random.default_rng(2)
    base = rng.standard_normal((3, 8, 2)).astype(dtype)  # (T, 4H, N), viewed as (T, N, 4H)
    h, c = (gt.tensor(rng.standard_normal((2, 2)).astype(dtype)) for _ in range(2))
    w = gt.tensor(rng.standard_normal((8, 2)).astype(dtype) * 0.5)
    op = gt.get_op("_lstm_layer")
    results = []
    for contiguous in (False, True):
        leaf = gt.tensor(base.transpose(0, 2, 1).copy() if contiguous else base)
        leaf.requires_grad_(True)
        gates = leaf if contiguous else leaf.transpose(1, 2)
        assert gates.is_contiguous() is contiguous
        out, cells, _ = op(gates, h, c, w, None, True)
        (out.sum() + cells.sum()).backward()
        grad = leaf.grad.numpy()
        values = (out.detach().numpy(), cells.detach().numpy())
        results.append(values + (grad if contiguous else grad.transpose(0, 2, 1),))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL[dtype])


def test_the_op_checks_its_arguments():
    op = gt.get_op("_lstm_layer")
    z = gt.zeros
    with pytest.raises(RuntimeError, match="input_gates must be 3-D"):
        op(z(2, 8), z(1, 2), z(1, 2), z(8, 2), None, False)
    with pytest.raises(RuntimeError, match="weight_hh must have shape"):
        op(z(2, 1, 8), z(1, 2), z(1, 2), z(8, 3), None, False)
    with pytest.raises(RuntimeError, match="dtype of input_gates"):
        op(z(2, 1, 8), z(1, 2, dtype=gt.float64), z(1, 2), z(8, 2), None, False)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        gt.get_op("_gru_layer")(z(2, 1, 6, dtype=gt.int64), z(1, 2), z(6, 2), None, False)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("batch", [3, 64, 65])
def test_float32_steps_on_both_sides_of_the_packed_product(mode, batch):
    """Batches up to PANEL_ROWS take the packed weight, larger ones BLAS (Note [A packed
    weight for the steps]); both give torch's values and gradients."""
    x = np.random.default_rng(batch).standard_normal((4, batch, 5))
    ours = _grads(gs, mode, "float32", "all", {"bidirectional": True}, x, None)
    theirs = _grads(torch, mode, "float32", "all", {"bidirectional": True}, x, None)
    for a, b in zip(ours, theirs):  # weight gradients: sums of 4 * batch float32 terms
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


def _decode(lib, mode, dtype, x, options):
    """A decoder's loop: the layer over one step at a time, its state carried over (Note
    [A layer of one step] in tensor-core's _impl_rnn.py), a loss of every step's output."""
    module = _module(lib, mode, dtype, batch_first=True, **options)
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    state, loss = None, 0
    for t in range(x.shape[1]):
        out, state = module(xt[:, t : t + 1], state)
        loss = loss + (out * out).sum()
    loss.backward()
    grads = [xt.grad] + [p.grad for p in module.parameters()]
    return [out.detach().numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("options", [{}, {"num_layers": 2, "dropout": 0.0}, {"bias": False}])
def test_a_decoder_of_one_step_layers_matches_torch(mode, dtype, options):
    x = R.standard_normal((3, 4, 5))
    mine = _decode(gs, mode, dtype, x, options)
    theirs = _decode(torch, mode, dtype, x, options)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("mode", "loss"), [(m, k) for m in ("LSTM", "GRU") for k in _losses(m)])
def test_partial_losses_of_a_one_step_layer_match_torch(mode, loss, dtype):
    x = R.standard_normal((1, 3, 5))
    state = [R.standard_normal((1, 3, 7)) for _ in range(2 if mode == "LSTM" else 1)]
    mine = _grads(gs, mode, dtype, loss, {}, x, state)
    theirs = _grads(torch, mode, dtype, loss, {}, x, state)
    for a, b in zip(mine, theirs):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, **TOL[dtype])
