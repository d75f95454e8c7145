"""Resampling and rearranging the spatial dims as functions: ``interpolate`` (and its
deprecated names ``upsample``, ``upsample_nearest``, ``upsample_bilinear``),
``affine_grid`` and ``grid_sample``, ``pixel_shuffle``/``pixel_unshuffle`` and
``channel_shuffle``.  None adds an op to the registry: each is written with ops of the
derivative table, so gradients of every order come from theirs.

Note [Linear resizing is a product with interpolation matrices]
Linear interpolation along one dim is linear in the input: output ``i`` is ``(1 - w) *
x[j] + w * x[j + 1]`` with ``j`` and ``w`` from torch's source index (``i * (in - 1) /
(out - 1)`` with ``align_corners``, else ``(i + 0.5) * in / out - 0.5`` clamped at 0, or
``scale_factor``'s reciprocal when one is given).  So each dim is one product with an
``(out, in)`` matrix holding those weights, and bilinear resizing is ``A_h @ x @ A_w^T``:
exact gradients for any sizes.  ``nearest`` reads the input at ``floor(i * scale)``
(torch's ``nearest``; ``nearest-exact`` adds half a pixel) with one ``index_select`` per
dim.

Note [grid_sample is a weighted gather]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each output location reads the input at a real-valued source position: torch's
unnormalised grid coordinate, moved inside by ``padding_mode``.  Bilinear sampling is the
sum over the ``2 ** d`` neighbouring pixels of ``gather(input, pixel) * prod(weights)``,
with each weight ``1 - |x - pixel|`` a differentiable function of the grid and the pixel
indices (``floor``) constants; pixels outside the input contribute 0 (``zeros``).  So
the input's gradient is the gather's (a scatter-add), the grid's that of the weights and
the padding functions, and the double backward (torch's
``GridSampler2DBackwardBackward0``) comes for free.  ``nearest`` reads one pixel (its
grid gradient is zeros, as torch's); ``bicubic`` sums sixteen pixels with torch's cubic
convolution coefficients (``A = -0.75``), padding applied to each pixel's index.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([[[1.0, 2.0]]])
>>> interpolate(x, scale_factor=2, mode="nearest").tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
>>> interpolate(x, size=3, mode="linear", align_corners=True).tolist()
[[[1.0, 1.5, 2.0]]]
>>> theta = gt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid = affine_grid(theta, (1, 1, 2, 2), align_corners=False)
>>> image = gt.arange(4.0).reshape(1, 1, 2, 2)
>>> grid_sample(image, grid, align_corners=False).flatten().tolist()  # the identity warp
[0.0, 1.0, 2.0, 3.0]
>>> channel_shuffle(gt.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
[0.0, 2.0, 1.0, 3.0]
"""

from __future__ import annotations

import itertools
import math
import warnings

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function
from gradstack_tensor.extension import checked_arguments

from .pooling import _averaging

__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "affine_grid",
    "grid_sample",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
]


# -------------------------------------------------------------------------------------
# interpolate


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


# -------------------------------------------------------------------------------------
# affine_grid and grid_sample


_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _linspace_from_neg_one(n: int, align_corners: bool, dtype) -> Tensor:
    """torch's ``linspace_from_neg_one``: the ``n`` pixel centres in ``[-1, 1]``."""
    if n <= 1:
        return gt.zeros(1, dtype=dtype)
    steps = gt.linspace(-1, 1, n, dtype=dtype)
    if not align_corners:
        steps = steps * (n - 1) / n  # (torch's two roundings)
    return steps


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine matrices, as
    ``torch.nn.functional.affine_grid``.

    Parameters
    ----------
    theta : Tensor
        ``(N, 2, 3)`` matrices for a 4-d ``size`` ``(N, C, H, W)``, or ``(N, 3, 4)`` for a
        5-d ``size`` ``(N, C, D, H, W)``; floating point.
    size : sequence of int
        The output image size.
    align_corners : bool, optional
        Whether ``-1`` and ``1`` are the centres (True) or the outer corners (False, the
        default, with torch's warning when not given) of the corner pixels.

    Returns
    -------
    Tensor
        ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``): ``theta`` applied to the normalised
        ``(x, y[, z], 1)`` coordinates of each output pixel (one batched product, so
        differentiable in ``theta`` to any order).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> theta = gt.tensor([[[2.0, 0.0, 0.0], [0.0, 1.0, 0.5]]])
    >>> affine_grid(theta, (1, 1, 1, 2), align_corners=False).tolist()
    [[[[-1.0, 0.5], [1.0, 0.5]]]]
    """
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(
            f"affine_grid: expected theta to hold {n} matrices (size[0]), got {theta.shape[0]}"
        )
    d = len(spatial)
    # the homogeneous coordinates (x, y[, z], 1) of every output pixel, x along the last dim
    axes = [_linspace_from_neg_one(s, align_corners, theta.dtype) for s in spatial]
    columns = []
    for k in range(d):  # x (the last spatial dim) first
        shape = [1] * d
        shape[d - 1 - k] = spatial[d - 1 - k]
        columns.append(axes[d - 1 - k].reshape(shape).expand(tuple(spatial)))
    columns.append(gt.ones(*spatial, dtype=theta.dtype))
    base = gt.stack(columns, -1).reshape(1, -1, d + 1)  # (1, prod(spatial), d + 1)
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), d)
    return grid.reshape(n, *spatial, d)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """torch's ``grid_sampler_unnormalize``: ``[-1, 1]`` to pixel coordinates."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return coord * (size / 2) + (size / 2 - 0.5)


