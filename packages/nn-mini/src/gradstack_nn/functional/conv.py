"""The convolutions as functions (``conv1d``, ``conv2d``, ``conv3d``,
``conv_transpose1d``, ``conv_transpose2d``, ``conv_transpose3d``) and the window
functions they are built on, ``unfold`` (im2col) and ``fold`` (col2im).

Note [A convolution is one op]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``conv2d`` is tensor-core's ``conv2d`` op (torch's ``aten::conv2d``, its node torch's
``ConvolutionBackward0``): im2col in C and BLAS products over chunks of the batch,
nothing saved but the input and the weight (the backward makes the columns again), the
weight's gradient as one sum of products in the fastest orientation (Note [The
orientation of a convolution's products] in tensor-core's ``_conv_arrays.py``) and no
input gradient for an input that needs none.  Its derivative is written once more in
gradstack ops (im2col, matmul, col2im: Note [A convolution's gradient on arrays or in
ops] in graph-engine's ``derivatives/windows.py``), which is what runs under
``create_graph``, forward-mode AD and vmap, so gradients of every order come from
theirs.  Until this op, ``conv2d`` was that composition in the forward too: its graph
held the columns (``kH * kW`` times the input) from the forward to the backward, and its
weight gradient was one product per sample in the orientation BLAS runs slowest.

The 3-d forms are 2-d ones and a fold or unfold over the depth (Note [A 3-d convolution
is a depth unfold and a 2-d convolution], Note [A 3-d transposed convolution is a 2-d one
and a depth fold]); the 1-d forms are the 2-d ones on a unit height.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.arange(16.).reshape(1, 1, 4, 4)
>>> w = gt.ones(1, 1, 2, 2)
>>> conv2d(x, w, stride=2).flatten().tolist()
[10.0, 18.0, 42.0, 50.0]
>>> unfold(x, 2, stride=2).shape
gradstack.Size([1, 4, 4])
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function

from ._utils import _pair, _triple
from .padding import pad

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "unfold",
    "fold",
]

_OP = gt.get_op


# -------------------------------------------------------------------------------------
# the windows: unfold (im2col) and fold (col2im)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Every ``kernel_size`` window of the zero-padded ``(N, C, H, W)`` (or ``(C, H, W)``)
    input as a column: ``(N, C * kH * kW, L)`` with L the number of windows
    (Im2ColBackward0).

    >>> import gradstack_tensor as gt
    >>> unfold(gt.arange(9.).reshape(1, 1, 3, 3), 2).shape
    gradstack.Size([1, 4, 4])
    """
    return _OP("im2col")(
        input,
        _pair(kernel_size, "kernel_size"),
        _pair(dilation, "dilation"),
        _pair(padding, "padding"),
        _pair(stride, "stride"),
    )


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """The adjoint of :func:`unfold`: columns ``(N, C * kH * kW, L)`` summed back into
    their windows of an ``(N, C, *output_size)`` result (Col2ImBackward0).

    >>> import gradstack_tensor as gt
    >>> x = gt.ones(1, 1, 3, 3)
    >>> fold(unfold(x, 2), (3, 3), 2)[0, 0].tolist()  # how many windows hold each pixel
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    return _OP("col2im")(
        input,
        _pair(output_size, "output_size"),
        _pair(kernel_size, "kernel_size"),
        _pair(dilation, "dilation"),
        _pair(padding, "padding"),
        _pair(stride, "stride"),
    )


# -------------------------------------------------------------------------------------
# 1-d and 2-d convolutions


def _same_padding(kernel, dilation, stride) -> tuple[tuple[int, int], tuple[int, int]]:
    """``padding='same'``: the (left, right) zeros of each spatial dim, torch's split (the
    odd one goes right)."""
    if stride != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [dilation[i] * (kernel[i] - 1) for i in (0, 1)]
    return tuple((t // 2, t - t // 2) for t in total)  # type: ignore[return-value]


def _pad_right(x: Tensor, extra_h: int, extra_w: int) -> Tensor:
    """``x`` with ``extra_h`` zero rows below and ``extra_w`` zero columns right."""
    if extra_h:
        x = gt.cat([x, x.new_zeros(tuple(x.shape[:-2]) + (extra_h, x.shape[-1]))], dim=-2)
    if extra_w:
        x = gt.cat([x, x.new_zeros(tuple(x.shape[:-1]) + (extra_w,))], dim=-1)
    return x


def _check_conv2d(input: Tensor, weight: Tensor, bias, groups: int) -> None:
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(
            "conv2d(): argument 'input' and 'weight' must be Tensors, got "
            f"{type(input).__name__} and {type(weight).__name__}"
        )
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.dim() != 4:
        raise RuntimeError(
            f"Expected 4-dimensional weight for 4-dimensional input {list(input.shape)}, but "
            f"got weight of size {list(weight.shape)} instead (out_channels, in_channels / "
            "groups, kH, kW)"
        )
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups!r})")
    _check_channels(input.shape, input.shape[-3], weight, bias, groups)
    check_same_dtype(input, weight, bias)


def _check_channels(shape, channels: int, weight: Tensor, bias, groups: int) -> None:
    """torch's errors for a convolution's ``groups`` that do not divide the weight's output
    channels, an input (of ``shape``, as the message shows it) whose ``channels`` are not
    the weight's times ``groups``, and a bias that is not one per output channel."""
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    if channels != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{channels} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead"
        )


