"""Pooling as functions: max pooling (``max_pool1d``/``2d``/``3d``, and with their
indices), average pooling (``avg_pool1d``/``2d``/``3d``), adaptive average and max pooling
(``adaptive_avg_pool1d``/``2d``/``3d``, ``adaptive_max_pool1d``/``2d``/``3d``) and
power-average pooling (``lp_pool1d``/``2d``/``3d``).

``max_pool2d`` and ``avg_pool2d`` are one op of the registry each
(MaxPool2DWithIndicesBackward0, AvgPool2DBackward0); the others are composed of ops that
exist: ``adaptive_avg_pool*`` a product with each dim's averaging matrix, ``adaptive_max_pool*``
the maximum of each output's window, the 1-d forms their 2-d forms on a unit dim, and the
3-d forms 2-d pools and sums over the depth (Note [A 3-d max pool is a 2-d max pool and a
max over depth]).

Note [Adaptive average pooling is a product with averaging matrices]
torch's adaptive pooling gives output ``i`` of a dim of size ``n`` pooled to ``m`` the
window ``[floor(i * n / m), ceil((i + 1) * n / m))``.  Averaging is linear and separable,
so ``out = A_h @ x @ A_w.T`` with ``A[i, j] = 1 / len(window i)`` for ``j`` in window
``i``: one product per dim, for any sizes (torch's kernel sums, then divides: the values
agree to rounding).

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.arange(16.0).reshape(1, 1, 4, 4)
>>> max_pool2d(x, 2).flatten().tolist()
[5.0, 7.0, 13.0, 15.0]
>>> avg_pool2d(x, 2).tolist()
[[[[2.5, 4.5], [10.5, 12.5]]]]
>>> adaptive_avg_pool2d(x, 1).tolist()
[[[[7.5]]]]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function
from gradstack_tensor.extension import checked_arguments

from ._utils import _pair, _triple
from .padding import pad

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
]

_OP = gt.get_op


# -------------------------------------------------------------------------------------
# arguments and windows


def _pool_pair(v, name: str) -> tuple:
    """``avg_pool2d``'s sizes as a pair: numpy ints accepted, a RuntimeError for a tuple of
    another length (``_utils._pair``, the convolutions' and ``max_pool2d``'s, raises
    TypeError instead)."""
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    t = tuple(int(i) for i in v)
    if len(t) == 1:
        return (t[0], t[0])
    if len(t) != 2:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of two ints")
    return t


def _single(v) -> int:
    if isinstance(v, (int, np.integer)):
        return int(v)
    t = tuple(v)
    if len(t) != 1:
        raise RuntimeError("expected a single int or a tuple of one int")
    return int(t[0])


def _batched(input: Tensor, spatial: int, name: str) -> tuple[Tensor, bool]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() == spatial + 1:
        return input.unsqueeze(0), True
    if name == "avg_pool2d" and input.dim() < spatial + 1:  # torch's first dim check
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
            f"{max(input.dim(), 1) - 1}], but got -3)"
        )
    if input.dim() != spatial + 2:
        raise RuntimeError(
            f"{name}: Expected {spatial + 1}D or {spatial + 2}D (batch mode) tensor for input, "
            f"but got: {list(input.shape)}"
        )
    return input, False


def _strided(x: Tensor, dim: int, start: int, count: int, step: int) -> Tensor:
    """``count`` entries of ``x`` along ``dim`` from ``start``, ``step`` apart (a view)."""
    index = [slice(None)] * x.dim()
    index[dim] = slice(start, start + (count - 1) * step + 1, step)
    return x[tuple(index)]


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


def _divisors(n, k, s, p, out, count_include_pad):
    """Each window's divisor along one dim, as torch's avg_pool: its size within the padded
    input, or within the input itself without ``count_include_pad``."""
    starts = np.arange(out) * s - p
    ends = np.minimum(starts + k, n + p)
    size_padded = ends - starts
    size_inside = np.minimum(ends, n) - np.maximum(starts, 0)
    return size_padded if count_include_pad else size_inside


# -------------------------------------------------------------------------------------
# max pooling


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """The largest element of each window and its flat index in the input's ``H * W``
    plane (MaxPool2DWithIndicesBackward0); ``stride`` defaults to ``kernel_size``."""
    values, indices = _OP("max_pool2d_with_indices")(
        input,
        _pair(kernel_size, "kernel_size"),
        None if stride is None or stride == [] else _pair(stride, "stride"),
        _pair(padding, "padding"),
        _pair(dilation, "dilation"),
        bool(ceil_mode),
    )
    return (values, indices) if return_indices else values


# torch's argument types of the pooling functions (Note [Argument checks from torch's
# signatures] in gradstack_tensor._signatures)
_MAX_POOL_ARGS = (
    "Tensor input, int[] kernel_size, int[]? stride, int[] padding, int[] dilation, "
    "bool ceil_mode, bool return_indices"
)
_AVG_POOL1D_ARGS = (
    "Tensor input, int[] kernel_size, int[]? stride, int[] padding, bool ceil_mode, "
    "bool count_include_pad"
)


@checked_arguments(
    "max_pool2d",
    _MAX_POOL_ARGS,
    first=0,
)
def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """2-d max pooling over an ``(N, C, H, W)`` (or ``(C, H, W)``) input, as
    ``torch.nn.functional.max_pool2d`` (with ``return_indices=True``, also the indices)."""
    return max_pool2d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """The maximum of each window over the last dim, and its position in that dim."""
    x, unbatched = _batched(input, 1, "max_pool1d")
    k = _single(kernel_size)
    s = k if stride in (None, ()) else _single(stride)
    out, idx = max_pool2d_with_indices(
        x.unsqueeze(2), (1, k), (1, s), (0, _single(padding)), (1, _single(dilation)), ceil_mode
    )
    out, idx = out.squeeze(2), idx.squeeze(2)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


@checked_arguments(
    "max_pool1d",
    _MAX_POOL_ARGS,
    first=0,
)
def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The maximum of each window over the last dim (and its position with
    ``return_indices``)."""
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


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
    x, unbatched = _batched(input, 3, "max_pool3d")
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


