"""The memory format of a model's convolution weights, as torch's ``nn.utils.memory_format``:
``convert_conv2d_weight_memory_format`` (``Conv2d``/``ConvTranspose2d``) and
``convert_conv3d_weight_memory_format`` (``Conv3d``/``ConvTranspose3d``).

Only the weights' strides change (their values and shapes do not): each weight's data
becomes a copy laid out in ``memory_format``, recursively through the sub-modules, and the
module itself is returned.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Conv2d, ReLU, Sequential
>>> net = Sequential(Conv2d(3, 4, 3), ReLU())
>>> net = convert_conv2d_weight_memory_format(net, gt.channels_last)
>>> net[0].weight.stride(), net[0].weight.is_contiguous(memory_format=gt.channels_last)
((27, 1, 9, 3), True)
"""

from __future__ import annotations

from typing import TypeVar

from ..modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from ..modules.module import Module

__all__ = [
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
]

_M = TypeVar("_M", bound=Module)


# Note [Which convolutions are converted]: gradstack's Conv1d and Conv3d subclass Conv2d
# (and the transposed ones ConvTranspose2d), where torch's share ``_ConvNd``; so the
# classes of the other ranks are excluded by name, to convert exactly torch's modules.
_KINDS = {
    2: ((Conv2d, ConvTranspose2d), (Conv1d, Conv3d, ConvTranspose1d, ConvTranspose3d)),
    3: ((Conv3d, ConvTranspose3d), ()),
}


def _convert(module, rank, memory_format):
    # torch's steps: a detached clone in the format, then ``resize_`` to its own size in
    # the format (which checks ``memory_format`` as torch's resize_ does), as the data.
    kinds, others = _KINDS[rank]
    if isinstance(module, kinds) and not isinstance(module, others):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, rank, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format) -> _M:
    """Lay out the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself
    included) in ``memory_format`` (``channels_last`` or ``contiguous_format``).

    Parameters
    ----------
    module : Module
        A convolution or a container of modules.
    memory_format : memory_format
        The weights' new layout.

    Returns
    -------
    Module
        ``module`` itself.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Conv2d
    >>> conv = convert_conv2d_weight_memory_format(Conv2d(2, 3, 1), gt.channels_last)
    >>> conv.weight.stride()
    (2, 1, 2, 2)
    """
    return _convert(module, 2, memory_format)


def convert_conv3d_weight_memory_format(module: _M, memory_format) -> _M:
    """Lay out the weight of every ``Conv3d`` and ``ConvTranspose3d`` in ``module`` (itself
    included) in ``memory_format`` (``channels_last_3d`` or ``contiguous_format``), as
    ``convert_conv2d_weight_memory_format`` does for the 2-d ones (same parameters, and
    ``module`` itself returned).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Conv3d
    >>> conv = convert_conv3d_weight_memory_format(Conv3d(2, 3, 1), gt.channels_last_3d)
    >>> conv.weight.stride()
    (2, 1, 2, 2, 2)
    """
    return _convert(module, 3, memory_format)
