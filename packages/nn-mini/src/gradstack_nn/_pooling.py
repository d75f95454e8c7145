"""Average, adaptive and 1-d pooling, composed of ops that exist: ``avg_pool2d`` is an
``unfold`` (im2col) and a sum, ``adaptive_avg_pool*`` a product with each dim's averaging
matrix, ``adaptive_max_pool*`` the maximum of each output's window, and the 1-d forms
their 2-d forms on a unit dim.

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

__all__ = [
    "avg_pool1d",
    "avg_pool2d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
]


def _pair(v, name: str) -> tuple:
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


def _pooled_size(n: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    out = (n + 2 * p - k + ((s - 1) if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def _divisors(n, k, s, p, out, count_include_pad):
    """Each window's divisor along one dim, as torch's avg_pool: its size within the padded
    input, or within the input itself without ``count_include_pad``."""
    starts = np.arange(out) * s - p
    ends = np.minimum(starts + k, n + p)
    size_padded = ends - starts
    size_inside = np.minimum(ends, n) - np.maximum(starts, 0)
    return size_padded if count_include_pad else size_inside


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
    from ._convolution import unfold

    x, unbatched = _batched(input, 2, "avg_pool2d")
    kh, kw = _pair(kernel_size, "avg_pool2d: kernel_size")
    sh, sw = _pair(stride if stride not in (None, ()) else (kh, kw), "avg_pool2d: stride")
    ph, pw = _pair(padding, "avg_pool2d: padding")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError("pad should be at most half of effective kernel size")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    n, c, h, w = x.shape
    oh = _pooled_size(h, kh, sh, ph, ceil_mode)
    ow = _pooled_size(w, kw, sw, pw, ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
            "Output size is too small"
        )
    # right padding so that ceil_mode's last windows exist; they are divided as torch does
    extra_h = max((oh - 1) * sh + kh - h - 2 * ph, 0)
    extra_w = max((ow - 1) * sw + kw - w - 2 * pw, 0)
    padded = x
    if ph or pw or extra_h or extra_w:
        from ._padding import pad

        padded = pad(x, (pw, pw + extra_w, ph, ph + extra_h))
    cols = unfold(padded, (kh, kw), stride=(sh, sw))  # (N, C * kh * kw, L)
    sums = cols.reshape(n, c, kh * kw, -1).sum(2)[:, :, : oh * ow].reshape(n, c, oh, ow)
    if divisor_override is not None:
        out = sums / divisor_override
    else:
        dh = _divisors(h, kh, sh, ph, oh, count_include_pad)
        dw = _divisors(w, kw, sw, pw, ow, count_include_pad)
        div = np.outer(dh, dw).astype(np.float64)
        if np.all(div == kh * kw):
            out = sums / (kh * kw)
        else:
            out = sums / gt.tensor(div, dtype=x.dtype)
    return out.squeeze(0) if unbatched else out


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
    from ._convolution import max_pool2d_with_indices

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


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` windows that tile the last dim."""
    x, unbatched = _batched(input, 1, "adaptive_avg_pool1d")
    _check_float(x, "adaptive_avg_pool1d")
    (m,) = _output_sizes(output_size if not isinstance(output_size, int) else (output_size,),
                         (x.shape[-1],))  # fmt: skip
    out = x @ _averaging(x.shape[-1], m, x.dtype).t()
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


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """See :func:`adaptive_max_pool1d_with_indices`."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out
