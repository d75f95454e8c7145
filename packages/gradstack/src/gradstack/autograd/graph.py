"""``gradstack.autograd.graph``: ``Node``, saved-tensor hooks (``saved_tensors_hooks``,
``save_on_cpu`` ...), ``register_multi_grad_hook``, gradient edges, and pictures of a
backward graph (``make_dot``, ``render_dot``: torchviz's call, Graphviz's rendering), all
from graph-engine's ``gradstack_autograd.graph``."""

from gradstack_autograd.graph import *  # noqa: F403
from gradstack_autograd.graph import __all__ as _graph_all

__all__ = list(_graph_all)
