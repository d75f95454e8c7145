"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` against torch 2.13: values and gradients of the reference
path (K-dimensional losses, probabilities, label smoothing, class weights, ignore_index)
and of the chunked path (``options``), the chunked path's single backward, the fallback
warning, the options' resolution (``_adjust``) and the errors."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((7, 5))
W = RNG.standard_normal((6, 5))
B = RNG.standard_normal(6)
T = np.array([1, 0, 5, -100, 2, 2, 3])
CW = RNG.random(6) + 0.5


def _run(L, reduction, options=None, dtype="float64", bias=True, class_weight=True,
         x=X, w=W, b=B, t=T, **kw):  # fmt: skip
    dt = getattr(L, dtype)
    xs = L.tensor(x, dtype=dt, requires_grad=True)
    ws = L.tensor(w, dtype=dt, requires_grad=True)
    bs = L.tensor(b, dtype=dt, requires_grad=True) if bias else None
    ts = L.tensor(t) if t.dtype.kind == "i" else L.tensor(t, dtype=dt)
    out = L.nn.functional.linear_cross_entropy(
        xs, ws, ts, linear_bias=bs, weight=L.tensor(CW, dtype=dt) if class_weight else None,
        reduction=reduction, options=None if options is None else options(L), **kw,
    )  # fmt: skip
    weights = L.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    (out * weights).sum().backward()
    grads = [xs.grad, ws.grad] + ([bs.grad] if bias else [])
    return [out.detach().double().numpy()] + [g.double().numpy() for g in grads], out


def _assert_close(a, b, tol):
    assert len(a) == len(b)
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=tol, atol=tol)


OPTIONS = {
    "reference": None,
    "chunks of 3": lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=3,
                                                            chunking_method=None),
    "auto": lambda L: L.nn.LinearCrossEntropyOptions(),
    "retain": lambda L: L.nn.LinearCrossEntropyOptions(allow_retain_graph=True,
                                                       chunking_method="aspect_ratio"),
}  # fmt: skip


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias, class_weight", [(True, True), (False, False)])
def test_values_and_gradients_as_torch(options, reduction, dtype, bias, class_weight):
    ours, out = _run(gs, reduction, OPTIONS[options], dtype, bias, class_weight)
    theirs, tout = _run(torch, reduction, OPTIONS[options], dtype, bias, class_weight)
    _assert_close(ours, theirs, 1e-12 if dtype == "float64" else 2e-5)
    assert str(out.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
    assert tuple(out.shape) == tuple(tout.shape)


@pytest.mark.parametrize("options", ["reference", "chunks of 3"])
def test_unbatched_input_as_torch(options):
    kw = dict(x=X[0], t=np.array(4))
    _assert_close(_run(gs, "mean", OPTIONS[options], **kw)[0],
                  _run(torch, "mean", OPTIONS[options], **kw)[0], 1e-12)  # fmt: skip


def test_k_dimensional_loss_and_probabilities_as_torch():
    w = RNG.standard_normal((6, 2, 3, 5))
    b = RNG.standard_normal((6, 2, 3))
    t = RNG.integers(0, 6, (7, 2, 3))
    for red in ("mean", "none"):
        _assert_close(_run(gs, red, w=w, b=b, t=t)[0], _run(torch, red, w=w, b=b, t=t)[0],
                      1e-12)  # fmt: skip
    probs = RNG.random((7, 6))
    probs /= probs.sum(1, keepdims=True)
    _assert_close(_run(gs, "sum", t=probs)[0], _run(torch, "sum", t=probs)[0], 1e-12)
    _assert_close(_run(gs, "mean", label_smoothing=0.2)[0],
                  _run(torch, "mean", label_smoothing=0.2)[0], 1e-12)  # fmt: skip


def test_reference_path_gradcheck_second_order():
    x = gs.tensor(X, requires_grad=True)
    w = gs.tensor(W, requires_grad=True)
    t = gs.tensor(T)

    def f(x, w):
        return gs.nn.functional.linear_cross_entropy(x, w, t)

    assert gs.autograd.gradcheck(f, (x, w))
    assert gs.autograd.gradgradcheck(f, (x, w))


@pytest.mark.parametrize("allow", [False, True])
def test_chunked_second_backward_as_torch(allow):
    results = []
    for L in (gs, torch):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        opts = L.nn.LinearCrossEntropyOptions(allow_retain_graph=allow)
        y = L.nn.functional.linear_cross_entropy(x, w, L.tensor(T), options=opts)
        y.backward(retain_graph=True)
        try:
            y.backward()
            results.append(x.grad.numpy())
        except RuntimeError as e:
            results.append(str(e))
    if allow:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    else:
        assert results[0] == results[1]


def test_unsupported_options_warn_and_fall_back_as_torch():
    messages = []
    for L in (gs, torch):
        x = L.tensor(X)
        w = L.tensor(W)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = L.nn.functional.linear_cross_entropy(
                x, w, L.tensor(T), label_smoothing=0.1,
                options=L.nn.LinearCrossEntropyOptions(),
            )  # fmt: skip
        messages.append(([str(c.message) for c in caught], y.item()))
    assert messages[0][0] == messages[1][0]
    assert messages[0][1] == pytest.approx(messages[1][1], rel=1e-12)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and words are compared
        return type(e).__name__, str(e).replace("gradstack", "torch")
    return None


ERRORS = {
    "3-d input": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 3, 5), L.zeros(6, 5), L.zeros(2, dtype=L.int64)),
    "1-d weight": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 5), L.zeros(5), L.zeros(2, dtype=L.int64)),
    "in_features": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 5), L.zeros(6, 4), L.zeros(2, dtype=L.int64)),
    "bias shape": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 5), L.zeros(6, 5), L.zeros(2, dtype=L.int64), linear_bias=L.zeros(5)),
    "k-dim unbatched": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(5), L.zeros(6, 2, 5), L.zeros(2, dtype=L.int64)),
    "ignore_index with probabilities": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 5), L.zeros(6, 5), L.zeros(2, 6), ignore_index=1),
    "acc_dtype": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(2, 5), L.zeros(6, 5), L.zeros(2, dtype=L.int64),
        options=L.nn.LinearCrossEntropyOptions(acc_dtype=L.float64)),
    "chunk size and method disagree": lambda L: L.nn.functional.linear_cross_entropy(
        L.zeros(8, 5), L.zeros(6, 5), L.zeros(8, dtype=L.int64),
        options=L.nn.LinearCrossEntropyOptions(batch_chunk_size=3,
                                               chunking_method="aspect_ratio")),
    "acc_policy": lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast"),
    "chunking_method": lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="rows:2"),
    "chunking factor": lambda L: L.nn.LinearCrossEntropyOptions(
        chunking_method="aspect_ratio:0"),
    "batch_chunk_size": lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
    "acc_dtype kind": lambda L: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int32),
    "module weight shape": lambda L: L.nn.LinearCrossEntropyLoss(5, 6, weight=L.ones(5)),
    "module label_smoothing": lambda L: L.nn.LinearCrossEntropyLoss(5, 6,
                                                                    label_smoothing=1.5),
}  # fmt: skip


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    ours, theirs = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert theirs is not None
    if name == "acc_dtype kind":  # (the dtype's repr is in the message)
        assert ours[0] == theirs[0] and ours[1].split(",")[:5] == theirs[1].split(",")[:5]
    else:
        assert ours == theirs


