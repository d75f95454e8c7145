"""``finfo`` and ``iinfo``: the numerical properties of the floating-point and integer
dtypes, as torch's (numpy's values, torch's names and repr).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.finfo(gt.float32).eps
1.1920928955078125e-07
>>> gt.iinfo(gt.int8).max
127
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtypes as _dt

__all__ = ["finfo", "iinfo"]


def _short(v: float) -> str:
    return f"{v:g}"


class finfo:  # noqa: N801 - torch's name
    """The numerical properties of a floating-point dtype (the default dtype when none is
    given): ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``),
    ``resolution``, ``dtype``."""

    def __init__(self, type=None) -> None:  # noqa: A002 - torch's argument name
        dtype = _dt.get_default_dtype() if type is None else type
        if isinstance(dtype, _dt.dtype) and dtype.is_complex:
            dtype = dtype.to_real()  # torch: the properties of the parts' dtype
        if not isinstance(dtype, _dt.dtype) or not dtype.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to "
                "handle 'torch.finfo'"
            )
        # (ml_dtypes' own finfo for its bfloat16: numpy's refuses a user dtype)
        info = ml_dtypes.finfo(dtype.numpy) if dtype.name == "bfloat16" else np.finfo(dtype.numpy)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.smallest_normal)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(info.precision)  # (numpy gives float16 its own 0.001)
        self.dtype = dtype.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
            f"max={_short(self.max)}, eps={_short(self.eps)}, "
            f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
            f"dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 - torch's name
    """The range of an integer dtype: ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type) -> None:  # noqa: A002 - torch's argument name
        if (
            not isinstance(type, _dt.dtype)
            or type.is_floating_point
            or type.is_complex
            or type.name == "bool"
        ):
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                "'torch.iinfo'"
            )
        info = np.iinfo(type.numpy)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        # (torch prints the bounds as floats: int64's max is 9.22337e+18)
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"
