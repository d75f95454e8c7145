"""The sliding-window C kernels (``_window_kernels.pyx``: im2col, col2im, max and average
pooling with their backwards) and batch norm's (``_batch_norm_kernels.pyx``), against
torch 2.13: values and gradients in float32 and float64, ceil_mode, padding, dilation,
stride larger than the kernel, non-contiguous input, empty batches, NaN and inf, ties,
the threaded path, the argument checks, and finite differences in float64."""

from __future__ import annotations

import itertools

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = (np.float32, np.float64)

# (input shape, kernel, stride, padding, dilation, ceil_mode)
POOL_CASES = [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((1, 2, 5, 6), (3, 3), (1, 1), (1, 1), (2, 2), False),
    ((2, 2, 10, 7), (3, 2), (3, 2), (1, 1), (2, 1), True),
    ((1, 3, 9, 9), (2, 2), (4, 5), (1, 0), (1, 1), True),  # stride > kernel
    ((3, 1, 6, 5), (2, 3), (1, 2), (1, 1), (2, 1), True),
    ((0, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),  # empty batch
    # windows inside the plane (Note [Max pooling's windows inside the plane])
    ((2, 3, 7, 6), (3, 3), (1, 1), (0, 0), (1, 1), False),
    ((1, 2, 9, 8), (2, 3), (3, 2), (0, 0), (1, 1), True),
    ((2, 2, 9, 8), (2, 3), (3, 2), (0, 0), (1, 1), False),
]


def _rng(*key):
    return np.random.default_rng(abs(hash(key)) % 2**32)


def _input(shape, dtype, seed, special=True):
    x = _rng("input", shape, seed).standard_normal(shape).astype(dtype)
    if special and x.size:
        flat = x.reshape(-1)
        flat[::7] = np.round(flat[::7])  # ties
        flat[3 % flat.size] = np.nan
        flat[5 % flat.size] = np.inf
        flat[11 % flat.size] = -np.inf
    return x


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)  # NaN equals NaN here


# -------------------------------------------------------------------------------------
# max pooling


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_max_pool2d_forward_and_backward_are_torchs(dtype, case):
    shape, k, s, p, d, ceil = POOL_CASES[case]
    x = _input(shape, dtype, case)
    values, indices = kernels.max_pool2d_forward(x, k, s, p, d, ceil)
    xt = torch.from_numpy(x).requires_grad_()
    tv, ti = F.max_pool2d(xt, k, s, p, d, ceil, return_indices=True)
    _same(values, tv.detach().numpy())
    _same(indices, ti.numpy())
    grad = _rng("grad", case).standard_normal(values.shape).astype(dtype)
    tv.backward(torch.from_numpy(grad))
    _same(kernels.max_pool2d_backward(grad, indices, shape[-2:]), xt.grad.numpy())


def test_max_pool2d_nan_wins_and_ties_take_the_first():
    x = np.array([[[[1.0, 3.0, 3.0, np.nan], [3.0, 0.0, np.nan, 2.0]]]], np.float32)
    values, indices = kernels.max_pool2d_forward(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    tv, ti = F.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    _same(values, tv.numpy())
    _same(indices, ti.numpy())
    assert indices.ravel().tolist() == [1, 6]  # the first 3; the last NaN


def test_max_pool2d_of_windows_of_minus_inf_and_nan_take_torchs_index():
    x = np.array([[[[-np.inf, -np.inf, np.nan, 1.0], [-np.inf, -np.inf, 2.0, np.nan]]]])
    for dtype in DTYPES:
        values, indices = kernels.max_pool2d_forward(
            x.astype(dtype), (2, 2), (2, 2), (0, 0), (1, 1), False
        )
        tv, ti = F.max_pool2d(torch.from_numpy(x.astype(dtype)), 2, return_indices=True)
        _same(values, tv.numpy())
        _same(indices, ti.numpy())
    assert indices.ravel().tolist() == [0, 7]  # the first element; the last NaN


def test_max_pool2d_of_a_window_with_nothing_inside():
    # a 1x1 input, kernel 2 dilated by 2 and padded by 1: both elements read are padding
    # (torch gives -inf and the index 2, outside the plane)
    x = np.ones((1, 1, 1, 1))
    values, indices = kernels.max_pool2d_forward(x, (2, 2), (1, 1), (1, 1), (2, 2), False)
    tv, ti = F.max_pool2d(torch.from_numpy(x), 2, 1, 1, 2, return_indices=True)
    _same(values, tv.numpy())
    _same(indices, ti.numpy())
    assert kernels.max_pool2d_backward(np.ones_like(values), indices, (1, 1)).sum() == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool2d_op_takes_a_channels_last_input(dtype):
    x = _input((2, 5, 6, 3), dtype, 0).transpose(0, 3, 1, 2)  # (N, C, H, W), strided
    assert not x.flags.c_contiguous
    v, i = gt.OPS["max_pool2d_with_indices"](gt.tensor(x), (2, 2), (2, 1), (1, 0), (1, 1), True)
    tv, ti = F.max_pool2d(torch.from_numpy(x), 2, (2, 1), (1, 0), 1, True, return_indices=True)
    _same(v.numpy(), tv.numpy())
    _same(i.numpy(), ti.numpy())


# -------------------------------------------------------------------------------------
# average pooling

# (input shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), False, True, None),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), True, True, None),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), True, False, None),
    ((1, 2, 6, 7), (2, 3), (1, 2), (1, 1), False, False, 5),
    ((1, 3, 9, 9), (2, 2), (4, 5), (1, 0), True, True, None),  # stride > kernel
    ((0, 3, 6, 6), (3, 3), (1, 1), (1, 1), False, True, None),  # empty batch
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(AVG_CASES)))
def test_avg_pool2d_forward_and_backward_are_torchs(dtype, case):
    shape, k, s, p, ceil, include, divisor = AVG_CASES[case]
    x = _input(shape, dtype, case, special=False)
    out = kernels.avg_pool2d_forward(x, k, s, p, ceil, include, divisor)
    xt = torch.from_numpy(x).requires_grad_()
    tout = F.avg_pool2d(xt, k, s, p, ceil, include, divisor)
    _same(out, tout.detach().numpy())
    grad = _rng("grad", case).standard_normal(out.shape).astype(dtype)
    tout.backward(torch.from_numpy(grad))
    back = kernels.avg_pool2d_backward(grad, shape[-2:], k, s, p, ceil, include, divisor)
    _same(back, xt.grad.numpy())


