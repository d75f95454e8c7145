"""``gradstack.nn.utils``: gradient clipping (``gradstack_nn.utils``)."""

from gradstack_nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from gradstack_nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

from . import clip_grad, rnn

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grad",
    "rnn",
    "clip_grad_norm",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
