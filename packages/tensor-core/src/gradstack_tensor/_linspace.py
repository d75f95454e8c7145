"""torch's CPU ``linspace`` for floating dtypes, bit for bit.

Note [torch's linspace is fused multiply-adds]
torch's CPU kernel computes ``steps`` values in the output's dtype: ``step = (end - start)
/ (steps - 1)``, then element ``i`` is ``start + step * i`` below ``steps // 2`` and ``end -
step * (steps - i - 1)`` from there on, and its compiled loop fuses each multiply-add into
one rounding (an FMA).  numpy's ``linspace`` (computed in float64 and cast) and the unfused
formula both differ from it in the last bit of about one element in ten, which moves an
element lying on a histogram edge into the neighbouring bin.  So the FMAs are computed
exactly here: float32 through float64 (the product of two float32 is exact in float64;
the sum's rare double rounding is detected and redone exactly), float64 with fractions.

>>> torch_linspace(0.0, 1.0, 5, np.dtype(np.float32)).tolist()
[0.0, 0.25, 0.5, 0.75, 1.0]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["torch_linspace"]


def _exact_fma(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a * b + c`` with one rounding to ``dtype`` (float32 or float64), elementwise."""
    if dtype == np.float64:
        return np.array(
            [_exact_fma(float(x), float(y), float(z)) for x, y, z in zip(a, b, c, strict=True)],
            dtype=np.float64,
        )
    wide = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    narrow = wide.astype(dtype)
    # a float64 sum that lies exactly halfway between two float32 may have been rounded
    # onto the midpoint: redo those exactly
    back = narrow.astype(np.float64)
    ulp = np.spacing(narrow).astype(np.float64)
    suspect = np.nonzero(np.abs(np.abs(wide - back) - ulp / 2) <= np.spacing(wide))[0]
    for i in suspect:
        narrow[i] = dtype.type(_exact_fma(float(a[i]), float(b[i]), float(c[i])))
    return narrow


def torch_linspace(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """``steps`` values from ``start`` to ``end`` as torch's CPU ``linspace`` computes them
    in the floating ``dtype`` (Note [torch's linspace is fused multiply-adds])."""
    dtype = np.dtype(dtype)
    scalar = dtype.type
    first, last = scalar(start), scalar(end)
    if steps <= 0:
        return np.empty(0, dtype=dtype)
    if steps == 1:
        return np.array([first], dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        step = (last - first) / scalar(steps - 1)
        idx = np.arange(steps)
        half = steps // 2
        low = idx[:half].astype(dtype)
        high = (steps - 1 - idx[half:]).astype(dtype)
        out = np.empty(steps, dtype=dtype)
        out[:half] = _fma(np.full(half, step, dtype), low, np.full(half, first, dtype), dtype)
        n = steps - half
        out[half:] = _fma(np.full(n, -step, dtype), high, np.full(n, last, dtype), dtype)
    return out
