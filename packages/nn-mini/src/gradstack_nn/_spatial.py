"""Spatial sampling and the 3-d layers, composed of gradstack ops: ``affine_grid``,
``grid_sample``, ``conv3d``, ``conv_transpose3d``, ``max_pool3d``, ``avg_pool3d``,
``adaptive_avg_pool3d``, ``adaptive_max_pool3d``, ``gumbel_softmax`` and ``embedding_bag``
(re-exported by :mod:`gradstack_nn.functional`).

None of them adds an op to the registry: each is written with ops of the derivative table
(``gather``, ``where``, ``matmul``, ``im2col``/``col2im``, ``max_pool2d_with_indices``,
slicing, sums), so gradients of every order come from theirs.  The graph holds the nodes
of the parts where torch records one node (``GridSampler2DBackward0``,
``ConvolutionBackward0``, ``MaxPool3DWithIndicesBackward0`` ...).

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
>>> theta = gt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid = affine_grid(theta, (1, 1, 2, 2), align_corners=False)
>>> x = gt.arange(4.0).reshape(1, 1, 2, 2)
>>> grid_sample(x, grid, align_corners=False).flatten().tolist()  # the identity warp
[0.0, 1.0, 2.0, 3.0]
"""

from __future__ import annotations

import itertools
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = [
    "affine_grid",
    "grid_sample",
    "conv3d",
    "conv_transpose3d",
    "max_pool3d",
    "max_pool3d_with_indices",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "gumbel_softmax",
    "embedding_bag",
]

_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _triple(value, name: str) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        v = int(value)
        return (v, v, v)
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return _triple(value[0], name)
        if len(value) == 3 and all(isinstance(v, (int, np.integer)) for v in value):
            return tuple(int(v) for v in value)  # type: ignore[return-value]
    raise TypeError(f"{name} must be an int or a tuple of three ints, got {value!r}")


def _strided(x: Tensor, dim: int, start: int, count: int, step: int) -> Tensor:
    """``count`` entries of ``x`` along ``dim`` from ``start``, ``step`` apart (a view)."""
    index = [slice(None)] * x.dim()
    index[dim] = slice(start, start + (count - 1) * step + 1, step)
    return x[tuple(index)]


# -------------------------------------------------------------------------------------
# affine_grid and grid_sample


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
        columns.append(axes[d - 1 - k].reshape(shape).expand(*spatial))
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
# 3-d convolutions


