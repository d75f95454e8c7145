"""``gradstack_nn.utils``: gradient clipping (``gradstack.nn.utils``) and :mod:`.data`
(``gradstack.utils.data``: datasets, samplers and the ``DataLoader``) and :mod:`.rnn`
(``gradstack.nn.utils.rnn``: packed sequences)."""

from . import data, parametrizations, parametrize, rnn
from .batch_norm_replacement import replace_all_batch_norm_modules_
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "data",
    "rnn",
    "parametrize",
    "parametrizations",
    "weight_norm",
    "remove_weight_norm",
    "spectral_norm",
    "remove_spectral_norm",
    "clip_grad_norm",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "skip_init",
    "vector_to_parameters",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
]