@checked_arguments(
    "max_pool3d",
    _MAX_POOL_ARGS,
    first=0,
)
@autocast_function("max_pool3d")
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


# -------------------------------------------------------------------------------------
# average pooling


def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each ``kernel_size`` window, ``stride`` apart (``kernel_size`` by
    default), over the last two dims of an ``(N, C, H, W)`` or ``(C, H, W)`` input."""
    x, unbatched = _batched(input, 2, "avg_pool2d")
    kh, kw = _pool_pair(kernel_size, "avg_pool2d: kernel_size")
    sh, sw = _pool_pair(stride if stride not in (None, ()) else (kh, kw), "avg_pool2d: stride")
    ph, pw = _pool_pair(padding, "avg_pool2d: padding")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError("pad should be at most half of effective kernel size")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    n, c, h, w = x.shape
    oh = _pool_size(h, kh, sh, ph, 1, ceil_mode)
    ow = _pool_size(w, kw, sw, pw, 1, ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
            "Output size is too small"
        )
    out = _OP("avg_pool2d")(
        x, (kh, kw), (sh, sw), (ph, pw), bool(ceil_mode), bool(count_include_pad),
        None if divisor_override is None else int(divisor_override),
    )  # fmt: skip
    return out.squeeze(0) if unbatched else out


@checked_arguments(
    "avg_pool1d",
    _AVG_POOL1D_ARGS,
    first=0,
)
def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """:func:`avg_pool2d` over the last dim of an ``(N, C, L)`` or ``(C, L)`` input."""
    x, unbatched = _batched(input, 1, "avg_pool1d")
    k = _single(kernel_size)
    s = k if stride in (None, ()) else _single(stride)
    out = avg_pool2d(x.unsqueeze(2), (1, k), (1, s), (0, _single(padding)), ceil_mode,
                     count_include_pad).squeeze(2)  # fmt: skip
    return out.squeeze(0) if unbatched else out


@autocast_function("avg_pool3d")
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
    x, unbatched = _batched(input, 3, "avg_pool3d")
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


# -------------------------------------------------------------------------------------
# adaptive pooling


def _windows(n: int, m: int) -> list:
    return [(math.floor(i * n / m), math.ceil((i + 1) * n / m)) for i in range(m)]


def _averaging(n: int, m: int, dtype) -> Tensor:
    """Note [Adaptive average pooling is a product with averaging matrices]."""
    a = np.zeros((m, n), dtype=np.float64)
    for i, (lo, hi) in enumerate(_windows(n, m)):
        a[i, lo:hi] = 1.0 / (hi - lo)
    return gt.tensor(a, dtype=dtype)


def _output_sizes(output_size, spatial_shape) -> tuple:
    if isinstance(output_size, (int, np.integer)):
        sizes = (int(output_size),) * len(spatial_shape)
    else:
        sizes = tuple(output_size)
        if len(sizes) != len(spatial_shape):
            raise RuntimeError(
                f"adaptive pooling: output_size must be {len(spatial_shape)} numbers"
            )
    return tuple(n if s is None else int(s) for s, n in zip(sizes, spatial_shape))


def _check_float(x: Tensor, name: str) -> None:
    if not x.is_floating_point():
        raise RuntimeError(f"\"{name}\" not implemented for '{x.dtype.name}'")


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` windows that tile the last two dims (torch's
    windows; ``None`` keeps a size)."""
    x, unbatched = _batched(input, 2, "adaptive_avg_pool2d")
    _check_float(x, "adaptive_avg_pool2d")
    h, w = x.shape[-2], x.shape[-1]
    oh, ow = _output_sizes(output_size, (h, w))
    if (oh, ow) == (1, 1):
        out = x.mean((-2, -1), keepdim=True)
    elif h % oh == 0 and w % ow == 0:
        out = avg_pool2d(x, (h // oh, w // ow))
    else:
        out = _averaging(h, oh, x.dtype) @ x @ _averaging(w, ow, x.dtype).t()
    return out.squeeze(0) if unbatched else out


@checked_arguments(
    "adaptive_avg_pool1d",
    "Tensor input, int[] output_size",
    first=0,
)
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` windows that tile the last dim."""
    x, unbatched = _batched(input, 1, "adaptive_avg_pool1d")
    _check_float(x, "adaptive_avg_pool1d")
    (m,) = _output_sizes(output_size if not isinstance(output_size, int) else (output_size,),
                         (x.shape[-1],))  # fmt: skip
    out = x @ _averaging(x.shape[-1], m, x.dtype).t()
    return out.squeeze(0) if unbatched else out


@autocast_function("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` windows that tile the last three dims, as
    ``torch.nn.functional.adaptive_avg_pool3d``: a product with each dim's averaging
    matrix (Note [Adaptive average pooling is a product with averaging matrices]);
    ``None`` keeps a size.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> adaptive_avg_pool3d(gt.arange(8.0).reshape(1, 1, 2, 2, 2), (1, 2, None)).tolist()
    [[[[[2.0, 3.0], [4.0, 5.0]]]]]
    """
    x, unbatched = _batched(input, 3, "adaptive_avg_pool3d")
    _check_float(x, "adaptive_avg_pool3d")
    n, c, depth, h, w = x.shape
    od, oh, ow = _output_sizes(output_size, (depth, h, w))
    if (od, oh, ow) == (1, 1, 1):
        out = x.mean((-3, -2, -1), keepdim=True)
    else:
        y = x @ _averaging(w, ow, x.dtype).t()  # (N, C, D, H, oW)
        y = _averaging(h, oh, x.dtype) @ y  # (N, C, D, oH, oW)
        y = _averaging(depth, od, x.dtype) @ y.reshape(n, c, depth, oh * ow)
        out = y.reshape(n, c, od, oh, ow)
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool2d_with_indices(input: Tensor, output_size):
    """The maximum of each of ``output_size`` windows that tile the last two dims, and its
    flat position ``h * W + w`` in the input's last two dims."""
    x, unbatched = _batched(input, 2, "adaptive_max_pool2d")
    h, w = x.shape[-2], x.shape[-1]
    oh, ow = _output_sizes(output_size, (h, w))
    rows, cols, values, indices = _windows(h, oh), _windows(w, ow), [], []
    for r0, r1 in rows:
        for c0, c1 in cols:
            window = x[:, :, r0:r1, c0:c1].flatten(2)
            v, j = window.max(2)
            values.append(v)
            j = j.detach().numpy()
            indices.append((r0 + j // (c1 - c0)) * w + c0 + j % (c1 - c0))
    n, c = x.shape[0], x.shape[1]
    out = gt.stack(values, -1).reshape(n, c, oh, ow)
    idx = gt.tensor(np.stack(indices, -1).reshape(n, c, oh, ow).astype(np.int64))
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """See :func:`adaptive_max_pool2d_with_indices`."""
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size):
    """The maximum of each of ``output_size`` windows that tile the last dim, and its
    position."""
    x, unbatched = _batched(input, 1, "adaptive_max_pool1d")
    (m,) = _output_sizes(output_size if not isinstance(output_size, int) else (output_size,),
                         (x.shape[-1],))  # fmt: skip
    out, idx = adaptive_max_pool2d_with_indices(x.unsqueeze(2), (1, m))
    out, idx = out.squeeze(2), idx.squeeze(2)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


@checked_arguments(
    "adaptive_max_pool1d",
    "Tensor input, int[] output_size, bool return_indices",
    first=0,
)
def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """See :func:`adaptive_max_pool1d_with_indices`."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _window_max(x: Tensor, dim: int, size: int, out: int):
    """The maximum of each adaptive window along ``dim``, and its position in ``dim``."""
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
    x, unbatched = _batched(input, 3, "adaptive_max_pool3d")
    _, _, depth, h, w = x.shape
    od, oh, ow = _output_sizes(output_size, (depth, h, w))
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


@autocast_function("adaptive_max_pool3d")
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
# power-average pooling


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, window: int, max_pool, avg_pool):
    """torch's power-average pooling of any dimension: ``p = +-inf`` is a max pool of
    ``+-|x|``; else the average pool of ``x ** p`` (without padding) times the window's
    ``window`` elements, then ``(sign(out) * relu(abs(out))) ** (1 / p)``, in torch's
    order of operations (the values and gradients are torch's, a zero sum's gradient 0)."""
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def _window(kernel_size, n: int) -> int:
    """The number of elements of an ``n``-d window: a number or ``n`` sizes, as torch's
    ``_single``/``_pair``/``_triple``."""
    sizes = (kernel_size,) * n if isinstance(kernel_size, (int, np.integer)) else kernel_size
    return math.prod(int(k) for k in sizes)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last dim of an
    ``(N, C, L)`` or ``(C, L)`` input (``p = inf``: the maximum of ``|x|``); computed as
    torch's: an ``avg_pool1d`` of ``x ** p`` times the window size.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> lp_pool1d(gt.tensor([[[3.0, 4.0, 1.0, 1.0]]]), 2, 2).tolist()
    [[[5.0, 1.4142135381698608]]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, _window(kernel_size, 1),
                    max_pool1d, avg_pool1d)  # fmt: skip


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last two dims of an
    ``(N, C, H, W)`` or ``(C, H, W)`` input, as :func:`lp_pool1d`."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, _window(kernel_size, 2),
                    max_pool2d, avg_pool2d)  # fmt: skip


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last three dims of an
    ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, as :func:`lp_pool1d`.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> lp_pool3d(gt.ones(1, 1, 2, 2, 2), 1, 2).tolist()
    [[[[[8.0]]]]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, _window(kernel_size, 3),
                    max_pool3d, avg_pool3d)  # fmt: skip


# -------------------------------------------------------------------------------------
# fractional max pooling

# Note [Fractional max pooling draws torch's samples]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's ``fractional_max_pool2d``/``3d`` draw ``rand(N, C, dims)`` of the input's dtype
# (``N`` 1 for an unbatched input) when no ``_random_samples`` are given; gradstack draws
# the same tensor from its torch-compatible stream, so after the same ``manual_seed`` the
# windows are torch's.  Each plane's window starts along a dim of size ``n`` pooled to
# ``m`` by ``k`` are torch's ``generate_intervals``: ``int((i + u) * alpha) - int(u *
# alpha)`` with ``alpha = (n - k) / (m - 1)`` in the input's dtype, the last start
# ``n - k``.  The 2-d kernel reads sample 0 for the width and 1 for the height, the 3-d
# one 0, 1, 2 for time, height, width.  The maximum of a window is its first largest
# element (its last NaN if it has one); the output is a ``gather`` of the input at those
# flat indices, whose gradient (a scatter-add) is torch's backward.


def _fractional_starts(samples: np.ndarray, n: int, m: int, k: int) -> np.ndarray:
    """``(N, C, m)`` window starts of torch's ``generate_intervals`` for samples ``(N, C)``."""
    starts = np.full(samples.shape + (m,), n - k, dtype=np.int64)
    if m > 1:
        t = samples.dtype.type
        alpha = t(n - k) / t(m - 1)
        i = np.arange(m - 1).astype(samples.dtype)
        first = ((i + samples[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = first - (samples * alpha).astype(np.int64)[..., None]
    return starts


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, samples, dims):
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.size(d) for d in range(-dims, 0))
    if output_size is None:
        if dims == 2 and len(output_ratio) > 2:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _repeat(output_ratio, dims)
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    channels = input.size(-dims - 1)
    if samples is None:
        n_batch = 1 if input.dim() == dims + 1 else input.size(0)
        samples = gt.rand(n_batch, channels, dims, dtype=input.dtype)
    kernel = _fractional_sizes(kernel_size, dims, f"{name}: kernel_size")
    out = _fractional_sizes(output_size, dims, f"{name}: output_size")
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}"
        )
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.size(0) < (1 if input.dim() == dims + 1 else input.size(0)):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(2) != dims:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {dims}; got {samples.size(2)}."
        )
    words = ("height", "width") if dims == 2 else ("time", "height", "width")
    for word, n, m, k in zip(words, spatial, out, kernel):
        if m + k - 1 > n:
            where = f"{name}()" if dims == 2 else f"{name}_out()"
            raise RuntimeError(f"{where}: pool {word} {k} too large relative to input {word} {n}")
    unbatched = input.dim() == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    n_batch = x.size(0)
    u = samples.detach().numpy()[:n_batch]
    # the sample each dim reads (Note [Fractional max pooling draws torch's samples])
    order = (1, 0) if dims == 2 else (0, 1, 2)
    flat = np.zeros((n_batch, channels) + tuple(out) + tuple(kernel), dtype=np.int64)
    stride = 1
    for d in reversed(range(dims)):
        starts = _fractional_starts(u[..., order[d]], spatial[d], out[d], kernel[d])
        pos = starts[..., :, None] + np.arange(kernel[d])  # (N, C, m, k)
        shape = [n_batch, channels] + [1] * (2 * dims)
        shape[2 + d], shape[2 + dims + d] = out[d], kernel[d]
        flat = flat + pos.reshape(shape) * stride
        stride *= spatial[d]
    flat = flat.reshape(n_batch, channels, *out, math.prod(kernel))
    size, windows = math.prod(spatial), math.prod(out)
    planes = x.detach().numpy().reshape(n_batch, channels, size)
    values = np.take_along_axis(
        planes, flat.reshape(n_batch, channels, windows * flat.shape[-1]), -1
    )
    values = values.reshape(flat.shape)
    if flat.shape[-1] == 0 or values.size == 0:
        choice = np.zeros(flat.shape[:-1] + (1,), dtype=np.int64)
    else:
        nan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.shape, bool)
        last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        choice = np.where(nan.any(-1), last_nan, np.argmax(values, axis=-1))[..., None]
    indices = np.take_along_axis(flat, choice, -1)[..., 0] if values.size else flat[..., 0]
    index = gt.tensor(np.ascontiguousarray(indices), dtype=gt.int64)
    flat_index = index.reshape(n_batch, channels, windows)
    output = x.reshape(n_batch, channels, size).gather(2, flat_index)
    output = output.reshape(n_batch, channels, *out)
    if unbatched:
        return output.squeeze(0), index.squeeze(0)
    return output, index


