"""``gradstack.nn.utils``: gradient clipping (``gradstack_nn.utils``)."""

from gradstack_nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

from . import clip_grad, rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grad", "rnn"]
