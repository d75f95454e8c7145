"""``gradstack.autograd.grad_mode``: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``."""

from gradstack_autograd.grad_mode import *  # noqa: F403
from gradstack_autograd.grad_mode import __all__  # noqa: F401