def _check_conv3d(input: Tensor, weight: Tensor, bias, groups: int, name: str) -> None:
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' and 'weight' must be Tensors, got "
            f"{type(input).__name__} and {type(weight).__name__}"
        )
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"Expected 4D (unbatched) or 5D (batched) input to {name}, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.dim() != 5:
        raise RuntimeError(
            f"Expected 5-dimensional weight for 5-dimensional input {list(input.shape)}, but "
            f"got weight of size {list(weight.shape)} instead"
        )
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups!r})")
    from ._convolution import check_same_dtype

    check_same_dtype(input, weight, bias)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """3-d cross-correlation, as ``torch.nn.functional.conv3d``.

    Note [A 3-d convolution is a depth unfold and a 2-d convolution]
    The input's depth windows are unfolded (``im2col`` with a ``(kD, 1)`` kernel over the
    ``(D, H * W)`` plane) into ``kD`` times the channels, one sample per output depth;
    the weight ``(O, C / groups, kD, kH, kW)`` read as ``(O, C / groups * kD, kH, kW)``
    then convolves them in 2-d (whose channel order, channel-major, keeps the groups
    whole): one unfold, one :func:`conv2d`.

    Parameters
    ----------
    input : Tensor
        ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    weight : Tensor
        ``(out_channels, C / groups, kD, kH, kW)``.
    bias : Tensor, optional
        ``(out_channels,)``.
    stride, padding, dilation : int or triple
        ``padding`` may also be ``'valid'`` or ``'same'``.
    groups : int

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> conv3d(x, gt.ones(1, 1, 2, 2, 2)).flatten().tolist()
    [28.0]
    >>> conv3d(x, gt.ones(2, 1, 1, 1, 1), padding=1).shape
    gradstack.Size([1, 2, 4, 4, 4])
    """
    from ._convolution import conv2d, unfold
    from ._padding import pad

    _check_conv3d(input, weight, bias, groups, "conv3d")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    stride = _triple(stride, "stride")
    dilation = _triple(dilation, "dilation")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0, 0)
        elif padding == "same":
            if stride != (1, 1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dl * (k - 1) for dl, k in zip(dilation, kernel)]
            pads = [(t // 2, t - t // 2) for t in total]
            x = pad(x, tuple(v for pair in reversed(pads) for v in pair))
            padding = (0, 0, 0)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}' (use 'valid' or 'same')")
    padding = _triple(padding, "padding")
    if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
        raise RuntimeError(
            f"conv3d: stride and dilation must be positive and padding non-negative, got "
            f"stride={stride}, dilation={dilation}, padding={padding}"
        )
    n, c = x.shape[0], x.shape[1]
    out_channels = weight.shape[0]
    if out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    if c != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{c} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {out_channels} elements, but got bias of size {list(bias.shape)} instead"
        )
    if padding[0]:
        x = pad(x, (0, 0, 0, 0, padding[0], padding[0]))
    depth, h, w = x.shape[2], x.shape[3], x.shape[4]
    padded = [depth, h + 2 * padding[1], w + 2 * padding[2]]
    span = [dl * (k - 1) + 1 for dl, k in zip(dilation, kernel)]
    if any(p < s for p, s in zip(padded, span)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]} x "
            f"{padded[2]}). Kernel size: ({span[0]} x {span[1]} x {span[2]}). Kernel size "
            "can't be greater than actual input size"
        )
    out_d = (depth - span[0]) // stride[0] + 1
    kd = kernel[0]
    # Note [A 3-d convolution is a depth unfold and a 2-d convolution]
    cols = unfold(x.reshape(n, c, depth, h * w), (kd, 1), (dilation[0], 1), 0, (stride[0], 1))
    cols = cols.reshape(n, c, kd, out_d, h, w).permute(0, 3, 1, 2, 4, 5)
    cols = cols.reshape(n * out_d, c * kd, h, w)
    w2 = weight.reshape(out_channels, weight.shape[1] * kd, kernel[1], kernel[2])
    out = conv2d(cols, w2, None, stride[1:], padding[1:], dilation[1:], groups)
    out = out.reshape(n, out_d, out_channels, out.shape[-2], out.shape[-1]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(out_channels, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """3-d transposed convolution (the adjoint of :func:`conv3d`), as
    ``torch.nn.functional.conv_transpose3d``: ``weight`` is ``(C, out_channels / groups,
    kD, kH, kW)``; the output is ``(D - 1) * stride - 2 * padding + dilation * (kD - 1) +
    output_padding + 1`` deep (and so high and wide).

    Note [A 3-d transposed convolution is a 2-d one and a depth fold]
    Each input depth slice spreads, by :func:`conv_transpose2d` with the ``kD`` kernel
    slices as extra output channels, into ``kD`` output slices; :func:`fold` (``col2im``
    with a ``(kD, 1)`` kernel over ``(depth, H * W)``) then sums them into the output
    depths ``d * stride + k * dilation``.  Both are ops of the table, so the gradients are.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.ones(1, 1, 2, 2, 2)
    >>> conv_transpose3d(x, gt.ones(1, 1, 2, 2, 2))[0, 0, :, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    from ._convolution import conv_transpose2d, fold
    from ._padding import pad

    _check_conv3d(input, weight, bias, groups, "conv_transpose3d")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    n, c, depth, h, w = x.shape
    if weight.shape[0] != c:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[0]} channels, but got {c} channels instead"
        )
    if c % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    stride, padding = _triple(stride, "stride"), _triple(padding, "padding")
    dilation = _triple(dilation, "dilation")
    output_padding = _triple(output_padding, "output_padding")
    if any(op >= max(s, dl) for op, s, dl in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_depth: {output_padding[0]} output_padding_height: "
            f"{output_padding[1]} output_padding_width: {output_padding[2]} stride_depth: "
            f"{stride[0]} stride_height: {stride[1]} stride_width: {stride[2]} "
            f"dilation_depth: {dilation[0]} dilation_height: {dilation[1]} dilation_width: "
            f"{dilation[2]}"
        )
    per_group = weight.shape[1]
    out_channels = per_group * groups
    kd, kh, kw = weight.shape[2], weight.shape[3], weight.shape[4]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {out_channels} elements, but got bias of size "
            f"{list(bias.shape)} instead"
        )
    # Note [A 3-d transposed convolution is a 2-d one and a depth fold]
    slices = x.transpose(1, 2).reshape(n * depth, c, h, w)
    w2 = weight.reshape(c, per_group * kd, kh, kw)  # output channels (o, k) per group
    # (padding and output_padding are applied below to the three dims at once: the depth
    # needs them after the depth fold anyway, so the 2-d call takes neither)
    y = conv_transpose2d(slices, w2, None, stride[1:], 0, 0, groups, dilation[1:])
    # (N * D, O * kD, H', W') before the padding crop
    oh, ow = y.shape[-2], y.shape[-1]
    y = y.reshape(n, depth, out_channels, kd, oh * ow).permute(0, 2, 4, 3, 1)
    cols = y.reshape(n, out_channels * oh * ow * kd, depth)
    full = (depth - 1) * stride[0] + dilation[0] * (kd - 1) + 1
    out = fold(cols, (full, 1), (kd, 1), (dilation[0], 1), 0, (stride[0], 1))
    out = out.reshape(n, out_channels, oh, ow, full).permute(0, 1, 4, 2, 3)
    out_d = full - 2 * padding[0] + output_padding[0]
    crops = [(-p, op - p) for p, op in zip(padding, output_padding)]
    if any(padding) or any(output_padding):
        out = pad(out, tuple(v for pair in reversed(crops) for v in pair))
    if out_d <= 0:
        raise RuntimeError(
            f"conv_transpose3d: the output depth {out_d} is not positive (input depth {depth})"
        )
    if bias is not None:
        out = out + bias.reshape(out_channels, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


# -------------------------------------------------------------------------------------
# 3-d pooling


def _batched3d(input: Tensor, name: str) -> tuple[Tensor, bool]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() == 4:
        return input.unsqueeze(0), True
    if input.dim() != 5:
        raise RuntimeError(
            f"{name}: Expected 4D or 5D (batch mode) tensor for input, but got: {list(input.shape)}"
        )
    return input, False


def _pool_size(n: int, k: int, s: int, p: int, dl: int, ceil_mode: bool) -> int:
    """torch's ``pooling_output_shape``."""
    span = dl * (k - 1) + 1
    out = (n + 2 * p - span + ((s - 1) if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_arguments(name, kernel_size, stride, padding, dilation):
    kernel = _triple(kernel_size, f"{name}: kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else _triple(stride, "s")
    padding = _triple(padding, f"{name}: padding")
    dilation = _triple(dilation, f"{name}: dilation")
    if min(kernel) <= 0 or min(stride) <= 0 or min(dilation) <= 0:
        raise RuntimeError(
            f"{name}: kernel_size, stride and dilation must be greater than zero, but got "
            f"kernel_size={kernel}, stride={stride}, dilation={dilation}"
        )
    for p, k, dl in zip(padding, kernel, dilation):
        if p < 0 or p > (dl * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={dl}"
            )
    return kernel, stride, padding, dilation


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """The largest element of each 3-d window and its flat index ``d * H * W + h * W + w``
    in the input's last three dims (see :func:`max_pool3d`).

    Note [A 3-d max pool is a 2-d max pool and a max over depth]
    The maximum of a window is the maximum over its depth slices of each slice's 2-d
    window maximum: ``max_pool2d_with_indices`` on every depth slice, then the first
    maximum over each depth window (its slices stacked).  Taking the first maximum at
    each stage picks the first in ``(d, h, w)`` order, torch's choice among ties, so the
    gradient goes where torch's goes.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> out, idx = max_pool3d_with_indices(gt.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    >>> out.flatten().tolist(), idx.flatten().tolist()
    ([7.0], [7])
    """
    from ._convolution import max_pool2d_with_indices
    from ._padding import pad

    x, unbatched = _batched3d(input, "max_pool3d")
    kernel, stride, padding, dilation = _pool_arguments(
        "max_pool3d", kernel_size, stride, padding, dilation
    )
    n, c, depth, h, w = x.shape
    out_d = _pool_size(depth, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    out_h = _pool_size(h, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    out_w = _pool_size(w, kernel[2], stride[2], padding[2], dilation[2], ceil_mode)
    if min(out_d, out_h, out_w) <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{depth}x{h}x{w}). Calculated output size: "
            f"({c}x{out_d}x{out_h}x{out_w}). Output size is too small"
        )
    values, hw = max_pool2d_with_indices(
        x.reshape(n, c * depth, h, w), kernel[1:], stride[1:], padding[1:], dilation[1:],
        ceil_mode,
    )  # fmt: skip
    values = values.reshape(n, c, depth, out_h, out_w)
    hw = hw.reshape(n, c, depth, out_h, out_w)
    extra = max((out_d - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1 - depth
                - 2 * padding[0], 0)  # fmt: skip
    if padding[0] or extra:
        fill = float("-inf")
        values = pad(values, (0, 0, 0, 0, padding[0], padding[0] + extra), value=fill)
        hw = pad(hw, (0, 0, 0, 0, padding[0], padding[0] + extra))
    windows = [_strided(values, 2, k * dilation[0], out_d, stride[0]) for k in range(kernel[0])]
    out, which = gt.stack(windows, 2).max(2)  # (N, C, oD, oH, oW), first maximum
    which = which.unsqueeze(2)
    hw_windows = gt.stack(
        [_strided(hw, 2, k * dilation[0], out_d, stride[0]) for k in range(kernel[0])], 2
    )
    hw_index = hw_windows.gather(2, which).squeeze(2)
    starts = gt.arange(out_d).reshape(out_d, 1, 1) * stride[0] - padding[0]
    d_index = starts + which.squeeze(2) * dilation[0]
    indices = d_index * (h * w) + hw_index
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def max_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """3-d max pooling over an ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) input, as
    ``torch.nn.functional.max_pool3d`` (Note [A 3-d max pool is a 2-d max pool and a max
    over depth]); ``stride`` defaults to ``kernel_size``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> max_pool3d(gt.arange(27.0).reshape(1, 1, 3, 3, 3), 2, 1).flatten().tolist()
    [13.0, 14.0, 16.0, 17.0, 22.0, 23.0, 25.0, 26.0]
    """
    return max_pool3d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def avg_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each 3-d window, as ``torch.nn.functional.avg_pool3d``: window sums
    one dim at a time (a window's sum is separable) over the zero-padded input, divided
    by torch's divisor (the window's size within the padded input, or within the input
    without ``count_include_pad``, or ``divisor_override``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> avg_pool3d(gt.arange(8.0).reshape(1, 1, 2, 2, 2), 2).flatten().tolist()
    [3.5]
    >>> avg_pool3d(gt.ones(1, 1, 2, 2, 2), 2, padding=1, count_include_pad=False).sum().item()
    8.0
    """
    from ._padding import pad
    from ._pooling import _divisors

    x, unbatched = _batched3d(input, "avg_pool3d")
    kernel, stride, padding, _ = _pool_arguments("avg_pool3d", kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    c = x.shape[1]
    sizes = tuple(x.shape[2:])
    outs = [_pool_size(sizes[i], kernel[i], stride[i], padding[i], 1, ceil_mode) for i in range(3)]
    if min(outs) <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{sizes[0]}x{sizes[1]}x{sizes[2]}). Calculated output "
            f"size: ({c}x{outs[0]}x{outs[1]}x{outs[2]}). Output size is too small"
        )
    extra = [
        max((outs[i] - 1) * stride[i] + kernel[i] - sizes[i] - 2 * padding[i], 0) for i in range(3)
    ]
    if max(padding) or max(extra):
        x = pad(x, (padding[2], padding[2] + extra[2], padding[1], padding[1] + extra[1],
                    padding[0], padding[0] + extra[0]))  # fmt: skip
    sums = x
    for i in range(3):
        dim = 2 + i
        parts = [_strided(sums, dim, k, outs[i], stride[i]) for k in range(kernel[i])]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        sums = total
    if divisor_override is not None:
        out = sums / divisor_override
    else:
        div = [
            _divisors(sizes[i], kernel[i], stride[i], padding[i], outs[i], count_include_pad)
            for i in range(3)
        ]
        full = np.einsum("i,j,k->ijk", *div).astype(np.float64)
        if np.all(full == kernel[0] * kernel[1] * kernel[2]):
            out = sums / (kernel[0] * kernel[1] * kernel[2])
        else:
            out = sums / gt.tensor(full, dtype=x.dtype)
    return out.squeeze(0) if unbatched else out


def _adaptive_sizes(output_size, spatial) -> tuple:
    if isinstance(output_size, (int, np.integer)):
        sizes = (int(output_size),) * 3
    else:
        sizes = tuple(output_size)
        if len(sizes) != 3:
            raise RuntimeError("adaptive pooling: output_size must be 3 numbers")
    return tuple(n if s is None else int(s) for s, n in zip(sizes, spatial))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` windows that tile the last three dims, as
    ``torch.nn.functional.adaptive_avg_pool3d``: a product with each dim's averaging
    matrix (Note [Adaptive average pooling is a product with averaging matrices] in
    ``_pooling.py``); ``None`` keeps a size.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> adaptive_avg_pool3d(gt.arange(8.0).reshape(1, 1, 2, 2, 2), (1, 2, None)).tolist()
    [[[[[2.0, 3.0], [4.0, 5.0]]]]]
    """
    from ._pooling import _averaging, _check_float

    x, unbatched = _batched3d(input, "adaptive_avg_pool3d")
    _check_float(x, "adaptive_avg_pool3d")
    n, c, depth, h, w = x.shape
    od, oh, ow = _adaptive_sizes(output_size, (depth, h, w))
    if (od, oh, ow) == (1, 1, 1):
        out = x.mean((-3, -2, -1), keepdim=True)
    else:
        y = x @ _averaging(w, ow, x.dtype).t()  # (N, C, D, H, oW)
        y = _averaging(h, oh, x.dtype) @ y  # (N, C, D, oH, oW)
        y = _averaging(depth, od, x.dtype) @ y.reshape(n, c, depth, oh * ow)
        out = y.reshape(n, c, od, oh, ow)
    return out.squeeze(0) if unbatched else out


def _window_max(x: Tensor, dim: int, size: int, out: int):
    """The maximum of each adaptive window along ``dim``, and its position in ``dim``."""
    from ._pooling import _windows

    values, positions = [], []
    for lo, hi in _windows(size, out):
        v, j = x.narrow(dim, lo, hi - lo).max(dim)
        values.append(v)
        positions.append(j + lo)
    return gt.stack(values, dim), gt.stack(positions, dim)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size):
    """The maximum of each of ``output_size`` windows that tile the last three dims, and
    its flat position ``d * H * W + h * W + w`` (see :func:`adaptive_max_pool3d`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> out, idx = adaptive_max_pool3d_with_indices(gt.arange(8.0).reshape(1, 2, 2, 2), 1)
    >>> out.flatten().tolist(), idx.flatten().tolist()
    ([7.0], [7])
    """
    x, unbatched = _batched3d(input, "adaptive_max_pool3d")
    _, _, depth, h, w = x.shape
    od, oh, ow = _adaptive_sizes(output_size, (depth, h, w))
    # one dim at a time: the first maximum along w, then h, then d is the first in (d, h, w)
    v, iw = _window_max(x, 4, w, ow)  # (N, C, D, H, oW)
    v, ih = _window_max(v, 3, h, oh)  # (N, C, D, oH, oW)
    iw = iw.gather(3, ih)
    v, id_ = _window_max(v, 2, depth, od)  # (N, C, oD, oH, oW)
    ih, iw = ih.gather(2, id_), iw.gather(2, id_)
    indices = (id_ * h + ih) * w + iw
    if unbatched:
        v, indices = v.squeeze(0), indices.squeeze(0)
    return v, indices


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling to ``output_size`` over the last three dims, as
    ``torch.nn.functional.adaptive_max_pool3d`` (torch's windows ``[floor(i * n / m),
    ceil((i + 1) * n / m))``; ``None`` keeps a size).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> adaptive_max_pool3d(gt.arange(8.0).reshape(1, 1, 2, 2, 2), (2, 1, 1)).flatten().tolist()
    [3.0, 7.0]
    """
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


# -------------------------------------------------------------------------------------
# gumbel_softmax


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample of the Gumbel-softmax distribution over ``dim``, as
    ``torch.nn.functional.gumbel_softmax``: ``softmax((logits + g) / tau)`` with Gumbel
    noise ``g = -log(Exponential(1))``; with ``hard``, the one-hot vector of its maximum
    that differentiates as the soft sample (``y_hard - y_soft.detach() + y_soft``).

    Note [gumbel_softmax draws torch's noise]
    The noise is drawn as torch draws it, ``-empty_like(logits).exponential_().log()``,
    from tensor-core's generator (torch's CPU generator), so after the same
    ``manual_seed`` the samples are torch's.  ``eps`` is deprecated and unused, as in
    torch (a warning when it is given).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> y = gumbel_softmax(gt.zeros(2, 5), hard=True)
    >>> y.sum(-1).tolist(), sorted(set(y.flatten().tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -gt.empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = gt.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# -------------------------------------------------------------------------------------
# embedding_bag


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of embeddings, as
    ``torch.nn.functional.embedding_bag``.

    Note [A bag is a padded row]
    The bags (the rows of a 2-d ``input``, or the runs of a 1-d ``input`` that start at
    ``offsets``) are laid out as the rows of a ``(B, longest bag)`` index matrix; a mask
    marks the real entries (and drops ``padding_idx``'s).  The embeddings of that matrix
    (one ``embedding``) are summed under the mask (times ``per_sample_weights``), divided
    by each bag's count (``mean``) or maximised with ``-inf`` in the holes (``max``);
    an empty bag gives zeros, as torch's.

    Parameters
    ----------
    input : Tensor
        ``(B, L)`` bags of equal size, or ``(M,)`` indices cut at ``offsets``.
    weight : Tensor
        The ``(num_embeddings, embedding_dim)`` table.
    offsets : Tensor, optional
        ``(B,)`` starts of each bag (1-d ``input`` only; ``include_last_offset``: ``B + 1``
        offsets, the last the end).
    mode : {'sum', 'mean', 'max'}
    per_sample_weights : Tensor, optional
        One weight per index (``mode='sum'`` only).
    padding_idx : int, optional
        An index that is left out of its bag.
    max_norm, norm_type, scale_grad_by_freq, sparse
        As :func:`embedding` (``scale_grad_by_freq`` and ``sparse`` are not supported with
        ``mode='max'``, as torch).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> table = gt.arange(10.0).reshape(5, 2)
    >>> embedding_bag(gt.tensor([0, 1, 4, 2]), table, gt.tensor([0, 3]), mode="sum").tolist()
    [[10.0, 13.0], [4.0, 5.0]]
    """
    from .functional import embedding

    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if not isinstance(weight, Tensor) or weight.dim() != 2:
        raise ValueError(
            "weight has to be a 2D Tensor, but got Tensor of dimension "
            f"{getattr(weight, 'dim', lambda: '?')()}"
        )
    if input.dtype not in (gt.int64, gt.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead (while checking arguments for "
            "embedding_bag)"
        )
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "the Pytorch GitHub."
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    idx = input.detach().numpy().astype(np.int64)
    if input.dim() == 2:
        if offsets is not None:
            type_str = "<unknown>"
            if isinstance(offsets, Tensor):
                type_str = str(offsets.dtype)
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type_str}"
            )
        bags, length = idx.shape
        rows = idx
        mask = np.ones(idx.shape, dtype=bool)
        flat_pos = np.arange(idx.size).reshape(idx.shape)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.detach().numpy().astype(np.int64)
        total = idx.shape[0]
        if include_last_offset:
            if starts.shape[0] < 1:
                raise RuntimeError("include_last_offset: number of offset should be at least 1")
            # (torch's kernel ends the last bag at the input's end, whatever offsets[-1])
            starts = starts[:-1]
        ends = np.append(starts[1:], total)
        if starts.shape[0] and starts[0] != 0:
            raise RuntimeError(
                f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {starts[0]}"
            )
        if starts.shape[0] and starts[-1] > total:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length ({total}), but got "
                f"offsets[-1] of {starts[-1]}"
            )
        bags = starts.shape[0]
        counts = np.maximum(ends - starts, 0)
        length = int(counts.max()) if bags else 0
        flat_pos = starts[:, None] + np.arange(length)[None, :]
        mask = np.arange(length)[None, :] < counts[:, None]
        flat_pos = np.where(mask, flat_pos, 0)
        rows = idx[flat_pos] if idx.size else np.zeros(flat_pos.shape, dtype=np.int64)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = idx[(idx < 0) | (idx >= num)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {num}")
    if padding_idx is not None:
        mask = mask & (rows != padding_idx)
    dim = weight.shape[1]
    if bags == 0 or length == 0:
        return weight.new_zeros((bags, dim))
    if max_norm is not None:  # the rows of the bags, renormalised in place (unrecorded)
        with ag.no_grad():
            gt.get_op("embedding_renorm_")(weight, gt.tensor(idx.reshape(-1)), max_norm, norm_type)
    rows = np.where(mask, rows, 0)
    gathered = embedding(gt.tensor(rows), weight, sparse=sparse)  # (B, longest, dim)
    if scale_grad_by_freq and gathered.requires_grad:
        # each index's gradient divided by its number of occurrences in ``input`` (the
        # holes of the padded layout must not count, so not embedding's own option)
        values, counts = np.unique(idx, return_counts=True)
        freq = np.ones(rows.shape, dtype=np.float64)
        freq[mask] = counts[np.searchsorted(values, rows[mask])]
        scale = gt.tensor(1.0 / freq, dtype=weight.dtype).unsqueeze(-1)
        gathered.register_hook(lambda grad: grad * scale)
    keep = gt.tensor(mask)
    present = keep.unsqueeze(-1)
    if mode == "max":
        filled = gt.where(present, gathered, float("-inf"))
        out = filled.max(1)[0]
        empty = gt.tensor(~mask.any(1)).unsqueeze(-1)
        return gt.where(empty, 0.0, out)
    terms = gt.where(present, gathered, 0.0)
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)[gt.tensor(flat_pos.reshape(-1))]
        terms = terms * psw.reshape(bags, length, 1)
    out = terms.sum(1)
    if mode == "mean":
        count = np.maximum(mask.sum(1), 1).astype(np.float64)
        out = out / gt.tensor(count, dtype=out.dtype).unsqueeze(-1)
    return out
