"""torch's spectral windows (``hann_window`` ... ``kaiser_window``) against torch 2.13:
values to the dtype's rounding (Note [Windows in torch's order of operations]), the
periodic and symmetric forms, lengths 0 and 1, ``requires_grad``, and torch's errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
# float32: the ops' roundings (cos is within an ulp of torch's), Kaiser's float32 series in
# torch; float64: Kaiser's I0 (Note [Windows in torch's order of operations])
TOLERANCE = {"float32": 2.5e-7, "float64": 1e-14}
KAISER_FLOAT32 = 1e-6


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, periodic, dtype):
    for n in (0, 1, 2, 3, 4, 5, 8, 31, 64, 257, 1000):
        ours = getattr(gs, name)(n, periodic, dtype=getattr(gs, dtype))
        theirs = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
        assert ours.dtype == getattr(gs, dtype) and tuple(ours.shape) == tuple(theirs.shape)
        atol = KAISER_FLOAT32 if (name, dtype) == ("kaiser_window", "float32") else TOLERANCE[dtype]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=atol)


def test_window_parameters_match_torch():
    pairs = [
        (gs.hamming_window(9, True, 0.6, 0.3), torch.hamming_window(9, True, 0.6, 0.3)),
        (gs.kaiser_window(12, False, 5.0), torch.kaiser_window(12, False, 5.0)),
        (gs.kaiser_window(12, True, 0.0), torch.kaiser_window(12, True, 0.0)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=KAISER_FLOAT32)


def test_windows_are_factories():
    w = gs.hann_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.is_contiguous()
    gs.set_default_dtype(gs.float64)
    try:
        assert gs.blackman_window(4).dtype == gs.float64
    finally:
        gs.set_default_dtype(gs.float32)


@pytest.mark.parametrize("name", WINDOWS)
def test_window_errors_match_torch(name):
    for args, kwargs in [((-1,), {}), ((4,), {"dtype": "int64"})]:
        kw_t = {k: getattr(torch, v) for k, v in kwargs.items()}
        kw_g = {k: getattr(gs, v) for k, v in kwargs.items()}
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, name)(*args, **kw_t)
        with pytest.raises(RuntimeError) as ours:
            getattr(gs, name)(*args, **kw_g)
        assert str(ours.value) == str(theirs.value)
