"""The ``conv2d`` op (tensor-core's ``_conv_arrays.py`` forward, graph-engine's
ConvolutionBackward0 on arrays and in ops) against torch 2.13: values and first-order
gradients in float32 and float64 over strides, padding, dilation, groups, bias, layouts,
batch sizes 0, 1 and several chunks of columns; gradcheck and gradgradcheck in float64;
forward-mode AD and vmap; which gradients a node computes; the array kernels' argument
checks.
"""

from __future__ import annotations

import gradstack as gs
import gradstack.nn.functional as F
import numpy as np
import pytest
from gradstack_tensor import _conv_arrays
from gradstack_tensor.kernels import conv2d_backward, conv2d_forward

torch = pytest.importorskip("torch")

# (input shape, weight shape, bias, stride, padding, dilation, groups)
CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), True, 1, 0, 1, 1),
    ((2, 4, 7, 6), (6, 2, 3, 3), True, (2, 1), (1, 2), (2, 1), 2),
    ((1, 3, 5, 5), (4, 3, 1, 1), False, 1, 0, 1, 1),
    ((3, 6, 9, 8), (6, 1, 3, 3), True, 2, 1, 1, 6),  # depthwise
    ((2, 3, 8, 8), (5, 3, 5, 5), False, 3, 2, 1, 1),
    ((0, 3, 7, 6), (4, 3, 3, 3), True, 1, 1, 1, 1),  # an empty batch
    ((3, 7, 6), (4, 3, 3, 3), True, 1, 1, 1, 1),  # unbatched
    ((40, 8, 20, 20), (16, 8, 3, 3), True, 1, 1, 1, 1),  # several chunks of columns
]
DTYPES = {"float32": (np.float32, 1e-5, 2e-5), "float64": (np.float64, 1e-12, 1e-11)}


def _arrays(case, dtype, seed=0):
    rng = np.random.default_rng(seed)
    xs, ws, bias = case[:3]
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    return x, w, b


def _run(lib, case, x, w, b, layout="c"):
    tx, tw = lib.tensor(x), lib.tensor(w)
    if layout == "T":  # a channels-last input and a transposed weight
        tx = lib.tensor(np.ascontiguousarray(np.moveaxis(x, -3, -1))).movedim(-1, -3)
        tw = lib.tensor(np.ascontiguousarray(w.transpose(3, 2, 1, 0))).permute(3, 2, 1, 0)
    tx.requires_grad_(), tw.requires_grad_()
    tb = None if b is None else lib.tensor(b, requires_grad=True)
    out = lib.nn.functional.conv2d(tx, tw, tb, *case[3:])
    up = np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)).astype(x.dtype)
    out.backward(lib.tensor(up))
    grads = [tx.grad.numpy(), tw.grad.numpy()] + ([] if tb is None else [tb.grad.numpy()])
    return [out.detach().numpy()] + grads


@pytest.mark.parametrize("layout", ["c", "T"])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_and_gradients_are_torchs(case, dtype, layout):
    np_dtype, rtol, atol = DTYPES[dtype]
    x, w, b = _arrays(case, np_dtype)
    ours = _run(gs, case, x, w, b, layout)
    theirs = _run(torch, case, x, w, b, layout)
    for a, e in zip(ours, theirs):
        assert a.shape == e.shape and a.dtype == e.dtype
        scale = np.abs(e).max(initial=1.0)  # sums of many products: relative to the largest
        np.testing.assert_allclose(a, e, rtol=rtol * 10, atol=atol * scale)


def test_the_node_is_torchs_and_saves_input_and_weight():
    x = gs.randn(2, 3, 5, 5, requires_grad=True)
    w = gs.randn(4, 3, 3, 3, requires_grad=True)
    out = F.conv2d(x, w, stride=2, padding=1)
    node = out.grad_fn
    assert type(node).__name__ == "ConvolutionBackward0"
    assert node._saved_input is x and node._saved_weight is w
    assert (node._saved_stride, node._saved_padding, node._saved_groups) == ((2, 2), (1, 1), 1)


def test_only_the_gradients_asked_for_are_computed(monkeypatch):
    seen = []
    import gradstack_autograd.derivatives.windows as windows

    kernel = windows._conv2d_backward_kernel

    def spy(*args):
        seen.append(args[-1])
        return kernel(*args)

    monkeypatch.setattr(windows, "_conv2d_backward_kernel", spy)
    x = gs.randn(2, 3, 5, 5)  # an input that needs no gradient: the first layer's
    w = gs.randn(4, 3, 3, 3, requires_grad=True)
    F.conv2d(x, w).sum().backward()
    assert seen == [(False, True, False)]
    assert w.grad is not None


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[6]], ids=str)
def test_gradcheck_and_gradgradcheck(case):
    x, w, b = _arrays(case, np.float64, seed=1)
    args = [gs.tensor(a, requires_grad=True) for a in (x, w) + ((b,) if b is not None else ())]

    def fn(*t):
        return F.conv2d(t[0], t[1], t[2] if len(t) > 2 else None, *case[3:])

    assert gs.autograd.gradcheck(fn, args)
    assert gs.autograd.gradgradcheck(fn, args)


