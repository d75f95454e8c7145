"""Note [A float tensor squared is x * x, early] (_elementwise.pyx): ``x ** 2`` of a float
tensor takes ``x * x`` before promotion; the values, dtypes and errors stay torch's."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

VALUES = [0.0, -0.0, 1.5, -2.25, 1e-30, 3e38, -3e38, np.inf, -np.inf, np.nan, 65504.0, 1e-7]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("size", [3, 1000])  # the small loop and numpy's multiply
def test_square_matches_torch_bit_for_bit(dtype, exponent, size):
    with np.errstate(all="ignore"):
        a = np.resize(np.array(VALUES, dtype=np.float64), size).astype(dtype)
    ours = (gt.from_numpy(a) ** exponent).numpy()
    theirs = (torch.from_numpy(a) ** exponent).numpy()
    assert ours.dtype == theirs.dtype
    nan = np.isnan(theirs)  # (a NaN's payload is not a value)
    assert (np.isnan(ours) == nan).all()
    assert ours[~nan].tobytes() == theirs[~nan].tobytes()
    for method in ("pow", "square"):
        r = getattr(gt.from_numpy(a), method)(*([exponent] if method == "pow" else []))
        assert r.numpy()[~nan].tobytes() == theirs[~nan].tobytes()


def test_other_exponents_and_dtypes_keep_their_rules():
    i = gt.tensor([1, -2, 3])
    assert (i**2).tolist() == [1, 4, 9] and (i**2).dtype == gt.int64
    assert (i**2.0).dtype == gt.float32  # an int tensor by a float number promotes
    b = gt.tensor([True, False])
    assert (b**True).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        i**-1
    x = gt.tensor([4.0, 9.0])
    assert (x**0.5).tolist() == [2.0, 3.0] and (x**3).tolist() == [64.0, 729.0]
