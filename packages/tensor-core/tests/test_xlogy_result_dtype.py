"""xlogy and xlog1py give torch 2.13's dtype and values for number and 0-d operands (Note
[xlogy computes in its result dtype] in ``elementwise_composites.py``)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _lib_args(lib, dtype, other):
    x = lib.tensor([0.0, 0.5, 2.0, 3.0], dtype=getattr(lib, dtype))
    if other == "number":
        return x, 0.5
    if other == "0-d float64":
        return x, lib.tensor(0.5, dtype=lib.float64)
    return x, lib.tensor(0.5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("other", ["number", "0-d float32", "0-d float64"])
@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_dtype_and_values(dtype, other, name):
    f_t = torch.xlogy if name == "xlogy" else torch.special.xlog1py
    f_g = gt.xlogy if name == "xlogy" else gt.special.xlog1py
    want = f_t(*_lib_args(torch, dtype, other))
    got = f_g(*_lib_args(gt, dtype, other))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-2)


def test_number_first_and_integers():
    h = gt.tensor([1.0, 2.0], dtype=gt.float16)
    assert gt.xlogy(2, h).dtype == gt.float16
    assert gt.xlogy(gt.tensor([1, 2]), 2).dtype == gt.float32
    np.testing.assert_allclose(
        gt.xlogy(gt.tensor([1, 2]), 2).numpy(), torch.xlogy(torch.tensor([1, 2]), 2).numpy()
    )
    assert gt.xlogy(gt.tensor(2.0), gt.tensor([3.0], dtype=gt.float64)).dtype == gt.float64


def test_errors_unchanged():
    with pytest.raises(TypeError):
        gt.xlogy("a", gt.tensor([1.0]))
