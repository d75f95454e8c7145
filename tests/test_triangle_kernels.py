"""tril and triu by rows (``_triangle_kernels.pyx``, Note [tril and triu by rows]) and
in-place unary ops written over their tensor (Note [An in-place unary op writes into its
tensor] in _ufuncs.pyx), against torch 2.13: float32 and float64 (and the other dtypes
the row copy takes), every diagonal around the matrix, batches, non-contiguous and 0-size
inputs, sizes that take the threaded path; gradients by gradcheck in float64."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_tensor import kernels

torch = pytest.importorskip("torch")

SHAPES = [(1, 1), (3, 5), (5, 3), (4, 4), (2, 3, 7, 6), (0, 4), (4, 0), (2, 0, 3), (300, 301)]
DIAGONALS = [-400, -6, -2, -1, 0, 1, 2, 6, 400]


def _array(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return r.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return r.integers(1, 100, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_tril_triu_are_torchs(name, dtype, shape):
    x = _array(shape, dtype)
    for k in DIAGONALS:
        ours = getattr(gs, name)(gs.from_numpy(x), k)
        theirs = getattr(torch, name)(torch.from_numpy(x), k)
        assert ours.is_contiguous()
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.uint8, np.float16, np.complex64])
def test_other_dtypes_are_torchs(name, dtype):
    x = _array((3, 4, 5), dtype)
    for k in (-1, 0, 2):
        ours = getattr(gs, name)(gs.from_numpy(x), k).numpy()
        theirs = getattr(torch, name)(torch.from_numpy(x), k).numpy()
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_inputs(name, dtype):
    x = _array((6, 7, 8), dtype)
    views = [lambda t: t.transpose(-1, -2), lambda t: t[:, ::2, 1:], lambda t: t.permute(2, 0, 1)]
    for view in views:
        for k in (-2, 0, 3):
            ours = getattr(gs, name)(view(gs.from_numpy(x)), k)
            theirs = getattr(torch, name)(view(torch.from_numpy(x)), k)
            assert ours.is_contiguous()
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_gradients(name):
    for shape in [(4, 5), (2, 5, 3)]:
        for k in (-1, 0, 2):
            x = gs.from_numpy(_array(shape, np.float64)).requires_grad_()
            assert gs.autograd.gradcheck(lambda t, k=k: getattr(gs, name)(t, k), (x,))
            xt = torch.from_numpy(_array(shape, np.float64)).requires_grad_()
            g = _array(shape, np.float64, seed=1)
            (ours,) = gs.autograd.grad(getattr(gs, name)(x, k), x, gs.from_numpy(g))
            (theirs,) = torch.autograd.grad(getattr(torch, name)(xt, k), xt, torch.from_numpy(g))
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_threaded_path_is_the_serial_one():
    x = _array((3, 700, 650), np.float32)
    before = gs.get_num_threads()
    try:
        gs.set_num_threads(1)
        serial = [kernels.triangle(x, k, u) for k in (-5, 0, 7) for u in (False, True)]
        gs.set_num_threads(2)
        threaded = [kernels.triangle(x, k, u) for k in (-5, 0, 7) for u in (False, True)]
    finally:
        gs.set_num_threads(before)
    for a, b, (k, u) in zip(serial, threaded, [(k, u) for k in (-5, 0, 7) for u in (0, 1)]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, (np.triu if u else np.tril)(x, k))


def test_in_place_form_writes_over_x():
    x = _array((5, 6), np.float64)
    expected = np.triu(x, 1)
    y = x.copy()
    assert kernels.triangle(y, 1, True, out=y) is y
    np.testing.assert_array_equal(y, expected)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="at least 2 dims"):
        kernels.triangle(np.zeros(3))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.triangle(np.zeros((3, 4)).T)
    with pytest.raises(TypeError, match="Python objects"):
        kernels.triangle(np.zeros((2, 2), object))
    with pytest.raises(TypeError, match="integer"):
        kernels.triangle(np.zeros((2, 2)), 1.5)
    with pytest.raises(TypeError, match="numpy array"):
        kernels.triangle([[1.0]])
    with pytest.raises(TypeError, match="out"):
        kernels.triangle(np.zeros((2, 2)), out=np.zeros((2, 2)))
    ro = np.zeros((2, 2))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.triangle(ro, out=ro)


# ---- in-place unary ops written over the tensor

INPLACE = [
    "sgn_",
    "sign_",
    "floor_",
    "ceil_",
    "trunc_",
    "round_",
    "abs_",
    "log1p_",
    "cosh_",
    "sinh_",
    "expm1_",
    "log2_",
    "sqrt_",
    "exp2_",
    "atan_",
]


def _domain(name, x):
    return np.abs(x) + 0.1 if name in ("log1p_", "log2_", "sqrt_") else x


@pytest.mark.parametrize("name", INPLACE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (7,), (50_000,), (300, 200)])
def test_in_place_unary_is_the_out_of_place_op(name, dtype, shape):
    x = _domain(name, _array(shape, dtype) * 3).astype(dtype)
    if x.size:
        x.flat[0] = np.nan
    t = gs.from_numpy(x.copy())
    assert getattr(t, name)() is t
    expected = getattr(gs.from_numpy(x.copy()), name[:-1])().numpy()
    np.testing.assert_array_equal(t.numpy(), expected)
    theirs = torch.from_numpy(x.copy())
    getattr(theirs, name)()
    np.testing.assert_allclose(
        t.numpy(), theirs.numpy(), rtol=2e-6 if dtype == np.float32 else 1e-13, atol=0
    )


@pytest.mark.parametrize("name", ["sgn_", "floor_", "log1p_", "cosh_"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_in_place_unary_on_views(name, dtype):
    x = _domain(name, _array((40, 30), dtype)).astype(dtype)
    for index in [(slice(None), slice(None, None, 2)), (slice(1, None),), (0,)]:
        base, twin = gs.from_numpy(x.copy()), torch.from_numpy(x.copy())
        getattr(base[index], name)()
        getattr(twin[index], name)()
        np.testing.assert_allclose(base.numpy(), twin.numpy(), rtol=2e-6, atol=0)
    base, twin = gs.from_numpy(x.copy()), torch.from_numpy(x.copy())
    getattr(base.t(), name)()
    getattr(twin.t(), name)()
    np.testing.assert_allclose(base.numpy(), twin.numpy(), rtol=2e-6, atol=0)


def test_in_place_unary_bumps_the_version_and_keeps_gradients():
    x = gs.from_numpy(_array((4, 5), np.float64)).requires_grad_()
    y = x * 2
    v = y._version
    y.cosh_()
    assert y._version == v + 1
    assert gs.autograd.gradcheck(lambda t: (t * 1).cosh_(), (x,))
    assert gs.autograd.gradcheck(lambda t: (t * 1).floor_() + t, (x,))
