"""The fused LSTM and GRU cells (tensor-core's ``_thnn_fused_lstm_cell`` /
``_thnn_fused_gru_cell`` and ``_rnn_kernels``, Note [A recurrent step is two GEMMs and one
fused cell] in modules/rnn.py) against torch 2.13: the layers' outputs, final states and
every gradient from the same weights, float32 and float64, with each feature of the
layers (layers, directions, batch_first, biases, dropout, initial states, unbatched and
packed input, the cells); the ops' gradients by gradcheck and gradgradcheck in float64;
double backward through a layer; the kernels' argument checks, 0-size and threaded
paths."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

import gradstack_autograd as ag  # noqa: E402
import gradstack_tensor as gt  # noqa: E402
from gradstack_tensor import kernels  # noqa: E402

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def _flat(o):
    if isinstance(o, (tuple, list)):
        return [t for item in o for t in _flat(item)]
    return [] if o is None else [o]


def _run(lib, build, x, state, dtype, *, seed=0, train=False, loss_power=2):
    """The module's outputs, and the gradients of a loss of them (input, state, params)."""
    lib.manual_seed(seed)
    module = build(lib).to(getattr(lib, dtype))
    module.train(train)
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    args = [xt]
    leaves = [xt]
    if state is not None:
        if isinstance(state, tuple):
            st = tuple(lib.tensor(s, dtype=getattr(lib, dtype), requires_grad=True) for s in state)
            leaves += list(st)
        else:
            st = lib.tensor(state, dtype=getattr(lib, dtype), requires_grad=True)
            leaves.append(st)
        args.append(st)
    lib.manual_seed(seed + 1)
    outs = _flat(module(*args))
    loss = sum((o**loss_power).sum() for o in outs)
    loss.backward()
    values = [o.detach().numpy() for o in outs]
    grads = [t.grad.numpy() for t in leaves] + [p.grad.numpy() for p in module.parameters()]
    return values, grads


def _assert_same(ours, theirs, dtype):
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **TOL[dtype])
    assert len(ours[0]) == len(theirs[0]) and len(ours[1]) == len(theirs[1])


R = np.random.default_rng(7)
X = R.standard_normal((9, 4, 6))
H0 = R.standard_normal((4, 4, 8)) * 0.5
C0 = R.standard_normal((4, 4, 8)) * 0.5

