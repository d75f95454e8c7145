"""``gradstack.nn.utils.clip_grad``: ``clip_grad_norm_`` and ``clip_grad_value_``."""

from gradstack_nn.utils.clip_grad import *  # noqa: F403
from gradstack_nn.utils.clip_grad import __all__  # noqa: F401
