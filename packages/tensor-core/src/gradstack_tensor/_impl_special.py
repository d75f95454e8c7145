"""Special functions torch has as ops: ``erf`` and ``erfinv``.

``erf`` reuses nn's ``erf_array`` (scipy's erf when installed, else the standard
library's, Note [erf without a C kernel] in ``_impl_nn.py``).  ``erfinv`` is torch's own
algorithm (``calc_erfinv`` in ATen's Math.h): a rational approximation, then two Newton
steps on ``erf(x) = y``, so it agrees with torch to the last bits where ``erf`` does.
Integer and bool inputs become the default float dtype, as for torch's unary float ops.

Examples
--------
>>> import gradstack_tensor as gt
>>> [round(v, 6) for v in gt.erf(gt.tensor([0.0, 0.5, -1.0])).tolist()]
[0.0, 0.5205, -0.842701]
>>> round(gt.erfinv(gt.tensor(0.5205)).item(), 4)
0.5
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from ._dispatch import register_op
from ._impl_nn import erf_array
from ._tensor import Tensor, _data, _wrap

__all__: list[str] = []

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_D = (3.543889200, 1.637067800)


def _float_input(input, name: str) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = _data(input)
    if x.dtype.kind != "f":
        x = x.astype(_dt.get_default_dtype().numpy)
    return x


def erf(input):
    """The error function, elementwise."""
    x = _float_input(input, "erf")
    with np.errstate(all="ignore"):
        return _wrap(np.asarray(erf_array(x)))


def _erfinv_array(y: np.ndarray) -> np.ndarray:
    """torch's calc_erfinv, vectorised, in ``y``'s dtype (float16 through float32)."""
    work = y.astype(np.float32) if y.dtype == np.float16 else y
    t = work.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(work)
        z = work * work
        num = ((t(_A[3]) * z + t(_A[2])) * z + t(_A[1])) * z + t(_A[0])
        dem = (((t(_B[3]) * z + t(_B[2])) * z + t(_B[1])) * z + t(_B[0])) * z + t(1)
        central = work * num / dem
        zt = np.sqrt(-np.log((t(1) - a) / t(2)))
        num = ((t(_C[3]) * zt + t(_C[2])) * zt + t(_C[1])) * zt + t(_C[0])
        dem = (t(_D[1]) * zt + t(_D[0])) * zt + t(1)
        tail = np.copysign(num, work) / dem
        x = np.where(a <= t(0.7), central, tail)
        k = t(_TWO_OVER_SQRT_PI)
        for _ in range(2):  # two Newton steps on erf(x) - y
            x = x - (erf_array(x) - work) / (k * np.exp(-x * x))
        x = np.where(a == t(1), np.copysign(t(np.inf), work), x)
        x = np.where(a > t(1), t(np.nan), x)
    return np.asarray(x, dtype=y.dtype)


def erfinv(input):
    """The inverse error function, elementwise: ``erf(erfinv(y)) = y`` on ``(-1, 1)``,
    ``+-inf`` at ``+-1``, NaN outside."""
    x = _float_input(input, "erfinv")
    return _wrap(_erfinv_array(x))


register_op("erf", erf)
register_op("erfinv", erfinv)
