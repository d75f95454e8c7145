"""nn.functional against torch.nn.functional: values, first and second derivatives, the
nodes recorded (``grad_fn`` names down the graph), every option, torch's errors (type
and words) and warnings.  The ops' own generic tests (gradcheck, gradgradcheck, forward
mode, batched backward) are in tensor-core's and graph-engine's op databases."""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(0)


def _chain(out, depth=3):
    """The first ``depth`` node names of the graph, following the first input each time."""
    names, fn = [], out.grad_fn
    while fn is not None and len(names) < depth:
        name = type(fn).__name__
        names.append(name)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        nxt = [f for f in nxt if type(f).__name__ != "AccumulateGrad"]
        fn = nxt[0] if nxt else None
    return names


def compare(gfn, tfn, inputs, consts=(), rtol=1e-10, atol=1e-12, second=True, names=True):
    """Value, node names, and first/second-order gradients of ``gfn`` (gradstack) and
    ``tfn`` (torch) on float64 ``inputs`` (``consts`` passed as non-differentiable)."""
    gs = [gt.tensor(a, requires_grad=True) for a in inputs]
    ts = [torch.tensor(a, requires_grad=True) for a in inputs]
    gc = [gt.tensor(c) if isinstance(c, np.ndarray) else c for c in consts]
    tc = [torch.tensor(c) if isinstance(c, np.ndarray) else c for c in consts]
    go, to = gfn(*gs, *gc), tfn(*ts, *tc)
    assert tuple(go.shape) == tuple(to.shape) and go.dtype.name == str(to.dtype)[6:]
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    if names:
        assert _chain(go) == _chain(to)
    v = RNG.standard_normal(tuple(to.shape))
    g1 = ag.grad(go, gs, gt.tensor(v), create_graph=second, allow_unused=True)
    t1 = torch.autograd.grad(to, ts, torch.tensor(v), create_graph=second, allow_unused=True)
    for a, b, x in zip(g1, t1, inputs):
        np.testing.assert_allclose(
            _np(a, x.shape), _np(b, x.shape), rtol=rtol, atol=atol, err_msg="first order"
        )
    if not second:
        return
    # second order: d/dx of sum(w * grad); a gradient that does not depend on the inputs
    # (a piecewise-linear loss) requires grad in torch and not in gradstack: both give 0
    ws = [RNG.standard_normal(x.shape) for x in inputs]
    g2 = _second(ag.grad, gs, g1, ws, gt)
    t2 = _second(torch.autograd.grad, ts, t1, ws, torch)
    for a, b, x in zip(g2, t2, inputs):
        np.testing.assert_allclose(
            _np(a, x.shape),
            _np(b, x.shape),
            rtol=max(rtol, 1e-9),
            atol=max(atol, 1e-11),
            err_msg="second order",
        )


def _np(t, shape):
    if t is None or (hasattr(t, "_is_zerotensor") and t._is_zerotensor()):
        return np.zeros(shape)
    return np.array(t.detach().numpy())


def _second(grad, xs, firsts, ws, lib):
    terms = [
        (g * lib.tensor(w)).sum() for g, w in zip(firsts, ws) if g is not None and g.requires_grad
    ]
    if not terms:
        return [None] * len(xs)
    return grad(sum(terms[1:], terms[0]), xs, allow_unused=True)


X = RNG.standard_normal((6, 4))
TARGET = np.array([0, 3, 1, 1, 2, 0])
WEIGHT = np.array([0.5, 2.0, 1.0, 3.0])
REDUCTIONS = ["mean", "sum", "none"]


