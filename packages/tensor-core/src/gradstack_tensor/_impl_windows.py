"""Kernels of the sliding-window ops: ``im2col`` (torch's ``F.unfold``), ``col2im``
(``F.fold``), ``max_pool2d_with_indices``, ``avg_pool2d`` and ``avg_pool2d_backward``.

A 2-d convolution is ``im2col`` followed by one matrix product (``gradstack_nn``'s
``conv2d`` composes it so): ``im2col`` copies every ``kernel_size`` window of the padded
input into a column, ``col2im`` adds columns back into their windows (its adjoint, so each
is the other's gradient).  Max pooling picks the largest element of each window and
returns its position, as torch's ``max_pool2d_with_indices``: the flat index into the
input's ``H * W`` plane, which the gradient scatters into.

Each kernel checks its arguments with torch's messages before it touches memory; float32
and float64 inputs then go to the C loops of ``_window_kernels.pyx`` (one pass over the
windows, torch's loops: Note [Window kernels follow torch's CPU loops]), other dtypes
(bool, integers, float16) are computed with numpy in the input's dtype
(``sliding_window_view`` makes the windows without copying; the copy is the result).

=====================================  ===========================================
op                                     torch counterpart
=====================================  ===========================================
``im2col``                             ``aten::im2col`` (``F.unfold``)
``col2im``                             ``aten::col2im`` (``F.fold``)
``max_pool2d_with_indices``            ``aten::max_pool2d_with_indices``
``avg_pool2d``                         ``aten::avg_pool2d``
``avg_pool2d_backward``                ``aten::avg_pool2d_backward``
``conv2d``                             ``aten::conv2d`` (numeric padding)
=====================================  ===========================================

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.arange(9.).reshape(1, 1, 3, 3)
>>> cols = gt.OPS["im2col"](x, (2, 2), (1, 1), (0, 0), (1, 1))
>>> tuple(cols.shape), cols[0, :, 0].tolist()
((1, 4, 4), [0.0, 1.0, 3.0, 4.0])
>>> values, indices = gt.OPS["max_pool2d_with_indices"](x, (2, 2), (1, 1), (0, 0), (1, 1), False)
>>> values.flatten().tolist(), indices.flatten().tolist()
([4.0, 5.0, 7.0, 8.0], [4, 5, 7, 8])
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._conv_arrays import conv2d_forward as _conv2d_forward_kernel
from ._dispatch import OPS
from ._impl_nn import _scalar_name, _tensor
from ._tensor import _wrap
from ._window_kernels import avg_pool2d_backward as _avg_pool2d_backward_kernel
from ._window_kernels import avg_pool2d_forward as _avg_pool2d_kernel
from ._window_kernels import col2im as _col2im_kernel
from ._window_kernels import im2col as _im2col_kernel
from ._window_kernels import max_pool2d_forward as _max_pool2d_kernel

__all__: list[str] = []


def _array(x, op: str, kernel: str, kinds: str) -> np.ndarray:
    """The array of the tensor ``x``, whose dtype kind must be one of ``kinds`` (torch's
    window kernels take floats and bools, max pooling floats and integers)."""
    a = _tensor(x, op, "input")
    if a.dtype.kind not in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(a)}'")
    return a


def _pair(value, op: str, what: str) -> tuple[int, int]:
    """An int or a pair of ints (torch's ``IntArrayRef[2]`` arguments)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = (value[0], value[0])
    if (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
    ):
        return int(value[0]), int(value[1])
    raise TypeError(f"{op}(): argument '{what}' must be an int or a pair of ints, got {value!r}")


def _sizes(hw) -> str:
    return f"({hw[0]}, {hw[1]})"


def _window_args(op, kernel_size, dilation, padding, stride):
    k = _pair(kernel_size, op, "kernel_size")
    d = _pair(dilation, op, "dilation")
    p = _pair(padding, op, "padding")
    s = _pair(stride, op, "stride")
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
            f"kernel_width: {k[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )
    if min(p) < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got stride_height: {s[0]} "
            f"stride_width: {s[1]}"
        )
    return k, d, p, s