LAYERS = {
    "lstm": (lambda L: L.nn.LSTM(6, 8), X, None),
    "lstm_2_layers_bidirectional": (
        lambda L: L.nn.LSTM(6, 8, num_layers=2, bidirectional=True),
        X,
        (H0, C0),
    ),
    "lstm_batch_first_no_bias": (
        lambda L: L.nn.LSTM(6, 8, bias=False, batch_first=True),
        X.transpose(1, 0, 2),
        (H0[:1], C0[:1]),
    ),
    "lstm_unbatched": (lambda L: L.nn.LSTM(6, 8, 2), X[:, 0], (H0[:2, 0], C0[:2, 0])),
    "lstm_3_layers": (lambda L: L.nn.LSTM(6, 8, 3), X, None),
    "lstm_proj_size_2_layers_bidirectional": (
        lambda L: L.nn.LSTM(6, 8, num_layers=2, bidirectional=True, proj_size=3),
        X,
        (H0[..., :3], C0),
    ),
    "lstm_proj_size_batch_first_no_bias": (
        lambda L: L.nn.LSTM(6, 8, bias=False, batch_first=True, proj_size=5),
        X.transpose(1, 0, 2),
        None,
    ),
    "gru": (lambda L: L.nn.GRU(6, 8), X, None),
    "gru_2_layers_bidirectional_h0": (
        lambda L: L.nn.GRU(6, 8, 2, bidirectional=True),
        X,
        H0,
    ),
    "gru_batch_first_no_bias": (lambda L: L.nn.GRU(6, 8, bias=False, batch_first=True), X, None),
    "gru_unbatched": (lambda L: L.nn.GRU(6, 8), X[:, 0], H0[:1, 0]),
    "rnn_tanh_bidirectional": (lambda L: L.nn.RNN(6, 8, 2, bidirectional=True), X, None),
    "lstm_cell": (lambda L: L.nn.LSTMCell(6, 8), X[0], (H0[0], C0[0])),
    "lstm_cell_no_state": (lambda L: L.nn.LSTMCell(6, 8), X[0], None),
    "lstm_cell_unbatched": (
        lambda L: L.nn.LSTMCell(6, 8, bias=False),
        X[0, 0],
        (H0[0, 0], C0[0, 0]),
    ),
    "gru_cell": (lambda L: L.nn.GRUCell(6, 8), X[0], H0[0]),
    "gru_cell_no_state_no_bias": (lambda L: L.nn.GRUCell(6, 8, bias=False), X[0], None),
    "rnn_cell": (lambda L: L.nn.RNNCell(6, 8), X[0], H0[0]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_match_torch(name, dtype):
    build, x, state = LAYERS[name]
    _assert_same(_run(gs, build, x, state, dtype), _run(torch, build, x, state, dtype), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_inter_layer_dropout_in_training_matches_torch(mode, dtype):
    """The masks are torch's draws (same seed), gradients through them too."""

    def build(L):
        return getattr(L.nn, mode)(6, 8, num_layers=3, dropout=0.3)

    ours = _run(gs, build, X, None, dtype, train=True)
    theirs = _run(torch, build, X, None, dtype, train=True)
    _assert_same(ours, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_language_models_shapes_match_torch(dtype):
    """LSTM(128, 256) over 30 steps of a batch of 20: the benchmark's layer, big enough
    for the kernels' vectorised loops and rows of 1024 gates."""
    x = np.random.default_rng(3).standard_normal((30, 20, 128))

    def build(L):
        return L.nn.LSTM(128, 256)

    ours, theirs = _run(gs, build, x, None, dtype), _run(torch, build, x, None, dtype)
    tol = TOL[dtype] if dtype == "float64" else dict(rtol=1e-4, atol=1e-5)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, **tol)


def _packed(lib, mode, dtype, lengths, bidirectional, **options):
    lib.manual_seed(0)
    module = getattr(lib.nn, mode)(6, 8, num_layers=2, bidirectional=bidirectional, **options)
    module = module.to(getattr(lib, dtype))
    x = lib.tensor(X[:, : len(lengths)], dtype=getattr(lib, dtype), requires_grad=True)
    packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, state = module(packed)
    padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
    outs = [padded] + _flat(state)
    sum((o * o).sum() for o in outs).backward()
    return [o.detach().numpy() for o in outs], [x.grad.numpy()] + [
        p.grad.numpy() for p in module.parameters()
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_sequences_match_torch(mode, bidirectional, dtype):
    lengths = [5, 9, 2, 7]
    ours = _packed(gs, mode, dtype, lengths, bidirectional)
    theirs = _packed(torch, mode, dtype, lengths, bidirectional)
    _assert_same(ours, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_packed_sequences_with_proj_size_match_torch(dtype):
    lengths = [3, 9, 6]
    ours = _packed(gs, "LSTM", dtype, lengths, True, proj_size=4)
    theirs = _packed(torch, "LSTM", dtype, lengths, True, proj_size=4)
    _assert_same(ours, theirs, dtype)


def test_proj_size_parameters_and_errors_match_torch():
    a, b = (L.nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True) for L in (gs, torch))
    assert [(n, tuple(p.shape)) for n, p in a.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in b.named_parameters()
    ]
    assert [len(w) for w in a.all_weights] == [len(w) for w in b.all_weights] == [5] * 4
    assert repr(a) == repr(b)
    for build in (
        lambda L: L.nn.LSTM(3, 5, proj_size=5),
        lambda L: L.nn.LSTM(3, 5, proj_size=-1),
        lambda L: L.nn.LSTM(3, 5, proj_size=2)(L.ones(2, 1, 3), (L.ones(1, 1, 5),) * 2),
    ):
        messages = []
        for L in (gs, torch):
            with pytest.raises((ValueError, RuntimeError)) as info:
                build(L)
            messages.append(info.type)
        assert messages[0] is messages[1]


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_double_backward_through_a_layer_matches_torch(mode):
    """create_graph=True takes the cells' differentiable formulas: the gradient of a
    function of the input's gradient, with respect to every parameter, is torch's."""
    results = []
    for lib in (gs, torch):
        lib.manual_seed(0)
        module = getattr(lib.nn, mode)(6, 8, num_layers=2).double()
        x = lib.tensor(X[:5], requires_grad=True)
        out, _ = module(x)
        (gx,) = (ag if lib is gs else torch.autograd).grad((out * out).sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        results.append([gx.detach().numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------------------------------
# the ops


def _cell_inputs(gates, n=3, hidden=2, bias=True):
    rng = np.random.default_rng(5)

    def t(*shape):
        return gt.tensor(rng.standard_normal(shape), dtype=gt.float64, requires_grad=True)

    ig, hg, state = t(n, gates * hidden), t(n, gates * hidden), t(n, hidden)
    biases = (t(gates * hidden), t(gates * hidden)) if bias else (None, None)
    return (ig, hg, state) + biases


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("op,gates,outputs", [("lstm", 4, 2), ("gru", 3, 1)])
def test_cell_ops_gradcheck_and_gradgradcheck(op, gates, outputs, bias):
    cell = gt.get_op(f"_thnn_fused_{op}_cell")
    inputs = _cell_inputs(gates, bias=bias)

    def f(*args):
        out = cell(*args)
        return out[:outputs] if outputs > 1 else out[0]

    assert ag.gradcheck(f, inputs, check_forward_ad=True)
    assert ag.gradgradcheck(f, inputs)


def test_lstm_cell_op_gradient_of_cy_alone_and_hy_alone():
    cell = gt.get_op("_thnn_fused_lstm_cell")
    inputs = _cell_inputs(4)
    assert ag.gradcheck(lambda *a: cell(*a)[1], inputs)
    assert ag.gradcheck(lambda *a: cell(*a)[0], inputs)


@pytest.mark.parametrize("op,gates", [("lstm", 4), ("gru", 3)])
def test_fused_and_differentiable_backward_agree(op, gates):
    """The first-order kernel and the create_graph formulas give the same gradients."""
    cell = gt.get_op(f"_thnn_fused_{op}_cell")
    inputs = _cell_inputs(gates, n=5, hidden=7)
    for dtype in (gt.float32, gt.float64):
        args = [t.detach().to(dtype).requires_grad_() for t in inputs]
        out = cell(*args)
        outs = [o for o in out[:-1]]
        grads = [gt.ones_like(o) * 0.5 for o in outs]
        fused = ag.grad(outs, args, grads, retain_graph=True)
        formula = ag.grad(outs, args, grads, create_graph=True)
        for a, b in zip(fused, formula):
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_the_workspace_is_not_differentiable():
    cell = gt.get_op("_thnn_fused_lstm_cell")
    hy, cy, workspace = cell(*_cell_inputs(4))
    with pytest.raises(RuntimeError, match="workspace output is not differentiable"):
        workspace.sum().backward()


def test_cell_ops_node_names_and_values_against_torchs_cpu_formulas():
    rng = np.random.default_rng(2)
    ig, hg = rng.standard_normal((4, 12)).astype(np.float32), rng.standard_normal((4, 12))
    hg = hg.astype(np.float32)
    hx = rng.standard_normal((4, 4)).astype(np.float32)
    hy, ws = gt.get_op("_thnn_fused_gru_cell")(
        gt.tensor(ig, requires_grad=True), gt.tensor(hg), gt.tensor(hx), None, None
    )
    assert hy.grad_fn.name() == "ThnnFusedGruCellBackward0"
    t = [torch.from_numpy(a) for a in (ig, hg, hx)]
    ir, iz, in_ = t[0].chunk(3, 1)
    hr, hz, hn = t[1].chunk(3, 1)
    r, z = (hr + ir).sigmoid(), (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    np.testing.assert_allclose(hy.detach().numpy(), ((t[2] - n) * z + n).numpy(), rtol=1e-6,
                               atol=1e-7)  # fmt: skip
    np.testing.assert_allclose(ws.detach().numpy()[:, 8:12], n.numpy(), rtol=1e-6, atol=1e-7)


def test_cell_ops_take_non_contiguous_and_float16_inputs():
    rng = np.random.default_rng(4)
    ig = gt.tensor(rng.standard_normal((16, 3)).T.copy().T)  # (16, 3) Fortran-ordered
    base = gt.tensor(rng.standard_normal((3, 16)))
    ig_t = base.t()  # (16, 3): a transposed view
    cell = gt.get_op("_thnn_fused_gru_cell")
    ig = gt.tensor(rng.standard_normal((3, 3)))
    hg = gt.tensor(rng.standard_normal((3, 6)))[:, ::2]  # strided (3, 3)
    hx = gt.tensor(rng.standard_normal((1, 3)).T)  # (3, 1) transposed
    hy, _ = cell(ig, hg, hx, None, None)
    ref, _ = cell(ig.contiguous(), hg.contiguous(), hx.contiguous(), None, None)
    np.testing.assert_array_equal(hy.numpy(), ref.numpy())
    assert ig_t.shape == (16, 3)
    half = [a.to(gt.float16) for a in (ig, hg.contiguous(), hx.contiguous())]
    hy16, ws16 = cell(*half, None, None)
    assert hy16.dtype == gt.float16 and ws16.dtype == gt.float16
    np.testing.assert_allclose(hy16.numpy(), ref.numpy(), rtol=2e-3, atol=2e-3)


def test_cell_ops_errors():
    cell = gt.get_op("_thnn_fused_lstm_cell")
    g = gt.zeros(2, 8)
    with pytest.raises(RuntimeError, match="cx must have shape"):
        cell(g, g, gt.zeros(2, 3), None, None)
    with pytest.raises(RuntimeError, match="hidden_gates must have the shape"):
        cell(g, gt.zeros(3, 8), gt.zeros(2, 2), None, None)
    with pytest.raises(RuntimeError, match=r"\(batch, 4 \* hidden_size\)"):
        cell(gt.zeros(2, 7), gt.zeros(2, 7), gt.zeros(2, 2), None, None)
    with pytest.raises(RuntimeError, match="dtype"):
        cell(g, g.double(), gt.zeros(2, 2), None, None)
    with pytest.raises(RuntimeError, match="input_bias must have shape"):
        cell(g, g, gt.zeros(2, 2), gt.zeros(4), None)
    with pytest.raises(RuntimeError, match="Long"):
        cell(g.long(), g.long(), gt.zeros(2, 2).long(), None, None)


# ---------------------------------------------------------------------------------------
# the kernels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_zero_size(dtype):
    for n, h in ((0, 3), (2, 0)):
        hy, cy, ws = kernels.lstm_cell_forward(
            np.zeros((n, 4 * h), dtype), np.zeros((n, 4 * h), dtype), np.zeros((n, h), dtype)
        )
        assert hy.shape == cy.shape == (n, h) and ws.shape == (n, 4 * h)
        gates, gcx, gb = kernels.lstm_cell_backward(hy, None, cy, cy, ws, True)
        assert gates.shape == (n, 4 * h) and gb.shape == (4 * h,) and not gb.any()
        hy, ws = kernels.gru_cell_forward(
            np.zeros((n, 3 * h), dtype), np.zeros((n, 3 * h), dtype), np.zeros((n, h), dtype)
        )
        out = kernels.gru_cell_backward(hy, ws, True)
        assert [o.shape for o in out] == [(n, 3 * h), (n, 3 * h), (n, h), (3 * h,), (3 * h,)]


def test_kernels_check_their_arguments():
    f32 = np.zeros((2, 8), np.float32)
    cx = np.zeros((2, 2), np.float32)
    with pytest.raises(TypeError, match="dtype"):
        kernels.lstm_cell_forward(f32, f32.astype(np.float64), cx)
    with pytest.raises(ValueError, match="C-contiguous|contiguous"):
        kernels.lstm_cell_forward(np.zeros((8, 2), np.float32).T, f32, cx)
    with pytest.raises(ValueError, match=r"cx must have shape \(2, 2\)"):
        kernels.lstm_cell_forward(f32, f32, np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="4 \\* hidden_size"):
        kernels.lstm_cell_forward(np.zeros((2, 7), np.float32), np.zeros((2, 7), np.float32), cx)
    with pytest.raises(ValueError, match="both None"):
        kernels.lstm_cell_backward(None, None, cx, cx, f32)
    with pytest.raises(ValueError, match="input_bias must have shape"):
        kernels.gru_cell_forward(np.zeros((2, 6), np.float32), np.zeros((2, 6), np.float32),
                                 cx, np.zeros(5, np.float32))  # fmt: skip
    with pytest.raises(TypeError, match="numpy.ndarray"):
        kernels.gru_cell_backward([[0.0, 0.0]], np.zeros((1, 10)))
    with pytest.raises(ValueError, match="grad_hy must have shape"):
        kernels.gru_cell_backward(np.zeros((2, 3)), np.zeros((2, 10)))


def test_float32_sigmoid_is_correctly_rounded_and_handles_the_extremes():
    x = np.concatenate(
        [
            np.random.default_rng(0).standard_normal(20000).astype(np.float32) * 30,
            np.array([0.0, -0.0, 88.0, -88.0, -103.0, -104.5, 150.0, -150.0, 1e20, -1e20,
                      np.inf, -np.inf, np.nan], np.float32),
        ]
    )  # fmt: skip
    gates = np.zeros((x.size, 4), np.float32)
    gates[:, 0] = x
    _, _, ws = kernels.lstm_cell_forward(
        gates, np.zeros_like(gates), np.zeros((x.size, 1), np.float32)
    )
    with np.errstate(over="ignore"):
        ref = (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    np.testing.assert_array_equal(ws[:, 0], ref)
    np.testing.assert_array_equal(ws[:, 2], np.tanh(np.zeros(x.size, np.float32)))


def test_threads_give_the_same_bits():
    rng = np.random.default_rng(1)
    n, h = 64, 64  # n * h above RNN_PARALLEL_THRESHOLD
    assert n * h >= kernels.RNN_PARALLEL_THRESHOLD
    ig, hg = (rng.standard_normal((n, 4 * h)).astype(np.float32) for _ in range(2))
    cx, g = (rng.standard_normal((n, h)).astype(np.float32) for _ in range(2))
    old = kernels.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            kernels.set_num_threads(threads)
            hy, cy, ws = kernels.lstm_cell_forward(ig, hg, cx)
            back = kernels.lstm_cell_backward(g, g, cx, cy, ws, True)
            ghy, gws = kernels.gru_cell_forward(ig[:, : 3 * h].copy(), hg[:, : 3 * h].copy(), cx)
            results.append([hy, cy, ws, *back, ghy, gws, *kernels.gru_cell_backward(g, gws, True)])
    finally:
        kernels.set_num_threads(old)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_an_expanded_output_gradient_matches_torch(mode):
    """``out.sum()``'s gradient reaches the last step as an expanded view: the backward
    makes it contiguous for the kernel (graph-engine's ``_dense``)."""
    results = []
    for lib in (gs, torch):
        lib.manual_seed(0)
        module = getattr(lib.nn, mode)(6, 8, num_layers=2, bidirectional=True)
        x = lib.tensor(X.astype(np.float32), requires_grad=True)
        out, _ = module(x)
        out.sum().backward()
        results.append([x.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL["float32"])
