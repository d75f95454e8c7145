"""``gradstack.autograd.graph``: ``Node``, saved-tensor hooks (``saved_tensors_hooks``,
``save_on_cpu`` ...), ``register_multi_grad_hook``, gradient edges."""

from gradstack_autograd.graph import *  # noqa: F403
from gradstack_autograd.graph import __all__  # noqa: F401