def _repeat(v, n: int) -> tuple:
    """torch's ``_pair``/``_triple``: an iterable as a tuple, anything else ``n`` times."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _fractional_sizes(v, dims: int, what: str) -> tuple:
    sizes = (v,) * dims if isinstance(v, int) else tuple(v)
    if len(sizes) == 1:
        sizes = sizes * dims
    if len(sizes) != dims:
        raise RuntimeError(f"{what} must either be a single Int or tuple of Ints")
    return tuple(int(s) for s in sizes)


def fractional_max_pool2d_with_indices(
    input: Tensor, kernel_size, output_size=None, output_ratio=None,
    return_indices: bool = False, _random_samples=None,
):  # fmt: skip
    """Fractional max pooling over ``(N, C, H, W)`` (or ``(C, H, W)``) to ``output_size`` (or
    ``output_ratio`` of the input's size) with pseudo-random window starts; the values and
    their flat indices in each ``H * W`` plane (Note [Fractional max pooling draws torch's
    samples]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.arange(16.0).reshape(1, 1, 4, 4)
    >>> u = gt.tensor([[[0.5, 0.5]]])
    >>> out, idx = fractional_max_pool2d_with_indices(x, 2, 2, _random_samples=u)
    >>> out.tolist(), idx.tolist()
    ([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(
    input: Tensor, kernel_size, output_size=None, output_ratio=None,
    return_indices: bool = False, _random_samples=None,
):  # fmt: skip
    """:func:`fractional_max_pool2d_with_indices`, the values only unless ``return_indices``."""
    out = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(
    input: Tensor, kernel_size, output_size=None, output_ratio=None,
    return_indices: bool = False, _random_samples=None,
):  # fmt: skip
    """Fractional max pooling over ``(N, C, T, H, W)`` (or ``(C, T, H, W)``): the 3-d
    :func:`fractional_max_pool2d_with_indices`."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(
    input: Tensor, kernel_size, output_size=None, output_ratio=None,
    return_indices: bool = False, _random_samples=None,
):  # fmt: skip
    """:func:`fractional_max_pool3d_with_indices`, the values only unless ``return_indices``."""
    out = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
