"""addcmul, addcdiv and lerp of float16 and bfloat16 tensors compute in float32 and round
once, as torch 2.13's kernels (Note [Half-precision composites compute in float32] in
``composites.py``)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

S = 0.7978845834732056
DTYPES = ["bfloat16", "float16"]


def _three(dtype, n=3000, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [(torch.randn(n, generator=g) * 2).to(getattr(torch, dtype)) for _ in range(3)]
    gs = [gt.tensor(t.float().numpy()).to(getattr(gt, dtype)) for t in ts]
    return ts, gs


def _mismatches(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    return int((got.float().numpy() != want.float().numpy()).sum())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [1, S, -2.5])
def test_addcmul_addcdiv(dtype, value):
    (x, y, z), (a, b, c) = _three(dtype)
    assert _mismatches(gt.addcmul(a, b, c, value=value), torch.addcmul(x, y, z, value=value)) == 0
    want = torch.addcdiv(x, y, z.abs() + 1, value=value)
    assert _mismatches(gt.addcdiv(a, b, c.abs() + 1, value=value), want) == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weight", [S, 0.2, "tensor"])
def test_lerp(dtype, weight):
    (x, y, z), (a, b, c) = _three(dtype, seed=1)
    wt, wg = (z.sigmoid(), c.sigmoid()) if weight == "tensor" else (weight, weight)
    # torch's lerp kernel may contract to an fma: a few in a thousand round the other way
    assert _mismatches(gt.lerp(a, b, wg), torch.lerp(x, y, wt)) <= 5


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_out_and_non_contiguous(dtype):
    (x, y, z), (a, b, c) = _three(dtype, n=64, seed=2)
    xt, at = x.reshape(8, 8).t(), a.reshape(8, 8).t()
    assert (
        _mismatches(
            gt.addcmul(at, b.reshape(8, 8), c.reshape(8, 8), value=S),
            torch.addcmul(xt, y.reshape(8, 8), z.reshape(8, 8), value=S),
        )
        == 0
    )
    x2, a2 = x.clone(), a.clone()
    x2.addcmul_(y, z, value=S)
    v = a2._version
    a2.addcmul_(b, c, value=S)
    assert a2._version == v + 1 and _mismatches(a2, x2) == 0
    out_t, out_g = torch.empty(64), gt.empty(64)
    torch.addcdiv(x, y, z.abs() + 1, value=S, out=out_t)
    gt.addcdiv(a, b, c.abs() + 1, value=S, out=out_g)
    np.testing.assert_array_equal(out_g.numpy(), out_t.numpy())
    e = gt.zeros(0, dtype=getattr(gt, dtype))
    assert gt.addcmul(e, e, e).dtype == getattr(gt, dtype)


def test_mixed_dtypes_unchanged():
    a = gt.ones(3, dtype=gt.bfloat16)
    f = gt.ones(3)
    assert gt.addcmul(a, f, f, value=0.5).dtype == gt.float32
    for x, y, words in [
        (a, f, "expected dtype c10::BFloat16 for `end` but got dtype float"),
        (f, a, "expected dtype float for `end` but got dtype c10::BFloat16"),
    ]:
        with pytest.raises(RuntimeError, match=words):  # torch's words (a KeyError before)
            gt.lerp(x, y, 0.5)
    with pytest.raises(RuntimeError, match="for `weight` but got dtype float"):
        gt.lerp(a, a, f)
