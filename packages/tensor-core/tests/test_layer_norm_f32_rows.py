"""float32 layer norm rows summed in vectors of doubles (Note [float32 layer norm rows in
vectors of doubles] in ``_norm_kernels.pyx``): every row length around the 8-element
vector step and its tail, rows far from 0, every choice of gradients, weight and bias
present or not, against the float64 kernel (the exact reference) and torch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import kernels as K

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 1000, 1003])
@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_rows_match_the_float64_kernel(n, offset):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((5, n)) + offset).astype(np.float32)
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal((5, n)).astype(np.float32)
    x64, w64, b64, g64 = (a.astype(np.float64) for a in (x, w, b, g))
    # the forward rounds mean and rstd to float32 before normalising, as torch does: far
    # from 0 the mean's rounding (|x| eps) shows in x - mean (torch's more: ~1.6e-4 here)
    np.testing.assert_allclose(
        K.layer_norm(x, n, w, b),
        K.layer_norm(x64, n, w64, b64),
        rtol=0,
        atol=2e-6 + 1.2e-7 * offset,
    )
    for weight, weight64 in ((w, w64), (None, None)):
        want = K.layer_norm_backward(g64, x64, n, weight64)
        for flags in [
            (True, True, True),
            (True, False, False),
            (False, True, True),
            (False, False, True),
            (True, True, False),
        ]:
            got = K.layer_norm_backward(
                g, x, n, weight, input_grad=flags[0], weight_grad=flags[1], bias_grad=flags[2]
            )
            for have, ref, wanted in zip(got, want, flags):
                if not wanted:
                    assert have is None
                    continue
                assert have.dtype == np.float32
                scale = max(1.0, float(np.abs(ref).max()))
                np.testing.assert_allclose(have, ref, rtol=0, atol=4e-6 * scale)


def test_large_rows_match_torch():
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, (300, 1000)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = torch.nn.functional.layer_norm(tx, (1000,), tw, tb)
    gx, gw, gb = torch.autograd.grad(out, (tx, tw, tb), torch.from_numpy(g))
    np.testing.assert_allclose(K.layer_norm(x, 1000, w, b), out.detach().numpy(), atol=2e-6)
    ours = K.layer_norm_backward(g, x, 1000, w)
    np.testing.assert_allclose(ours[0], gx.numpy(), atol=2e-6)
    np.testing.assert_allclose(ours[1], gw.numpy(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(ours[2], gb.numpy(), rtol=1e-5, atol=1e-4)
