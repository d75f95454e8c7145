"""Tests for the row kernels of ``_norm_kernels`` (``kernels.softmax``, ``softmax_backward``,
``layer_norm``, ``layer_norm_backward``) and the ops that take them (``softmax``,
``log_softmax``, ``layer_norm``), against torch 2.13:

* values and gradients on float32 and float64, along every dim, for odd shapes, empty
  arrays and rows, non-contiguous inputs (the ops copy them to C order), NaN and inf;
* large shapes on the threaded path, bit-identical to one thread;
* argument checks: a named TypeError/ValueError before any memory is touched.
(The backward formulas that call the kernels are tested in graph-engine's
``tests/test_norm_backward_kernels.py``.)
"""

from __future__ import annotations

import doctest

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _norm_kernels
from gradstack_tensor import kernels as K

torch = pytest.importorskip("torch")

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-6, atol=2e-6), np.float64: dict(rtol=1e-13, atol=1e-14)}
SHAPES = [(7,), (3, 5), (2, 3, 4), (1024, 65), (2, 1, 3, 1), (0, 4), (4, 0), (3, 0, 2)]


def _torch_softmax(x, dim, log, grad=None):
    t = torch.from_numpy(x.copy()).requires_grad_(grad is not None)
    y = (torch.log_softmax if log else torch.softmax)(t, dim)
    if grad is None:
        return y.detach().numpy()
    y.backward(torch.from_numpy(grad))
    return y.detach().numpy(), t.grad.numpy()


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(_norm_kernels, "_norm_kernels") if t.examples]
    assert {t.name.rsplit(".", 1)[-1] for t in tests} >= set(_norm_kernels.__all__)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_kernel_every_dim_matches_torch(dtype, shape, log):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    for dim in range(-len(shape), len(shape)):
        want, want_grad = _torch_softmax(x, dim, log, grad)
        got = K.softmax(x, dim, log=log)
        assert got.dtype == dtype and got.shape == shape and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, **_log_tol(dtype, x, log))
        got_grad = K.softmax_backward(grad, want, dim, log=log)
        np.testing.assert_allclose(got_grad, want_grad, **_sum_tol(dtype, grad, dim))


def _sum_tol(dtype, grad, dim):
    """The backward's sum along dim, in double here and in the dtype in torch: a few ulps
    of the sum of |grad| along dim, absolute."""
    if not grad.size:
        return TOL[dtype]
    total = float(np.abs(grad.astype(np.float64)).sum(axis=dim).max())
    return dict(TOL[dtype], atol=max(TOL[dtype]["atol"], 4 * np.finfo(dtype).eps * total))


def _log_tol(dtype, x, log):
    """log_softmax's (x - max) - log(sum) cancels: a few ulps of the largest |x|, absolute
    (torch rounds x - (max + log(sum)) instead)."""
    if not log or not x.size:
        return TOL[dtype]
    return dict(TOL[dtype], atol=4 * np.finfo(dtype).eps * float(np.abs(x).max()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_ops_on_non_contiguous_inputs(dtype, op):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 8, 5)).astype(dtype)
    views = [base.transpose(2, 0, 1), base[:, ::2], base[..., 1:4]]
    for a in views:
        t = gt.from_numpy(a)
        for dim in range(a.ndim):
            got = getattr(t, op)(dim).numpy()
            want = getattr(torch, op)(torch.from_numpy(np.ascontiguousarray(a)), dim).numpy()
            np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_ops_keep_the_numpy_path_for_float16_and_0d(op):
    x = np.array([[0.5, -1.0, 2.0]], np.float16)
    got = getattr(gt.from_numpy(x), op)(1).numpy()
    want = getattr(torch, op)(torch.from_numpy(x), 1).numpy()
    assert got.dtype == np.float16  # (the numpy path, as before: an ulp from torch's)
    np.testing.assert_allclose(got, want, rtol=2e-3)
    assert getattr(gt.tensor(3.0), op)(0).item() == getattr(torch, op)(torch.tensor(3.0), 0).item()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_nan_and_inf_as_torch(dtype, log):
    inf, nan = np.inf, np.nan
    x = np.array(
        [[1.0, nan, 2.0], [1.0, inf, 2.0], [-inf, -inf, -inf], [-inf, 0.0, 1.0], [3, 3, 3]],
        dtype,
    )
    for dim in (0, 1):
        got = K.softmax(np.ascontiguousarray(x), dim, log=log)
        want = _torch_softmax(x, dim, log)
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_large_on_threads_is_bitwise_one_thread(threads, dtype, log):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 257)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    assert x.size >= _norm_kernels.ROW_THRESHOLD
    results = []
    for count in (1, 2):
        threads(count)
        for dim in (1, 0):
            y = K.softmax(x, dim, log=log)
            results.append((dim, y, K.softmax_backward(g, y, dim, log=log)))
    for (d1, y1, g1), (d2, y2, g2) in zip(results[:2], results[2:]):
        assert d1 == d2 and y1.tobytes() == y2.tobytes() and g1.tobytes() == g2.tobytes()
    for dim, y, gi in results[:2]:
        want, want_grad = _torch_softmax(x, dim, log, g)
        np.testing.assert_allclose(y, want, **_log_tol(dtype, x, log))
        np.testing.assert_allclose(gi, want_grad, **_sum_tol(dtype, g, dim))