def _clip(x: Tensor, size: int) -> Tensor:
    """``x`` clipped to ``[0, size - 1]``.

    Note [grid_sample's borders are out of bounds for the gradient]
    torch's CPU kernel passes the grid's gradient through the clip only strictly inside
    ``(0, size - 1)``: a coordinate exactly on a border gets 0 (``clamp`` would pass 1).
    """
    inside = (x > 0) & (x < size - 1)
    return gt.where(inside, x, x.detach().nan_to_num(0.0).clamp(0, size - 1))  # (NaN: 0)


def _reflect(x: Tensor, size: int, align_corners: bool) -> Tensor:
    """torch's ``reflect_coordinates``: ``x`` folded into ``[0, size - 1]`` (align_corners)
    or ``[-0.5, size - 0.5]``, a triangle wave of slope +-1."""
    low, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
    if span <= 0:
        return x * 0
    t = (x - low).abs()
    flips = (t.detach() / span).floor()
    extra = t - flips * span  # in [0, span)
    odd = gt.remainder(flips, 2) == 1
    return gt.where(odd, span - extra, extra) + low


def _source_index(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        return _clip(_reflect(x, size, align_corners), size)
    # zeros: every position beyond a pixel of the input reads zeros; clamping far-away
    # (and infinite) positions changes no value and keeps the indices finite
    return x.clamp(-3.0, size + 2.0)


def _pixel(index: list, sizes) -> tuple[Tensor, Tensor]:
    """The flat index into the input's spatial plane of the integer-valued (float) pixel
    coordinates ``index`` (one per spatial dim), and whether the pixel lies inside."""
    valid = None
    flat = None
    for i, n in zip(index, sizes):
        ok = (i >= 0) & (i <= n - 1)
        valid = ok if valid is None else valid & ok
        flat = i if flat is None else flat * n + i
    flat = gt.where(valid, flat, gt.zeros_like(flat)).long()
    return flat, valid


def _non_finite(pos: list) -> Tensor:
    """0 where every coordinate is finite, NaN elsewhere, shaped ``(N, 1, L)``.

    Note [Non-finite grid positions]
    torch's kernels give NaN for a NaN or infinite grid position in bilinear sampling
    with ``padding_mode='zeros'`` and in bicubic sampling; ``border`` and ``reflection``
    clip a NaN to 0 (the first pixel) and nearest sampling reads zeros for it.  The
    composite follows: the clips map NaN to 0, and adding ``x - x`` (0, or NaN when ``x``
    is not finite, with a zero derivative) makes the NaN outputs.
    """
    marker = (pos[0] - pos[0]).detach()
    for p in pos[1:]:
        marker = marker + (p - p).detach()
    return marker.unsqueeze(1)


def _gather(flat_input: Tensor, index: Tensor) -> Tensor:
    """``flat_input[n, c, index[n, l]]`` for an ``(N, C, P)`` input and ``(N, L)`` index."""
    n, c = flat_input.shape[0], flat_input.shape[1]
    return flat_input.gather(2, index.unsqueeze(1).expand(n, c, index.shape[1]))


def _cubic_coefficients(t: Tensor) -> list[Tensor]:
    """torch's ``get_cubic_upsample_coefficients`` (cubic convolution, ``A = -0.75``) for
    the pixels at offsets -1, 0, 1, 2 of a fractional position ``t``."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    s = 1 - t
    return [far(t + 1), near(t), near(s), far(s + 1)]


@autocast_function("grid_sampler")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` at the normalised positions of ``grid``, as
    ``torch.nn.functional.grid_sample`` (Note [grid_sample is a weighted gather]).

    Parameters
    ----------
    input : Tensor
        ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    grid : Tensor
        ``(N, H_out, W_out, 2)`` (or ``(N, D_out, H_out, W_out, 3)``) positions in
        ``[-1, 1]``, ``x`` (the width) first (non-finite positions: Note [Non-finite grid
        positions]).
    mode : {'bilinear', 'nearest', 'bicubic'}
        ``bilinear`` is trilinear for 5-d inputs; ``bicubic`` takes 4-d inputs only.
    padding_mode : {'zeros', 'border', 'reflection'}
    align_corners : bool, optional
        As :func:`affine_grid` (False, with torch's warning, when not given).

    Returns
    -------
    Tensor
        ``(N, C, H_out, W_out)`` (or ``(N, C, D_out, H_out, W_out)``), differentiable in
        ``input`` and ``grid`` to any order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([[[[0.0, 10.0], [20.0, 30.0]]]])
    >>> grid = gt.tensor([[[[0.0, 0.0], [-1.0, 1.0], [3.0, 0.0]]]])
    >>> grid_sample(x, grid, align_corners=True).tolist()
    [[[[15.0, 20.0, 0.0]]]]
    >>> grid_sample(x, grid, padding_mode="border", align_corners=True).tolist()
    [[[[15.0, 20.0, 20.0]]]]
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError(
            "grid_sampler(): argument 'input' and 'grid' must be Tensors, got "
            f"{type(input).__name__} and {type(grid).__name__}"
        )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to have same dtype, but input has "
            f"{input.dtype} and grid has {grid.dtype}"
        )
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    d = input.dim() - 2
    if grid.shape[-1] != d:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {d} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    if any(s <= 0 for s in input.shape[2:]):
        raise RuntimeError(
            "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
            f"has sizes {list(input.shape)} with dimension {2 + list(input.shape[2:]).index(0)}"
            " being empty"
        )
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input.")
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])
    out_spatial = tuple(grid.shape[1:-1])
    flat_input = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, d)
    coords = [g[:, :, d - 1 - k] for k in range(d)]  # in the input's dim order (z,) y, x

    if mode == "bicubic":
        pos = [_unnormalize(x, s, align_corners) for x, s in zip(coords, sizes)]
        marker = _non_finite(pos)
        if padding_mode == "zeros":
            pos = [p.clamp(-3.0, s + 2.0) for p, s in zip(pos, sizes)]
        base = [p.detach().floor() for p in pos]
        weights = [_cubic_coefficients(p - b) for p, b in zip(pos, base)]
        out = None
        for offsets in itertools.product(range(4), repeat=d):
            index = []
            for b, o, s in zip(base, offsets, sizes):
                i = b + (o - 1)
                if padding_mode == "border":
                    i = i.clamp(0, s - 1)
                elif padding_mode == "reflection":
                    i = _reflect(i, s, align_corners).clamp(0, s - 1)
                index.append(i)
            flat, valid = _pixel(index, sizes)
            w = weights[0][offsets[0]]
            for k in range(1, d):
                w = w * weights[k][offsets[k]]
            term = gt.where(valid.unsqueeze(1), _gather(flat_input, flat) * w.unsqueeze(1), 0.0)
            out = term if out is None else out + term
        return (out + marker).reshape(n, c, *out_spatial)

    pos = [_source_index(x, s, padding_mode, align_corners) for x, s in zip(coords, sizes)]
    if mode == "nearest":
        index = [p.detach().round() for p in pos]  # (torch's nearbyint: half to even)
        flat, valid = _pixel(index, sizes)
        # the grid's gradient is zeros (not None), as torch's
        w = sum((p - p.detach()) * 0 for p in pos) + 1
        out = gt.where(valid.unsqueeze(1), _gather(flat_input, flat) * w.unsqueeze(1), 0.0)
        return out.reshape(n, c, *out_spatial)

    if padding_mode == "zeros":
        marker = _non_finite([_unnormalize(x, s, align_corners) for x, s in zip(coords, sizes)])
    low = [p.detach().floor() for p in pos]
    frac = [p - b for p, b in zip(pos, low)]  # the weight of the upper pixel
    out = None
    for corner in itertools.product((0, 1), repeat=d):
        index = [b + k for b, k in zip(low, corner)]
        flat, valid = _pixel(index, sizes)
        w = None
        for f, k, b in zip(frac, corner, low):
            wk = f if k else (b + 1) - (b + f)  # (torch: the upper pixel minus x)
            w = wk if w is None else w * wk
        term = gt.where(valid.unsqueeze(1), _gather(flat_input, flat) * w.unsqueeze(1), 0.0)
        out = term if out is None else out + term
    if padding_mode == "zeros":
        out = out + marker
    assert out is not None  # (at least one corner)
    return out.reshape(n, c, *out_spatial)


# -------------------------------------------------------------------------------------
# rearrangements: pixel and channel shuffles


@checked_arguments("pixel_shuffle", "Tensor input, int upscale_factor", first=0)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r * r, H, W)`` rearranged into ``(*, C, H * r, W * r)``."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@checked_arguments("pixel_unshuffle", "Tensor input, int downscale_factor", first=0)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` rearranged into ``(*, C * r * r, H, W)``."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input."
            f"size(-2)={h} is not divisible by {r}"
            if h % r
            else f"pixel_unshuffle expects width to be divisible by downscale_factor, but input."
            f"size(-1)={w} is not divisible by {r}"
        )
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the ``C`` channels (dim 1) into ``groups`` groups and interleave them:
    ``(N, g, C / g, *)`` transposed to ``(N, C / g, g, *)`` and viewed back."""
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    grouped = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return grouped.reshape(tuple(input.shape))
