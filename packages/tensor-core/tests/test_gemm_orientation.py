"""Note [The faster orientation of a small-batch product]: the product computed the other
way round has the same bits and a C-ordered result, through matmul, mm and addmm."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _impl_linalg

RNG = np.random.default_rng(11)

SHAPES = [  # (rows, K, N): inside the region, at its edges, outside
    (16, 1000, 100),
    (8, 512, 512),
    (4, 128, 512),
    (64, 1000, 512),
    (32, 256, 100),
    (3, 1000, 512),
    (16, 64, 512),
    (128, 256, 512),
    (65, 256, 512),
]


@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_same_bits_as_numpy_and_c_ordered(m, k, n):
    x = RNG.standard_normal((m, k)).astype(np.float32)
    w = RNG.standard_normal((n, k)).astype(np.float32)
    want = x @ w.T
    got = _impl_linalg._gemm(x, w.T)
    assert got.flags.c_contiguous and got.dtype == np.float32
    assert got.tobytes() == want.tobytes()
    tx, tw = gt.from_numpy(x), gt.from_numpy(w)
    for r in (tx @ tw.t(), tx.mm(tw.t()), gt.addmm(gt.zeros(n), tx, tw.t())):
        assert r.is_contiguous() and r.stride() == (n, 1)
        assert r.numpy().tobytes() == (want + np.float32(0)).tobytes()


def test_other_layouts_and_dtypes_keep_numpys_product():
    x = RNG.standard_normal((16, 1000))
    w = RNG.standard_normal((100, 1000))
    assert _impl_linalg._gemm(x, w.T).tobytes() == (x @ w.T).tobytes()  # float64
    g = RNG.standard_normal((16, 100)).astype(np.float32)
    xs = RNG.standard_normal((16, 1000)).astype(np.float32)
    assert _impl_linalg._gemm(g.T, xs).tobytes() == (g.T @ xs).tobytes()


def test_a_linear_layer_matches_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((16, 1000)).astype(np.float32)
    w = RNG.standard_normal((100, 1000)).astype(np.float32)
    b = RNG.standard_normal(100).astype(np.float32)
    got = gt.addmm(gt.tensor(b), gt.tensor(x), gt.tensor(w).t()).numpy()
    want = torch.addmm(torch.tensor(b), torch.tensor(x), torch.tensor(w).t()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(
    ("m", "k", "n"), [(16, 1000, 100), (4, 10, 5), (0, 3, 2), (2, 0, 3), (2, 3, 0)]
)
def test_a_linears_addmm_checked_first_gives_the_general_paths_values(dtype, m, k, n):
    # Note [A Linear's addmm is checked first]: the same values as the checked path, which
    # beta=1.0 (a float, equal to 1) also takes through the same test, so compare with
    # numpy's own arithmetic and with torch
    x = RNG.standard_normal((m, k)).astype(dtype)
    w = RNG.standard_normal((n, k)).astype(dtype)
    b = RNG.standard_normal(n).astype(dtype)
    got = gt.addmm(gt.from_numpy(b), gt.from_numpy(x), gt.from_numpy(w).t())
    assert got.dtype == gt.from_numpy(b).dtype and tuple(got.shape) == (m, n)
    assert got.is_contiguous()
    want = _impl_linalg._gemm(x, w.T, b)
    assert got.numpy().tobytes() == np.ascontiguousarray(want).tobytes()
    torch = pytest.importorskip("torch")
    theirs = torch.addmm(torch.from_numpy(b), torch.from_numpy(x), torch.from_numpy(w).t())
    tol = 2e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(got.numpy(), theirs.numpy(), rtol=tol, atol=tol)


def test_addmm_that_is_not_a_linears_keeps_torchs_errors():
    x, w = gt.randn(2, 3), gt.randn(4, 3)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        gt.addmm(gt.zeros(4), x, w)
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        gt.addmm(gt.zeros(4, dtype=gt.float64), x, w.t())
    with pytest.raises(RuntimeError, match="expand|size"):
        gt.addmm(gt.zeros(5), x, w.t())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "bias_shape", [(7,), (5, 7), (1, 7), (5, 1), (), (0,)], ids=lambda s: str(list(s))
)
def test_the_bias_added_in_place_gives_product_plus_bias(dtype, bias_shape):
    # Note [A Linear's bias added in place]: the same bits as ``x @ y + bias``, for the
    # shapes it adds in place (a row, the product's shape) and those it leaves to numpy
    n = 0 if bias_shape == (0,) else 7
    x = RNG.standard_normal((5, 300)).astype(dtype)
    y = np.asfortranarray(RNG.standard_normal((300, n)).astype(dtype))
    b = RNG.standard_normal(bias_shape).astype(dtype)
    got = _impl_linalg._gemm(x, y, b)
    want = x @ y + b
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


def test_a_bias_of_another_dtype_is_not_added_in_place():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal(4)  # float64: numpy's promotion, as before
    got = _impl_linalg._gemm(x, y, b)
    assert got.dtype == np.float64 and got.tobytes() == (x @ y + b).tobytes()