def _check_window(name: str, stride, dilation, padding) -> None:
    """The error for a non-positive stride or dilation or a negative padding."""
    if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
        raise RuntimeError(
            f"{name}: stride and dilation must be positive and padding non-negative, got "
            f"stride={stride}, dilation={dilation}, padding={padding}"
        )


def _check_transposed_channels(shape, channels: int, weight: Tensor) -> None:
    """torch's error for a transposed convolution's input (of ``shape``, batched) whose
    ``channels`` are not the weight's first dim."""
    if weight.shape[0] != channels:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(shape)} to have {weight.shape[0]} channels, but got {channels} channels "
            "instead"
        )


def _check_output_padding(output_padding, stride, dilation) -> None:
    """torch's error for an ``output_padding`` not below the stride or the dilation, each
    dim named (``depth``, ``height``, ``width``)."""
    if any(op >= max(s, dl) for op, s, dl in zip(output_padding, stride, dilation)):
        dims = ("depth", "height", "width")[-len(stride) :]
        given = (("output_padding", output_padding), ("stride", stride), ("dilation", dilation))
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(
                f"{what}_{dim}: {v}" for what, values in given for dim, v in zip(dims, values)
            )
        )


def check_same_dtype(input: Tensor, weight: Tensor, bias) -> None:
    """torch's error for a weight or bias of another dtype than the input."""
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(
                f"Input type ({input.dtype}) and {what} type ({t.dtype}) should be the same "
                f"(cast one with .to())"
            )


@autocast_function("conv2d")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation, as ``torch.nn.functional.conv2d``: an ``(N, C, H, W)`` (or
    ``(C, H, W)``) input with ``weight`` of shape ``(out_channels, C / groups, kH, kW)``,
    plus ``bias``; ``padding`` is an int, a pair, ``'valid'`` or ``'same'``.

    One op, ``conv2d`` (ConvolutionBackward0; Note [A convolution is one op]).
    """
    _check_conv2d(input, weight, bias, groups)
    stride = _pair(stride, "stride")
    dilation = _pair(dilation, "dilation")
    kernel = (weight.shape[2], weight.shape[3])
    extra = (0, 0)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            (top, bottom), (left, right) = _same_padding(kernel, dilation, stride)
            padding, extra = (top, left), (bottom - top, right - left)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}' (use 'valid' or 'same')")
    padding = _pair(padding, "padding")
    _check_window("conv2d", stride, dilation, padding)
    x = _pad_right(input, *extra) if max(extra) else input
    height, width = x.shape[-2] + 2 * padding[0], x.shape[-1] + 2 * padding[1]
    span = (dilation[0] * (kernel[0] - 1) + 1, dilation[1] * (kernel[1] - 1) + 1)
    if height < span[0] or width < span[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({height} x {width}). Kernel size: "
            f"({span[0]} x {span[1]}). Kernel size can't be greater than actual input size"
        )
    # Note [A convolution is one op]; an unbatched input is a batch of one, as torch's
    conv = _OP("conv2d")
    if x.dim() == 3:
        return conv(x.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    return conv(x, weight, bias, stride, padding, dilation, groups)


def _lift_1d(value, unit: int):
    """A 1-d convolution's argument as the 2-d one's: ``unit`` for the unit height (a
    padding string passes through)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, int):
        value = tuple(value)
        if len(value) != 1:
            raise RuntimeError(f"expected an int or a 1-tuple, got {value}")
        value = value[0]
    return (unit, value)