def test_avg_pool2d_propagates_nan_and_inf_as_torch():
    x = _input((1, 2, 6, 6), np.float32, 1)
    out = gt.OPS["avg_pool2d"](gt.tensor(x), (3, 3), (2, 2), (1, 1), True, False, None)
    _same(out.numpy(), F.avg_pool2d(torch.from_numpy(x), 3, 2, 1, True, False).numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_avg_pool2d_op_takes_a_channels_last_input(dtype):
    x = _input((2, 5, 6, 3), dtype, 2, special=False).transpose(0, 3, 1, 2)
    out = gt.OPS["avg_pool2d"](gt.tensor(x), (2, 2), (2, 1), (1, 0), True, True, None)
    _same(out.numpy(), F.avg_pool2d(torch.from_numpy(x), 2, (2, 1), (1, 0), True).numpy())


# -------------------------------------------------------------------------------------
# im2col / col2im

# (input shape, kernel, dilation, padding, stride)
UNFOLD_CASES = [
    ((2, 3, 6, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
    ((2, 3, 7, 8), (3, 3), (1, 1), (1, 1), (2, 2)),
    ((1, 2, 9, 7), (3, 2), (2, 1), (2, 1), (1, 3)),
    ((1, 1, 5, 5), (2, 2), (1, 1), (1, 1), (4, 3)),  # stride > kernel
    ((3, 4, 6), (3, 3), (1, 2), (1, 2), (1, 1)),  # unbatched
    ((0, 2, 5, 5), (2, 2), (1, 1), (0, 0), (1, 1)),  # empty batch
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(UNFOLD_CASES)))
def test_im2col_and_col2im_are_torchs(dtype, case):
    shape, k, d, p, s = UNFOLD_CASES[case]
    x = _input(shape, dtype, case)
    cols = kernels.im2col(x, k, d, p, s)
    _same(cols, F.unfold(torch.from_numpy(x), k, d, p, s).numpy())
    c = _rng("cols", case).standard_normal(cols.shape).astype(dtype)
    folded = kernels.col2im(c, shape[-2:], k, d, p, s)
    _same(folded, F.fold(torch.from_numpy(c), shape[-2:], k, d, p, s).numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_im2col_op_takes_a_channels_last_input(dtype):
    x = _input((2, 5, 6, 3), dtype, 3).transpose(0, 3, 1, 2)
    cols = gt.OPS["im2col"](gt.tensor(x), (2, 3), (1, 1), (1, 1), (1, 2))
    _same(cols.numpy(), F.unfold(torch.from_numpy(x), (2, 3), 1, 1, (1, 2)).numpy())


# -------------------------------------------------------------------------------------
# the gradients are adjoints (finite differences in float64)


def _adjoint_check(forward, backward, shape, seed):
    """``<backward(g), v> == d/dt <g, forward(x + t v)>`` by central differences (the
    kernels are linear in x away from ties, so the difference is exact to rounding)."""
    rng = _rng("fd", seed)
    x = rng.permutation(int(np.prod(shape))).reshape(shape) * 0.25  # distinct: no ties
    v = rng.standard_normal(shape)
    y = forward(x)
    g = rng.standard_normal(y.shape)
    eps = 1e-3
    numeric = (np.vdot(g, forward(x + eps * v)) - np.vdot(g, forward(x - eps * v))) / (2 * eps)
    analytic = np.vdot(backward(g, x, y), v)
    assert np.isclose(numeric, analytic, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", range(len(POOL_CASES) - 1))
def test_max_pool2d_backward_is_the_gradient(case):
    shape, k, s, p, d, ceil = POOL_CASES[case]
    args = (k, s, p, d, ceil)
    _adjoint_check(
        lambda x: kernels.max_pool2d_forward(x, *args)[0],
        lambda g, x, y: kernels.max_pool2d_backward(
            g, kernels.max_pool2d_forward(x, *args)[1], shape[-2:]
        ),
        shape,
        case,
    )


@pytest.mark.parametrize("case", range(len(AVG_CASES) - 1))
def test_avg_pool2d_backward_is_the_gradient(case):
    shape, *args = AVG_CASES[case]
    _adjoint_check(
        lambda x: kernels.avg_pool2d_forward(x, *args),
        lambda g, x, y: kernels.avg_pool2d_backward(g, shape[-2:], *args),
        shape,
        case,
    )


@pytest.mark.parametrize("case", range(len(UNFOLD_CASES) - 1))
def test_col2im_is_the_gradient_of_im2col(case):
    shape, k, d, p, s = UNFOLD_CASES[case]
    _adjoint_check(
        lambda x: kernels.im2col(x, k, d, p, s),
        lambda g, x, y: kernels.col2im(g, shape[-2:], k, d, p, s),
        shape,
        case,
    )


# -------------------------------------------------------------------------------------
# threads, checks


def test_threaded_results_equal_single_threaded():
    x = _input((16, 32, 33, 31), np.float32, 7)  # above the parallel threshold
    old = kernels.get_num_threads()
    results = []
    try:
        for n in (1, 2):
            kernels.set_num_threads(n)
            v, i = kernels.max_pool2d_forward(x, (3, 3), (2, 2), (1, 1), (1, 1), True)
            avg = kernels.avg_pool2d_forward(x, (3, 3), (2, 2), (1, 1), True, False, None)
            cols = kernels.im2col(x, (3, 3), (1, 1), (1, 1), (2, 2))
            mean, var = kernels.batch_norm_stats(x)
            alpha, beta = (1 / np.sqrt(var + 1)).astype(x.dtype), mean.astype(x.dtype)
            results.append(
                (
                    v,
                    i,
                    kernels.max_pool2d_backward(v, i, x.shape[-2:]),
                    avg,
                    kernels.avg_pool2d_backward(
                        avg, x.shape[-2:], (3, 3), (2, 2), (1, 1), True, False, None
                    ),
                    cols,
                    kernels.col2im(cols, x.shape[-2:], (3, 3), (1, 1), (1, 1), (2, 2)),
                    mean,
                    var,
                    kernels.batch_norm_apply(x, alpha, beta),
                    *kernels.batch_norm_backward(x, x, beta, alpha, alpha, True, True),
                )
            )
    finally:
        kernels.set_num_threads(old)
    for a, b in zip(*results):
        _same(a, b)


def test_kernels_check_their_arguments():
    x = np.zeros((2, 3, 4, 4), np.float32)
    with pytest.raises(ValueError, match="contiguous"):
        kernels.im2col(x.transpose(0, 1, 3, 2), (2, 2), (1, 1), (0, 0), (1, 1))
    with pytest.raises(TypeError):
        kernels.max_pool2d_forward(x.astype(np.int32), (2, 2), (2, 2), (0, 0), (1, 1), False)
    with pytest.raises(TypeError, match="pair of ints"):
        kernels.im2col(x, 2, (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError, match="positive"):
        kernels.avg_pool2d_forward(x, (0, 2), (1, 1), (0, 0), False, True, None)
    with pytest.raises(ValueError, match="too small"):
        kernels.max_pool2d_forward(x, (5, 5), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(ValueError, match="indices"):
        kernels.max_pool2d_backward(x, np.zeros((2, 3, 4, 4), np.int32), (4, 4))
    with pytest.raises(ValueError, match="do not match"):
        kernels.col2im(np.zeros((1, 4, 5), np.float32), (3, 3), (2, 2), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError, match="divisor_override"):
        kernels.avg_pool2d_forward(x, (2, 2), (1, 1), (0, 0), False, True, 0)
    with pytest.raises(ValueError, match="mean"):
        kernels.batch_norm_backward(x, x, np.zeros(2, np.float32), np.ones(3, np.float32),
                                    None, True, True)  # fmt: skip


# -------------------------------------------------------------------------------------
# batch norm


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (3, 2, 9, 11), (8, 5), (2, 4, 3), (0, 3, 2, 2)])
@pytest.mark.parametrize("training, affine", list(itertools.product((True, False), repeat=2)))
def test_batch_norm_op_values_and_kernel_gradients_are_torchs(dtype, shape, training, affine):
    if shape[0] == 0 and training:
        pytest.skip("torch refuses an empty batch in training")
    rng = _rng("bn", shape, training, affine)
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    rm, rv = rng.standard_normal(c).astype(dtype), (rng.random(c) + 0.5).astype(dtype)
    ours_rm, ours_rv = gt.tensor(rm.copy()), gt.tensor(rv.copy())
    out = gt.OPS["batch_norm"](
        gt.tensor(x), gt.tensor(w) if affine else None, gt.tensor(b) if affine else None,
        ours_rm, ours_rv, training, 0.1, 1e-5,
    )  # fmt: skip
    xt = torch.from_numpy(x).requires_grad_()
    wt = torch.from_numpy(w).requires_grad_() if affine else None
    bt = torch.from_numpy(b).requires_grad_() if affine else None
    trm, trv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    tout = F.batch_norm(xt, trm, trv, wt, bt, training, 0.1, 1e-5)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **tol)
    np.testing.assert_allclose(ours_rm.numpy(), trm.numpy(), **tol)
    np.testing.assert_allclose(ours_rv.numpy(), trv.numpy(), **tol)
    if not x.size:
        return
    grad = rng.standard_normal(shape).astype(dtype)
    tout.backward(torch.from_numpy(grad))
    if training:
        mean64, var64 = kernels.batch_norm_stats(x)
        mean, invstd = mean64.astype(dtype), (1 / np.sqrt(var64 + 1e-5)).astype(dtype)
    else:
        mean, invstd = rm, (dtype(1) / np.sqrt(rv + dtype(1e-5))).astype(dtype)
    dx, dw, db = kernels.batch_norm_backward(
        grad, x, mean, invstd, w if affine else None, training, True
    )
    np.testing.assert_allclose(dx, xt.grad.numpy(), **tol)
    if affine:
        np.testing.assert_allclose(dw, wt.grad.numpy(), **tol)
        np.testing.assert_allclose(db, bt.grad.numpy(), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_im2col_and_col2im_write_into_out(dtype):
    x = _input((3, 2, 6, 5), dtype, 1, special=False)
    args = ((3, 2), (1, 2), (1, 0), (2, 1))
    cols = kernels.im2col(x, *args)
    buf = np.full((4,) + cols.shape[1:], 7.0, dtype)
    got = kernels.im2col(x, *args, out=buf[1:4])
    assert got.base is buf or got is buf[1:4] or np.shares_memory(got, buf)
    _same(buf[1:4], cols)
    back = kernels.col2im(cols, (6, 5), *args)
    res = np.full((5, 2, 6, 5), 7.0, dtype)
    kernels.col2im(cols, (6, 5), *args, out=res[2:5])
    _same(res[2:5], back)
    assert (res[:2] == 7.0).all()  # rows outside out untouched


def test_im2col_and_col2im_refuse_a_bad_out():
    x = np.ones((2, 1, 4, 4))
    args = ((2, 2), (1, 1), (0, 0), (1, 1))
    cols = kernels.im2col(x, *args)
    for bad in (np.empty((2, 4, 8)), np.empty((2, 4, 9), np.float32), np.empty((2, 9, 4)).T):
        with pytest.raises(ValueError, match="out must be"):
            kernels.im2col(x, *args, out=bad)
    with pytest.raises(ValueError, match="overlap"):
        kernels.col2im(cols, (4, 4), *args, out=cols.reshape(-1)[:32].reshape(2, 1, 4, 4))
    frozen = np.empty((2, 1, 4, 4))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        kernels.col2im(cols, (4, 4), *args, out=frozen)


def test_im2col_and_col2im_max_threads_caps_the_team():
    x = _input((4, 8, 40, 40), np.float64, 2, special=False)  # above the parallel threshold
    args = ((3, 3), (1, 1), (1, 1), (1, 1))
    old = kernels.get_num_threads()
    kernels.set_num_threads(2)
    try:
        cols = kernels.im2col(x, *args)
        _same(kernels.im2col(x, *args, max_threads=1), cols)
        back = kernels.col2im(cols, (40, 40), *args)
        _same(kernels.col2im(cols, (40, 40), *args, max_threads=1), back)
    finally:
        kernels.set_num_threads(old)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_threads"):
            kernels.im2col(x, *args, max_threads=bad)