def test_double_backward_matches_torch():
    case = CASES[1]
    x, w, b = _arrays(case, np.float64, seed=2)
    res = []
    for lib in (gs, torch):
        tx, tw, tb = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.conv2d(tx, tw, tb, *case[3:])
        gx, gw = lib.autograd.grad((out**2).sum(), (tx, tw), create_graph=True)
        (gx.sum() + (gw**2).sum()).backward()
        res.append([t.detach().numpy() for t in (gx, gw, tx.grad, tw.grad, tb.grad)])
    for a, e in zip(*res):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)


def test_forward_mode_matches_torch():
    case = CASES[1]
    x, w, b = _arrays(case, np.float64, seed=3)
    tangents = [np.random.default_rng(4).standard_normal(a.shape) for a in (x, w, b)]
    res = []
    for lib in (gs, torch):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            duals = [
                fwAD.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip((x, w, b), tangents)
            ]
            out = lib.nn.functional.conv2d(*duals, *case[3:])
            res.append(fwAD.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("batched", ["input", "weight"])
def test_vmap_matches_torch(batched):
    case = CASES[1]
    x, w, b = _arrays(case, np.float64, seed=5)
    xs = np.stack([x, x * 2, -x])
    ws = np.stack([w, w * 0.5, -w])
    res = []
    for lib in (gs, torch):

        def f(xx, ww, lib=lib):
            return lib.nn.functional.conv2d(xx, ww, lib.tensor(b), *case[3:])

        if batched == "input":
            out = lib.func.vmap(f, in_dims=(0, None))(lib.tensor(xs), lib.tensor(w))
        else:
            out = lib.func.vmap(f, in_dims=(None, 0))(lib.tensor(x), lib.tensor(ws))
        res.append(out.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-10)


def test_per_sample_gradients_match_torch():
    x, w, b = _arrays(CASES[0], np.float64, seed=6)
    res = []
    for lib in (gs, torch):

        def loss(ww, xx, lib=lib):
            return lib.nn.functional.conv2d(xx[None], ww, lib.tensor(b)).pow(2).sum()

        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(lib.tensor(w), lib.tensor(x))
        res.append(grads.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("dtype", ["float16", "int64", "int32"])
def test_other_dtypes_take_numpy_as_torch(dtype, groups):
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (2, 4, 6, 5)).astype(dtype)
    w = rng.integers(-3, 4, (4, 4 // groups, 3, 2)).astype(dtype)
    b = rng.integers(-3, 4, (4,)).astype(dtype)
    ours = F.conv2d(gs.tensor(x), gs.tensor(w), gs.tensor(b), 2, 1, 1, groups).numpy()
    theirs = torch.nn.functional.conv2d(
        torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1, 1, groups
    ).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_bool_is_refused_as_torch():
    x = gs.ones(1, 1, 3, 3, dtype=gs.bool)
    with pytest.raises(NotImplementedError, match="slow_conv2d_cpu"):
        gs.get_op("conv2d")(x, x, None, (1, 1), (0, 0), (1, 1), 1)


def test_the_chunks_do_not_change_the_values(monkeypatch):
    x, w, b = _arrays(CASES[7], np.float32, seed=8)
    g = np.random.default_rng(9).standard_normal((40, 16, 20, 20)).astype(np.float32)
    whole = conv2d_forward(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    grads = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, True))
    monkeypatch.setattr(_conv_arrays, "_CHUNK_ELEMENTS", 1)  # one sample a chunk
    np.testing.assert_array_equal(conv2d_forward(x, w, b, (1, 1), (1, 1), (1, 1), 1), whole)
    for a, e in zip(conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True,) * 3), grads):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda x, w: conv2d_forward(x.astype(np.int64), w, None, (1, 1), (0, 0), (1, 1), 1),
         TypeError, "float32 or float64"),
        (lambda x, w: conv2d_forward(x, w.astype(np.float64), None, (1, 1), (0, 0), (1, 1), 1),
         TypeError, "cast it"),
        (lambda x, w: conv2d_forward(x[0], w, None, (1, 1), (0, 0), (1, 1), 1),
         ValueError, "must be \\(N, C, H, W\\)"),
        (lambda x, w: conv2d_forward(x, w, None, (1, 1), (0, 0), (1, 1), 2),
         ValueError, "does not fit"),
        (lambda x, w: conv2d_forward(x, w, None, (0, 1), (0, 0), (1, 1), 1),
         ValueError, "positive"),
        (lambda x, w: conv2d_forward(x, w, None, 1, (0, 0), (1, 1), 1),
         TypeError, "pair of ints"),
        (lambda x, w: conv2d_forward(x[..., :1, :1], w, None, (1, 1), (0, 0), (1, 1), 1),
         ValueError, "does not fit the"),
        (lambda x, w: conv2d_forward(x, w, np.ones(3, np.float32), (1, 1), (0, 0), (1, 1), 1),
         ValueError, "bias must be"),
        (lambda x, w: conv2d_backward(np.ones((1, 1, 1, 1), np.float32), x, w, (1, 1), (0, 0),
                                      (1, 1), 1, (True,) * 3),
         ValueError, "grad must be the output's shape"),
    ],
)  # fmt: skip
def test_the_array_kernels_check_their_arguments(call, error, words):
    x = np.ones((2, 3, 4, 4), np.float32)
    w = np.ones((2, 3, 3, 3), np.float32)
    with pytest.raises(error, match=words):
        call(x, w)