def _blocks(size, k, d, p, s):
    """How many windows fit along each spatial dim (torch's sliding-block count)."""
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1))


def _batched(x: np.ndarray, op: str, sizes: str) -> tuple[np.ndarray, bool]:
    """``x`` with a batch dim (a 3-d input gets one of size 1), and whether it had one."""
    if x.ndim == 4 and all(x.shape[1:]):
        return x, True
    if x.ndim == 3 and all(x.shape):
        return x[None], False
    raise RuntimeError(
        f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        f"dimensions for input, but got: {list(x.shape)} ({op} takes {sizes})"
    )


_C_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _c_path(a: np.ndarray) -> np.ndarray | None:
    """``a`` as the C kernels take it (C-contiguous, made so by a copy if needed), or None
    for a dtype they do not take."""
    if a.dtype not in _C_DTYPES:
        return None
    return np.ascontiguousarray(a)


def _windows(xp: np.ndarray, k, d, s, out) -> np.ndarray:
    """The ``(N, C, out_h, out_w, k_h, k_w)`` windows of the padded ``xp`` (a view)."""
    span = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
    w = sliding_window_view(xp, span, axis=(2, 3))
    return w[:, :, :: s[0], :: s[1], :: d[0], :: d[1]][:, :, : out[0], : out[1]]


# -------------------------------------------------------------------------------------
# im2col / col2im


def im2col(input, kernel_size, dilation, padding, stride):
    """Every ``kernel_size`` window of the zero-padded ``(N, C, H, W)`` input as a column:
    ``(N, C * k_h * k_w, L)``, L the number of windows (a 3-d input gives 2-d)."""
    op = "im2col"
    x, batched = _batched(
        _array(input, op, "im2col_out_cpu", "fb"), op, "(N, C, H, W) or (C, H, W)"
    )
    k, d, p, s = _window_args(op, kernel_size, dilation, padding, stride)
    out = _blocks(x.shape[2:], k, d, p, s)
    if min(out) < 1:
        raise RuntimeError(
            f"Given input with spatial size {_sizes(x.shape[2:])}, kernel_size={_sizes(k)}, "
            f"dilation={_sizes(d)}, padding={_sizes(p)}, calculated shape of the array of "
            f"sliding blocks as {_sizes(out)}, but its components must be at least one."
        )
    n, c = x.shape[:2]
    fast = _c_path(x)
    if fast is not None:
        cols = _im2col_kernel(fast, k, d, p, s)
        return _wrap(cols if batched else cols[0])
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]))) if max(p) else x
    w = _windows(xp, k, d, s, out)  # (N, C, oh, ow, kh, kw)
    cols = np.ascontiguousarray(w.transpose(0, 1, 4, 5, 2, 3)).reshape(
        n, c * k[0] * k[1], out[0] * out[1]
    )
    return _wrap(cols if batched else cols[0])


