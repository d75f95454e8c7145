"""The outer product by rows (``_outer_kernels.pyx``, Note [The outer product by rows])
and what takes it, ``outer`` and ``mv``'s backward, against torch 2.13: float32 and
float64 (the same bits: one product per element), mixed and other dtypes (numpy's path),
non-contiguous and 0-size vectors, sizes that take the threaded path; gradients by
gradcheck and gradgradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")


def _vec(n, dtype, seed):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,m", [(0, 3), (3, 0), (0, 0), (1, 1), (5, 7), (64, 65), (700, 900)])
def test_outer_is_torchs(dtype, n, m):
    x, y = _vec(n, dtype, 0), _vec(m, dtype, 1)
    ours = gs.outer(gs.from_numpy(x), gs.from_numpy(y)).numpy()
    theirs = torch.outer(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert ours.dtype == theirs.dtype and ours.flags.c_contiguous
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_vectors(dtype):
    x, y = _vec(40, dtype, 2), _vec(31, dtype, 3)
    ours = gs.outer(gs.from_numpy(x)[::3], gs.from_numpy(y)[1::2]).numpy()
    theirs = torch.outer(torch.from_numpy(x)[::3], torch.from_numpy(y)[1::2]).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_mixed_and_other_dtypes_keep_torchs_promotion():
    cases = [
        (np.float32, np.float64),
        (np.int64, np.float32),
        (np.int32, np.int64),
        (np.float16, np.float16),
        (np.bool_, np.bool_),
    ]
    for da, db in cases:
        x, y = (np.arange(1, 5) % 2).astype(da), np.arange(3).astype(db)
        ours = gs.outer(gs.from_numpy(x), gs.from_numpy(y)).numpy()
        theirs = torch.outer(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mv_gradients_are_torchs(dtype):
    r = np.random.default_rng(4)
    a, v, g = r.standard_normal((300, 200)), r.standard_normal(200), r.standard_normal(300)
    a, v, g = a.astype(dtype), v.astype(dtype), g.astype(dtype)
    ga, gv = gs.from_numpy(a).requires_grad_(), gs.from_numpy(v).requires_grad_()
    ta, tv = torch.from_numpy(a).requires_grad_(), torch.from_numpy(v).requires_grad_()
    ours = gs.autograd.grad(gs.mv(ga, gv), [ga, gv], gs.from_numpy(g))
    theirs = torch.autograd.grad(torch.mv(ta, tv), [ta, tv], torch.from_numpy(g))
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours[1].numpy(), theirs[1].numpy(), rtol=tol, atol=tol)


def test_gradcheck():
    r = np.random.default_rng(5)
    x, y = (
        gs.from_numpy(r.standard_normal(4)).requires_grad_(),
        gs.from_numpy(r.standard_normal(3)).requires_grad_(),
    )
    assert gs.autograd.gradcheck(gs.outer, (x, y))
    assert gs.autograd.gradgradcheck(gs.outer, (x, y))
    a = gs.from_numpy(r.standard_normal((4, 3))).requires_grad_()
    assert gs.autograd.gradcheck(gs.mv, (a, y))
    assert gs.autograd.gradgradcheck(gs.mv, (a, y))


def test_threaded_path_is_the_serial_one():
    x, y = _vec(1000, np.float32, 6), _vec(1000, np.float32, 7)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = kernels.outer(x, y)
        gs.set_num_threads(2)
        threaded = kernels.outer(x, y)
    finally:
        gs.set_num_threads(before)
    np.testing.assert_array_equal(serial, threaded)
    np.testing.assert_array_equal(serial, np.multiply.outer(x, y))


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.outer(np.zeros(3, np.int64), np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="one dtype"):
        kernels.outer(np.zeros(3, np.float32), np.zeros(3))
    with pytest.raises(ValueError, match="1-d"):
        kernels.outer(np.zeros((3, 1)), np.zeros(3))
    with pytest.raises(ValueError, match="contiguous"):
        kernels.outer(np.zeros(6)[::2], np.zeros(3))
    with pytest.raises(TypeError, match="numpy array"):
        kernels.outer([1.0], np.zeros(3))
