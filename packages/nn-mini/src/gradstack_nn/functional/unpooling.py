"""Max unpooling: the partial inverse of max pooling (``max_unpool1d``/``2d``/``3d``).

Each value of ``input`` is written at the position its max pool took it from (``indices``,
flat positions in the output's spatial plane, as ``max_pool*d(..., return_indices=True)``
gives them); every other position is zero.  As torch's kernel, this is a scatter along the
flattened plane (a repeated index keeps the last value written, in memory order) and its
gradient is a gather of the output's gradient at the indices: here the ``scatter`` op of
the registry does both, so double backward and forward mode come with it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.functional import max_pool2d
>>> x = gt.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
>>> pooled, idx = max_pool2d(x, 2, return_indices=True)
>>> max_unpool2d(pooled, idx, 2).tolist()
[[[[0.0, 0.0], [0.0, 4.0]]]]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ._utils import _TORCH_TYPE_NAMES, _check_tensor, _pair, _triple

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _single(value, name: str) -> tuple[int]:
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise TypeError(f"{name} must be an int or a tuple of one int, got {value!r}")
        value = value[0]
    return (int(value),)


def _output_size(input: Tensor, kernel_size, stride, padding, output_size) -> list[int]:
    """torch's ``F._unpool_output_size``: the default size of each spatial dim, or the
    given ``output_size`` (its spatial part) checked to lie within a stride of it."""
    n = len(kernel_size)
    default = [
        (input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)
    ]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        size = [int(s) for s in output_size]
        if len(size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it "
                f"has a length of '{len(size)}'"
            )
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < size[d] < high:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between '
                    f"{low} and {high})"
                )
    for d in range(n):
        if size[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, "
                f"but got output_size[{d}]={size[d]}"
            )
    return size


def _unpool(input, indices, size: list[int], dims: int) -> Tensor:
    """Scatter ``input`` into zeros of spatial size ``size`` at ``indices`` (torch's
    ``max_unpool2d``/``max_unpool3d`` kernels, with their checks in their order)."""
    name = f"max_unpool{dims}d"
    _check_tensor(input, name, "input")
    _check_tensor(indices, name, "indices")
    if indices.dtype is not gt.int64:
        raise RuntimeError(
            "elements in indices should be type int64 but got: "
            f"{_TORCH_TYPE_NAMES[indices.dtype.name]}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Input to max_unpooling{dims}d should be a {dims + 1}d or {dims + 2}d Tensor, but "
            f"got a tensor with {input.dim()} dimensions."
        )
    plane = math.prod(size)
    lead = tuple(input.shape[:-dims])
    flat_indices = indices.reshape(*lead, -1)
    if flat_indices.numel():
        bad = (flat_indices < 0) | (flat_indices >= plane)
        if bool(bad.any()):
            # torch's kernel goes on past a bad index and names the last one it met
            last = int(flat_indices[bad][-1])
            raise RuntimeError(
                f"Found an invalid max index: {last} (output volumes are of size "
                f"{'x'.join(str(s) for s in size)})"
            )
    out = input.new_zeros(*lead, plane)
    out = out.scatter(-1, flat_indices, input.reshape(*lead, -1))
    return out.reshape(*lead, *size)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of :func:`max_pool1d` over the last dim of an ``(N, C, L)`` or
    ``(C, L)`` input: zeros of length ``output_size`` (by default ``(L - 1) * stride +
    kernel_size - 2 * padding``) with ``input``'s values at ``indices``; as torch's, a
    2-d unpool of a unit last dim.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> max_unpool1d(gt.tensor([[5.0, 7.0]]), gt.tensor([[1, 2]]), 2).tolist()
    [[0.0, 5.0, 7.0, 0.0]]
    """
    _check_tensor(input, "max_unpool1d", "input")
    _check_tensor(indices, "max_unpool1d", "indices")
    kernel = _single(kernel_size, "kernel_size")
    step = kernel if stride is None else _single(stride, "stride")
    size = _output_size(input, kernel, step, _single(padding, "padding"), output_size)
    return _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1], 2).squeeze(-1)


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of :func:`max_pool2d` over the last two dims of an
    ``(N, C, H, W)`` or ``(C, H, W)`` input, as :func:`max_unpool1d`."""
    _check_tensor(input, "max_unpool2d", "input")
    kernel = _pair(kernel_size, "kernel_size")
    step = kernel if stride is None else _pair(stride, "stride")
    size = _output_size(input, kernel, step, _pair(padding, "padding"), output_size)
    return _unpool(input, indices, size, 2)


def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of :func:`max_pool3d` over the last three dims of an
    ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, as :func:`max_unpool1d`."""
    _check_tensor(input, "max_unpool3d", "input")
    kernel = _triple(kernel_size, "kernel_size")
    step = kernel if stride is None else _triple(stride, "stride")
    size = _output_size(input, kernel, step, _triple(padding, "padding"), output_size)
    return _unpool(input, indices, size, 3)