def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of :func:`im2col`: each column of ``(N, C * k_h * k_w, L)`` added back
    into its window of an ``(N, C, *output_size)`` result (overlaps sum)."""
    op = "col2im"
    a = _array(input, op, "col2im_out_cpu", "fb")
    batched = a.ndim == 3
    if a.ndim not in (2, 3) or not all(a.shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(a.shape)}"
        )
    size = _pair(output_size, op, "output_size")
    k, d, p, s = _window_args(op, kernel_size, dilation, padding, stride)
    if min(size) <= 0:
        raise RuntimeError(
            f"output size should be greater than zero, but got output_height: {size[0]} "
            f"output_width: {size[1]}"
        )
    a = a if batched else a[None]
    if a.shape[1] % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={a.shape[1]} and kernel_size={_sizes(k)}"
        )
    out = _blocks(size, k, d, p, s)
    if min(out) < 1 or out[0] * out[1] != a.shape[2]:
        raise RuntimeError(
            f"Given output_size={_sizes(size)}, kernel_size={_sizes(k)}, dilation={_sizes(d)}, "
            f"padding={_sizes(p)}, stride={_sizes(s)}, expected size of input's dimension 2 "
            f"to match the calculated number of sliding blocks {out[0]} * {out[1]} = "
            f"{out[0] * out[1]}, but got input.size(2)={a.shape[2]}."
        )
    n, c = a.shape[0], a.shape[1] // (k[0] * k[1])
    fast = _c_path(a)
    if fast is not None:
        res = _col2im_kernel(fast, size, k, d, p, s)
        return _wrap(res if batched else res[0])
    cols = a.reshape(n, c, k[0], k[1], out[0], out[1])
    res = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=a.dtype)
    for i in range(k[0]):
        top = i * d[0]
        rows = slice(top, top + s[0] * (out[0] - 1) + 1, s[0])
        for j in range(k[1]):
            left = j * d[1]
            res[:, :, rows, left : left + s[1] * (out[1] - 1) + 1 : s[1]] += cols[:, :, i, j]
    res = res[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]
    res = np.ascontiguousarray(res)
    return _wrap(res if batched else res[0])


OPS["im2col"].set_kernel(im2col)
OPS["col2im"].set_kernel(col2im)


# -------------------------------------------------------------------------------------
# max pooling


def _pooled_size(size, k, p, s, d, ceil_mode) -> int:
    """torch's ``pooling_output_shape``: with ``ceil_mode``, a last window that starts
    inside the input (or its left padding) counts."""
    span = d * (k - 1) + 1
    top = size + 2 * p - span + ((s - 1) if ceil_mode else 0)
    out = top // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    """The largest element of each window of an ``(N, C, H, W)`` (or ``(C, H, W)``) input,
    and its flat index into the input's ``H * W`` plane (torch's NaN rule: a NaN wins)."""
    op = "max_pool2d"
    x, batched = _batched(_array(input, op, "max_pool2d", "fiu"), op, "(N, C, H, W) or (C, H, W)")
    k = _pair(kernel_size, op, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else stride
    k, d, p, s = _window_args(op, k, dilation, padding, s)
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}"
        )
    if not isinstance(ceil_mode, (bool, np.bool_)):
        raise TypeError(f"max_pool2d(): argument 'ceil_mode' must be bool, not {ceil_mode!r}")
    n, c, h, w = x.shape
    out = tuple(_pooled_size(x.shape[2 + i], k[i], p[i], s[i], d[i], ceil_mode) for i in (0, 1))
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
            "Output size is too small"
        )
    fast = _c_path(x)
    if fast is not None:
        values, indices = _max_pool2d_kernel(fast, k, s, p, d, bool(ceil_mode))
        if not batched:
            values, indices = values[0], indices[0]
        return _wrap(values), _wrap(indices)
    # the lowest value (-inf, or an integer type's minimum) stands for "outside the input":
    # padding, as far right as ceil_mode's last window reaches
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    extra = [
        max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (x.shape[2 + i] + p[i]))
        for i in (0, 1)
    ]
    pads = ((0, 0), (0, 0), (p[0], extra[0]), (p[1], extra[1]))
    xp = np.pad(x, pads, constant_values=low) if max(p) or max(extra) else x
    win = _windows(xp, k, d, s, out).reshape(n, c, out[0], out[1], k[0] * k[1])
    flat, inside = _window_positions((h, w), k, d, p, s, out)
    pick, nothing_above = _pick_maxima(np.where(inside, win, low), low)
    values = np.take_along_axis(win, pick[..., None], -1)[..., 0]
    where = np.broadcast_to(flat, pick.shape + flat.shape[-1:])
    indices = np.take_along_axis(where, pick[..., None], -1)[..., 0]
    # a window of the lowest value only (or with no element inside the input) keeps
    # torch's first index: its start, moved into the input along the dilation
    indices = np.where(nothing_above, _window_starts(w, d, p, s, out), indices)
    values = np.where(nothing_above & ~inside.any(axis=-1), low, values)
    values = np.ascontiguousarray(values, dtype=x.dtype)
    indices = indices.astype(np.int64)
    if not batched:
        values, indices = values[0], indices[0]
    return _wrap(values), _wrap(indices)


def _window_positions(size, k, d, p, s, out):
    """For each window (``out`` of them) and each of its ``k_h * k_w`` elements, the flat
    position in the ``size`` plane that element reads, and whether it lies inside."""
    rows = np.arange(out[0])[:, None] * s[0] - p[0] + np.arange(k[0])[None, :] * d[0]
    cols = np.arange(out[1])[:, None] * s[1] - p[1] + np.arange(k[1])[None, :] * d[1]
    inside_rows = (rows >= 0) & (rows < size[0])
    inside_cols = (cols >= 0) & (cols < size[1])
    inside = inside_rows[:, None, :, None] & inside_cols[None, :, None, :]
    flat = rows[:, None, :, None] * size[1] + cols[None, :, None, :]
    return flat.reshape(out[0], out[1], -1), inside.reshape(out[0], out[1], -1)


def _pick_maxima(keyed, low):
    """Which element of each window (last axis) torch's scan keeps: the first largest, but
    the last NaN; and whether the window held nothing above ``low``."""
    with np.errstate(invalid="ignore"):
        pick = np.argmax(keyed, axis=-1)
        nan = np.isnan(keyed)
        if nan.any():
            last_nan = keyed.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            pick = np.where(nan.any(axis=-1), last_nan, pick)
        nothing_above = np.take_along_axis(keyed, pick[..., None], -1)[..., 0] == low
    return pick, nothing_above


def _window_starts(width, d, p, s, out):
    """torch's first index of each window: its top-left corner, moved into the input
    along the dilation (``while (start < 0) start += dilation``)."""
    starts = []
    for i in (0, 1):
        start = np.arange(out[i]) * s[i] - p[i]
        starts.append(np.where(start < 0, start + (-start + d[i] - 1) // d[i] * d[i], start))
    return starts[0][:, None] * width + starts[1][None, :]


OPS["max_pool2d_with_indices"].set_kernel(max_pool2d_with_indices)


# -------------------------------------------------------------------------------------
# average pooling


def _avg_args(op, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k = _pair(kernel_size, op, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else stride
    k, _, p, s = _window_args(op, k, 1, padding, s)
    if k[0] // 2 < p[0] or k[1] // 2 < p[1]:
        raise RuntimeError("pad should be at most half of effective kernel size")
    for name, flag in (("ceil_mode", ceil_mode), ("count_include_pad", count_include_pad)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{op}(): argument '{name}' must be bool, not {flag!r}")
    if divisor_override is not None and (
        isinstance(divisor_override, bool) or not isinstance(divisor_override, (int, np.integer))
    ):
        raise TypeError(f"{op}(): argument 'divisor_override' must be int or None")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return k, s, p


def _avg_out(op, size, c, k, s, p, ceil_mode):
    out = tuple(_pooled_size(size[i], k[i], p[i], s[i], 1, ceil_mode) for i in (0, 1))
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
    return out


def _avg_array(x, op: str, kernel: str) -> np.ndarray:
    """torch's avg_pool2d takes floats and int64 (computed in int64, divided as C does)."""
    a = _tensor(x, op, "input")
    if a.dtype.kind != "f" and a.dtype != np.int64:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(a)}'")
    return a


