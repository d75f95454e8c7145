"""``gradstack_nn.utils``: gradient clipping (``gradstack.nn.utils``) and :mod:`.data`
(``gradstack.utils.data``: datasets, samplers and the ``DataLoader``) and :mod:`.rnn`
(``gradstack.nn.utils.rnn``: packed sequences)."""

from . import data, rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "data",
    "rnn",
    "clip_grad_norm",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
