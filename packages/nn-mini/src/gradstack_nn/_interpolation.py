"""``interpolate`` (``upsample``): nearest and (bi)linear resizing of the trailing
spatial dims, as products of gradstack ops.

Note [Linear resizing is a product with interpolation matrices]
Linear interpolation along one dim is linear in the input: output ``i`` is ``(1 - w) *
x[j] + w * x[j + 1]`` with ``j`` and ``w`` from torch's source index (``i * (in - 1) /
(out - 1)`` with ``align_corners``, else ``(i + 0.5) * in / out - 0.5`` clamped at 0, or
``scale_factor``'s reciprocal when one is given).  So each dim is one product with an
``(out, in)`` matrix holding those weights, and bilinear resizing is ``A_h @ x @ A_w^T``:
exact gradients for any sizes.  ``nearest`` reads the input at ``floor(i * scale)``
(torch's ``nearest``; ``nearest-exact`` adds half a pixel) with one ``index_select`` per
dim.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[[1.0, 2.0]]])
>>> interpolate(x, scale_factor=2, mode="nearest").tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
>>> interpolate(x, size=3, mode="linear", align_corners=True).tolist()
[[[1.0, 1.5, 2.0]]]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _output_sizes(x: Tensor, spatial: int, size, scale_factor, recompute: bool):
    in_sizes = tuple(x.shape[-spatial:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * spatial if isinstance(size, int) else tuple(size)
        if len(sizes) != spatial:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(in_sizes)} and output size of "
                f"{list(sizes)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and output size in (o1, o2, ...,oK) format."
            )
        return tuple(int(s) for s in sizes), (None,) * spatial
    scales = (
        (float(scale_factor),) * spatial
        if isinstance(scale_factor, (int, float))
        else tuple(float(s) for s in scale_factor)
    )
    if len(scales) != spatial:
        raise ValueError(
            f"Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(in_sizes)} and scale_factor of shape "
            f"{list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format."
        )
    sizes = tuple(int(math.floor(n * s)) for n, s in zip(in_sizes, scales))
    return sizes, ((None,) * spatial if recompute else scales)


def _scale(n_in: int, n_out: int, align_corners: bool, given) -> float:
    """torch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / given if given is not None and given > 0 else n_in / n_out


def _linear_matrix(n_in: int, n_out: int, align_corners: bool, given, dtype) -> Tensor:
    """Note [Linear resizing is a product with interpolation matrices]."""
    scale = _scale(n_in, n_out, align_corners, given)
    a = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        src = i * scale if align_corners else max((i + 0.5) * scale - 0.5, 0.0)
        j = min(int(math.floor(src)), n_in - 1)
        j1 = j + 1 if j < n_in - 1 else j
        w = src - j
        a[i, j] += 1.0 - w
        a[i, j1] += w
    return gt.tensor(a, dtype=dtype)


def _nearest_indices(n_in: int, n_out: int, given, exact: bool) -> Tensor:
    """torch's ``nearest_idx``: ``floor(i * scale)`` in float32 (``nearest-exact``: of
    ``i + 0.5``), capped at the last input; ``n_out == n_in`` and ``2 * n_in`` exactly."""
    if n_out == n_in and not exact:
        idx = np.arange(n_out)
    elif n_out == 2 * n_in and not exact:
        idx = np.arange(n_out) >> 1
    else:
        if given is not None and given > 0:
            scale = np.float32(1.0 / given)
        else:
            scale = np.float32(n_in) / np.float32(n_out)
        positions = np.arange(n_out, dtype=np.float32) + np.float32(0.5 if exact else 0.0)
        idx = np.minimum(np.floor(positions * scale), n_in - 1)
    return gt.tensor(idx.astype(np.int64))


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims (all dims after the first two) to ``size``, or by
    ``scale_factor``, with ``mode`` ``"nearest"``, ``"nearest-exact"``, ``"linear"``
    (3-d inputs), ``"bilinear"`` (4-d) or ``"trilinear"`` (5-d); ``align_corners`` as
    torch's (Note [Linear resizing is a product with interpolation matrices])."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not implemented in gradstack")
    spatial = input.dim() - 2
    if spatial < 1:
        raise ValueError(f"interpolate expects a 3-D to 5-D input, got {input.dim()}-D")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                "bilinear | bicubic | trilinear"
            )
    elif mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != spatial:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input"
            )
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"interpolate(mode={mode!r}) is not implemented in gradstack")
    sizes, scales = _output_sizes(input, spatial, size, scale_factor, bool(recompute_scale_factor))
    x = input
    for k in range(spatial):
        dim = 2 + k
        n_in, n_out = x.shape[dim], sizes[k]
        if mode in ("nearest", "nearest-exact"):
            x = x.index_select(
                dim, _nearest_indices(n_in, n_out, scales[k], mode == "nearest-exact")
            )
        elif mode == "area":
            from ._pooling import _averaging

            a = _averaging(n_in, n_out, x.dtype)
            x = (a @ x.movedim(dim, -2)).movedim(-2, dim)
        else:
            a = _linear_matrix(n_in, n_out, bool(align_corners), scales[k], x.dtype)
            x = (a @ x.movedim(dim, -2)).movedim(-2, dim)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """:func:`interpolate` (torch's deprecated name)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """``interpolate(mode="nearest")``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """``interpolate(mode="bilinear", align_corners=True)``, as torch's deprecated name."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