def _avg_divisors(size, k, s, p, out, count_include_pad, divisor_override) -> np.ndarray:
    """Each output's divisor (int64 ``out``-shaped), torch's: the window's size within the
    padded input, within the input, or ``divisor_override``."""
    if divisor_override is not None:
        return np.full(out, int(divisor_override), dtype=np.int64)
    sizes = []
    for i in (0, 1):
        start = np.arange(out[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], size[i] + p[i])
        inside = np.minimum(end, size[i]) - np.maximum(start, 0)
        sizes.append(end - start if count_include_pad else inside)
    return np.outer(sizes[0], sizes[1]).astype(np.int64)


def _truncated_division(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` of integers rounded toward zero (C's division, torch's int64 pooling)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _in_float(a: np.ndarray) -> np.ndarray:
    """``a`` as the C kernels take it: float16 computed in float32 (torch's opmath type)."""
    return np.ascontiguousarray(a, dtype=np.float32 if a.dtype == np.float16 else a.dtype)


def avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The mean of each window of an ``(N, C, H, W)`` (or ``(C, H, W)``) input, as torch's
    ``avg_pool2d``: zero padding, divided by the window's size within the padded input
    (``count_include_pad``), within the input, or by ``divisor_override``."""
    op = "avg_pool2d"
    x, batched = _batched(_avg_array(input, op, "avg_pool2d"), op, "(N, C, H, W) or (C, H, W)")
    k, s, p = _avg_args(op, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)  # fmt: skip
    out = _avg_out(op, x.shape[2:], x.shape[1], k, s, p, ceil_mode)
    if x.dtype.kind == "i":
        divisors = _avg_divisors(x.shape[2:], k, s, p, out, count_include_pad, divisor_override)
        pads = [(p[i], max(0, (out[i] - 1) * s[i] + k[i] - x.shape[2 + i] - p[i])) for i in (0, 1)]
        xp = np.pad(x, ((0, 0), (0, 0), *pads))
        sums = _windows(xp, k, (1, 1), s, out).sum(axis=(-2, -1), dtype=np.int64)
        res = _truncated_division(sums, divisors)
        return _wrap(res if batched else res[0])
    res = _avg_pool2d_kernel(
        _in_float(x), k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override
    ).astype(x.dtype, copy=False)
    return _wrap(res if batched else res[0])


def avg_pool2d_backward(
    grad_output, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    """The gradient of :func:`avg_pool2d` (its adjoint): each output's gradient divided by
    its window's divisor and added to the window's elements of ``input``'s plane.  Any dims
    in front of the plane are planes (Note [Window ops fold extra leading dims into the
    batch], graph-engine's windows derivatives)."""
    op = "avg_pool2d_backward"
    g = _avg_array(grad_output, op, "avg_pool2d_backward_out_cpu")
    x = _tensor(input, op, "input")
    if g.ndim < 3 or x.ndim < 3 or not all(x.shape[-3:]):
        raise RuntimeError(
            f"{op}: expected grad_output and input of at least 3 dims, got "
            f"{list(g.shape)} and {list(x.shape)}"
        )
    k, s, p = _avg_args(op, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)  # fmt: skip
    out = _avg_out(op, x.shape[-2:], x.shape[-3], k, s, p, ceil_mode)
    if g.shape[-2:] != out or g.shape[-3] != x.shape[-3]:
        raise RuntimeError(
            f"{op}: grad_output of shape {list(g.shape)} does not match the output "
            f"{[x.shape[-3], *out]} of pooling an input of shape {list(x.shape)}"
        )
    if g.dtype.kind == "i":
        divisors = _avg_divisors(x.shape[-2:], k, s, p, out, count_include_pad, divisor_override)
        delta = _truncated_division(g, divisors)
        res = np.zeros(g.shape[:-2] + x.shape[-2:], dtype=g.dtype)
        for a in range(out[0]):
            r0, r1 = max(a * s[0] - p[0], 0), min(a * s[0] - p[0] + k[0], x.shape[-2])
            for b in range(out[1]):
                q0, q1 = max(b * s[1] - p[1], 0), min(b * s[1] - p[1] + k[1], x.shape[-1])
                res[..., r0:r1, q0:q1] += delta[..., a, b, None, None]
        return _wrap(res)
    res = _avg_pool2d_backward_kernel(
        _in_float(g), x.shape[-2:], k, s, p, bool(ceil_mode), bool(count_include_pad),
        divisor_override,
    ).astype(g.dtype, copy=False)  # fmt: skip
    return _wrap(res)


OPS["avg_pool2d"].set_kernel(avg_pool2d)
OPS["avg_pool2d_backward"].set_kernel(avg_pool2d_backward)


# -------------------------------------------------------------------------------------
# the 2-d convolution


def _conv_numpy(x, w, b, s, p, d, groups):
    """``conv2d`` of the dtypes the C path does not take (integers in their dtype, as
    torch's ``slow_conv2d_cpu``; float16 in float32, cast back): numpy's windows and
    products."""
    dtype = x.dtype
    if dtype == np.float16:
        x, w = x.astype(np.float32), w.astype(np.float32)
        b = None if b is None else b.astype(np.float32)
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    k = (kh, kw)
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]))) if max(p) else x
    out = _blocks(x.shape[2:], k, d, p, s)
    win = _windows(xp, k, d, s, out)  # (N, C, oh, ow, kh, kw)
    cols = np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5)).reshape(
        n, out[0] * out[1], groups, cg * kh * kw
    )
    w2 = w.reshape(groups, o // groups, cg * kh * kw)
    res = np.einsum("nlgk,gok->ngol", cols, w2).reshape(n, o, out[0], out[1])
    if b is not None:
        res = res + b.reshape(o, 1, 1)
    return np.ascontiguousarray(res.astype(dtype, copy=False))


def conv2d(input, weight, bias, stride, padding, dilation, groups):
    """2-d cross-correlation of an ``(N, C, H, W)`` (or ``(C, H, W)``) input with a
    ``(O, C / groups, kh, kw)`` weight, plus ``bias``: torch's ``aten::conv2d`` with
    numeric padding.  float32/float64 go to ``_conv_arrays.conv2d_forward`` (im2col in C,
    BLAS products, Note [The orientation of a convolution's products]); other dtypes
    are computed with numpy."""
    op = "conv2d"
    x = _tensor(input, op, "input")
    w = _tensor(weight, op, "weight")
    b = None if bias is None else _tensor(bias, op, "bias")
    if x.dtype.kind not in "fiu":
        raise NotImplementedError(f"\"slow_conv2d_cpu\" not implemented for '{_scalar_name(x)}'")
    for what, t in (("weight", w), ("bias", b)):
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(
                f"Input type ({x.dtype}) and {what} type ({t.dtype}) should be the same "
                "(cast one with .to())"
            )
    if x.ndim not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(x.shape)}"
        )
    if w.ndim != 4:
        raise RuntimeError(
            f"Expected 4-dimensional weight for 4-dimensional input {list(x.shape)}, but got "
            f"weight of size {list(w.shape)} instead"
        )
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups!r})")
    groups = int(groups)
    s, p, d = (_pair(v, op, what) for v, what in
               ((stride, "stride"), (padding, "padding"), (dilation, "dilation")))  # fmt: skip
    if min(s) <= 0 or min(d) <= 0 or min(p) < 0:
        raise RuntimeError(
            f"conv2d: stride and dilation must be positive and padding non-negative, got "
            f"stride={s}, padding={p}, dilation={d}"
        )
    batched = x.ndim == 4
    x = x if batched else x[None]
    if w.shape[0] % groups or w.shape[0] == 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(w.shape)} instead"
        )
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input"
            f"{list(x.shape)} to have {w.shape[1] * groups} channels, but got {x.shape[1]} "
            "channels instead"
        )
    if b is not None and (b.ndim != 1 or b.shape[0] != w.shape[0]):
        raise RuntimeError(
            f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
            f"{w.shape[0]} elements, but got bias of size {list(b.shape)} instead"
        )
    padded = (x.shape[2] + 2 * p[0], x.shape[3] + 2 * p[1])
    span = (d[0] * (w.shape[2] - 1) + 1, d[1] * (w.shape[3] - 1) + 1)
    if padded[0] < span[0] or padded[1] < span[1] or not min(x.shape[1:]) or not min(w.shape):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel "
            f"size: ({span[0]} x {span[1]}). Kernel size can't be greater than actual input "
            "size"
        )
    if x.dtype in _C_DTYPES:
        res = _conv2d_forward_kernel(x, w, b, s, p, d, groups)
    else:
        res = _conv_numpy(x, w, b, s, p, d, groups)
    return _wrap(res if batched else res[0])


OPS["conv2d"].set_kernel(conv2d)