@pytest.mark.parametrize(
    "args", [(1024, 64, 32000, "float32"), (100, 8, 10, "float64"), (33, 4, 50, "float16")]
)
@pytest.mark.parametrize("kw", [{}, {"chunking_method": "aspect_ratio:4"},
                                {"batch_chunk_size": 7, "chunking_method": None},
                                {"acc_policy": "balanced"}])  # fmt: skip
def test_options_adjust_as_torch(args, kw):
    n, i, c, dtype = args
    got = gs.nn.LinearCrossEntropyOptions(**kw)._adjust(
        n, i, c, getattr(gs, dtype), gs.device("cpu")
    )
    want = torch.nn.LinearCrossEntropyOptions(**kw)._adjust(
        n, i, c, getattr(torch, dtype), torch.device("cpu")
    )
    for field in ("allow_retain_graph", "batch_chunk_size", "chunking_method", "acc_policy"):
        assert getattr(got, field) == getattr(want, field)
    assert str(got.acc_dtype).split(".")[-1] == str(want.acc_dtype).split(".")[-1]


T2 = np.random.default_rng(1).integers(0, 6, (7, 2))


def test_module_as_torch():
    outs = []
    for L in (gs, torch):
        L.manual_seed(3)
        loss = L.nn.LinearCrossEntropyLoss(5, 6, out_features=(2,), bias=True,
                                           dtype=L.float64, ignore_index=1)  # fmt: skip
        x = L.tensor(X, requires_grad=True)
        y = loss(x, L.tensor(T2))
        y.backward()
        outs.append((repr(loss), sorted(loss.state_dict()), y.item(), x.grad.numpy(),
                     loss.linear.weight.grad.numpy()))  # fmt: skip
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] == outs[1][1]
    assert outs[0][2] == pytest.approx(outs[1][2], rel=1e-12)
    np.testing.assert_allclose(outs[0][3], outs[1][3], rtol=1e-12)
    np.testing.assert_allclose(outs[0][4], outs[1][4], rtol=1e-12, atol=1e-14)
