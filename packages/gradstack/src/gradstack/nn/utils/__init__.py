"""``gradstack.nn.utils``: gradient clipping, parametrizations (``parametrize``,
``parametrizations``), the legacy ``weight_norm``/``spectral_norm`` (``gradstack_nn.utils``)."""

from gradstack_nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from gradstack_nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from gradstack_nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from gradstack_nn.utils.init import skip_init
from gradstack_nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from gradstack_nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from gradstack_nn.utils.weight_norm import remove_weight_norm, weight_norm

from . import clip_grad, parametrizations, parametrize, rnn

__all__ = [
    "skip_init",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grad",
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
    "vector_to_parameters",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
]