@autocast_function("conv1d")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-d cross-correlation, as ``torch.nn.functional.conv1d``: an ``(N, C, L)`` (or
    ``(C, L)``) input with ``weight`` of shape ``(out_channels, C / groups, k)``: the 2-d
    convolution of the input and the weight given a unit height."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError("conv1d(): input and weight must be Tensors")
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.dim() != 3:
        raise RuntimeError(
            f"conv1d: expected a 3-d weight (out_channels, in_channels / groups, k), got "
            f"{list(weight.shape)}"
        )

    out = conv2d(
        input.unsqueeze(-2), weight.unsqueeze(2), bias, _lift_1d(stride, 1), _lift_1d(padding, 0),
        _lift_1d(dilation, 1), groups,
    )  # fmt: skip
    return out.squeeze(-2)


@autocast_function("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """2-d transposed convolution (the adjoint of :func:`conv2d`), as
    ``torch.nn.functional.conv_transpose2d``: ``weight`` is ``(C, out_channels / groups,
    kH, kW)``; each input pixel spreads ``weight``'s window into the output, computed as one
    product and a :func:`fold` (the im2col form of a convolution, read backwards).  The
    output is ``(H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1``
    high (and so wide)."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError("conv_transpose2d(): input and weight must be Tensors")
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input "
            f"of size: {list(input.shape)}"
        )
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    if weight.dim() != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 4-d weight, got {list(weight.shape)}")
    n, c, h, w = x.shape
    _check_transposed_channels(x.shape, c, weight)
    stride, padding = _pair(stride, "stride"), _pair(padding, "padding")
    dilation, output_padding = _pair(dilation, "dilation"), _pair(output_padding, "output_padding")
    _check_output_padding(output_padding, stride, dilation)
    kh, kw = weight.shape[2], weight.shape[3]
    out_per_group = weight.shape[1]
    out_channels = out_per_group * groups
    out_h = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    out_w = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    flat = x.reshape(n, groups, c // groups, h * w)
    wg = weight.reshape(groups, c // groups, out_per_group * kh * kw)
    cols = wg.transpose(1, 2).matmul(flat)  # (N, G, O / G * kH * kW, H * W)
    cols = cols.reshape(n, out_channels * kh * kw, h * w)
    # the folded size holds every window; output_padding adds zero rows and columns at the
    # end (folded first to the windows' own size: fold refuses a size they do not cover,
    # which output_padding >= stride, allowed below the dilation, would ask for)
    covered_h = out_h + 2 * padding[0] - output_padding[0]
    covered_w = out_w + 2 * padding[1] - output_padding[1]
    out = fold(cols, (covered_h, covered_w), (kh, kw), dilation, 0, stride)
    if output_padding[0] or output_padding[1]:
        out = pad(out, (0, output_padding[1], 0, output_padding[0]))
    if padding[0] or padding[1]:
        out = out[:, :, padding[0] : padding[0] + out_h, padding[1] : padding[1] + out_w]
    if bias is not None:
        out = out + bias.reshape(out_channels, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_function("conv_transpose1d")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """1-d transposed convolution: :func:`conv_transpose2d` on a unit height."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError("conv_transpose1d(): input and weight must be Tensors")
    if input.dim() not in (2, 3) or weight.dim() != 3:
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input "
            f"of size: {list(input.shape)}"
        )

    out = conv_transpose2d(
        input.unsqueeze(-2), weight.unsqueeze(2), bias, _lift_1d(stride, 1), _lift_1d(padding, 0),
        _lift_1d(output_padding, 0), groups, _lift_1d(dilation, 1),
    )  # fmt: skip
    return out.squeeze(-2)


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
    check_same_dtype(input, weight, bias)


@autocast_function("conv3d")
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
    _check_window("conv3d", stride, dilation, padding)
    n, c = x.shape[0], x.shape[1]
    out_channels = weight.shape[0]
    _check_channels(x.shape, c, weight, bias, groups)
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


@autocast_function("conv_transpose3d")
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
    _check_conv3d(input, weight, bias, groups, "conv_transpose3d")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    n, c, depth, h, w = x.shape
    _check_transposed_channels(x.shape, c, weight)
    if c % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    stride, padding = _triple(stride, "stride"), _triple(padding, "padding")
    dilation = _triple(dilation, "dilation")
    output_padding = _triple(output_padding, "output_padding")
    _check_output_padding(output_padding, stride, dilation)
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