# ---------------------------------------------------------------------------------------
# cross entropy and nll


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["", "weight"])
@pytest.mark.parametrize("ignore", [-100, 1], ids=["", "ignore1"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2], ids=["", "ls"])
def test_cross_entropy_class_indices(reduction, weighted, ignore, smoothing):
    def call(lib_f, lib):
        def f(x, t, w):
            return lib_f(
                x, t, weight=w, ignore_index=ignore, reduction=reduction, label_smoothing=smoothing
            )

        return f

    compare(
        call(F.cross_entropy, gt),
        call(TF.cross_entropy, torch),
        [X],
        consts=[TARGET, WEIGHT if weighted else None],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(reduction, smoothing, weighted):
    probs = RNG.dirichlet(np.ones(4), size=6)
    compare(
        lambda x, p, w: F.cross_entropy(x, p, w, reduction=reduction, label_smoothing=smoothing),
        lambda x, p, w: TF.cross_entropy(x, p, w, reduction=reduction, label_smoothing=smoothing),
        [X, probs],
        consts=[WEIGHT if weighted else None],
    )


@pytest.mark.parametrize("shape", [(4,), (3, 4, 5), (2, 4, 3, 2), (2, 4, 2, 2, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_and_nll_any_number_of_dims(shape, reduction):
    x = RNG.standard_normal(shape)
    if len(shape) == 1:
        target = np.array(2)
    else:
        target = RNG.integers(0, shape[1], size=(shape[0],) + shape[2:])
    for gfn, tfn in ((F.cross_entropy, TF.cross_entropy), (F.nll_loss, TF.nll_loss)):
        compare(
            lambda a, t, f=gfn: f(a, t, reduction=reduction, ignore_index=1),
            lambda a, t, f=tfn: f(a, t, reduction=reduction, ignore_index=1),
            [x],
            consts=[target],
        )
    # label smoothing over the spatial dims too
    compare(
        lambda a, t: F.cross_entropy(a, t, reduction=reduction, label_smoothing=0.1),
        lambda a, t: TF.cross_entropy(a, t, reduction=reduction, label_smoothing=0.1),
        [x],
        consts=[target],
    )


def test_cross_entropy_node_names_are_torchs():
    x = gt.tensor(X, requires_grad=True)
    loss = F.cross_entropy(x, gt.tensor(TARGET))
    assert _chain(loss, 2) == ["NllLossBackward0", "LogSoftmaxBackward0"]
    assert F.nll_loss(x.log_softmax(1), gt.tensor(TARGET)).grad_fn.name() == "NllLossBackward0"


def test_nll_and_cross_entropy_errors_match_torch():
    cases = [
        (lambda L, f: f(L.tensor(X), L.tensor([0, 1])), ValueError),
        (lambda L, f: f(L.tensor(X), L.tensor(TARGET).int()), RuntimeError),
        (lambda L, f: f(L.tensor(X), L.tensor([0, 1, 2, 3, 4, 0])), IndexError),
        (lambda L, f: f(L.tensor(X), L.tensor([0, -1, 2, 3, 0, 0])), IndexError),
        (
            lambda L, f: f(L.tensor(X), L.tensor(TARGET), weight=L.ones(3, dtype=L.float64)),
            RuntimeError,
        ),
        (lambda L, f: f(L.tensor(X), L.tensor(TARGET), weight=L.ones(4)), RuntimeError),
        (lambda L, f: f(L.tensor(X), L.tensor(TARGET), reduction="avg"), ValueError),
    ]
    for make, kind in cases:
        for gfn, tfn in ((F.nll_loss, TF.nll_loss), (F.cross_entropy, TF.cross_entropy)):
            with pytest.raises(kind) as te:
                make(torch, tfn)
            with pytest.raises(kind) as ge:
                make(gt, gfn)
            # torch's words start gradstack's message (which may say more)
            assert str(ge.value).startswith(str(te.value).splitlines()[0][:40])
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(gt.tensor(X), gt.tensor(TARGET), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class"):
        F.cross_entropy(gt.tensor(X), gt.zeros(6, 4, dtype=gt.int64))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(gt.tensor(X), gt.tensor(np.ones((6, 4)) / 4), ignore_index=1)
    with pytest.raises(
        RuntimeError, match="is not differentiable with respect to argument 'weight'"
    ):
        F.nll_loss(
            gt.tensor(X), gt.tensor(TARGET), weight=gt.ones(4, dtype=gt.float64, requires_grad=True)
        )


def test_all_ignored_mean_is_nan_as_torch():
    t = np.full(6, 2)
    g = F.cross_entropy(gt.tensor(X), gt.tensor(t), ignore_index=2)
    tt = TF.cross_entropy(torch.tensor(X), torch.tensor(t), ignore_index=2)
    assert np.isnan(g.item()) and np.isnan(tt.item())


# ---------------------------------------------------------------------------------------
# regression and binary losses


Y = RNG.standard_normal((6, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("mse_loss", {}),
        ("l1_loss", {}),
        ("smooth_l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("smooth_l1_loss", {"beta": 0.0}),
        ("huber_loss", {}),
        ("huber_loss", {"delta": 0.3}),
    ],
)
def test_regression_losses(name, kwargs, reduction):
    # differences kept away from the kinks (0, +-beta, +-delta) of the piecewise losses
    d = RNG.uniform(-2.5, 2.5, size=(6, 4))
    for k in (0.0, 0.3, 0.5, 1.0):
        d = np.where(np.abs(np.abs(d) - k) < 0.05, d + 0.1, d)
    compare(
        lambda a, b: getattr(F, name)(a, b, reduction=reduction, **kwargs),
        lambda a, b: getattr(TF, name)(a, b, reduction=reduction, **kwargs),
        [Y + d, Y],
    )


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_broadcast_warns_and_expands_as_torch(name):
    x, y = X, Y[0]
    with pytest.warns(UserWarning, match="different to the input size"):
        go = getattr(F, name)(gt.tensor(x, requires_grad=True), gt.tensor(y, requires_grad=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda a, b: getattr(F, name)(a, b), lambda a, b: getattr(TF, name)(a, b), [x, y])
    assert go.requires_grad


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_regression_losses(name, reduction):
    w = RNG.uniform(0.5, 2.0, size=(6, 4))
    compare(
        lambda a, b, ww: getattr(F, name)(a, b, reduction=reduction, weight=ww),
        lambda a, b, ww: getattr(TF, name)(a, b, reduction=reduction, weight=ww),
        [X, Y + 0.1],
        consts=[w],
    )
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        getattr(F, name)(gt.tensor(X), gt.tensor(Y), weight=gt.ones(4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    p = RNG.uniform(0.05, 0.95, size=(6, 4))
    y = RNG.uniform(0, 1, size=(6, 4))
    compare(
        lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction),
        lambda a, b: TF.binary_cross_entropy(a, b, reduction=reduction),
        [p, y],
    )
    compare(
        lambda a, b, w: F.binary_cross_entropy(a, b, w, reduction=reduction),
        lambda a, b, w: TF.binary_cross_entropy(a, b, w, reduction=reduction),
        [p, y],
        consts=[WEIGHT],
    )
    # through a sigmoid, as programs write it
    compare(
        lambda x, b: F.binary_cross_entropy(x.sigmoid(), b, reduction=reduction),
        lambda x, b: TF.binary_cross_entropy(x.sigmoid(), b, reduction=reduction),
        [X, (y > 0.5).astype(np.float64)],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    y = RNG.uniform(0, 1, size=(6, 4))
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    for consts in ([None, None], [WEIGHT, None], [None, pw], [WEIGHT, pw]):
        compare(
            lambda a, b, w, q: F.binary_cross_entropy_with_logits(
                a, b, w, reduction=reduction, pos_weight=q
            ),
            lambda a, b, w, q: TF.binary_cross_entropy_with_logits(
                a, b, w, reduction=reduction, pos_weight=q
            ),
            [X * 3, y],
            consts=consts,
        )


def test_binary_losses_errors_match_torch():
    p, y = gt.tensor(X).sigmoid(), gt.tensor(Y).sigmoid()
    with pytest.raises(ValueError, match="Using a target size .* is deprecated"):
        F.binary_cross_entropy(p, y[:, :2])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(gt.tensor(X), y)
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(p, y[:, :2])
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy(p, y, weight=gt.ones(4, requires_grad=True, dtype=gt.float64))
    with pytest.raises(RuntimeError, match="with respect to argument 'pos_weight'"):
        F.binary_cross_entropy_with_logits(
            p, y, pos_weight=gt.ones(4, requires_grad=True, dtype=gt.float64)
        )
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values"):
        F.smooth_l1_loss(p, y, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values"):
        F.huber_loss(p, y, delta=0.0)


# ---------------------------------------------------------------------------------------
# activations, normalisation, embedding, dropout, one_hot


@pytest.mark.parametrize(
    "gfn, tfn",
    [
        (F.gelu, TF.gelu),
        (lambda a: F.gelu(a, approximate="tanh"), lambda a: TF.gelu(a, approximate="tanh")),
        (F.silu, TF.silu),
        (F.logsigmoid, TF.logsigmoid),
        (lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2)),
        (F.relu, TF.relu),
        (F.sigmoid, torch.sigmoid),
        (F.tanh, torch.tanh),
        (lambda a: F.softmax(a, 1), lambda a: TF.softmax(a, 1)),
        (lambda a: F.log_softmax(a, 0), lambda a: TF.log_softmax(a, 0)),
    ],
    ids=[
        "gelu",
        "gelu_tanh",
        "silu",
        "logsigmoid",
        "leaky_relu",
        "relu",
        "sigmoid",
        "tanh",
        "softmax",
        "log_softmax",
    ],
)
def test_activations(gfn, tfn):
    x = np.where(np.abs(X) < 0.05, X + 0.1, X)  # away from the kinks at 0
    compare(gfn, tfn, [x])


def test_softmax_with_a_dtype():
    compare(
        lambda a: F.softmax(a, 1, dtype=gt.float32),
        lambda a: TF.softmax(a, 1, dtype=torch.float32),
        [X],
        rtol=1e-6,
        atol=1e-7,
    )


def test_inplace_activations_as_torch():
    for gname, tcall, name in (
        ("leaky_relu", lambda a: TF.leaky_relu(a, 0.2, inplace=True), "LeakyReluBackward"),
        ("silu", lambda a: TF.silu(a, inplace=True), "SiluBackward0"),
    ):
        g, t = gt.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
        gy = g * 1.0
        ty = t * 1.0
        go = (
            F.leaky_relu(gy, 0.2, inplace=True)
            if gname == "leaky_relu"
            else F.silu(gy, inplace=True)
        )
        to = tcall(ty)
        assert go is gy and gy._version == 1
        np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=1e-12)
        # torch names the in-place leaky_relu node LeakyReluBackward1, gradstack ...0
        assert go.grad_fn.name().startswith(name) and type(to.grad_fn).__name__.startswith(name)
        (gg,) = ag.grad(go.sum(), [g])
        (tg,) = torch.autograd.grad(to.sum(), [t])
        np.testing.assert_allclose(gg.numpy(), tg.numpy(), rtol=1e-12)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            F.silu(g, inplace=True)


@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("shape, normalized", [((6, 4), (4,)), ((2, 3, 4), (3, 4))])
def test_layer_norm(affine, shape, normalized):
    x = RNG.standard_normal(shape)
    w, b = RNG.standard_normal(normalized), RNG.standard_normal(normalized)
    inputs = [x] + ([w] if affine != "none" else []) + ([b] if affine == "both" else [])

    def call(f):
        def fn(a, ww=None, bb=None):
            return f(a, normalized, ww, bb, 1e-5)

        return fn

    compare(call(F.layer_norm), call(TF.layer_norm), inputs)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
def test_batch_norm_values_grads_and_running_stats(training, shape):
    x = RNG.standard_normal(shape)
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    rm0, rv0 = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    grm, grv = gt.tensor(rm0.copy()), gt.tensor(rv0.copy())
    trm, trv = torch.tensor(rm0.copy()), torch.tensor(rv0.copy())
    compare(
        lambda a, ww, bb: F.batch_norm(a, grm, grv, ww, bb, training, 0.3, 1e-5),
        lambda a, ww, bb: TF.batch_norm(a, trm, trv, ww, bb, training, 0.3, 1e-5),
        [x, w, b],
    )
    np.testing.assert_allclose(grm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grv.numpy(), trv.numpy(), rtol=1e-12)
    if training:
        assert not np.allclose(grm.numpy(), rm0)  # updated in place
    compare(
        lambda a: F.batch_norm(a, None, None, training=True),
        lambda a: TF.batch_norm(a, None, None, training=True),
        [x],
    )


def test_batch_norm_errors_as_torch():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(gt.zeros(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="batch_norm eps must be positive during training"):
        F.batch_norm(gt.zeros(4, 3), None, None, training=True, eps=0.0)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(gt.zeros(4, 3), None, None, training=False)
    with pytest.raises(RuntimeError, match="running_mean should contain 2 elements not 3"):
        F.batch_norm(gt.zeros(4, 2), gt.zeros(3), gt.ones(3), training=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"padding_idx": 2},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
    ],
    ids=lambda k: ",".join(k) or "plain",
)
def test_embedding_values_and_gradients(kwargs):
    w = RNG.standard_normal((5, 3))
    idx = np.array([[0, 2, 2], [4, 2, 1]])
    compare(
        lambda ww, i: F.embedding(i, ww, **kwargs),
        lambda ww, i: TF.embedding(i, ww, **kwargs),
        [w],
        consts=[idx],
    )


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalises_the_picked_rows_in_place(norm_type):
    w = RNG.standard_normal((5, 3)) * 2
    gw, tw = gt.tensor(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True)
    idx = np.array([1, 3, 3])
    go = F.embedding(gt.tensor(idx), gw, max_norm=1.0, norm_type=norm_type)
    to = TF.embedding(torch.tensor(idx), tw, max_norm=1.0, norm_type=norm_type)
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    assert gw._version == 1 and gw.grad_fn is None


def test_embedding_errors_as_torch():
    w = gt.zeros(10, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gt.tensor([0, 10]), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(gt.tensor([0.0]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(gt.tensor([0]), w, padding_idx=10)


def test_dropout():
    gt.manual_seed(0)
    x = gt.ones(2000, 10, requires_grad=True)
    out = F.dropout(x, 0.3)
    kept = out.detach().numpy() != 0
    assert 0.68 < kept.mean() < 0.72
    np.testing.assert_allclose(out.detach().numpy()[kept], 1 / 0.7, rtol=1e-6)
    assert out.grad_fn.name() == "MulBackward0"  # one multiplication by the mask, as torch
    (g,) = ag.grad(out.sum(), [x])
    np.testing.assert_allclose(g.numpy(), out.detach().numpy(), rtol=1e-6)  # the mask itself
    assert F.dropout(x, 0.3, training=False) is x and F.dropout(x, 0.0) is x
    zeros = F.dropout(x, 1.0)
    assert zeros.abs().sum().item() == 0 and zeros.grad_fn.name() == "MulBackward0"
    y = x * 1.0
    same = F.dropout(y, 0.5, inplace=True)
    assert same is y and y._version == 1 and y.grad_fn.name() == "MulBackward0"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 1.5)
    gt.manual_seed(3)
    a = F.dropout(gt.ones(50), 0.5)
    gt.manual_seed(3)
    assert gt.equal(a, F.dropout(gt.ones(50), 0.5))  # reproducible with the seed


def test_one_hot_matches_torch():
    for data, n in (([0, 2, 1], -1), ([[0, 2], [1, 1]], 4), ([], 3), (5, -1)):
        g = F.one_hot(gt.tensor(data, dtype=gt.int64), n)
        t = TF.one_hot(torch.tensor(data, dtype=torch.int64), n)
        assert g.dtype == gt.int64 and g.tolist() == t.tolist() and tuple(g.shape) == t.shape
    for data, n, message in (
        ([0, 3], 3, "Class values must be smaller than num_classes."),
        ([0, -1], -1, "Class values must be non-negative."),
        ([], -1, "Can not infer total number of classes from empty tensor."),
    ):
        with pytest.raises(RuntimeError, match=message):
            TF.one_hot(torch.tensor(data, dtype=torch.int64), n)
        with pytest.raises(RuntimeError, match=message):
            F.one_hot(gt.tensor(data, dtype=gt.int64), n)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(gt.tensor([0, 1], dtype=gt.int32))


def test_float32_losses_match_torch_to_float32_tolerance():
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)
    for gfn, tfn in (
        (lambda a, b: F.mse_loss(a, b), lambda a, b: TF.mse_loss(a, b)),
        (
            lambda a, b: F.cross_entropy(a, b.softmax(1)),
            lambda a, b: TF.cross_entropy(a, b.softmax(1)),
        ),
        (
            lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
            lambda a, b: TF.binary_cross_entropy_with_logits(a, b.sigmoid()),
        ),
        (lambda a, b: F.layer_norm(a + b, (4,)), lambda a, b: TF.layer_norm(a + b, (4,))),
        (lambda a, b: F.gelu(a) * b, lambda a, b: TF.gelu(a) * b),
    ):
        compare(gfn, tfn, [x32, y32], rtol=1e-5, atol=1e-6, second=False)
