"""clamp with number bounds in one np.clip pass (Note [clamp by numbers in one pass] in
``_impl_elementwise.py``), against torch 2.13: ties at a zero bound keep x's zero, NaN and
infinities, lo > hi and NaN bounds (the other path), one bound, integer input with float
bounds, float16/float32/float64, non-contiguous and 0-size input, the in-place form, and
the gradient."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [-2.0, -0.0, 0.0, 0.3, 1.0, 5.0, np.inf, -np.inf, np.nan, -1.0, 1e-45]
BOUNDS = [
    (-1.0, 1.0), (0.0, 1.0), (-1.0, 0.0), (0.0, 0.0), (-0.0, 0.0), (None, 0.0), (0.0, None),
    (2.0, 1.0), (float("nan"), 1.0), (None, float("nan")), (1, 3), (-np.inf, np.inf),
    (0.5, None), (None, -0.5), (True, 3),
]  # fmt: skip


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    same = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    assert same.all(), (a, b)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_values_are_torchs(dtype, lo, hi):
    x = np.array(X, dtype)
    for view in (lambda v: v, lambda v: v[::2], lambda v: v[:0], lambda v: v[3]):
        expected = torch.clamp(view(torch.tensor(x)), lo, hi).numpy()
        _same(gs.clamp(view(gs.tensor(x)), lo, hi).numpy(), expected)
        t = gs.tensor(np.array(view(x)))
        t.clamp_(lo, hi)
        _same(t.numpy(), expected)


def test_integer_input_with_float_bounds():
    x = np.arange(-4, 5)
    for lo, hi in [(-1.5, 2.5), (0.0, None), (-2, 2)]:
        _same(gs.clamp(gs.tensor(x), lo, hi).numpy(), torch.clamp(torch.tensor(x), lo, hi).numpy())


def test_gradients_match_torch():
    x = np.array([-2.0, -1.0, -0.5, 0.0, 1.0, 3.0])
    for lo, hi in [(-1.0, 1.0), (0.0, None), (None, 0.0)]:
        grads = []
        for L in (gs, torch):
            a = L.tensor(x, requires_grad=True)
            (g,) = L.autograd.grad((L.clamp(a, lo, hi) * L.arange(6.0)).sum(), a)
            grads.append(g.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])