def _torch_layer_norm(x, shape, w, b, eps, grad):
    tx = torch.from_numpy(x.copy()).requires_grad_()
    tw = None if w is None else torch.from_numpy(w.copy()).requires_grad_()
    tb = None if b is None else torch.from_numpy(b.copy()).requires_grad_()
    y = torch.nn.functional.layer_norm(tx, shape, tw, tb, eps)
    y.backward(torch.from_numpy(grad))
    return (
        y.detach().numpy(),
        tx.grad.numpy(),
        None if tw is None else tw.grad.numpy(),
        None if tb is None else tb.grad.numpy(),
    )


LN_CASES = [
    ((4, 32), (32,)),
    ((2, 3, 4, 5), (4, 5)),
    ((7,), (7,)),
    ((1024, 128), (128,)),
    ((0, 6), (6,)),
    ((3, 1), (1,)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "normalized"), LN_CASES, ids=str)
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_kernels_match_torch(dtype, shape, normalized, affine):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 3 + 100).astype(dtype)  # far from 0: the shift
    w = rng.standard_normal(normalized).astype(dtype) if affine in ("both", "weight") else None
    b = rng.standard_normal(normalized).astype(dtype) if affine in ("both", "bias") else None
    grad = rng.standard_normal(shape).astype(dtype)
    want, gx, gw, gb = _torch_layer_norm(x, normalized, w, b, 1e-5, grad)
    n = int(np.prod(normalized))
    got = K.layer_norm(x, n, w, b, 1e-5)
    # torch's kernels sum in the dtype (float32: Welford in float): a few more ulps
    tol = dict(rtol=1e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, want, **tol)
    ggx, ggw, ggb = K.layer_norm_backward(grad, x, n, w, 1e-5, bias_grad=b is not None)
    np.testing.assert_allclose(ggx, gx, **tol)
    # weight and bias sum over the rows: against torch in float64 (torch's float32 sums
    # lose ~1e-4 over 1024 rows, and give -1e-3 for rows of one element, where xhat is 0)
    if dtype == np.float32:
        w64, b64 = (None if a is None else a.astype(np.float64) for a in (w, b))
        x64, g64 = x.astype(np.float64), grad.astype(np.float64)
        _, _, gw, gb = _torch_layer_norm(x64, normalized, w64, b64, 1e-5, g64)
    if gw is not None:
        np.testing.assert_allclose(ggw.reshape(normalized), gw, **dict(tol, atol=1e-4))
    if gb is not None:
        np.testing.assert_allclose(ggb.reshape(normalized), gb, **dict(tol, atol=1e-4))
    else:
        assert ggb is None
    # the op, on the same arrays and on a non-contiguous copy
    args = (
        normalized,
        None if w is None else gt.from_numpy(w),
        None if b is None else gt.from_numpy(b),
    )
    out = gt.OPS["layer_norm"](gt.from_numpy(x), *args, 1e-5).numpy()
    np.testing.assert_allclose(out, want, **tol)
    if x.ndim >= 2 and x.size:
        xt = np.asfortranarray(x)
        out = gt.OPS["layer_norm"](gt.from_numpy(xt), *args, 1e-5).numpy()
        np.testing.assert_allclose(out, want, **tol)


def test_layer_norm_empty_row_takes_the_numpy_path():
    x = np.zeros((3, 0), np.float32)
    out = gt.OPS["layer_norm"](gt.from_numpy(x), (0,), None, None, 1e-5)
    assert out.shape == (3, 0)


def test_layer_norm_constant_and_nan_rows():
    # (torch's float32 Welford overflows for |x| ~ 1e30 and gives 0; the double sums here
    # give the normalised values, as float64 does)
    x = np.array([[2.0, 2.0, 2.0], [1.0, np.nan, 3.0], [1e18, -1e18, 0.0]], np.float32)
    got = K.layer_norm(x, 3, None, None, 1e-5)
    want = torch.nn.functional.layer_norm(torch.from_numpy(x), (3,)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_large_on_threads_is_bitwise_one_thread(threads, dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((512, 96)).astype(dtype)
    w, b = rng.standard_normal(96).astype(dtype), rng.standard_normal(96).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    assert x.size >= _norm_kernels.ROW_THRESHOLD
    results = []
    for count in (1, 2):
        threads(count)
        results.append((K.layer_norm(x, 96, w, b), *K.layer_norm_backward(g, x, 96, w)))
    for a, c in zip(*results):
        assert a.tobytes() == c.tobytes()


def test_argument_checks():
    f32, f64 = np.ones((2, 3), np.float32), np.ones((2, 3))
    with pytest.raises(TypeError, match="float32 or float64"):
        K.softmax(f32.astype(np.int64), 1)
    with pytest.raises(ValueError, match="C-contiguous"):
        K.softmax(f64.T, 0)
    with pytest.raises(ValueError, match="out of range"):
        K.softmax(f64, 2)
    with pytest.raises(ValueError, match="out of range"):
        K.softmax(np.ones(()), 0)
    with pytest.raises(TypeError, match="dim must be an int"):
        K.softmax(f64, 1.0)
    with pytest.raises(TypeError, match="same dtype"):
        K.softmax_backward(f32, f64, 1)
    with pytest.raises(ValueError, match="same shape"):
        K.softmax_backward(np.ones((3, 2)), f64, 1)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        K.softmax([1.0, 2.0], 0)
    with pytest.raises(ValueError, match="positive divisor"):
        K.layer_norm(f64, 4)
    with pytest.raises(ValueError, match="positive divisor"):
        K.layer_norm(f64, 0)
    with pytest.raises(ValueError, match="elements"):
        K.layer_norm(f64, 3, np.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        K.layer_norm(f64, 3, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="same shape"):
        K.layer_norm_backward(np.ones((3, 3)), f64, 3)
    with pytest.raises(TypeError, match="eps"):
        K.layer_norm(f64, 3, eps="x")
