"""The recurrent step's product from a packed weight (``_recurrent_gemm.pyx``, Note [A
packed weight for the steps]): ``pack_panels`` and ``panel_matmul`` against numpy in
float64, for every remainder of the 6- and 4-row blocks, the 256-deep blocks of k and
the 16-column panels, with and without bias, 0-size operands, the numpy path (AVX2 off),
and the argument checks."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import _kernels
from gradstack_tensor.kernels import PANEL_WIDTH, pack_panels, panel_matmul

SHAPES = [
    (20, 256, 1024),  # an LSTM(., 256) step of a batch of 20: W_hh^T
    (20, 1024, 256),  # its backward: dgates @ W_hh
    (32, 128, 384),  # a GRU(., 128) step
    (1, 1, 1),
    (3, 5, 17),
    (5, 7, 15),
    (6, 33, 31),
    (7, 2, 16),
    (9, 64, 48),
    (14, 300, 40),  # 6 + 4 + 4 rows, two blocks of k (the partial sums through c)
    (8, 513, 17),  # 4 + 4 rows, three blocks of k, a partial last panel
    (0, 4, 5),
    (5, 0, 7),
    (3, 4, 0),
]


def _reference(a, b, bias):
    r = a.astype(np.float64) @ b.astype(np.float64)
    return r if bias is None else r + bias


@pytest.mark.parametrize("avx2", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_panel_matmul_matches_numpy(m, k, n, with_bias, avx2):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    panels = pack_panels(b)
    assert panels.shape == (-(-n // PANEL_WIDTH), k, PANEL_WIDTH)
    old = _kernels._avx2()
    try:
        _kernels._avx2(avx2 and old)
        out = panel_matmul(a, panels, n, bias)
    finally:
        _kernels._avx2(old)
    assert out.shape == (m, n) and out.dtype == np.float32 and out.flags.c_contiguous
    # a sum of k float32 products: the rounding of an sgemm's, k-order aside
    tol = 4e-6 * max(k, 1) ** 0.5 * 8
    np.testing.assert_allclose(out, _reference(a, b, bias), rtol=1e-5, atol=tol)


def test_packing_pads_with_zeros():
    b = np.arange(2 * 18, dtype=np.float32).reshape(2, 18)
    panels = pack_panels(b)
    assert panels.shape == (2, 2, 16)
    np.testing.assert_array_equal(panels[0], b[:, :16])
    np.testing.assert_array_equal(panels[1, :, :2], b[:, 16:])
    assert not panels[1, :, 2:].any()


@pytest.mark.parametrize(("n", "k"), [(1024, 256), (18, 3), (5, 7), (0, 4), (16, 0)])
def test_packing_a_transposed_matrix(n, k):
    w = np.random.default_rng(n + k).standard_normal((n, k)).astype(np.float32)
    np.testing.assert_array_equal(
        pack_panels(w, transposed=True), pack_panels(np.ascontiguousarray(w.T))
    )


def test_the_arguments_are_checked_before_memory_is_touched():
    a = np.ones((2, 3), np.float32)
    panels = pack_panels(np.ones((3, 5), np.float32))
    with pytest.raises(TypeError, match="float32"):
        panel_matmul(a.astype(np.float64), panels, 5)
    with pytest.raises(TypeError, match="float32"):
        pack_panels(np.ones((3, 5)))
    with pytest.raises(ValueError, match="contiguous"):
        panel_matmul(np.ones((3, 2), np.float32).T, panels, 5)
    with pytest.raises(ValueError, match="panels must have shape"):
        panel_matmul(a, panels, 17)
    with pytest.raises(ValueError, match="panels must have shape"):
        panel_matmul(np.ones((2, 4), np.float32), panels, 5)
    with pytest.raises(ValueError, match="bias must have shape"):
        panel_matmul(a, panels, 5, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="2-D"):
        pack_panels(np.ones(3, np.float32))
    with pytest.raises(TypeError):
        panel_matmul([[1.0]], panels, 5)
