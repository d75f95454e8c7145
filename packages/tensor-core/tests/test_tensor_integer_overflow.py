"""tensor(python numbers, dtype=an integer dtype): torch's truncation, wrap and overflow rule
(Note [Which Python numbers fit an integer dtype] in creation.py)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize(
    "values",
    [
        [1.7, -1.7],
        [-1],
        [300],
        [1.7, 300.0],
        [-1.0],
        [-255],
        [-256],
        [127, -128],
        [40000],
        [float("nan")],
        [float("inf"), 1],
    ],
)
def test_python_numbers_convert_or_raise_as_in_torch(dtype, values):
    try:
        expected = torch.tensor(values, dtype=getattr(torch, dtype))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="without overflow"):
            gt.tensor(values, dtype=getattr(gt, dtype))
        assert "without overflow" in str(e)
        return
    got = gt.tensor(values, dtype=getattr(gt, dtype))
    assert got.dtype is getattr(gt, dtype)
    np.testing.assert_array_equal(np.asarray(got.tolist()), expected.numpy())
